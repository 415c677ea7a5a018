"""within_run.csv: warm-up trimming and stability of within-run interval series (iperf3 -i 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from podnet.parse.tidy import INTERVAL_COLUMNS

from .settings import Settings

SERIES_KEYS = ["run_id", "stream", "direction", "metric", "unit"]

WITHIN_COLUMNS = SERIES_KEYS + [
    "raw_path",
    "n_intervals",  # all intervals of the series
    "n_omitted",  # marked omitted by the tool (dropped when drop_omitted)
    "n_warmup",  # dropped because they start within warmup_seconds
    "n_nan",  # NaN values dropped
    "n_used",
    "t_first",  # start of the first kept interval (s)
    "t_last",  # end of the last kept interval (s)
    "mean_untrimmed",  # duration-weighted mean of all non-NaN intervals
    "trimmed_mean",  # duration-weighted mean of the kept intervals
    "sd",  # sd of the kept interval values (ddof = 1)
    "cv",  # sd / |unweighted mean| of the kept intervals
    "slope",  # OLS slope of value vs interval midpoint (unit per s)
    "slope_p",  # two-sided t-test of slope = 0
    "rel_slope_per_s",  # slope / |trimmed_mean|
    "rel_change",  # slope * (last midpoint - first midpoint) / |trimmed_mean|
    "stable",  # |rel_change| <= max_rel_change and cv <= max_cv (NA if n_used < min_intervals)
]


def _weighted_mean(codes: np.ndarray, k: int, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per-series duration-weighted mean; unweighted where any duration is not positive."""
    good_w = np.isfinite(w) & (w > 0)
    bad_series = np.bincount(codes, weights=~good_w, minlength=k) > 0
    w = np.where(bad_series[codes], 1.0, np.where(good_w, w, 1.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(codes, weights=w * v, minlength=k) / np.bincount(codes, weights=w, minlength=k)


def within_run(intervals: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Trim warm-up intervals and check stability of each within-run series.

    Trimming: intervals marked ``omitted`` are dropped (``drop_omitted``), then
    those starting less than ``warmup_seconds`` after the first remaining
    interval of the series. Per series: duration-weighted trimmed mean, CV
    across intervals and the OLS trend of value vs time.
    """
    s = Settings.of(settings).within_run
    if intervals is None or len(intervals) == 0:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in WITHIN_COLUMNS})
    df = intervals.copy()
    for c in INTERVAL_COLUMNS:
        if c not in df.columns:
            df[c] = pd.NA if c not in ("stream",) else "sum"
    df = df.reset_index(drop=True)
    g = df.groupby(SERIES_KEYS, dropna=False, sort=True)
    codes = g.ngroup().to_numpy()
    k = int(codes.max()) + 1
    first = np.zeros(k, dtype=int)
    first[codes[::-1]] = np.arange(len(df))[::-1]
    keys = df.iloc[first][SERIES_KEYS + ["raw_path"]].reset_index(drop=True)

    v = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
    t0 = pd.to_numeric(df["t_start"], errors="coerce").to_numpy(dtype=float)
    t1 = pd.to_numeric(df["t_end"], errors="coerce").to_numpy(dtype=float)
    om = df["omitted"].map(lambda x: str(x).strip().lower() in ("true", "1", "yes")).to_numpy(dtype=bool)
    isnan = np.isnan(v)

    n_int = np.bincount(codes, minlength=k)
    n_om = np.bincount(codes, weights=om, minlength=k).astype(int)
    keep = ~isnan
    if s.drop_omitted:
        keep &= ~om
    # warm-up: relative to the first kept interval of the series
    start = np.full(k, np.inf)
    np.minimum.at(start, codes[keep], t0[keep])
    warm = keep & (t0 - start[codes] < s.warmup_seconds)
    n_warm = np.bincount(codes, weights=warm, minlength=k).astype(int)
    keep &= ~warm
    n_nan = np.bincount(codes, weights=isnan, minlength=k).astype(int)

    w_all = t1 - t0
    ok_all = ~isnan
    mean_all = _weighted_mean(codes[ok_all], k, v[ok_all], w_all[ok_all])

    c = codes[keep]
    x = v[keep]
    tm = (t0[keep] + t1[keep]) / 2.0
    n = np.bincount(c, minlength=k).astype(int)
    tmean = _weighted_mean(c, k, x, w_all[keep])
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = np.bincount(c, weights=x, minlength=k) / n
        tbar = np.bincount(c, weights=tm, minlength=k) / n
        dx = x - mu[c]
        dt = tm - tbar[c]
        sxx = np.bincount(c, weights=dt * dt, minlength=k)
        sxy = np.bincount(c, weights=dt * dx, minlength=k)
        syy = np.bincount(c, weights=dx * dx, minlength=k)
        sd = np.where(n >= 2, np.sqrt(syy / (n - 1)), np.nan)
        cv = sd / np.abs(mu)
        slope = np.where((n >= 2) & (sxx > 0), sxy / sxx, np.nan)
        sse = np.maximum(syy - slope * sxy, 0.0)
        se = np.sqrt(sse / (n - 2) / sxx)
        tstat = slope / se
        slope_p = np.where(n >= 3, 2.0 * stats.t.sf(np.abs(tstat), n - 2), np.nan)
        slope_p = np.where((n >= 3) & (se == 0) & (slope == 0), np.nan, slope_p)
        tfirst = np.full(k, np.inf)
        tlast = np.full(k, -np.inf)
        np.minimum.at(tfirst, c, t0[keep])
        np.maximum.at(tlast, c, t1[keep])
        mfirst = np.full(k, np.inf)
        mlast = np.full(k, -np.inf)
        np.minimum.at(mfirst, c, tm)
        np.maximum.at(mlast, c, tm)
        rel_slope = slope / np.abs(tmean)
        rel_change = slope * (mlast - mfirst) / np.abs(tmean)
    enough = n >= s.min_intervals
    stable = (np.abs(rel_change) <= s.max_rel_change) & (cv <= s.max_cv)
    out = keys.copy()
    out["n_intervals"] = n_int
    out["n_omitted"] = n_om
    out["n_warmup"] = n_warm
    out["n_nan"] = n_nan
    out["n_used"] = n
    out["t_first"] = np.where(n > 0, tfirst, np.nan)
    out["t_last"] = np.where(n > 0, tlast, np.nan)
    out["mean_untrimmed"] = mean_all
    out["trimmed_mean"] = tmean
    out["sd"] = sd
    out["cv"] = cv
    out["slope"] = slope
    out["slope_p"] = slope_p
    out["rel_slope_per_s"] = rel_slope
    out["rel_change"] = rel_change
    st = pd.array(stable, dtype="boolean")
    st[~enough | np.isnan(cv) | np.isnan(rel_change)] = pd.NA
    out["stable"] = st
    return out[WITHIN_COLUMNS]
