"""Latency under load in the statistics: each load point's probe latency with its interval, its ratio
to the idle point of the same rounds with an order-statistic interval, and the load it carried
(latency_under_load.csv); the sweeps the rest of podnet draws are untouched."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.parse.tidy import frame
from podnet.stats import run as stats_run
from podnet.stats.settings import resolve
from podnet.stats.summary import summarize
from podnet.stats.sweeps import sweep_table
from podnet.stats.underload import UNDER_LOAD_COLUMNS, latency_under_load, pair_key

#: the idle P50 latency per round, and each load point's factor over it
IDLE = [20e-6, 22e-6, 19e-6, 25e-6, 21e-6, 23e-6, 20e-6, 24e-6, 22e-6, 21e-6]
FACTOR = {0: 1.0, 1: 1.5, 4: 3.0}


def _rows(factor: dict[int, float] = FACTOR, idle: list[float] = IDLE) -> pd.DataFrame:
    rows = []
    for streams, f in factor.items():
        for rep, base in enumerate(idle, start=1):
            common = {
                "experiment": "e",
                "variant": "flannel",
                "scenario": "pod-pod-cross-node",
                "test": f"tcp_rr-load_streams-{streams}",
                "streams": 1,
                "repeat": rep,
                "run_id": f"s{streams}/r{rep}",
                "source": "measured",
                "launch_id": "L1",
                "round_seq": rep - 1,
                "sweep": "tcp_rr",
                "sweep_param": "load_streams",
                "sweep_value": streams,
            }
            # a little noise of the run's own beside the round's shared part
            value = base * f * (1 + 0.02 * ((rep * 7 + streams) % 5 - 2) / 2)
            for metric in ("latency_p50", "latency_p99"):
                v = value * (3 if metric == "latency_p99" else 1)
                rows.append(
                    {**common, "tool": "netperf", "protocol": "tcp", "direction": "roundtrip",
                     "metric": metric, "value": v, "unit": "s", "raw_path": "p", "role": "probe"}
                )  # fmt: skip
            rows.append(
                {**common, "tool": "netperf", "protocol": "tcp", "direction": "roundtrip",
                 "metric": "transaction_rate", "value": 1 / value, "unit": "transactions/s",
                 "raw_path": "p", "role": "probe"}
            )  # fmt: skip
            # seconds that are no latency: the test length (the same in every run: a ratio of 1 with
            # an interval of width zero, as the first under-load campaign published) and a CPU cost
            for metric, v in (("duration", 3.0), ("machine_cpu_per_transaction", 2e-5 * f)):
                rows.append(
                    {**common, "tool": "netperf", "protocol": "tcp", "direction": "roundtrip",
                     "metric": metric, "value": v, "unit": "s", "raw_path": "p", "role": "probe"}
                )  # fmt: skip
            if streams:
                for d in ("bidir-forward", "bidir-reverse"):
                    rows.append(
                        {**common, "tool": "iperf3", "protocol": "tcp", "direction": d, "streams": streams,
                         "metric": "throughput", "value": 4e9, "unit": "bit/s", "raw_path": "l",
                         "role": "load"}
                    )  # fmt: skip
    return frame(rows)


def _under(tidy: pd.DataFrame) -> pd.DataFrame:
    s = resolve({})
    return latency_under_load(tidy, sweep_table(tidy, summarize(tidy, s)))


def test_each_load_point_has_its_latency_interval_and_its_ratio_to_idle():
    u = _under(_rows())
    assert list(u.columns) == UNDER_LOAD_COLUMNS
    assert set(u["metric"]) == {"latency_p50", "latency_p99"}  # latencies only: not rates, test length, CPU
    p50 = u[u["metric"] == "latency_p50"].set_index("load_streams")
    assert list(p50.index) == [0, 1, 4]
    for streams, f in FACTOR.items():
        row = p50.loc[streams]
        assert row["n"] == len(IDLE) and row["ci_low"] < row["centre"] < row["ci_high"]
        assert row["ratio_to_idle"] == pytest.approx(f, rel=0.03)
        if streams:
            assert row["n_pairs"] == len(IDLE)
            assert row["ratio_low"] <= row["ratio_to_idle"] <= row["ratio_high"]
            # pairing removes the rounds' 25 % spread; what is left is mostly netperf's 1-us printing
            # at 20 us (each ratio within (L -/+ 0.5) / (I +/- 0.5): about +-5 %)
            assert row["ratio_high"] / row["ratio_low"] < 1.15
            assert "order statistics" in row["ratio_method"]
            assert row["load_throughput"] == pytest.approx(8e9) and row["load_direction"] == (
                "bidir-forward+bidir-reverse"
            )
    assert p50.loc[0, "idle_centre"] == pytest.approx(np.median(IDLE), rel=0.02)


def test_a_load_sweep_without_its_idle_point_has_no_ratio_and_says_why():
    u = _under(_rows({1: 1.5, 4: 3.0}))
    assert u["ratio_to_idle"].isna().all()
    assert u["note"].str.contains("no idle point").all()


def test_rounds_pair_runs_and_repeats_stand_in_without_them():
    t = _rows()
    keys = pair_key(t)
    assert keys.iloc[0] == "L1#round0"
    assert pair_key(t.drop(columns=["round_seq"])).iloc[0] == "L1#repeat1"


def test_no_load_sweep_gives_an_empty_table_with_its_columns(tmp_path):
    t = _rows().drop(columns=["role"])
    assert _under(t).empty
    t.to_parquet(tmp_path / "tidy.parquet")
    paths = stats_run(tmp_path / "tidy.parquet", tmp_path / "out", {}, cache=False)
    written = pd.read_csv(paths["latency_under_load"])
    assert written.empty and list(written.columns) == UNDER_LOAD_COLUMNS


def test_the_stats_stage_writes_latency_under_load(tmp_path):
    _rows().to_parquet(tmp_path / "tidy.parquet")
    paths = stats_run(tmp_path / "tidy.parquet", tmp_path / "out", {}, cache=False)
    written = pd.read_csv(paths["latency_under_load"])
    assert len(written) == 6 and set(written["load_streams"]) == {0, 1, 4}


def test_ratios_that_all_printed_alike_get_the_rounding_width_not_zero():
    """netperf prints percentiles in whole us: ten loaded P50s and ten idle P50s all 33 us give
    ratios all exactly 1, and the interval is the printed resolution's ([32.5/33.5, 33.5/32.5]),
    as the under-load campaign of 2026-11-29 needed for macvlan's P50 (it published [1, 1])."""
    idle = [33e-6] * 10
    u = _under(_rows({0: 1.0, 8: 1.0}, idle))
    row = u[(u["metric"] == "latency_p50") & (u["load_streams"] == 8)].iloc[0]
    assert row["ratio_to_idle"] == pytest.approx(1.0, rel=0.02)
    assert row["ratio_low"] < 1.0 < row["ratio_high"]
    assert row["ratio_low"] <= 32.5 / 33.5 * 1.001 and row["ratio_high"] >= 33.5 / 32.5 * 0.999
    assert "printed resolution" in row["ratio_method"]


def test_bounded_median_interval_holds_the_plain_one_and_never_has_width_zero():
    from podnet.stats.sweeps import median_interval, median_interval_bounded

    x = np.array([1.0] * 9)
    plain = median_interval(x)
    assert plain.low == plain.high == 1.0  # what the bounds are for
    b = median_interval_bounded(x, x - 0.03, x + 0.03)
    assert b.low == pytest.approx(0.97) and b.high == pytest.approx(1.03) and b.coverage == plain.coverage
    rng = np.random.default_rng(1)
    y = rng.lognormal(0, 0.2, 15)
    p, w = median_interval(y), median_interval_bounded(y, y * 0.99, y * 1.01)
    assert w.low <= p.low and w.high >= p.high and w.median == p.median
