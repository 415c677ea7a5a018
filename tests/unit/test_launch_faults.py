"""Faults on the (fake) cluster: a node that dies mid-launch, containers that restart, clean-up that cannot finish."""

from __future__ import annotations

import copy
import time

import pytest

from podnet.launch.cluster import workload
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import IPERF3_PING, launch_config
from tests.unit.test_launch_runner import BASE, nodes, ok_responder, sidecars

#: two paths from fixed nodes: n2 -> n1 and n1 -> n1, iperf3 and ping, 3 rounds
TWO_PATHS = {
    "variant": "bridge",
    "repeats": 3,
    "warmup": 0,  # the warm-up tests are in test_launch_harness.py
    "scenarios": [
        {
            "name": "cross-n2",
            "client": {"kind": "pod", "node": "n2"},
            "server": {"kind": "pod", "node": "n1"},
        },
        {"name": "same-n1", "client": {"kind": "pod", "node": "n1"}, "server": {"kind": "pod", "node": "n1"}},
    ],
}


@pytest.fixture(autouse=True)
def fresh_node_conditions(monkeypatch):
    monkeypatch.setattr(workload, "NODE_RECHECK_S", 0.0)


def _cfg(tmp_path, launch_section, **over):
    return launch_config(tools=IPERF3_PING, raw_dir=tmp_path / "raw", **{**launch_section, **over})


def test_a_node_that_dies_mid_launch_fails_its_cases_at_once_without_retries(tmp_path):
    cfg = _cfg(tmp_path, TWO_PATHS)
    k = FakeKube([make_node("n1", ip="10.1.0.1"), make_node("n2", ip="10.1.0.2")])
    runs = {"n": 0}

    def responder(pod, argv):
        runs["n"] += 1
        if runs["n"] == 4:  # end of round 1: n2's kubelet and containerd die; the node is still "Ready"
            k.kubelet_down.add("n2")
        if runs["n"] == 5:  # in round 2 (after n2's runs failed at the exec) the node controller notices
            k.set_node_ready("n2", False, since="2026-11-22T21:00:00+00:00")
        return ok_responder(pod, argv)

    k.responder = responder
    t0 = time.monotonic()
    res = launch(cfg, kube=k)
    took = time.monotonic() - t0
    side = sidecars(cfg)
    cross = {p: s for p, s in side.items() if p.startswith("bridge/cross-n2/")}
    same = {p: s for p, s in side.items() if p.startswith("bridge/same-n1/")}
    assert all(s["status"] == "ok" for s in same.values()) and len(same) == 6
    # round 1 ok, round 2 failed at the exec (kubelet gone), round 3 failed at once with the node's state
    r3 = [s for p, s in cross.items() if "/r003." in p]
    assert len(r3) == 2 and all(s["error"] == "node n2 NotReady since 2026-11-22T21:00:00+00:00" for s in r3)
    r2 = sorted((p, s["error"]) for p, s in cross.items() if "/r002." in p)
    # the first exec into the dead kubelet fails; the node's other cases then fail at once
    assert "connection refused" in r2[0][1] and r2[1][1].startswith("node n2 kubelet unreachable since ")
    # an exec that never reached the client says nothing about the server: no restart (CrashLoop backoff)
    assert not any(a[:1] == ["kill"] for _, a in k.execs)
    # never retried on the dead node (a later launch retries: one attempt of two is used)
    assert not [p for p in side if ".a2." in p]
    assert (res.launched, res.ok, res.failed) == (12, 8, 4)
    assert res.node_failures == {"n2": "node n2 NotReady since 2026-11-22T21:00:00+00:00"}
    # clean-up force-deleted the pod left on the dead node; nothing remains
    assert res.namespace_deleted is True and res.leftovers == []
    assert any(p.endswith("/client-pod-n2") for p in k.force_deleted) and not k.namespaces_live
    assert took < 10


def test_a_run_during_which_a_container_restarted_is_suspect(tmp_path):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"]["repeats"] = 1
    cfg = from_mapping(c)
    k = FakeKube(nodes())

    def responder(pod, argv):
        if argv[0] == "iperf3" and pod.startswith("client-pod"):
            key = ("server-pod-n1", "iperf3-1")
            k.restarts[key] = k.restarts.get(key, 0) + 2  # CrashLoopBackOff twice while the client ran
        return ok_responder(pod, argv)

    k.responder = responder
    res = launch(cfg, kube=k)
    side = sidecars(cfg)
    hit = side["bridge/pod-pod/iperf3-tcp/r001.json"]
    assert hit["status"] == "ok" and hit["suspect"] is True and hit["restarts"] == {"server": 2}
    assert all("suspect" not in s for p, s in side.items() if p != "bridge/pod-pod/iperf3-tcp/r001.json")
    assert next(o for o in res.cases if o.scenario == "pod-pod" and o.tool == "iperf3").suspect == 1
    assert len(parse_experiment(cfg.raw_dir, "t").failed) == 0


def test_clean_up_is_bounded_and_says_what_it_could_not_remove(tmp_path):
    cfg = _cfg(tmp_path, TWO_PATHS, repeats=1, timeouts={"namespace_delete": 2})
    k = FakeKube([make_node("n1", ip="10.1.0.1"), make_node("n2", ip="10.1.0.2")])
    k.responder = lambda pod, argv: (
        (k.set_node_ready("n2", False) if argv[0] == "ping" and pod.endswith("n1") else None)
        or ok_responder(pod, argv)
    )

    def refuse(namespace, name, force=False):
        raise RuntimeError("etcd is read-only")

    k.delete_pod = refuse
    t0 = time.monotonic()
    res = launch(cfg, kube=k)
    took = time.monotonic() - t0
    assert res.namespace_deleted is False and took < 2 + 3
    assert res.leftovers[0].startswith("namespace ")
    stuck = [x for x in res.leftovers if x.startswith("pod ")]
    assert len(stuck) == 1 and "client-pod-n2" in stuck[0]
    assert "node n2 NotReady since" in stuck[0] and "etcd is read-only" in stuck[0]


def test_exec_without_a_kubelet_does_not_wait_for_a_server_restart(tmp_path):
    cfg = _cfg(tmp_path, TWO_PATHS, repeats=1)
    k = FakeKube([make_node("n1", ip="10.1.0.1"), make_node("n2", ip="10.1.0.2")])

    def responder(pod, argv):
        k.kubelet_down.add("n1")  # the servers' node: the restart (kill) exec cannot reach them
        return ExecResult(rc=1, stdout="", stderr="connection refused")

    k.responder = responder
    t0 = time.monotonic()
    res = launch(cfg, kube=k)
    # every run failed; none waited server_ready (60 s) for a restart that cannot happen, and once an exec
    # into n1 found its kubelet unreachable, no case on n1 (all of them: their server is there) is retried
    assert (res.launched, res.ok, res.failed) == (4, 0, 4)
    assert set(res.node_failures) == {"n1"} and "kubelet unreachable" in res.node_failures["n1"]
    assert time.monotonic() - t0 < 10
