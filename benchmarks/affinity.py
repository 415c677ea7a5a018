"""Runs by test (benchmarks/placement.yaml: one CPU, two CPUs, unpinned; affinity.yaml: pinned and
unpinned; qperf_length.yaml: 3-s and 10-s runs): per path and test (median: µs, iperf3 Gbit/s), the per-run
spread (sd of log values), the paired log-ratio sd of each path against host-host by round, and the
pairs a ±5 % interval at 97.5 % would need (z-approximation, (2.24 sd / log 1.05)²), and the
placements its runs ran in (tidy ``placement``: c0/s1 = client on CPU 0, server on CPU 1).

    .venv/bin/python benchmarks/affinity.py [--raw raw/affinity]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.parse import parse_experiment

METRICS = {"qperf": "latency", "netperf": "latency_mean", "ping": "rtt_median", "iperf3": "throughput"}


def table(tidy: pd.DataFrame, baseline: str = "host-host") -> pd.DataFrame:
    """One row per (tool, test, scenario): n, median, per-run sd of log, paired sd against ``baseline``."""
    rows = []
    for (tool, test), g in tidy.groupby(["tool", "test"]):
        g = g[g["metric"] == METRICS.get(str(tool), "latency")]
        w = np.log(g.pivot_table(index="round_seq", columns="scenario", values="value", aggfunc="first"))
        for sc in w.columns:
            d = (w[sc] - w[baseline]).dropna() if sc != baseline and baseline in w else pd.Series(dtype=float)
            sd_pair = float(d.std()) if len(d) > 1 else np.nan
            seen = g[g["scenario"] == sc]["placement"].value_counts() if "placement" in g else None
            rows.append(
                {
                    "tool": tool,
                    "test": test,
                    "scenario": sc,
                    "n": int(w[sc].notna().sum()),
                    # latency in µs, throughput in Gbit/s
                    "median": float(np.exp(w[sc].median()) * (1e-9 if tool == "iperf3" else 1e6)),
                    "sd_log": float(w[sc].std()),
                    "sd_pair": sd_pair,
                    "pairs_for_5pct": float(np.ceil((2.24 * sd_pair / np.log(1.05)) ** 2))
                    if len(d) > 1
                    else np.nan,
                    "placements": ", ".join(f"{k} x{v}" for k, v in seen.items() if k)
                    if seen is not None
                    else "",
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", default="raw/affinity")
    a = ap.parse_args(argv)
    parsed = parse_experiment(Path(a.raw), Path(a.raw).name)  # the raw folder is the experiment
    if parsed.tidy.empty:
        print(f"{a.raw}: no parsed runs")
        return 1
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table(parsed.tidy).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
