"""How precise each declared primary comparison is, against its target (what adaptive sampling judges).

The ratios come from :func:`podnet.stats.compare`, exactly as ratios.csv has them. A
comparison's interval is its paired interval (repeat k of the treatment against repeat k of the
baseline within one launch's interleaved rounds) when it has one, else its primary interval
(``ci_low`` / ``ci_high``). Its relative half-width is ``(high - low) / (2 * ratio)`` with the
ratio of the same interval (for a log-scale interval ``sinh`` of its log half-width, within
0.05 % of the half-width on the log scale up to ±5 %). It is *met* when that is at most its target:
the ``target_rel_half_width`` of the ``stats.primary`` entry that declares it, else
``stats.planning.target_rel_half_width``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from podnet.tidy import GROUP_COLUMNS

from . import core
from .family import primary_targets
from .ratios import compare
from .settings import resolve

PRECISION_COLUMNS = (
    ["comparison", "by", "baseline", "treatment"]
    + GROUP_COLUMNS
    + [
        "n_treatment",
        "n_baseline",
        "n_pairs",
        "interval",  # paired | unpaired | "" (no interval)
        "ratio",  # the ratio of the interval judged
        "low",
        "high",
        "rel_half_width",
        "target_rel_half_width",
        "n",  # pairs (paired) or the smaller side (unpaired)
        "n_needed",  # repeats that would meet the target at the observed noise (~, from the t interval)
        "met",
    ]
)


def primary_precision(tidy: pd.DataFrame, settings: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per primary ratio row of ``compare(tidy, settings)``: its interval, half-width and target."""
    s = resolve(settings)
    r = compare(tidy, s)
    r = r[r["role"] == "primary"].reset_index(drop=True)
    if r.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in PRECISION_COLUMNS})
    default = float(s["planning"]["target_rel_half_width"])
    num = {c: pd.to_numeric(r[c], errors="coerce").to_numpy(dtype=float) for c in (
        "paired_ratio", "paired_ci_low", "paired_ci_high", "ratio", "ci_low", "ci_high", "n_pairs",
        "n_treatment", "n_baseline",
    )}  # fmt: skip
    paired = np.isfinite(num["paired_ci_low"]) & np.isfinite(num["paired_ci_high"]) & (num["n_pairs"] >= 2)
    unpaired = ~paired & np.isfinite(num["ci_low"]) & np.isfinite(num["ci_high"])
    ratio = np.where(paired, num["paired_ratio"], num["ratio"])
    low = np.where(paired, num["paired_ci_low"], np.where(unpaired, num["ci_low"], np.nan))
    high = np.where(paired, num["paired_ci_high"], np.where(unpaired, num["ci_high"], np.nan))
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = np.where(ratio != 0, (high - low) / (2.0 * np.abs(ratio)), np.nan)
    n = np.where(paired, num["n_pairs"], np.fmin(num["n_treatment"], num["n_baseline"]))
    target = primary_targets(r, list(s["primary"]), default)
    conf = float(s["confidence"])
    with np.errstate(invalid="ignore", divide="ignore"):
        # the noise a t interval of n values with this half-width implies, then n for the target
        cv = np.where(n >= 2, rhw * np.sqrt(n) / core.t_quantile(conf, np.maximum(n - 1, 1)), np.nan)
    needed = np.full(len(r), np.nan)
    for t in np.unique(target[np.isfinite(target)]):
        m = target == t
        needed[m] = core.n_needed(cv[m], conf, float(t))
    out = r[["comparison", "by", "baseline", "treatment"] + GROUP_COLUMNS].copy()
    out["n_treatment"], out["n_baseline"] = num["n_treatment"], num["n_baseline"]
    out["n_pairs"] = num["n_pairs"]
    out["interval"] = np.where(paired, "paired", np.where(unpaired, "unpaired", ""))
    out["ratio"], out["low"], out["high"] = ratio, low, high
    out["rel_half_width"] = rhw
    out["target_rel_half_width"] = target
    out["n"] = n
    out["n_needed"] = needed
    out["met"] = np.nan_to_num(rhw, nan=np.inf) <= target
    return out[PRECISION_COLUMNS]
