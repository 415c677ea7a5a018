"""Time to network at parse: a netready run's raw JSON (one record per pod, as the launcher writes it)
becomes one tidy row per pod and metric (column ``pod``); every way a pod can fall short is a failed
run with its reason, never a number. Fixture: tests/fixtures/netready/burst-k3.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from podnet import tools as adapters
from podnet.parse import parse_experiment
from podnet.parse.raw import write_raw
from podnet.tools import netready as nr
from podnet.tools.base import ParseError, UnsupportedTest

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "netready" / "burst-k3.json"
DOC = json.loads(FIX.read_text())


def doc(**changes) -> dict:
    """The fixture's document with record fields changed: ``changes`` maps (index -> {key: value})."""
    d = copy.deepcopy(DOC)
    for index, fields in changes.get("records", {}).items():
        d["records"][index - 1].update(fields)
    return d


def test_the_fixture_parses_to_one_value_per_pod_and_metric():
    res = adapters.detect(FIX.read_text()[:2000]).parse(FIX.read_text())
    assert res.streams == 3 and res.protocol == "icmp" and res.test == "burst"
    by = {(m.pod, m.metric): m.value for m in res.measurements}
    assert {p for p, _ in by} == {"1", "2", "3"}
    assert {m for _, m in by} == set(nr.METRICS)
    assert all(m.unit == "s" for m in res.measurements)
    # pod 1: created 800.118, out reply 801.129554, in reply 801.018911 -> the later one
    assert by[("1", "net_ready_s")] == pytest.approx(1.011554, abs=1e-6)
    assert by[("1", "first_reply_in_s")] == pytest.approx(0.900911, abs=1e-6)
    assert by[("1", "scheduled_s")] == pytest.approx(0.021, abs=1e-6)
    assert by[("1", "ip_s")] == pytest.approx(0.743, abs=1e-6)
    assert by[("1", "started_s")] == pytest.approx(0.983237, abs=1e-6)  # the probe's own first stamp
    # pod 3: the reply to the pod came later than the one from it
    assert by[("3", "net_ready_s")] == pytest.approx(1.385190, abs=1e-6)


def test_render_writes_what_parse_reads():
    text = nr.render(DOC)
    assert text.startswith('{"podnet_netready": 1') and text.count("\n") == len(DOC["records"]) + 2
    assert [m.value for m in nr.ADAPTER.parse(text).measurements] == [
        m.value for m in nr.ADAPTER.parse(FIX.read_text()).measurements
    ]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"error": "pod failed: container probe: ErrImageNeverPull: image not present"}, "ErrImageNeverPull"),
        ({"error": "timed out after 60 s: IP never assigned"}, "timed out after 60 s: IP never assigned"),
        ({"scheduled": None}, "never scheduled"),
        ({"ip_seen": None}, "IP never assigned"),
        ({"out_start": None}, "probe container never started"),
        ({"out_reply": None}, "probe from the pod never answered"),
        ({"in_reply": None}, "probe to the pod never answered"),
        ({"created": None}, "never created"),
        ({"in_reply": 1764190700.0}, "before the create call"),
    ],
)
def test_a_pod_short_of_a_time_makes_no_number(fields, reason):
    with pytest.raises(ParseError, match="no time to network") as e:
        nr.ADAPTER.parse(nr.render(doc(records={2: fields})))
    assert reason in str(e.value) and "pod 2" in str(e.value)


def test_every_failed_pod_is_counted_and_the_first_named():
    d = doc(records={1: {"ip_seen": None}, 3: {"error": "pod failed: x"}})
    assert nr.run_problem(d) == "2 of 3 pods not network-ready; pod 1: IP never assigned"


