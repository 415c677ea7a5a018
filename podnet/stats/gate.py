"""The gate: thresholds on ratios, judged by where the ratio's interval lies (``podnet check``).

Each ``stats.thresholds`` entry names one comparison (by, baseline,
treatment, tool or tool:test, metric) and a bound (``min`` and/or ``max``).
Every ratios.csv row it matches (one per variant, direction, streams ...)
gets a verdict from the interval it is judged by (:func:`podnet.stats.precision.judged`: paired
within a launch's interleaved rounds when it has one, else its primary interval [ci_low, ci_high];
check.csv names which in ``interval``), the interval the findings state and adaptive sampling judges:

- ``pass``: the interval lies wholly on the right side (ci_low >= min, ci_high <= max);
- ``fail``: the interval lies wholly on the wrong side (ci_high < min or ci_low > max);
- ``inconclusive``: the interval straddles the bound, there is no interval (n < 2,
  unbounded) or one of width zero (no spread measured: neither precise nor passing), or no ratio
  row matches the entry.

Each verdict row also carries the ratio row's two words (METHODS.md, "Two words: different and
precise"): ``different`` and ``precise`` as ratios.csv has them (False for exploratory rows).

Exit codes of ``podnet check`` (:data:`EXIT`): 0 every verdict pass, 1 some
fail, 3 none fail but some inconclusive, 2 the inputs could not be read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.config import schema

from . import onep
from ._data import read_table
from .family import tests_match

#: defaults of a stats.thresholds entry (``by``), from the schema
THRESHOLD_DEFAULTS = schema.defaults_of(schema.section("stats", "thresholds")["items"])
EXIT = {"pass": 0, "fail": 1, "error": 2, "inconclusive": 3}
#: the verdicts, in the order a summary line counts them
VERDICTS = ("pass", "fail", "inconclusive")

CHECK_COLUMNS = [
    "threshold",  # the entry's position in stats.thresholds
    "by",
    "baseline",
    "treatment",
    "test",
    "metric",
    "variant",
    "direction",
    "streams",
    "role",
    "bound",  # e.g. ">= 0.8"
    "ratio",
    "ci_low",
    "ci_high",
    "interval",  # paired | unpaired | "" (none): which interval ci_low / ci_high are
    "different",  # the ratio row's: Holm-adjusted p below alpha (primary rows only)
    "precise",  # the ratio row's: its interval meets its width target on min_to_stop pairs
    "verdict",  # pass | fail | inconclusive
    "reason",
]


def _verdict(lo: float, hi: float, vmin: float | None, vmax: float | None) -> tuple[str, str]:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive", "no interval (too few runs, or unbounded)"
    if hi - lo <= 0:
        return (
            "inconclusive",
            "interval of width zero (values equal within rounding): no spread measured, not precise",
        )
    fails, passes = [], []
    if vmin is not None:
        (fails if hi < vmin else passes if lo >= vmin else []).append(f">= {vmin:g}")
    if vmax is not None:
        (fails if lo > vmax else passes if hi <= vmax else []).append(f"<= {vmax:g}")
    bounds = sum(b is not None for b in (vmin, vmax))
    if fails:
        return "fail", "interval wholly outside " + " and ".join(fails)
    if len(passes) == bounds:
        return "pass", "interval wholly inside the bound"
    return "inconclusive", "interval straddles the bound: more runs or less noise needed"


def check(ratios: pd.DataFrame, thresholds: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One verdict row per (threshold, matching ratio row); see the module docstring."""
    from .precision import judged

    out: list[dict[str, Any]] = []
    r = ratios.copy()
    j = judged(r)
    text = {
        c: r[c].astype("string").fillna("") for c in ("by", "baseline", "treatment", "tool", "test", "metric")
    }
    for i, t in enumerate(thresholds):
        by = str({**THRESHOLD_DEFAULTS, **t}["by"])
        m = (
            (text["by"] == by)
            & (text["baseline"] == str(t["baseline"]))
            & (text["treatment"] == str(t["treatment"]))
            & (text["metric"] == str(t["metric"]))
        ).to_numpy(dtype=bool)
        if t.get("test"):
            m &= tests_match(text["tool"], text["test"], [str(t["test"])])
        vmin = float(t["min"]) if t.get("min") is not None else None
        vmax = float(t["max"]) if t.get("max") is not None else None
        bound = " and ".join(
            b for b in (vmin is not None and f">= {vmin:g}", vmax is not None and f"<= {vmax:g}") if b
        )
        base = {
            "threshold": i,
            "by": by,
            "baseline": t["baseline"],
            "treatment": t["treatment"],
            "test": t.get("test", ""),
            "metric": t["metric"],
            "bound": bound,
        }
        if not m.any():
            out.append(
                {**base, "different": False, "precise": False, "verdict": "inconclusive"}
                | {"reason": "no ratio row matches this threshold"}
            )
            continue
        for i_row, row in r.loc[m].iterrows():
            jr = j.loc[i_row]
            lo, hi = float(jr["low"]), float(jr["high"])
            verdict, reason = _verdict(lo, hi, vmin, vmax)
            out.append(
                {
                    **base,
                    "test": f"{row.get('tool', '')}:{row.get('test', '')}",
                    "variant": row.get("variant"),
                    "direction": row.get("direction"),
                    "streams": row.get("streams"),
                    "role": row.get("role"),
                    "ratio": float(jr["ratio"]) if jr["interval"] else row.get("ratio"),
                    "ci_low": lo,
                    "ci_high": hi,
                    "interval": jr["interval"],
                    "different": onep.word(row, "different"),
                    "precise": onep.word(row, "precise"),
                    "verdict": verdict,
                    "reason": reason,
                }
            )
    return pd.DataFrame(out, columns=CHECK_COLUMNS)


def exit_code(verdicts: pd.DataFrame) -> int:
    """0 all pass, 1 some fail, 3 otherwise some inconclusive (see :data:`EXIT`)."""
    v = set(verdicts["verdict"])
    if "fail" in v:
        return EXIT["fail"]
    if "inconclusive" in v:
        return EXIT["inconclusive"]
    return EXIT["pass"]


def check_dir(processed: str | Path, thresholds: list[Mapping[str, Any]]) -> pd.DataFrame:
    """Verdicts for ``processed/ratios.csv`` (FileNotFoundError when it is missing)."""
    path = Path(processed) / "ratios.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file (run the statistics stage first)")
    return check(read_table(path), thresholds)
