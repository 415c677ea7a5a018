"""The cost of scale in numbers: each measure's slope per 1000 objects, and the time a change takes.

- :func:`scale_curves`: per variant, path, tool, swept test and metric of a sweep over ``services``
  or ``network_policies`` (tidy ``sweep_param``), the least-squares line of the runs' values on the
  object count: ``slope_per_1000`` with its t interval (n - 2 degrees of freedom), the value at 0
  objects (``intercept``) and ``rel_slope_per_1000`` = slope / intercept. The runs are the
  observations; the rounds are not modelled (a round's drift shared by its points widens the
  interval, it does not bias the slope: the points' order alternates from round to round).
- :func:`effect_table`: per variant, point and probe (``service_effect_s``, ...; one value per
  set-up of the point, :mod:`podnet.parse.scale`), the median with its distribution-free interval
  (:func:`podnet.stats.sweeps.median_interval`) and P99 with the order-statistic interval of the
  0.99 quantile, which exists only from n = 368 set-ups on (0.99^n <= 2.5 %; NaN bounds below,
  and ``p99`` is then about the largest value seen).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as sps

from podnet.stats.sweeps import median_interval

#: the sweep parameters that count objects (:data:`podnet.launch.spec.scale.SWEPT`)
SCALE_PARAMS = ("services", "network_policies")
_CURVE_KEY = ["variant", "scenario", "tool", "sweep", "metric", "unit", "sweep_param"]
CURVE_COLUMNS = [
    *_CURVE_KEY,
    "points",
    "n",
    "intercept",
    "slope_per_1000",
    "slope_low",
    "slope_high",
    "rel_slope_per_1000",
    "confidence",
]
_EFFECT_KEY = ["variant", "metric", "services", "network_policies"]
EFFECT_COLUMNS = [
    *_EFFECT_KEY,
    "n",
    "p50",
    "p50_low",
    "p50_high",
    "p50_coverage",
    "p99",
    "p99_low",
    "p99_high",
    "p99_coverage",
]


def slope(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(intercept, slope, low, high) of the least-squares line y = a + b x with the t interval of b;
    NaN where it cannot be had (fewer than 3 values, or fewer than 2 distinct x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    nan = float("nan")
    if len(x) < 3 or len(np.unique(x)) < 2:
        return nan, nan, nan, nan
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    a = float(ym - b * xm)
    resid = y - (a + b * x)
    s2 = float((resid**2).sum() / (len(x) - 2))
    se = math.sqrt(s2 / sxx)
    t = float(sps.t.ppf(0.5 + confidence / 2, len(x) - 2))
    return a, b, b - t * se, b + t * se


def scale_curves(tidy: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per curve over an object count (columns :data:`CURVE_COLUMNS`), slopes per 1000 objects."""
    if tidy.empty or "sweep_param" not in tidy:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    t = tidy[tidy["sweep_param"].astype(str).isin(SCALE_PARAMS)]
    if "source" in t:
        t = t[t["source"].astype(str) != "reference"]
    rows = []
    for key, g in t.groupby(_CURVE_KEY, dropna=False, sort=True):
        x = g["sweep_value"].to_numpy(dtype=float) / 1000.0
        y = g["value"].to_numpy(dtype=float)
        ok = np.isfinite(x) & np.isfinite(y)
        a, b, lo, hi = slope(x[ok], y[ok], confidence)
        rows.append(
            {
                **dict(zip(_CURVE_KEY, key)),
                "points": int(len(np.unique(x[ok]))),
                "n": int(ok.sum()),
                "intercept": a,
                "slope_per_1000": b,
                "slope_low": lo,
                "slope_high": hi,
                "rel_slope_per_1000": b / a if a and math.isfinite(a) else float("nan"),
                "confidence": confidence,
            }
        )
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def quantile_interval(x: Any, q: float, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(estimate, low, high, coverage) of the ``q`` quantile: the order-statistic interval
    [x(l), x(u)] with P(l <= Bin(n, q) < u) >= ``confidence``, each tail at most (1 - confidence)/2;
    NaN bounds when ``x`` has too few values for that."""
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    nan = float("nan")
    if n == 0:
        return nan, nan, nan, nan
    est = float(np.quantile(x, q))
    tail = (1 - confidence) / 2
    cdf = sps.binom.cdf(np.arange(n + 1), n, q)  # cdf[j] = P(B <= j)
    lows = [j for j in range(1, n + 1) if cdf[j - 1] <= tail]  # P(B < l) <= tail
    highs = [j for j in range(1, n + 1) if 1 - cdf[j - 1] <= tail]  # P(B >= u) <= tail
    if not lows or not highs:
        return est, nan, nan, nan
    lo, hi = max(lows), min(highs)
    return est, float(x[lo - 1]), float(x[hi - 1]), float(cdf[hi - 1] - cdf[lo - 1])


def effect_table(effects: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per variant, probe and point (columns :data:`EFFECT_COLUMNS`) from
    :func:`podnet.parse.scale.effect_rows`."""
    if effects.empty:
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    rows = []
    for key, g in effects.groupby(_EFFECT_KEY, dropna=False, sort=True):
        v = g["value"].to_numpy(dtype=float)
        med = median_interval(v, confidence)
        p99 = quantile_interval(v, 0.99, confidence)
        rows.append(
            {
                **dict(zip(_EFFECT_KEY, key)),
                "n": len(v),
                "p50": med.median,
                "p50_low": med.low,
                "p50_high": med.high,
                "p50_coverage": med.coverage,
                "p99": p99[0],
                "p99_low": p99[1],
                "p99_high": p99[2],
                "p99_coverage": p99[3],
            }
        )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)
