"""Latency under load at parse: a probe output and a load output of one run (one sidecar) become tidy
rows of the same run with ``role`` probe / load; every way the pair can be wrong is a failed run
with its reason, never a latency figure. Real outputs: netperf TCP_RR -k (the launcher's form) as
the probe, iperf3 -J -P 2 -O 1 -t 2 as the load (tests/fixtures)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from podnet.parse import parse_experiment
from podnet.parse.raw import sha256, write_raw
from podnet.parse.tidy import TIDY_COLUMNS, coerce
from podnet.parse.underload import LOAD_SUFFIX, Window, coverage_problem, load_name, steady_window

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROBE = FIX / "netperf" / "tcp-rr-k-launcher.txt"
LOAD = FIX / "iperf3" / "tcp-p2-omit.json"  # -P 2 -O 1 -t 2: measured 1.999 s after a 1-s warm-up
T0 = json.loads(LOAD.read_text())["start"]["timestamp"]["timesecs"]


def iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run(
    tmp: Path,
    *,
    probe: tuple[float, float] = (T0 + 2.2, T0 + 2.9),
    load_text: str | None = None,
    write_load: bool = True,
    status: str = "ok",
    stem: str = "r001",
) -> Path:
    """One latency-under-load run under ``tmp/raw``: the probe's output with its sidecar and the load's
    output (``load_text``: the fixture unless given); returns the raw dir."""
    raw = tmp / "raw"
    case = raw / "v" / "pod-pod-cross-node" / "netperf-tcp_rr-load_streams-2"
    case.mkdir(parents=True, exist_ok=True)
    text = LOAD.read_text() if load_text is None else load_text
    name = load_name(case / f"{stem}.txt")
    if write_load:
        (case / name).write_text(text)
    meta = {
        "tool": "netperf",
        "variant": "v",
        "scenario": "pod-pod-cross-node",
        "test": "tcp_rr-load_streams-2",
        "repeat": 1,
        "status": "ok",
        "started": iso(probe[0]),
        "ended": iso(probe[1]),
        "sweep": {"test": "tcp_rr", "param": "load_streams", "value": 2},
        "launch": {"id": "L1"},
        "load": {
            "file": name,
            "tool": "iperf3",
            "status": status,
            "command": "iperf3 -c 10.0.0.2 -p 15211 -J -t 2 -i 1 -O 1 -P 2",
            "started": iso(T0 - 0.1),
            "ended": iso(T0 + 3.1),
            **({"sha256": sha256(case / name)} if write_load else {}),
            **({"error": "exit code 1"} if status == "failed" else {}),
        },
    }
    write_raw(case / f"{stem}.txt", PROBE.read_text(), meta)
    return raw


def failed_reason(raw: Path) -> str:
    parsed = parse_experiment(raw, "e")
    assert parsed.tidy.empty, "a failed pair gave tidy rows"
    (reason,) = parsed.failed["reason"]
    return str(reason)


def test_probe_and_load_are_rows_of_one_run_told_apart_by_role(tmp_path):
    parsed = parse_experiment(run(tmp_path), "e")
    assert parsed.failed.empty, parsed.failed.to_dict("records")
    t = parsed.tidy
    assert list(t.columns) == [*TIDY_COLUMNS, "role"]
    assert set(t["run_id"]) == {"v/pod-pod-cross-node/netperf-tcp_rr-load_streams-2/r001"}
    probe, load = t[t["role"] == "probe"], t[t["role"] == "load"]
    assert set(probe["tool"]) == {"netperf"} and set(load["tool"]) == {"iperf3"}
    assert {"latency_p50", "latency_p99"} <= set(probe["metric"])
    thr = load[load["metric"] == "throughput"]
    assert len(thr) == 1 and thr["value"].iloc[0] > 0 and int(thr["streams"].iloc[0]) == 2
    # both are points of the same sweep, in the same test
    assert set(t["test"]) == {"tcp_rr-load_streams-2"} and set(t["sweep_param"]) == {"load_streams"}
    assert set(t["sweep_value"]) == {2.0}
    assert load["raw_path"].iloc[0].endswith("r001" + LOAD_SUFFIX)


def test_a_table_without_load_runs_has_no_role_column_and_mixed_shards_fill_it_empty():
    base = {c: None for c in TIDY_COLUMNS} | {"experiment": "e", "value": 1.0, "repeat": 1, "streams": 1}
    plain = coerce(pd.DataFrame([base]))
    assert "role" not in plain.columns
    mixed = coerce(pd.concat([plain, coerce(pd.DataFrame([{**base, "role": "probe"}]))], ignore_index=True))
    assert list(mixed["role"]) == ["", "probe"]


def test_load_output_missing_is_a_failed_run(tmp_path):
    assert "load output r001.load.json is missing" in failed_reason(run(tmp_path, write_load=False))


@pytest.mark.parametrize(
    "cut, words",
    [
        (lambda text: text[: len(text) // 2], "incomplete: not whole JSON"),
        (lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "end"}), "no 'end'"),
        (lambda text: json.dumps({**json.loads(text), "error": "the server is busy"}), "the server is busy"),
    ],
)
def test_load_output_incomplete_is_a_failed_run(tmp_path, cut, words):
    raw = run(tmp_path, load_text=cut(LOAD.read_text()))
    assert words in failed_reason(raw)


def test_load_output_changed_after_it_was_recorded_is_a_failed_run(tmp_path):
    raw = run(tmp_path)
    (load,) = raw.rglob("*" + LOAD_SUFFIX)
    load.write_text(load.read_text().replace('"omit":\t1', '"omit":\t1 '))
    assert "changed after it was recorded" in failed_reason(raw)


def test_load_that_failed_at_launch_is_a_failed_run(tmp_path):
    assert "the load failed when it was launched: exit code 1" in failed_reason(
        run(tmp_path, status="failed")
    )


@pytest.mark.parametrize(
    "window, words",
    [
        ((T0 + 1.5, T0 + 2.5), "the probe started 0.50 s before the load's steady part"),
        ((T0 + 2.2, T0 + 3.5), "the probe ended 0.50 s after the load's last measured second"),
    ],
)
def test_load_not_covering_the_probe_is_a_failed_run(tmp_path, window, words):
    reason = failed_reason(run(tmp_path, probe=window))
    assert "the load did not cover the probe" in reason and words in reason


def test_probe_missing_leaves_the_load_a_bad_entry_with_the_reason(tmp_path):
    raw = run(tmp_path)
    (probe,) = raw.rglob("r001.txt")
    probe.unlink()
    probe.with_name(probe.name + ".meta.yaml").unlink()
    parsed = parse_experiment(raw, "e")
    assert parsed.tidy.empty
    (reason,) = parsed.failed["reason"]
    assert "a load output without its probe" in reason


def test_probe_unparsable_is_a_failed_run_even_with_a_good_load(tmp_path):
    raw = run(tmp_path)
    (probe,) = raw.rglob("r001.txt")
    shutil.copy(FIX / "netperf" / "error-refused.txt", probe)
    assert failed_reason(raw)  # the sha256 or the output: a failed run either way


def test_a_retry_pairs_with_its_own_load():
    assert load_name("r001.a2.txt") == "r001.a2.load.json"


def test_steady_window_allows_the_start_stamp_a_second_and_skips_the_warm_up():
    doc = json.loads(LOAD.read_text())
    w = steady_window(doc, None)
    assert w.start == pytest.approx(T0 + 1 + 1) and w.end == pytest.approx(T0 + 1 + 1.999341)
    # without iperf3's stamp, the launcher's time before the load's exec stands in for it
    doc["start"].pop("timestamp")
    w = steady_window(doc, T0 + 0.25)
    assert w.start == pytest.approx(T0 + 1.25)
    assert coverage_problem(Window(T0 + 2, T0 + 2.5), Window(T0 + 2, T0 + 3)) is None
