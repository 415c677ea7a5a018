"""Latency under load in the config and the launcher: ``load`` on a test is data (schema-checked,
``streams`` swept like a sweep, 0 the idle point); a run starts the load (iperf3 -P N against its own
server container) before the probe, writes both outputs with one sidecar, and fails a run whose
load was cut (then runs the repeat again)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds import underload
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.launch.spec.load import LOAD_PORT, LoadSpec
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import build_plan, server_binaries
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from podnet.tools import netperf
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import experiment, pod_pod

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROBE = (FIX / "netperf" / "tcp-rr-k-launcher.txt").read_text()
LOAD = (FIX / "iperf3" / "tcp-p2-omit.json").read_text()


def _tools(load: dict, **extra) -> dict:
    test = {"name": "tcp_rr", "params": {"test": "TCP_RR", "duration": 2}, "load": load, **extra}
    return {"netperf": {"tests": [test]}}


def test_load_streams_are_swept_with_an_idle_point_and_named_like_a_sweep():
    cfg = from_mapping(experiment([pod_pod()], _tools({"streams": [0, 1, 4], "direction": "both"})))
    tests = [c.test for c in cfg.cases]
    assert [t.name for t in tests] == [
        "tcp_rr-load_streams-0",
        "tcp_rr-load_streams-1",
        "tcp_rr-load_streams-4",
    ]
    assert [t.load.streams for t in tests] == [0, 1, 4] and tests[0].load.idle
    assert {(t.sweep.test, t.sweep.param) for t in tests} == {("tcp_rr", "load_streams")}
    assert tests[2].params == {"test": "TCP_RR", "duration": 2}  # the load is not the probe's parameter
    assert tests[2].load == LoadSpec(4, "both")


def test_one_streams_value_is_one_test_and_bad_loads_are_config_errors():
    (case,) = from_mapping(experiment([pod_pod()], _tools({"streams": 8}))).cases
    assert case.test.name == "tcp_rr" and case.test.sweep is None and case.test.load.streams == 8
    for bad in ({"streams": -1}, {"streams": 2, "direction": "up"}, {"streams": 2, "tool": "iperf2"}, {}):
        with pytest.raises(LaunchConfigError):
            from_mapping(experiment([pod_pod()], _tools(bad)))
    with pytest.raises(LaunchConfigError, match="cannot have a `sweep`"):
        from_mapping(experiment([pod_pod()], _tools({"streams": 2}, sweep={"request_size": [1, 64]})))


def test_the_load_runs_longer_than_the_probe_on_its_own_server_and_port():
    spec = LoadSpec(4, "reverse", lead_in=4, lead_out=3)
    p = spec.params(10, LOAD_PORT)
    assert (p["omit"], p["duration"], p["streams"], p["reverse"]) == (2, 15, 4, True)
    assert p["omit"] + p["duration"] == 4 + 10 + 3  # lead-in + probe + lead-out
    cfg = from_mapping(experiment([pod_pod()], _tools({"streams": [0, 4]})))
    plan = build_plan(cfg, [Node("n1", {}), Node("n2", {})])
    idle, loaded = plan.cases
    assert not idle.load and idle.load_server is None
    assert loaded.load and loaded.load_server.argv == ["iperf3", "-s", "-p", str(LOAD_PORT)]
    inv = loaded.load_invocation("10.0.0.9", loaded.template.duration)
    assert inv.client[:5] == ["iperf3", "-c", "10.0.0.9", "-p", str(LOAD_PORT)] and "-P" in inv.client
    assert inv.duration == 4 + 2 + 3
    assert "iperf3" in server_binaries(cfg)["netperf"]


def _cluster(load_outputs: list[str]):
    """A fake cluster answering netperf with a real TCP_RR output and iperf3 with the given loads."""
    answers = iter(load_outputs)

    def respond(pod, argv):
        if "iperf3" in argv and "-J" in argv:
            return ExecResult(rc=0, stdout=next(answers), stderr="")
        if "netperf" in argv:
            return ExecResult(rc=0, stdout=PROBE, stderr="")
        return ExecResult(rc=0, stdout="", stderr="")

    return FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], respond)


def _running_load() -> str:
    """The real -P 2 load output, stamped as started 3 s ago and measured for 10 s (the fake cluster
    answers at once; the lead-in is not waited for in this test)."""
    doc = json.loads(LOAD)
    doc["start"]["timestamp"]["timesecs"] = int(time.time()) - 3
    doc["intervals"][-1]["sum"]["end"] = 10.0
    return json.dumps(doc)


def test_a_launched_run_has_both_outputs_one_sidecar_and_tidy_rows_with_roles(tmp_path, monkeypatch):
    monkeypatch.setattr(underload, "pause", lambda s: None)
    # the stored TCP_RR output predates the launcher's longer -k list: not what this test checks
    monkeypatch.setattr(type(netperf.ADAPTER), "complete_for", lambda self, result, command: None)
    cfg = from_mapping(
        experiment([pod_pod()], _tools({"streams": [0, 2]}), raw_dir=tmp_path / "raw", repeats=1, warmup=0)
    )
    k = _cluster([_running_load()[: len(LOAD) // 3], _running_load()])  # the first load is cut
    res = launch(cfg, kube=k)
    assert (res.ok, res.failed) == (2, 1)
    side = {f.relative_to(cfg.raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}
    loaded = {k: v for k, v in side.items() if "load_streams-2" in k}
    (failed,) = [v for v in loaded.values() if v["status"] == "failed"]
    assert failed["error"].startswith("load: ") and failed["load"]["status"] == "failed"
    (ok,) = [(k, v) for k, v in loaded.items() if v["status"] == "ok"]
    path, meta = ok
    rec = meta["load"]
    assert rec["file"] == Path(path).with_suffix("").name + ".load.json"
    assert (
        rec["command"][:2] == ["iperf3", "-c"] and rec["status"] == "ok" and rec["started"] <= meta["started"]
    )
    assert (cfg.raw_dir / path).with_name(rec["file"]).exists()
    idle = [v for k, v in side.items() if "load_streams-0" in k]
    assert idle and all(v["load"]["streams"] == 0 and "file" not in v["load"] for v in idle)
    # each loaded run: the load's exec before the probe's
    runs = ["load" if "-J" in a else "probe" for _, a in k.execs if "-J" in a or "-H" in a]
    assert runs == ["probe", "load", "probe", "load", "probe"]  # idle, loaded (cut load), its re-run
    parsed = parse_experiment(cfg.raw_dir, cfg.experiment)
    assert len(parsed.failed) == 1 and "load" in parsed.failed["reason"].iloc[0]
    t = parsed.tidy
    assert set(t["role"]) == {"probe", "load"}
    assert set(t.loc[t["sweep_value"] == 0, "role"]) == {"probe"}
    assert set(t.loc[t["role"] == "load", "sweep_value"]) == {2.0}


def test_ping_at_a_fixed_interval_is_a_probe_too():
    tools = {
        "ping": {
            "tests": [{"name": "rtt", "params": {"count": 20, "interval": 0.2}, "load": {"streams": [0, 2]}}]
        }
    }
    cfg = from_mapping(experiment([pod_pod()], tools))
    plan = build_plan(cfg, [Node("n1", {}), Node("n2", {})])
    idle, loaded = plan.cases
    assert idle.server is None and not idle.load  # ping needs no server; its load does
    assert loaded.load_server is not None and loaded.load_server.port == LOAD_PORT
    inv = loaded.load_invocation("10.0.0.9", loaded.template.duration)
    assert inv.duration >= loaded.template.duration + 4 + 3
