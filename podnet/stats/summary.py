"""summary.csv: one row per group of repeats (GROUP_COLUMNS + source)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.parse.tidy import GROUP_COLUMNS

from . import bootstrap, core, rounding
from ._data import Groups, as_tidy, group_moments, key_text, log_moments, make_groups, split_sources
from .cache import cached_rows
from .kinds import metric_facts
from .planning import precise
from .settings import Settings

SUMMARY_COLUMNS = (
    GROUP_COLUMNS
    + [
        "source",  # measured | reference (reference rows: descriptive columns only)
        "n",  # values used (NaN values dropped)
        "n_nan",  # NaN values dropped
        "mean",
        "median",
        "sd",  # sample standard deviation (ddof = 1)
        "cv",  # sd / |mean|
        "min",
        "max",
        "se",  # sd / sqrt(n)
        "kind",  # positive | proportion | count | signed (podnet.tools.metric_info)
        "gmean",  # geometric mean (positive values only)
        "centre",  # the estimate the primary interval is about (see estimand)
        "estimand",  # geometric mean | mean | mean fraction
        "ci_low",  # primary interval of the estimand, by kind (METHODS.md)
        "ci_high",
        "ci_method",  # log-t | t | t, clipped at 0 | clopper-pearson
        "ci_note",
        "quantised",  # the tool's printed resolution widens the interval by more than 10 % (rounding.py)
        "rel_half_width",  # (ci_high - centre) / |centre|
        "boot_ci_low",
        "boot_ci_high",
        "boot_method",  # BCa | percentile | "" (none)
        "boot_note",  # why there is no bootstrap interval
        "n_needed",  # repeats needed for rel_half_width <= target at the observed CV
        "precise",  # METHODS.md, "Two words": 0 < rel_half_width <= target on at least min_to_stop values
        "n_outliers",  # values outside the outlier fences (flagged, never dropped)
        "outlier_rule",
        "outlier_low",  # the fences
        "outlier_high",
        "drift_tau",  # Kendall tau-b of value vs repeat order
        "drift_p",
        "drift_rel_change",  # (mean of last half - mean of first half) / |mean|
        "drift",  # drift_p < drift alpha
        "first_repeat",
        "last_repeat",
        "placements",  # where the group's runs ran, with counts (tidy `placement`: c0/s0 = client CPU 0, server CPU 0)
        "placement_split",  # the runs ran in more than one placement: a mixture, not one path's spread
    ]
)


def _quantiles(g: Groups, qs: list[float]) -> np.ndarray:
    """Quantiles (numpy 'linear' rule) of each group, shape (groups, len(qs)); NaN for empty groups."""
    out = np.full((len(g.n), len(qs)), np.nan)
    for n in np.unique(g.n):
        if n == 0:
            continue
        idx = np.nonzero(g.n == n)[0]
        out[idx] = np.quantile(g.stacked(idx), qs, axis=1).T
    return out


def primary_intervals(g: Groups, mean: np.ndarray, sd: np.ndarray, s: Settings) -> tuple[np.ndarray, ...]:
    """The primary interval of each group by the kind of its metric (METHODS.md, "Intervals by kind").

    Returns (low, high, centre, method, estimand, note, gmean, quantised):
    positive values -> exp of the t interval of mean(ln x) (geometric mean), its standard error
    widened by the tool's printed resolution (podnet.stats.rounding; ``quantised`` where that is
    material);
    proportions in [0, 1] -> Clopper-Pearson with the runs as trials (mean fraction);
    counts and positive kinds with a value <= 0 -> t interval of the mean, clipped at 0;
    signed -> t interval of the mean.
    """
    conf = s.confidence
    k = len(g.n)
    kind = metric_facts(g.keys)[0]
    lmean, lsd, pos = log_moments(g, s.small_n.zero_rel_sd)
    gmean = np.exp(lmean)
    nz = g.n > 0
    vmin = np.full(k, np.nan)
    vmax = np.full(k, np.nan)
    if nz.any():
        vmin[nz] = np.minimum.reduceat(g.values, g.starts[nz])
        vmax[nz] = np.maximum.reduceat(g.values, g.starts[nz])
    tlo, thi = core.t_interval(mean, sd, g.n, conf)
    lo, hi = tlo.copy(), thi.copy()
    centre = mean.copy()
    method = np.where(g.n >= 2, "t", "").astype(object)
    estimand = np.full(k, "mean", dtype=object)
    note = np.full(k, "", dtype=object)

    logt = (kind == "positive") & pos
    # the tool's printed resolution: a common rounding error more runs do not shrink (rounding.py)
    vq, fl = rounding.group_terms(g, lmean, lsd)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        se, df = rounding.combine(lsd**2 / g.n, g.n - 1.0, vq, fl / g.n)
        half = np.where(g.n >= 2, core.t_quantile(conf, df) * se, np.nan)
        quantised = logt & (g.n >= 2) & rounding.material(lsd**2 / g.n, vq, fl / g.n)
        # all values equal (up to rounding): centred on the mean itself, not exp(ln x) with its
        # last-digit error
        flat = logt & (lsd == 0)
        gmean = np.where(flat, mean, gmean)
        lc = np.where(flat, np.log(np.where(logt & flat, mean, 1.0)), lmean)
        llo = np.where(flat & (half == 0), mean, np.exp(lc - half))
        lhi = np.where(flat & (half == 0), mean, np.exp(lc + half))
    lo[logt], hi[logt], centre[logt] = llo[logt], lhi[logt], gmean[logt]
    method[logt & (g.n >= 2)] = "log-t"
    estimand[logt] = "geometric mean"

    clip = ((kind == "positive") & ~pos & nz) | ((kind == "count") & (vmin >= 0))
    lo[clip] = np.maximum(lo[clip], 0.0)
    method[clip & (g.n >= 2)] = "t, clipped at 0"
    note[(kind == "positive") & ~pos & nz] = (
        "values <= 0 in a positive quantity: interval of the mean, clipped at 0"
    )

    prop = (kind == "proportion") & nz & (vmin >= 0) & (vmax <= 1)
    tot = np.bincount(g.codes, weights=g.values, minlength=k)
    plo, phi = core.clopper_pearson(tot, g.n, conf)
    lo[prop], hi[prop] = plo[prop], phi[prop]
    method[prop] = "clopper-pearson"
    estimand[prop] = "mean fraction"
    note[(kind == "proportion") & nz & ~prop] = "fractions outside [0, 1]: t interval of the mean"

    zero_t = (g.n >= 2) & ~prop & (lo == hi)
    note[zero_t] = "zero variance: zero-width interval"
    note[(g.n < 2) & ~prop] = "n < 2: no interval"
    note[g.n == 0] = "no values"
    estimand[g.n == 0] = ""
    note[quantised & (lsd == 0)] = "equal printed values: interval of the printed resolution alone"
    return lo, hi, centre, method, estimand, note, gmean, quantised


def describe(g: Groups, s: Settings, inferential: bool = True) -> pd.DataFrame:
    """Statistics of each group of ``g`` (keys not included)."""
    mean, sd = group_moments(g, s.small_n.zero_rel_sd)
    qs = _quantiles(g, [0.0, 0.25, 0.5, 0.75, 1.0])
    vmin, q1, med, q3, vmax = (qs[:, i] for i in range(5))
    zero_var = (g.n >= 2) & (vmin == vmax)
    sd = np.where(zero_var, 0.0, sd)
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = sd / np.abs(mean)
        se = sd / np.sqrt(g.n)
    out = pd.DataFrame(
        {
            "n": g.n,
            "n_nan": g.n_nan,
            "mean": mean,
            "median": med,
            "sd": sd,
            "cv": cv,
            "min": vmin,
            "max": vmax,
            "se": se,
        }
    )
    lo, hi, centre, method, estimand, note, gmean, quantised = primary_intervals(g, mean, sd, s)
    out["kind"] = metric_facts(g.keys)[0]
    out["gmean"], out["centre"], out["estimand"] = gmean, centre, estimand
    out["ci_low"], out["ci_high"] = lo, hi
    out["ci_method"] = method
    out["ci_note"] = note
    out["quantised"] = pd.array(quantised, dtype="boolean")
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (hi - centre) / np.abs(centre)
    out["rel_half_width"] = rhw

    _bootstrap_columns(out, g, s, zero_var, inferential)
    _planning_columns(out, g, s, cv, rhw)
    _outlier_columns(out, g, s, q1, med, q3, inferential)
    _drift_columns(out, g, s, mean, inferential)
    _placement_columns(out, g)
    if not inferential:
        _blank_inferential(out)
    return out


def _bootstrap_columns(
    out: pd.DataFrame, g: Groups, s: Settings, zero_var: np.ndarray, inferential: bool
) -> None:
    """boot_* columns: the bootstrap of the mean, only where its coverage holds (n >= min_n, METHODS.md)."""
    conf = s.confidence
    k = len(g.n)
    b = s.bootstrap
    bmin = b.min_n
    blo = np.full(k, np.nan)
    bhi = np.full(k, np.nan)
    bmethod = np.full(k, "", dtype=object)
    bnote = np.full(k, "", dtype=object)
    bnote[g.n < bmin] = f"n < {bmin}: bootstrap intervals under-cover below this (METHODS.md)"
    bnote[zero_var] = "zero variance: bootstrap distribution degenerate"
    todo = np.nonzero((g.n >= bmin) & ~zero_var & inferential)[0]  # reference rows: blanked below
    if len(todo):
        keys = key_text(g.keys.iloc[todo])
        l_, h_, m_ = bootstrap.mean_intervals([g.values_of(i) for i in todo], keys, conf, b)
        blo[todo], bhi[todo], bmethod[todo] = l_, h_, m_
        bnote[todo[m_ == ""]] = "bootstrap interval undefined"
    out["boot_ci_low"], out["boot_ci_high"] = blo, bhi
    out["boot_method"], out["boot_note"] = bmethod, bnote


def _planning_columns(out: pd.DataFrame, g: Groups, s: Settings, cv: np.ndarray, rhw: np.ndarray) -> None:
    """n_needed (the repeats the observed CV needs for the precision target) and precise."""
    conf = s.confidence
    target = s.planning.target_rel_half_width
    nn = core.n_needed(np.where(g.n >= 2, cv, np.nan), conf, target)
    out["n_needed"] = pd.array(np.where(np.isfinite(nn), nn, np.nan), dtype="Float64").astype("Int64")
    out["precise"] = pd.array(precise(rhw, target, g.n, s), dtype="boolean")


def _outlier_columns(
    out: pd.DataFrame,
    g: Groups,
    s: Settings,
    q1: np.ndarray,
    med: np.ndarray,
    q3: np.ndarray,
    inferential: bool,
) -> None:
    """n_outliers and the fences of ``stats.outliers`` (Tukey or MAD)."""
    k = len(g.n)
    o = s.outliers
    kf = o.k
    if o.rule == "tukey":
        flo, fhi = core.tukey_fences(q1, q3, kf)
        rule = f"tukey k={kf:g}"
    else:
        codes = g.codes
        mad = np.full(k, np.nan)
        absdev = np.abs(g.values - med[codes])
        for n in np.unique(g.n[g.n > 0]):
            idx = np.nonzero(g.n == n)[0]
            pos = g.starts[idx][:, None] + np.arange(n)[None, :]
            mad[idx] = np.median(absdev[pos], axis=1)
        flo, fhi = core.mad_fences(med, mad, kf)
        rule = f"mad k={kf:g}"
    judged = (g.n >= o.min_n) & inferential
    flo = np.where(judged, flo, np.nan)
    fhi = np.where(judged, fhi, np.nan)
    codes = g.codes
    is_out = (g.values < flo[codes]) | (g.values > fhi[codes])
    cnt = np.bincount(codes, weights=is_out, minlength=k).astype(int)
    out["n_outliers"] = pd.array(np.where(judged, cnt, 0), dtype="Int64")
    out.loc[~judged, "n_outliers"] = pd.NA
    out["outlier_rule"] = rule
    out["outlier_low"], out["outlier_high"] = flo, fhi


def _drift_columns(out: pd.DataFrame, g: Groups, s: Settings, mean: np.ndarray, inferential: bool) -> None:
    """drift_* columns (Kendall's trend over the repeats, the change between halves) and the repeat span."""
    k = len(g.n)
    d = s.drift
    tau = np.full(k, np.nan)
    pval = np.full(k, np.nan)
    change = np.full(k, np.nan)
    for n in np.unique(g.n[g.n >= 2]):
        idx = np.nonzero(g.n == n)[0]
        x = g.stacked(idx)
        h = n // 2
        with np.errstate(invalid="ignore", divide="ignore"):
            change[idx] = (x[:, n - h :].mean(axis=1) - x[:, :h].mean(axis=1)) / np.abs(mean[idx])
        if n >= d.min_n and inferential:
            tau[idx], pval[idx] = core.kendall_trend(x)
    out["drift_tau"], out["drift_p"], out["drift_rel_change"] = tau, pval, change
    drift = pd.array(pval < d.alpha, dtype="boolean")
    drift[np.isnan(pval)] = pd.NA
    out["drift"] = drift
    first = np.full(k, np.nan)
    last = np.full(k, np.nan)
    nz = g.n > 0
    first[nz] = g.repeats[g.starts[nz]]
    last[nz] = g.repeats[g.starts[nz] + g.n[nz] - 1]
    out["first_repeat"] = pd.array(first, dtype="Float64").astype("Int64")
    out["last_repeat"] = pd.array(last, dtype="Float64").astype("Int64")


def _placement_columns(out: pd.DataFrame, g: Groups) -> None:
    """placements (``c0/s0 x12, c0/s1 x3``, most frequent first; "" when no run recorded one) and
    placement_split (more than one), from the tidy ``placement`` of each group's runs (one per run)."""
    k = len(g.n)
    text = np.full(k, "", dtype=object)
    split = np.zeros(k, dtype=bool)
    if "placement" in g.rows.columns and len(g.rows):
        runs = pd.DataFrame(
            {
                "group": g.codes,
                "run": g.rows["run_id"].to_numpy(),
                "p": g.rows["placement"].fillna("").to_numpy(),
            }
        )
        runs = runs[runs["p"] != ""].drop_duplicates(["group", "run"])
        for grp, sub in runs.groupby("group", sort=False):
            counts = sub["p"].value_counts()
            text[grp] = ", ".join(f"{p} x{n}" for p, n in counts.items())
            split[grp] = len(counts) > 1
    out["placements"] = text
    out["placement_split"] = pd.array(split, dtype="boolean")


def _blank_inferential(out: pd.DataFrame) -> None:
    """Empty every inferential column (reference rows), keeping dtypes."""
    for c in SUMMARY_COLUMNS[SUMMARY_COLUMNS.index("ci_low") :]:
        if c not in out.columns:
            continue
        dt = out[c].dtype
        if dt is np.dtype(object) or pd.api.types.is_string_dtype(dt):
            out[c] = ""
        elif pd.api.types.is_float_dtype(dt) and not isinstance(dt, pd.api.extensions.ExtensionDtype):
            out[c] = np.nan
        else:
            out[c] = pd.Series(pd.NA, index=out.index, dtype=dt)
    out["ci_note"] = "reference values: no interval"
    out["boot_note"] = "reference values"


def outlier_rows(g: Groups, summary: pd.DataFrame) -> pd.DataFrame:
    """The individual values outside their group's fences (for outliers.csv)."""
    codes = g.codes
    flo = summary["outlier_low"].to_numpy(dtype=float, na_value=np.nan)
    fhi = summary["outlier_high"].to_numpy(dtype=float, na_value=np.nan)
    mask = (g.values < flo[codes]) | (g.values > fhi[codes])
    rows = g.rows.loc[mask].copy()
    rows["fence_low"] = flo[codes][mask]
    rows["fence_high"] = fhi[codes][mask]
    rows["outlier_rule"] = summary["outlier_rule"].to_numpy()[codes][mask] if len(summary) else []
    cols = GROUP_COLUMNS + [
        "repeat",
        "run_id",
        "value",
        "fence_low",
        "fence_high",
        "outlier_rule",
        "raw_path",
    ]
    return rows[cols].reset_index(drop=True)


def _part(g: Groups, s: Settings, inferential: bool) -> pd.DataFrame:
    return pd.concat([g.keys, describe(g, s, inferential=inferential)], axis=1)


def summarize(
    tidy: pd.DataFrame,
    settings: Settings | Mapping[str, Any] | None = None,
    cache: Path | None = None,
    groups: Groups | None = None,
) -> pd.DataFrame:
    """Per-group statistics of the tidy table (summary.csv).

    Measured rows get every column; reference rows (published values) are
    summarised separately with ``source="reference"`` and descriptive columns
    only (n, mean, median, sd, min, max); they never enter measured statistics.
    With ``cache`` (a parquet path), measured groups whose rows did not change
    since the last call are not recomputed (:mod:`podnet.stats.cache`).
    ``groups``: the measured rows already grouped (the pipeline groups once).
    """
    s = Settings.of(settings)
    tidy = as_tidy(tidy)
    measured, reference = split_sources(tidy)
    parts = []
    for df, src, inferential in ((measured, "measured", True), (reference, "reference", False)):
        if len(df) == 0:
            continue
        g = groups if (inferential and groups is not None) else make_groups(df)
        if inferential and cache is not None:
            part, _ = cached_rows(g, s.mapping, lambda sub: _part(sub, s, True), Path(cache))
        else:
            part = _part(g, s, inferential)
        part.insert(len(GROUP_COLUMNS), "source", src)
        parts.append(part)
    if not parts:
        return _empty_summary()
    out = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return out[SUMMARY_COLUMNS]


def _empty_summary() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in SUMMARY_COLUMNS})