def test_a_missing_record_or_a_wrong_type_is_rejected():
    d = copy.deepcopy(DOC)
    d["records"].pop()
    assert nr.run_problem(d) == "2 of 3 pods recorded"
    for bad, why in (
        ({"mode": "both"}, "mode"),
        ({"pods": "3"}, "pods"),
        ({"records": {}}, "records"),
    ):
        with pytest.raises(ParseError, match=why):
            nr.run_problem({**DOC, **bad})
    with pytest.raises(ParseError, match="not a time"):
        nr.run_problem(doc(records={1: {"created": "1764190800.1"}}))
    with pytest.raises(ParseError, match="index"):
        nr.run_problem(doc(records={2: {"index": 5}}))


def test_a_cut_output_is_rejected():
    text = FIX.read_text()
    for n in (len(text) // 3, len(text) - 4):
        with pytest.raises(ParseError, match="not whole JSON"):
            nr.ADAPTER.parse(text[:n])


def test_sandbox_is_optional_on_clusters_without_the_condition():
    d = doc(records={i: {"sandbox": None, "sandbox_api": None} for i in (1, 2, 3)})
    metrics = {m.metric for m in nr.ADAPTER.parse(nr.render(d)).measurements}
    assert "sandbox_s" not in metrics and "net_ready_s" in metrics


def test_probe_loop_output():
    ok = nr.probe_times("start 1764190801.101237\nreply 1764190801.129554 3\n")
    assert ok == nr.ProbeTimes(1764190801.101237, 1764190801.129554, 3, False)
    gave_up = nr.probe_times("start 1764190801.1\ntimeout 1764190861.2 57\n")
    assert gave_up.reply is None and gave_up.gave_up and gave_up.attempts == 57
    assert nr.probe_times("") == nr.ProbeTimes(None, None, None, False)


def test_settings_and_invocation():
    s = nr.Settings.of({"pods": 5, "mode": "serial", "timeout": 30})
    assert (s.pods, s.mode, s.concurrency, s.run_limit) == (5, "serial", 1, 150)
    inv = nr.ADAPTER.invocation({"pods": 4}, "10.244.1.5")
    assert inv.client[:2] == ["sh", "-c"] and inv.client[-3:] == ["10.244.1.5", "0.1", "60"]
    assert inv.streams == 4 and inv.protocol == "icmp" and inv.server is None and inv.duration == 60
    for bad in ({"mode": "all"}, {"pods": 0}, {"pods": 2.5}, {"interval": 5}, {"count": 3}):
        with pytest.raises(UnsupportedTest):
            nr.Settings.of(bad)


def _run(raw: Path, text: str, **meta) -> None:
    side = {
        "tool": "netready",
        "variant": "bridge",
        "scenario": "pod-pod-cross-node",
        "test": "burst",
        "repeat": 1,
        "status": "ok",
        "protocol": "icmp",
        "direction": "roundtrip",
        "streams": 3,
        "launch": {"id": "L1"},
        "round_seq": 0,
        **meta,
    }
    write_raw(
        raw / "bridge" / "pod-pod-cross-node" / "netready-burst" / f"r{side['repeat']:03d}.json", text, side
    )


def test_the_parse_stage_gives_one_row_per_pod_and_metric(tmp_path):
    raw = tmp_path / "raw"
    _run(raw, FIX.read_text())
    _run(raw, nr.render(doc(records={3: {"in_reply": None}})), repeat=2)
    _run(raw, FIX.read_text(), repeat=3, status="failed", error="timed out after 60 s: IP never assigned")
    p = parse_experiment(raw, "ttn")
    t = p.tidy
    assert len(t) == 3 * len(nr.METRICS) and set(t["pod"]) == {"1", "2", "3"}
    assert set(t["run_id"]) == {"bridge/pod-pod-cross-node/netready-burst/r001"}
    assert set(t["test"]) == {"burst"} and set(t["streams"].astype(int)) == {3}
    reasons = list(p.failed["reason"])
    assert len(reasons) == 2
    assert any("pod 3: probe to the pod never answered" in r for r in reasons)
    assert any("failed when it was launched: timed out after 60 s: IP never assigned" in r for r in reasons)
