"""What idle clusters add to a bare path's spread: the floor with no cluster up against the floor
with a campaign's clusters up, from one published experiment.

A campaign with ``bare_floor: N`` (``config/campaigns/seed-003.yaml``) first runs N rounds of
``podnet floor`` before any of its clusters is up (variant ``floor``, scenario ``netns-veth``), then
its launch interleaves the same tests at each round's start with every cluster up and idle between
runs (scenario ``floor-netns-veth``). Per tool, test and headline metric this prints both sides' n,
mean and per-run CV, the CV ratio (clusters up / none) with its 95 % interval (the F interval of
``podnet.stats.noise``, as ``noise_floor.csv`` uses) and a verdict: ``matters`` when the interval
lies wholly above 1 and the ratio is at least 1.25 (the noise target of issue 9), ``no sign`` when
the interval contains 1, else ``lower`` / ``inconclusive``.

    python benchmarks/idle_floor.py processed/seed-003/tidy.parquet
"""

from __future__ import annotations

import argparse
import sys
from typing import NamedTuple

import numpy as np
import pandas as pd

from podnet.stats.noise import ratio_interval
from podnet.tools import headline_metrics

BARE = ("floor", "netns-veth")
IN_LAUNCH = "floor-netns-veth"
#: the CV ratio above which idle clusters "matter" (issue 9's noise target, noise_floor.csv's `meets`)
MATTERS = 1.25


class Side(NamedTuple):
    n: int
    mean: float
    cv: float


def side(values: np.ndarray) -> Side:
    """n, mean and per-run CV (sd with ddof 1 over the mean)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return Side(len(v), float(np.mean(v)) if len(v) else np.nan, np.nan)
    return Side(len(v), float(v.mean()), float(v.std(ddof=1) / v.mean()))


def verdict(ratio: float, lo: float, hi: float) -> str:
    """``matters`` / ``no sign`` / ``lower`` / ``inconclusive`` (see the module docstring)."""
    if not np.isfinite(lo):
        return "inconclusive"
    if lo > 1 and ratio >= MATTERS:
        return "matters"
    if lo <= 1 <= hi:
        return "no sign"
    return "lower" if hi < 1 else "inconclusive"


def table(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per (tool, test, metric) the two floors share (headline metrics only)."""
    t = tidy[tidy["source"].astype(str) == "measured"] if "source" in tidy.columns else tidy
    variant, scenario = t["variant"].astype(str), t["scenario"].astype(str)
    bare = t[(variant == BARE[0]) & (scenario == BARE[1])]
    up = t[scenario == IN_LAUNCH]
    out = []
    for (tool, test, metric), g in bare.groupby(["tool", "test", "metric"], sort=True):
        if metric not in headline_metrics(str(tool)):
            continue
        h = up[(up["tool"] == tool) & (up["test"] == test) & (up["metric"] == metric)]
        a, b = side(g["value"].to_numpy()), side(h["value"].to_numpy())
        if b.n < 2 or a.n < 2:
            continue
        ratio = b.cv / a.cv if a.cv > 0 else np.nan
        lo, hi = ratio_interval(ratio, b.n - 1, a.n - 1) if np.isfinite(ratio) else (np.nan, np.nan)
        out.append(
            {
                "tool": tool,
                "test": test,
                "metric": metric,
                "n_none": a.n,
                "mean_none": a.mean,
                "cv_none": a.cv,
                "n_up": b.n,
                "mean_up": b.mean,
                "cv_up": b.cv,
                "cv_ratio": ratio,
                "ci_low": lo,
                "ci_high": hi,
                "verdict": verdict(ratio, lo, hi),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tidy", help="processed/<experiment>/tidy.parquet (or .csv)")
    args = ap.parse_args(argv)
    tidy = pd.read_parquet(args.tidy) if args.tidy.endswith(".parquet") else pd.read_csv(args.tidy)
    t = table(tidy)
    if t.empty:
        print("no floor with and without clusters in this table", file=sys.stderr)
        return 1
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(t.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
