"""Timings of the statistics stage on a synthetic tidy table (printed, not asserted).

    .venv/bin/python benchmarks/bench_stats.py [--groups 2000] [--repeats 10]

Groups are (variant x scenario x metric) cells; every variant is compared with
the baseline variant, so ratios.csv has (variants - 1) / variants * groups rows.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from podnet import stats
from podnet.parse.tidy import frame


def synthetic(groups: int, repeats: int, variants: int = 4, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    metrics = ["throughput", "rtt_avg", "loss", "sender_throughput", "cpu"]
    per_variant = max(1, groups // variants)
    scen = int(np.ceil(per_variant / len(metrics)))
    rows = []
    for v in range(variants):
        for sc in range(scen):
            for m in metrics:
                mu = 1e9 * (1 + 0.05 * v)
                vals = mu * (1 + 0.05 * rng.standard_normal(repeats))
                for r in range(repeats):
                    rows.append(
                        {
                            "experiment": "bench",
                            "variant": f"v{v}",
                            "scenario": f"s{sc}",
                            "tool": "iperf3",
                            "test": "tcp",
                            "protocol": "tcp",
                            "direction": "forward",
                            "streams": 1,
                            "repeat": r + 1,
                            "run_id": f"v{v}-s{sc}-{r + 1}",
                            "metric": m,
                            "value": vals[r],
                            "unit": "bit/s",
                            "source": "measured",
                            "raw_path": "raw/x",
                        }
                    )
    return frame(rows)  # the tidy columns (podnet.parse.tidy.TIDY_COLUMNS), in order, typed


def intervals(tidy: pd.DataFrame, seconds: int = 30, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    runs = tidy["run_id"].unique()
    t = np.arange(seconds, dtype=float)
    k = len(runs)
    return pd.DataFrame(
        {
            "run_id": np.repeat(runs, seconds),
            "stream": "sum",
            "direction": "forward",
            "t_start": np.tile(t, k),
            "t_end": np.tile(t + 1, k),
            "omitted": np.tile(t < 2, k),
            "metric": "throughput",
            "value": 1e9 * (1 + 0.03 * rng.standard_normal(k * seconds)),
            "unit": "bit/s",
            "raw_path": "raw/x",
        }
    )


def timed(label: str, fn):
    t0 = time.perf_counter()
    res = fn()
    print(f"{label:<40s} {time.perf_counter() - t0:8.2f} s")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--groups", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--resamples", type=int, default=10000)
    a = ap.parse_args()
    settings = {"comparisons": [{"by": "variant", "baseline": "v0"}], "bootstrap": {"resamples": a.resamples}}
    tidy = synthetic(a.groups, a.repeats)
    ngroups = tidy.groupby(["variant", "scenario", "metric"]).ngroups
    print(f"{len(tidy)} tidy rows, {ngroups} groups x {a.repeats} repeats, {a.resamples} bootstrap resamples")
    s = timed("summarize", lambda: stats.summarize(tidy, settings))
    r = timed("compare", lambda: stats.compare(tidy, settings))
    timed("plan", lambda: stats.plan(tidy, settings))
    timed("cases_needing_more", lambda: stats.cases_needing_more(tidy, settings, ["variant", "scenario"]))
    iv = intervals(tidy)
    timed(f"within_run ({len(iv)} intervals)", lambda: stats.within_run(iv, settings))
    with tempfile.TemporaryDirectory() as d:
        tp = Path(d) / "tidy.parquet"
        ip = Path(d) / "intervals.parquet"
        tidy.to_parquet(tp)
        iv.to_parquet(ip)
        timed("run (all tables, csv writing)", lambda: stats.run(tp, Path(d) / "out", settings, ip))
    print(f"summary rows {len(s)}, ratio rows {len(r)}")


if __name__ == "__main__":
    main()
