"""Time to network in the launcher: a netready case creates its K pods (burst or one at a time) with
the client's node affinity, probes each from the server pod once its IP shows, writes one JSON raw
file of per-pod records with its sidecar, deletes the pods; a pod that fails, gets no IP or never
answers makes the run a failed run with that reason. A fake cluster and a fake watch stand in for
the API (the watch itself runs in tests/integration/test_launch_netready.py)."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace as NS

import pytest

from podnet.launch.cluster import podwatch
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.manifests import pod_manifest
from podnet.launch.cluster.podwatch import HOLD, PROBE, Milestones, observe, probe_pod_manifest
from podnet.launch.rounds import netready
from podnet.launch.rounds.netready import PodRun, verdict
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import build_plan
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import experiment


def _tools(**params) -> dict:
    return {"netready": {"tests": [{"name": "t", "params": {"pods": 3, "timeout": 5, **params}}]}}


SCENARIO = {
    "name": "pod-pod-cross-node",
    "client": {"kind": "pod"},
    "server": {"kind": "pod", "other_node_than": "client"},
}


def test_the_server_pod_keeps_net_raw_to_ping_the_new_pods():
    cfg = from_mapping(experiment([SCENARIO], _tools()))
    plan = build_plan(cfg, [Node("n1", {}), Node("n2", {})])
    (cp,) = plan.cases
    server = plan.pods[cp.server_pod]
    assert server.net_raw and server.needs_privileged_namespace and not server.servers
    (main,) = pod_manifest(server, image="i", pull_policy="Never", labels={}, lifetime=60)["spec"][
        "containers"
    ]
    assert main["name"] == "main" and main["securityContext"]["capabilities"]["add"] == ["NET_RAW"]
    assert "runAsUser" not in main["securityContext"]
    assert plan.pods[cp.client_pod].placement.node == "n1" and server.placement.node == "n2"


def test_a_new_pod_probes_with_net_raw_and_holds_without():
    body = probe_pod_manifest(
        "netready-x-01",
        image="i",
        pull_policy="Never",
        labels={"podnet.io/netready": "x"},
        probe=["sh", "-c", "true"],
        node_affinity={"requiredDuringSchedulingIgnoredDuringExecution": {}},
        lifetime=180,
    )
    spec = body["spec"]
    probe, hold = spec["containers"]
    assert (probe["name"], hold["name"]) == (PROBE, HOLD) and spec["restartPolicy"] == "Never"
    assert probe["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["NET_RAW"]}
    assert hold["securityContext"]["runAsNonRoot"] and "add" not in hold["securityContext"]["capabilities"]
    assert "nodeName" not in spec and "nodeAffinity" in spec["affinity"]  # the scheduler places it
    assert body["metadata"]["labels"]["podnet.io/netready"] == "x"


def _pod(**status):
    cond = status.pop("conditions", [])
    return NS(
        metadata=NS(name="p", creation_timestamp=None, deletion_timestamp=None, resource_version="1"),
        spec=NS(node_name=status.pop("node", None)),
        status=NS(
            phase=status.pop("phase", "Pending"),
            reason=None,
            message=None,
            pod_ip=status.pop("ip", None),
            conditions=cond,
            container_statuses=status.pop("containers", []),
            init_container_statuses=[],
        ),
    )


def test_the_watch_keeps_the_first_sight_of_each_milestone():
    m = Milestones("p")
    observe(m, _pod(), 1.0)
    assert m.scheduled is None
    observe(
        m,
        _pod(node="n1", conditions=[NS(type="PodScheduled", status="True", last_transition_time=None)]),
        2.0,
    )
    ready = NS(type="PodReadyToStartContainers", status="True", last_transition_time=None)
    observe(m, _pod(node="n1", ip="10.244.0.9", conditions=[ready]), 3.0)
    running = NS(
        name=PROBE, state=NS(running=NS(started_at=None), terminated=None, waiting=None), restart_count=0
    )
    observe(m, _pod(node="n1", ip="10.244.0.9", conditions=[ready], containers=[running]), 4.0)
    done = NS(
        name=PROBE,
        state=NS(running=None, terminated=NS(exit_code=0, started_at=None), waiting=None),
        restart_count=0,
    )
    observe(m, _pod(node="n1", ip="10.244.0.9", containers=[done]), 5.0)
    assert (m.scheduled, m.sandbox, m.ip_seen, m.started_seen, m.probe_ended_seen) == (
        2.0,
        3.0,
        3.0,
        4.0,
        5.0,
    )
    assert (m.node, m.ip, m.probe_exit, m.problem) == ("n1", "10.244.0.9", 0, "")
    observe(m, _pod(node="n1", phase="Failed"), 6.0)
    assert m.problem.startswith("ended (Failed")


def _thread(result):
    t = NS(is_alive=lambda: False)
    return t, result


@pytest.mark.parametrize(
    ("m", "pod", "now", "reason"),
    [
        (
            Milestones("p", problem="container probe: ErrImageNeverPull: x"),
            {},
            1.0,
            "pod failed: container probe: ErrImageNeverPull: x",
        ),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1, started_seen=1, probe_exit=1),
            {},
            1.0,
            "probe from the pod never answered within 5 s (exit 1)",
        ),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1, started_seen=1),
            {"in": ExecResult(1, "", "")},
            1.0,
            "probe to the pod never answered within 5 s (exit 1)",
        ),
        (Milestones("p"), {}, 99.0, "timed out after 5 s: never scheduled"),
        (Milestones("p", scheduled=1), {}, 99.0, "timed out after 5 s: IP never assigned"),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1),
            {},
            99.0,
            "timed out after 5 s: probe container never started",
        ),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1, started_seen=1),
            {},
            99.0,
            "timed out after 5 s: probe from the pod never answered",
        ),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1, started_seen=1, probe_exit=0),
            {},
            99.0,
            "timed out after 5 s: probe to the pod never answered",
        ),
        (
            Milestones("p", scheduled=1, ip="a", ip_seen=1, started_seen=1, probe_exit=0),
            {"in": ExecResult(0, "", "")},
            99.0,
            "",
        ),
        (Milestones("p", scheduled=1), {}, 2.0, ""),
    ],
)
def test_each_way_a_pod_falls_short_has_its_reason(m, pod, now, reason):
    p = PodRun(1, "p", created=0.0, deadline=5.0)
    if "in" in pod:
        p.in_thread, p.in_result = _thread(pod["in"])
    assert verdict(m, p, now, 5.0) == reason


class FakeWatch:
    """Stands for PodWatch: a pod of the fake cluster passes each milestone a few ms after its creation,
    except what ``lacks`` names (``ip``, ``probe``: its probe gives up, ``pod``: it fails)."""

    lacks: set[str] = set()
    instances: list[FakeWatch] = []

    def __init__(self, core, namespace, selector, api_timeout=30):
        self.kube, self.ns, self.selector, self.error = None, namespace, selector, ""
        self.born: dict[str, float] = {}
        FakeWatch.instances.append(self)

    def start(self):
        return self

    def stop(self):
        pass

    def get(self, name):
        pods = self.kube.pods(self.ns, self.selector) if self.kube else {}
        if name in pods:
            self.born.setdefault(name, time.time())
        t = self.born.get(name)
        m = Milestones(name)
        if t is None:
            return m
        m.created_api, m.node, m.scheduled, m.sandbox = t, "n1", t + 0.01, t + 0.2
        if "pod" in self.lacks:
            m.problem = "container probe: ErrImageNeverPull: image not present"
        if "ip" not in self.lacks:
            m.ip, m.ip_seen, m.started_seen = f"10.244.0.{name[-2:]}", t + 0.21, t + 0.3
            m.probe_exit = 1 if "probe" in self.lacks else 0
        return m


def _cluster(watch_lacks: set[str], monkeypatch):
    k = FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")])

    def respond(pod, argv):
        if argv[3:4] == ["podnet-netready"]:  # the server-side probe towards a new pod
            t = time.time()
            return ExecResult(0, f"start {t:.6f}\nreply {t + 0.004:.6f} 1\n", "")
        return ExecResult(0, "", "")

    k.responder = respond
    k.logs = lambda ns, pod, container, lines=5, previous=False: (
        f"start {time.time() - 0.002:.6f}\nreply {time.time() - 0.001:.6f} 1\n"
    )
    FakeWatch.lacks, FakeWatch.instances = set(watch_lacks), []
    real_init = FakeWatch.__init__

    def init(self, core, namespace, selector, api_timeout=30):
        real_init(self, core, namespace, selector, api_timeout)
        self.kube = k

    monkeypatch.setattr(FakeWatch, "__init__", init)
    monkeypatch.setattr(netready, "PodWatch", FakeWatch)
    monkeypatch.setattr(netready, "POLL", 0.01)
    return k


@pytest.mark.parametrize("mode", ["burst", "serial"])
def test_a_run_creates_probes_records_and_deletes_its_pods(tmp_path, monkeypatch, mode):
    cfg = from_mapping(
        experiment([SCENARIO], _tools(mode=mode), raw_dir=tmp_path / "raw", repeats=1, warmup=0)
    )
    k = _cluster(set(), monkeypatch)
    res = launch(cfg, kube=k)
    assert (res.ok, res.failed) == (1, 0)
    (raw,) = find_raw_files(cfg.raw_dir)
    meta = read_sidecar(raw)
    assert (
        meta["status"] == "ok"
        and meta["tool"] == "netready"
        and meta["streams"] == (3 if mode == "burst" else 1)
    )
    assert meta["netready"]["mode"] == mode and meta["netready"]["pods_left"] == []
    doc = json.loads(raw.read_text())
    assert [r["index"] for r in doc["records"]] == [1, 2, 3] and all(r["error"] == "" for r in doc["records"])
    made = [b for (_, kind, n), b in k.created_log if kind == "Pod" and n.startswith("netready-")]
    assert len(made) == 3 and all(b["spec"]["affinity"]["nodeAffinity"] for b in made)
    probes = [a for pod, a in k.execs if a[:1] == ["timeout"] and "podnet-netready" in a]
    assert len(probes) == 3 and {a[-3] for a in probes} == {"10.244.0.01", "10.244.0.02", "10.244.0.03"}
    assert not [n for (_, kind, n) in k.objects if kind == "Pod" and n.startswith("netready-")]
    t = parse_experiment(cfg.raw_dir, cfg.experiment).tidy
    assert len(t) == 3 * 7 and set(t["pod"]) == {"1", "2", "3"}


@pytest.mark.parametrize(
    ("lacks", "reason"),
    [
        ({"ip"}, "timed out after 0.5 s: IP never assigned"),
        ({"probe"}, "probe from the pod never answered within 0.5 s (exit 1)"),
        ({"pod"}, "pod failed: container probe: ErrImageNeverPull"),
    ],
)
def test_a_pod_that_falls_short_fails_the_run_with_its_reason(tmp_path, monkeypatch, lacks, reason):
    cfg = from_mapping(
        experiment(
            [SCENARIO], _tools(mode="serial", timeout=0.5), raw_dir=tmp_path / "raw", repeats=1, warmup=0
        )
    )
    k = _cluster(lacks, monkeypatch)
    res = launch(cfg, kube=k)
    assert res.ok == 0 and res.failed >= 1
    first = sorted(find_raw_files(cfg.raw_dir))[0]
    meta = read_sidecar(first)
    assert (
        meta["status"] == "failed"
        and reason in meta["error"]
        and meta["error"].startswith("no time to network: ")
    )
    doc = json.loads(first.read_text())
    assert doc["records"][1]["error"].startswith("not created: the run stopped when pod 1 failed")
    assert not [n for (_, kind, n) in k.objects if kind == "Pod" and n.startswith("netready-")]
    p = parse_experiment(cfg.raw_dir, cfg.experiment)
    assert p.tidy.empty and reason in p.failed["reason"].iloc[0]


def test_podwatch_module_names():
    assert podwatch.PROBE == "probe" and podwatch.HOLD == "hold"


def test_the_example_config_plans_a_burst_and_a_serial_case():
    from podnet.launch.spec.config import load_config
    from tests.conftest import REPO

    cfg = load_config(REPO / "config/examples/time-to-network.yaml")
    plan = build_plan(cfg, [Node("n1", {}), Node("n2", {})])
    assert [(cp.case.test.name, cp.template.streams, cp.error) for cp in plan.cases] == [
        ("burst", 20, None),
        ("serial", 1, None),
    ]
    assert {plan.pods[cp.server_pod].placement.node for cp in plan.cases} == {"n2"}
