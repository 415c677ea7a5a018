"""Time to network in the statistics: per-pod rows are in no summary of runs; net_ready.csv gives
P50/P90/P99 over the pooled pods with cluster-bootstrap intervals over runs, written by the stats
stage like latency_under_load.csv."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podnet import stats
from podnet.parse.tidy import coerce
from podnet.stats._data import split_sources
from podnet.stats.netready import MIN_RUNS, NET_READY_COLUMNS, cluster_bootstrap, net_ready_table
from podnet.tools import netready as nr
from tests.netready_data import pod_row

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "netready" / "burst-k3.json"


def tidy(
    runs: int = 5, pods: int = 20, seed: int = 7, variant: str = "bridge", shift: float = 0.0
) -> pd.DataFrame:
    """Per-pod rows as the parse stage makes them: each run its own level (runs differ), pods around it."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(1, runs + 1):
        level = 1.0 + shift + rng.normal(0, 0.2)
        for p in range(1, pods + 1):
            for metric, value in (("net_ready_s", level + rng.exponential(0.3)), ("ip_s", 0.5 * level)):
                rows.append(pod_row(variant, r, p, metric, value, pods))
    return coerce(pd.DataFrame(rows))


def test_per_pod_rows_are_in_no_summary_of_runs():
    t = tidy()
    other = t.head(1).assign(tool="ping", metric="rtt_avg", pod="", run_id="x/r001")
    both = coerce(pd.concat([t, other], ignore_index=True))
    measured, _ = split_sources(both)
    assert list(measured["tool"]) == ["ping"]


def test_percentiles_pool_the_pods_and_the_interval_resamples_runs():
    t = tidy()
    table = net_ready_table(t, {"bootstrap": {"resamples": 1000}})
    assert list(table.columns) == NET_READY_COLUMNS
    nr_rows = table[table["metric"] == "net_ready_s"].set_index("estimand")
    pooled = t.loc[t["metric"] == "net_ready_s", "value"].to_numpy()
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        row = nr_rows.loc[name]
        assert row["value"] == pytest.approx(np.quantile(pooled, q))
        assert (row["n_runs"], row["n_pods"], row["pods_per_run"]) == (5, 100, 20)
        assert row["mode"] == "burst" and row["concurrency"] == 20
        if name == "p50":
            assert row["ci_low"] <= row["value"] <= row["ci_high"]
            assert row["ci_method"].startswith("cluster bootstrap over runs")
    # a variant's own P90 and P99: points (their intervals under-cover over a few runs)
    for name in ("p90", "p99"):
        assert (
            np.isnan(nr_rows.loc[name, "ci_low"]) and f"{name.upper()}: a point" in nr_rows.loc[name, "note"]
        )
    assert nr_rows.loc["p50", "note"] == ""
    # the same table again: the same numbers (one seeded stream per group)
    again = net_ready_table(t, {"bootstrap": {"resamples": 1000}})
    pd.testing.assert_frame_equal(table, again)


def test_the_run_level_interval_is_wider_than_pods_taken_as_independent():
    """Runs that differ in level: resampling whole runs shows it; resampling pods would hide it."""
    t = tidy(runs=8, pods=20, seed=3)
    v = t[t["metric"] == "ip_s"]  # every pod of a run at its run's level: all variation is between runs
    runs = [g["value"].to_numpy() for _, g in v.groupby("run_id")]
    rng = np.random.default_rng(1)
    iv = cluster_bootstrap(runs, np.array([0.5]), 0.95, 2000, rng)
    lo, hi = iv.low, iv.high
    pods = np.concatenate(runs)
    draws = np.quantile(pods[rng.integers(0, len(pods), (2000, len(pods)))], 0.5, axis=1)
    iid = np.quantile(draws, [0.025, 0.975])
    assert hi[0] - lo[0] > 1.5 * (iid[1] - iid[0])


def test_few_runs_give_no_interval_and_say_so():
    table = net_ready_table(tidy(runs=MIN_RUNS - 1))
    assert table["ci_low"].isna().all() and table["ci_high"].isna().all()
    assert table["note"].str.contains(f"at least {MIN_RUNS} runs").all()


def test_serial_runs_are_their_own_rows_and_other_tables_are_untouched():
    burst = tidy()
    serial = tidy(seed=9).assign(test="serial", streams=1)
    table = net_ready_table(coerce(pd.concat([burst, serial], ignore_index=True)))
    assert set(zip(table["test"], table["mode"], table["concurrency"])) == {
        ("burst", "burst", 20),
        ("serial", "serial", 1),
    }
    assert net_ready_table(burst.assign(pod="")).empty


def test_the_stats_stage_writes_net_ready_csv(tmp_path):
    # a tidy table of netready runs only (as config/examples/time-to-network.yaml makes), from the parser
    res = nr.ADAPTER.parse(FIX.read_text())
    rows = []
    for r in range(1, 4):
        for m in res.measurements:
            rows.append(pod_row("bridge", r, m.pod, m.metric, m.value * (1 + 0.1 * r), 3, run_id=f"r{r}"))
    path = tmp_path / "tidy.parquet"
    coerce(pd.DataFrame(rows)).to_parquet(path)
    paths = stats.run(path, tmp_path / "out", {"bootstrap": {"resamples": 200}}, cache=False)
    written = pd.read_csv(paths["net_ready"])
    assert set(written["metric"]) == set(nr.METRICS) and len(written) == 3 * len(nr.METRICS)
    assert (written["n_runs"] == 3).all() and (written["n_pods"] == 9).all()
    assert pd.read_csv(paths["summary"]).empty  # no run-level rows: nothing else to summarise
    assert json.loads((tmp_path / "out" / "stats_settings.json").read_text())["bootstrap"]["resamples"] == 200
