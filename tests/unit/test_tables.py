"""Readers' tables (issue 45): one unit per column, in display units chosen from the column's own
values, never a raw SI float; the explore notebook's per-run and outlier tables use them and say
once what every row shares."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from podnet.report import explore, tables
from podnet.report.figures import data

#: a number written in e-notation, or with more than 4 significant digits
E_NOTATION = re.compile(r"\d[eE][-+]?\d")


def _cells(df: pd.DataFrame) -> list[str]:
    return [str(x) for x in df.to_numpy().ravel()]


def test_a_column_reads_in_the_unit_its_own_values_call_for():
    assert tables.column_unit([5.1e-05, 8.8e-05, 1.2e-04], "s") == (1e-6, "µs")
    assert tables.column_unit([0.034, 0.063, 0.00019], "s") == (1e-3, "ms")
    assert tables.column_unit([9.4e8, 9.1e8, 8.1e8], "bit/s") == (1e6, "Mbit/s")
    assert tables.column_unit([1.2e10, 9.9e9], "bit/s") == (1e9, "Gbit/s")
    # one large row does not put every other row in its unit: 3.67 Gbit/s beside 787 kbit/s and 87.6 Mbit/s
    assert tables.column_unit([3.67e9, 87.6e6, 787e3, 791e3, 845e3, 3.34e9], "bit/s") == (1e6, "Mbit/s")
    assert tables.column_unit([0.53, 0.57], "fraction") == (0.01, "%")
    assert tables.column_unit([1.4e-10], "s/bit") == (1e-9, "s/Gbit")
    assert tables.column_unit([131072.0], "bytes") == (1024.0, "KiB")
    assert tables.column_unit([float("nan")], "s") == (1.0, "s")


def test_a_small_frame_has_one_unit_per_column_and_no_raw_si_float():
    df = pd.DataFrame(
        {
            "scenario": ["pod-pod", "host-host", "pod-svc"],
            "latency": [5.1e-05, 8.8e-05, float("nan")],
            "rate": [9.42e8, 9.1e8, 1.2345678e9],
            "tiny": [1e-12, 2e-12, 3e-12],
        }
    )
    out = tables.in_units(df, {"latency": "s", "rate": "bit/s", "tiny": "s"})
    assert list(out.columns) == ["scenario", "latency (µs)", "rate (Mbit/s)", "tiny (ns)"]
    assert out["latency (µs)"].tolist() == ["51.00", "88.00", ""]
    assert out["rate (Mbit/s)"].tolist() == ["942.0", "910.0", "1,235"]
    assert out["tiny (ns)"].tolist() == ["0.001000", "0.002000", "0.003000"]
    assert not any(E_NOTATION.search(c) for c in _cells(out))
    assert df["latency"].iloc[0] == 5.1e-05  # the frame given is left as it was
    bounds = tables.in_units(
        pd.DataFrame({"value": [5.97e-4], "low": [-8.9e-6], "high": [4.7e-4]}),
        {"value": "s", "low": "s", "high": "s"},
        together=True,
    )
    assert list(bounds.columns) == ["value (µs)", "low (µs)", "high (µs)"]  # a value and its bounds alike


def test_columns_every_row_shares_are_said_once():
    df = pd.DataFrame(
        {"variant": ["bridge"] * 2, "streams": [1.0, 1.0], "repeat": [1.0, 2.0], "v": ["1", "1"]}
    )
    shown, said = tables.said_once(tables.keys_as_text(df, ["streams", "repeat"]), keep=["v"])
    assert list(shown.columns) == ["repeat", "v"] and shown["repeat"].tolist() == ["1", "2"]
    assert said == "All rows: variant bridge, streams 1."
    one, said = tables.said_once(df.head(1))  # one row: nothing to say once
    assert said == "" and list(one.columns) == list(df.columns)


def _tables(tidy: pd.DataFrame, outliers: pd.DataFrame | None = None) -> data.Tables:
    return data.Tables(
        tidy=tidy,
        summary=pd.DataFrame(),
        ratios=pd.DataFrame(),
        failed=pd.DataFrame(),
        outliers=outliers if outliers is not None else pd.DataFrame(),
    )


def _row(scenario: str, tool: str, test: str, repeat: int, metric: str, value: float, unit: str) -> dict:
    return {
        "experiment": "x", "variant": "bridge", "scenario": scenario, "tool": tool, "test": test,
        "protocol": "tcp", "direction": "roundtrip" if tool == "ping" else "forward", "streams": 1,
        "repeat": repeat, "run_id": f"bridge/{scenario}/{tool}-{test}/r{repeat:03d}", "metric": metric,
        "value": value, "unit": unit, "source": "measured", "raw_path": f"raw/x/{scenario}/{tool}-{test}-r{repeat}.txt",
    }  # fmt: skip


def test_the_per_run_view_has_one_unit_per_column_and_no_raw_si_float():
    rows = [
        _row(s, "ping", "plain", r, "rtt_avg", v, "s")
        for s, r, v in [("pod-pod", 1, 5.1e-05), ("pod-pod", 2, 6.3e-05), ("host-host", 1, 3.4e-05)]
    ] + [
        _row(s, "iperf3", "tcp", r, "throughput", v, "bit/s")
        for s, r, v in [("pod-pod", 1, 9.41e9), ("pod-pod", 2, 9.12e9), ("host-host", 1, 787e3)]
    ]
    t = _tables(pd.DataFrame(rows))
    shown = explore.runs_view(t)
    said, table = shown
    assert said == "All rows: variant bridge, streams 1."
    assert "run_id" not in table.columns  # variant, scenario, test and repeat tell the rows apart
    assert list(table.columns) == [
        "scenario",
        "test",
        "direction",
        "repeat",
        "RTT (mean, µs)",
        "Throughput (receiver, Gbit/s)",
    ]
    rtt = table.set_index(["scenario", "test", "repeat"])["RTT (mean, µs)"]
    assert rtt[("pod-pod", "ping plain", "1")] == "51.00" and rtt[("pod-pod", "iperf3 tcp", "1")] == ""
    assert not any(E_NOTATION.search(c) or c == "nan" for c in _cells(table))
    numbers = explore.runs(t)  # the same table as numbers, for analysis and the distributions
    assert numbers["RTT (mean, µs)"].dropna().tolist() == [34.0, 51.0, 63.0]


def test_the_outlier_view_is_one_table_per_unit_with_the_fences_in_it():
    rows = [
        {**_row("pod-pod", "ping", "plain", 4, "rtt_median", 3.8e-05, "s"), "fence_low": 4.075e-05, "fence_high": 5.075e-05},
        {**_row("pod-pod", "iperf3", "tcp", 8, "tcp_rtt_mean", 5.97e-4, "s"), "fence_low": -8.875e-06, "fence_high": 4.74e-4},
        {**_row("pod-pod", "iperf3", "tcp", 2, "cpu_per_bit_server", 4.87e-11, "s/bit"), "fence_low": 2.03e-11, "fence_high": 4.29e-11},
        {**_row("pod-pod", "ping", "plain", 8, "elapsed", 1.841, "s"), "fence_low": 1.832, "fence_high": 1.838},
    ]  # fmt: skip
    out = pd.DataFrame(rows).assign(outlier_rule="tukey k=1.5")
    shown = explore.outliers_view(_tables(pd.DataFrame(), out))
    heads = [x for x in shown if isinstance(x, str)]
    frames = [x for x in shown if not isinstance(x, str)]
    assert [h.split(":")[0] for h in heads] == ["**In µs**", "**In s/Gbit**", "**In s**"]
    us = frames[0]
    assert {"value (µs)", "low fence (µs)", "high fence (µs)"} <= set(us.columns)
    assert us["value (µs)"].tolist() == ["38.00", "597.0"] and us["low fence (µs)"].tolist() == [
        "40.75",
        "-8.875",
    ]
    assert us["measure"].tolist() == ["RTT (median)", "TCP RTT (mean, sender)"]
    for frame in frames:
        assert not {"unit", "raw_path", "run_id", "experiment", "protocol"} & set(frame.columns)
        assert not any(E_NOTATION.search(c) or c == "nan" for c in _cells(frame))
    assert "2 values outside the fences (tukey k=1.5)" in heads[0]
    assert explore.outliers_view(_tables(pd.DataFrame())) == ["No outliers (or too few repeats to tell)."]


@pytest.mark.parametrize("x", [5.1e-05, 1.2345678e10, -8.875e-06, 1e-12])
def test_a_number_is_never_written_in_e_notation(x):
    assert not E_NOTATION.search(tables.text(x))
