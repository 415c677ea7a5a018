"""The runner against an in-memory cluster: raw + sidecars, skip-existing, failures, Ctrl-C, adaptive."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.signals import Interrupted
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import HOST_HOST, IPERF3_PING, experiment, pod_pod

FIX = Path(__file__).resolve().parents[1] / "fixtures"
IPERF = json.loads((FIX / "iperf3" / "tcp-forward.json").read_text())
PING = (FIX / "ping" / "loopback-plain.txt").read_text()

BASE = experiment(
    [HOST_HOST, pod_pod()],
    IPERF3_PING,
    stats={
        "planning": {"target_rel_half_width": 0.05, "min_repeats": 3, "max_repeats": 10, "min_to_stop": 3}
    },
    variant="bridge",
    repeats=2,
    warmup=0,  # the warm-up tests are in test_launch_harness.py
)


def iperf_json(bps: float) -> str:
    doc = copy.deepcopy(IPERF)
    doc["end"]["sum_received"]["bits_per_second"] = bps
    doc["end"]["sum_sent"]["bits_per_second"] = bps
    return json.dumps(doc)


def ok_responder(pod, argv):
    if argv[0] == "iperf3":
        return ExecResult(rc=0, stdout=iperf_json(9e9), stderr="")
    return ExecResult(rc=0, stdout=PING, stderr="")


def nodes():
    return [make_node("n1", {"pool": "a"}, "10.1.0.1"), make_node("n2", {"pool": "a"}, "10.1.0.2")]


def config(tmp_path, **over):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"].update(over)
    return from_mapping(c)


def sidecars(cfg):
    return {f.relative_to(cfg.raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}


def test_success_writes_raw_and_provenance_then_rerun_does_nothing(tmp_path):
    cfg = config(tmp_path)
    k = FakeKube(nodes(), ok_responder)
    res = launch(cfg, kube=k, manifest=tmp_path / "m.json")
    assert (res.launched, res.ok, res.failed, res.error) == (8, 8, 0, "")
    side = sidecars(cfg)
    assert sorted(side)[:2] == [
        "bridge/host-host/iperf3-tcp/r001.json",
        "bridge/host-host/iperf3-tcp/r002.json",
    ]
    m = side["bridge/pod-pod/iperf3-tcp/r002.json"]
    for key in (
        "started",
        "ended",
        "exit_code",
        "sha256",
        "command",
        "tool_version",
        "cluster",
        "client",
        "server",
        "launch",
    ):
        assert m.get(key) is not None, key
    assert m["status"] == "ok" and m["repeat"] == 2 and m["round"] == 2
    assert m["cluster"]["kubernetes_version"] and m["cluster"]["cni"]
    assert m["client"]["node"] == "n2" and m["server"]["node"] == "n1" and m["client"]["mtu"] == 1500
    assert m["server"]["node_info"]["kernel"] and m["server"]["node_info"]["container_runtime"]
    assert m["command"][:3] == ["iperf3", "-c", m["server"]["ip"]]
    # interleaved: round 1 of every case before round 2
    order = sorted(side.values(), key=lambda s: s["started"] + str(s["round"]) + str(s["position"]))
    assert [s["round"] for s in order] == [1, 1, 1, 1, 2, 2, 2, 2]
    # everything cleaned up
    assert k.namespaces_live == {} and len(k.deleted) == 1
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert manifest["ok"] == 8 and manifest["namespace_deleted"] is True
    assert list((cfg.raw_dir / "_launch").glob("*.json"))
    # the parse stage reads what the launcher wrote
    parsed = parse_experiment(cfg.raw_dir, "t")
    assert len(parsed.failed) == 0 and set(parsed.tidy["scenario"]) == {"host-host", "pod-pod"}
    # re-run: nothing launched, no namespace made
    k2 = FakeKube(nodes(), ok_responder)
    res2 = launch(cfg, kube=k2)
    assert res2.launched == 0 and not k2.deleted and not k2.objects


def test_more_repeats_later_runs_only_the_new_ones(tmp_path):
    launch(config(tmp_path), kube=FakeKube(nodes(), ok_responder))
    k = FakeKube(nodes(), ok_responder)
    res = launch(config(tmp_path, repeats=3), kube=k)
    assert res.launched == 4 and len(k.client_runs) == 4
    assert all(s["repeat"] in (1, 2, 3) for s in sidecars(config(tmp_path)).values())


def test_impossible_selector_is_recorded_as_failed_with_events(tmp_path):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"]["scenarios"].append(
        {"name": "nowhere", "client": {"same_node_as": "server"}, "server": {"selector": {"pool": "mars"}}}
    )
    cfg = from_mapping(c)
    k = FakeKube(nodes(), ok_responder)
    res = launch(cfg, kube=k)
    assert res.ok == 8 and res.failed == 4 and not res.error
    failed = {p: s for p, s in sidecars(cfg).items() if s["status"] == "failed"}
    assert sorted(failed) == [
        "bridge/nowhere/iperf3-tcp/r001.txt",
        "bridge/nowhere/iperf3-tcp/r002.txt",
        "bridge/nowhere/ping-plain/r001.txt",
        "bridge/nowhere/ping-plain/r002.txt",
    ]
    err = failed["bridge/nowhere/iperf3-tcp/r001.txt"]["error"]
    assert "FailedScheduling" in err and "node affinity/selector" in err
    assert k.namespaces_live == {}
    parsed = parse_experiment(cfg.raw_dir, "t")
    assert len(parsed.failed) == 4 and parsed.failed["reason"].str.contains("FailedScheduling").all()
    # a re-run retries the failed ones (attempt 2), not the good ones
    k2 = FakeKube(nodes(), ok_responder)
    res2 = launch(cfg, kube=k2)
    assert res2.launched == 4 and res2.failed == 4
    assert (cfg.raw_dir / "bridge/nowhere/ping-plain/r001.a2.txt").exists()
    # max_attempts (2) reached: the third launch has nothing to do
    assert launch(cfg, kube=FakeKube(nodes(), ok_responder)).launched == 0


def test_a_failed_run_is_retried_once_and_raw_files_are_never_rewritten(tmp_path):
    cfg = config(tmp_path, repeats=1)
    calls = {"n": 0}

    def flaky(pod, argv):
        if argv[0] == "iperf3":
            calls["n"] += 1
            if calls["n"] == 1:
                return ExecResult(
                    rc=1, stdout='{"start": {}, "error": "the server is busy running a test"}', stderr=""
                )
        return ok_responder(pod, argv)

    k = FakeKube(nodes(), flaky)
    res = launch(cfg, kube=k)
    assert res.failed == 1 and res.ok == 4
    side = sidecars(cfg)
    first = side["bridge/host-host/iperf3-tcp/r001.json"]
    assert first["status"] == "failed" and "server is busy" in first["error"]
    assert side["bridge/host-host/iperf3-tcp/r001.a2.json"]["status"] == "ok"
    assert any(a[:1] == ["kill"] for _, a in k.execs)  # the stuck server was restarted


def test_missing_tool_is_skipped_with_a_clear_message(tmp_path):
    cfg = config(tmp_path, repeats=1)
    k = FakeKube(nodes(), ok_responder, missing_binaries={"iperf3"})
    res = launch(cfg, kube=k)
    assert res.launched == 2 and "lacks iperf3" in res.skipped_tools["iperf3"]
    assert all(s["tool"] == "ping" for s in sidecars(cfg).values())
    # no server container for the missing tool was started
    pods = [o for (ns, kind, _), o in k.created_log if kind == "Pod"]
    assert not any(c["command"][:1] == ["iperf3"] for o in pods for c in o["spec"]["containers"])


def test_ctrl_c_cleans_up_and_records_nothing_half_done(tmp_path):
    cfg = config(tmp_path, repeats=3)
    n = {"runs": 0}

    def interrupting(pod, argv):
        n["runs"] += 1
        if n["runs"] == 3:
            raise Interrupted("SIGINT")
        return ok_responder(pod, argv)

    k = FakeKube(nodes(), interrupting)
    res = launch(cfg, kube=k)
    assert res.interrupted and res.exit_code == 130
    assert k.namespaces_live == {} and len(k.deleted) == 1
    assert len(sidecars(cfg)) == 2
    # the next launch does the rest
    res2 = launch(cfg, kube=FakeKube(nodes(), ok_responder))
    assert res2.launched == 10


def test_shared_namespace_mode_deletes_only_its_objects(tmp_path):
    cfg = config(tmp_path, repeats=1, namespace={"create": False, "name": "podnet"})
    k = FakeKube(nodes(), ok_responder)
    res = launch(cfg, kube=k)
    assert res.ok == 4 and not k.namespaces_live
    assert k.deleted == [f"podnet:podnet.io/run={res.launch_id}"]
    # pod names carry the launch so two launches can share the namespace
    assert all(name.startswith("r") for (ns, kind, name), _ in k.created_log if kind == "Pod")


def test_shuffled_order_is_recorded(tmp_path):
    cfg = config(tmp_path, order="shuffled", seed=42, repeats=3)
    launch(cfg, kube=FakeKube(nodes(), ok_responder))
    side = list(sidecars(cfg).values())
    assert {s["order"] for s in side} == {"shuffled"} and {s["shuffle_seed"] for s in side} == {42}
    for r in (1, 2, 3):
        assert sorted(s["position"] for s in side if s["round"] == r) == [1, 2, 3, 4]


@pytest.mark.parametrize("cv,expect_more", [(0.001, False), (0.2, True)])
def test_adaptive_adds_rounds_only_while_the_target_is_not_met(tmp_path, cv, expect_more):
    cfg = config(tmp_path, repeats=1, adaptive={"enabled": True})
    cfg.tools.pop("ping")
    cfg.scenarios = [
        s.__class__(s.name, s.client, s.server, tuple(t for t in s.tests if t.tool == "iperf3"))
        for s in cfg.scenarios
    ]
    rng = random.Random(3)

    def noisy(pod, argv):
        return ExecResult(rc=0, stdout=iperf_json(9e9 * (1 + rng.gauss(0, cv))), stderr="")

    res = launch(cfg, kube=FakeKube(nodes(), noisy))
    per_case = {(c.scenario, c.tool): c.ok for c in res.cases}
    if expect_more:
        assert all(n == 10 for n in per_case.values())  # capped at max_repeats
        assert not any(c.met_target for c in res.cases)
    else:
        assert all(n == 3 for n in per_case.values())  # min_repeats, then the target is met
        assert all(c.met_target for c in res.cases)
    # adaptive rounds stay interleaved
    rounds = [s["round"] for s in sorted(sidecars(cfg).values(), key=lambda s: (s["round"], s["position"]))]
    assert rounds == sorted(rounds)
