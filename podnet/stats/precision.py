"""How precise each declared primary comparison is, against its target (what adaptive sampling judges).

The ratios come from :func:`podnet.stats.compare`, exactly as ratios.csv has them. A
comparison's interval is :func:`judged`: its paired interval (repeat k of the treatment against
repeat k of the baseline within one launch's interleaved rounds) when it has one, else its primary
interval (``ci_low`` / ``ci_high``). The findings, the gate and the ratios figure state the same
interval, so what adaptive sampling called met is what the report says. Its relative half-width is ``(high - low) / (2 * ratio)`` with the
ratio of the same interval (for a log-scale interval ``sinh`` of its log half-width, within
0.05 % of the half-width on the log scale up to ±5 %). It is *met* when that is at most its target
(the ``target_rel_half_width`` of the ``stats.primary`` entry that declares it, else
``stats.planning.target_rel_half_width``) and it rests on at least :func:`min_to_stop` pairs: it is
*precise* (METHODS.md, "Two words: different and precise"); *met*, the adaptive stop, is precise
or, with ``stats.planning.stop_when_different``, its one p (``p_value``) below the stop's level
(:func:`podnet.stats.onep.stops_as_different`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from podnet.parse.tidy import GROUP_COLUMNS

from . import core, onep
from .family import judged, stop_judgement
from .planning import met, min_to_stop, precise  # noqa: F401 - min_to_stop: its home was here
from .ratios import compare
from .settings import Settings

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
        "precise",  # METHODS.md, "Two words": width target met on at least min_to_stop pairs
        "met",  # the adaptive stop (stats.planning.met): precise, or with stop_when_different its p below the stop's level
    ]
)


JUDGED_COLUMNS = ["interval", "ratio", "low", "high", "n", "p_value", "p_adjusted"]


def half_width_text(x: float) -> str:
    """A relative half-width in words: 0.048 -> "±4.8 %", 0.12 -> "±12 %"."""
    return f"±{x * 100:.0f} %" if x >= 0.095 else f"±{x * 100:.2g} %"


def as_judged(r: pd.DataFrame) -> pd.DataFrame:
    """``r`` (ratios.csv rows) with ratio, ci_low and ci_high replaced by the interval each row is
    judged by (:func:`judged`), named in ``interval``: what the findings and the ratios figure
    state. ``p_value``, ``p_adjusted`` and ``different`` are the row's own: one p per comparison."""
    if r.empty:
        return r.assign(interval=pd.Series(dtype=str))
    j = judged(r)
    out = r.copy()
    out["interval"] = j["interval"]
    has = j["interval"] != ""
    for col, src in (("ratio", "ratio"), ("ci_low", "low"), ("ci_high", "high")):
        out[col] = pd.to_numeric(out[col], errors="coerce") if col in out.columns else np.nan
        out.loc[has, col] = j.loc[has, src]
    return out


def different(r: pd.Series | Mapping[str, Any]) -> bool:
    """A ratios / variants row's ``different`` as the statistics wrote it (METHODS.md, "Two words:
    different and precise"; :func:`podnet.stats.onep.different` made it): what the findings, the
    figures and the gate read, never a p compared again here."""
    return onep.word(r, "different")


def is_precise(r: pd.Series | Mapping[str, Any]) -> bool:
    """The ``precise`` column of a ratios / variants row (written as bool, read back as text)."""
    return onep.word(r, "precise")


def primary_precision(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """One row per primary ratio row of ``compare(tidy, settings)``: its interval, half-width and target."""
    s = Settings.of(settings)
    r = compare(tidy, s)
    r = r[r["role"] == "primary"].reset_index(drop=True)
    if r.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in PRECISION_COLUMNS})
    sj = stop_judgement(r, s)
    j, low, high, rhw, target = sj.judged, sj.low, sj.high, sj.rel_half_width, sj.target
    ratio, n = j["ratio"].to_numpy(dtype=float), j["n"].to_numpy(dtype=float)
    conf = s.confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        # the noise a t interval of n values with this half-width implies, then n for the target
        cv = np.where(n >= 2, rhw * np.sqrt(n) / core.t_quantile(conf, np.maximum(n - 1, 1)), np.nan)
    needed = np.full(len(r), np.nan)
    for t in np.unique(target[np.isfinite(target)]):
        m = target == t
        needed[m] = core.n_needed(cv[m], conf, float(t))
    out = r[["comparison", "by", "baseline", "treatment"] + GROUP_COLUMNS].copy()
    for c in ("n_treatment", "n_baseline", "n_pairs"):
        out[c] = pd.to_numeric(r[c], errors="coerce").to_numpy(dtype=float)
    out["interval"] = j["interval"].to_numpy()
    out["ratio"], out["low"], out["high"] = ratio, low, high
    out["rel_half_width"] = rhw
    out["target_rel_half_width"] = target
    out["n"] = n
    out["n_needed"] = needed
    # precise and met only from min_to_stop pairs (values) on: stopping at the first narrow interval
    # otherwise under-covers (benchmarks/sim_intervals.py --stopping)
    out["precise"] = precise(rhw, target, n, s, low, high)
    out["met"] = sj.met
    return out[PRECISION_COLUMNS]
