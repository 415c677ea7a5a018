"""A case carries its adapter, and a run asks the cluster only through :class:`Pods`.

The plan resolves each case's tool adapter (and its load's) once; the executor, the load and the
time-to-network run take what they need of the pods from one frozen :class:`CaseTarget` per case and
a few actions, so a double with only the protocol's members runs a case end to end.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from podnet import tools as adapters
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.provenance import ClusterFacts
from podnet.launch.cluster.target import CaseTarget, Container, Endpoint, Space
from podnet.launch.cluster.workload import Workload
from podnet.launch.rounds.execute import Executor
from podnet.launch.rounds.interface import Pods
from podnet.launch.rounds.results import LaunchResult, Tally
from podnet.launch.rounds.schedule import Slot
from podnet.launch.rounds.state import CaseState
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import CasePlan, build_plan
from podnet.parse.raw import find_raw_files, read_sidecar
from tests.launch_configs import experiment, pod_pod, pod_svc

FIX = Path(__file__).resolve().parents[1] / "fixtures"
IPERF = (FIX / "iperf3" / "tcp-forward.json").read_text()
NODES = [Node("n1", {}), Node("n2", {})]
TOOLS = {
    "iperf3": {"tests": [{"name": "tcp"}]},
    "ping": {"tests": [{"name": "plain", "params": {"count": 3}}]},
    "netperf": {
        "tests": [{"name": "rr", "params": {"test": "TCP_RR", "duration": 2}, "load": {"streams": [0, 2]}}]
    },
}


def members(cls: type) -> set[str]:
    return {n for n in vars(cls) if not n.startswith("_")}


def test_a_case_carries_the_registered_adapter_of_its_tool_and_of_its_load():
    cfg = from_mapping(experiment([pod_pod()], TOOLS))
    plan = build_plan(cfg, NODES)
    assert len(plan.cases) == 4
    for cp in plan.cases:
        assert cp.adapter is adapters.get(cp.case.test.tool)
        loaded = cp.case.test.load is not None and not cp.case.test.load.idle
        assert cp.load_adapter is (adapters.get("iperf3") if loaded else None)
    # skipped cases (the image lacks the tool) carry it too
    skipped = build_plan(cfg, NODES, {"ping": "no ping"})
    assert [cp.adapter.name for cp in skipped.cases if cp.skipped] == ["ping"]
    # never part of what a case is or shows: equality and repr ignore it
    cp = plan.cases[0]
    assert replace(cp, adapter=adapters.get("ping")) == cp
    assert "adapter" not in repr(cp) and "Adapter" not in repr(cp)


def test_the_workload_resolves_a_case_target_from_its_records():
    cfg = from_mapping(experiment([pod_svc()], {"iperf3": {"tests": [{"name": "tcp"}]}}))
    w = Workload(cfg, None, "20260101-000000-abcd")
    assert members(Pods) <= set(dir(w))
    w.namespace, w.image, w.plan = "ns1", "img:1", build_plan(cfg, NODES)
    (cp,) = w.plan.cases
    assert cp.client_pod and cp.server_pod and cp.service and cp.server
    w.endpoints = {
        cp.client_pod: Endpoint(cp.client_pod, "10.244.1.2", "n2", "sha256:c", "eth0", 1450),
        cp.server_pod: Endpoint(cp.server_pod, "10.244.0.3", "n1", "sha256:s", "eth0", 1450),
    }
    w.services = {cp.server_pod: "10.96.0.10"}
    w.tool_versions = {"iperf3": "iperf 3.16"}
    t = w.target(cp)
    assert t.client == Container(cp.client_pod, "main", "n2")
    assert t.server == Container(cp.server_pod, cp.server.container, "n1")
    assert (t.address, t.service, t.image, t.image_id, t.tool_version) == (
        "10.96.0.10",
        cp.service,
        "img:1",
        "sha256:c",
        "iperf 3.16",
    )
    assert t.client_placement == w.plan.pods[cp.client_pod].placement
    assert w.space == Space(None, "ns1", w.labels, "")
    # a failed server pod has no container to read; the planned names are prefixed in a shared namespace
    w.endpoints[cp.server_pod] = replace(w.endpoints[cp.server_pod], failure="ImagePullBackOff")
    assert w.target(cp).server is None
    one = {"iperf3": {"tests": [{"name": "tcp"}]}}
    shared = experiment([pod_svc()], one, namespace={"create": False, "name": "team"})
    w2 = Workload(from_mapping(shared), None, "20260101-000000-abcd")
    w2.plan = w.plan
    assert w2.target(cp).client.pod == f"rabcd-{cp.client_pod}" and w2.target(cp).address is None


class MinimalPods:
    """Only the members of :class:`Pods`, each call recorded."""

    def __init__(self, target: CaseTarget, answer: ExecResult, blocked: str | None):
        self.t, self.answer, self.why = target, answer, blocked
        self.calls: list[tuple] = []

    @property
    def space(self) -> Space:
        return Space(None, "ns1")

    def target(self, cp: CasePlan) -> CaseTarget:
        self.calls.append(("target", cp.case.key))
        return self.t

    def blocked(self, cp: CasePlan) -> str | None:
        return self.why

    def server_ready(self, cp: CasePlan) -> str | None:
        return None

    def exec(self, where: Container, argv: list[str], timeout: float) -> ExecResult:
        self.calls.append(("exec", where, argv))
        return self.answer

    def exec_failed(self, pod: str | None, error: str) -> None:
        self.calls.append(("exec_failed", pod))

    def restarts(self, cp: CasePlan) -> dict[str, int]:
        return {"client": 0, "server": 0}

    def restart_server(self, cp: CasePlan) -> None:
        self.calls.append(("restart_server", cp.case.key))


def _executor(
    tmp_path: Path, answer: ExecResult, blocked: str | None = None
) -> tuple[Executor, CasePlan, MinimalPods]:
    cfg = from_mapping(
        experiment(
            [pod_pod()],
            {"iperf3": {"tests": [{"name": "tcp"}]}},
            raw_dir=tmp_path / "raw",
            variant="bridge",
            interference=False,
        )
    )
    (cp,) = build_plan(cfg, NODES).cases
    assert cp.server is not None
    target = CaseTarget(
        client=Container("c-pod", "main", "n2"),
        server=Container("s-pod", cp.server.container, "n1"),
        address="10.244.0.3",
        service=None,
        client_endpoint=Endpoint("c-pod", "10.244.1.2", "n2", "sha256:c", "eth0", 1450),
        server_endpoint=Endpoint("s-pod", "10.244.0.3", "n1", "sha256:s", "eth0", 1450),
        client_placement=None,
        image="img:1",
        tool_version="iperf 3.16",
    )
    pods = MinimalPods(target, answer, blocked)
    facts = ClusterFacts(NODES, {}, {"source": "fake"}, "bridge", "bridge")
    tally = Tally(LaunchResult(experiment="t", launch_id="L"), {cp.case.key: CaseState()})
    return Executor(cfg, pods, facts, tally, {"id": "L", "image": "img:1"}), cp, pods


def test_the_executor_runs_a_case_against_a_double_with_only_the_protocol(tmp_path):
    assert members(MinimalPods) == members(Pods)
    ex, cp, pods = _executor(tmp_path, ExecResult(rc=0, stdout=IPERF, stderr=""))
    assert ex.run(cp, Slot(cp.case.key, 1, 1, 1), 1, 1) == "ok"
    (_, where, argv) = next(c for c in pods.calls if c[0] == "exec")
    assert where == pods.t.client and argv[0] == "timeout" and argv[4:7] == ["iperf3", "-c", "10.244.0.3"]
    (raw,) = find_raw_files(ex.cfg.raw_dir)
    assert raw.relative_to(ex.cfg.raw_dir).as_posix() == "bridge/pod-pod/iperf3-tcp/r001.json"
    assert json.loads(raw.read_text()) == json.loads(IPERF)
    m = read_sidecar(raw)
    assert (m["status"], m["target"], m["service"]) == ("ok", "10.244.0.3", None)
    assert (m["tool_version"], m["image"], m["image_id"]) == ("iperf 3.16", "img:1", "sha256:c")
    assert (m["client"]["pod"], m["client"]["node"]) == ("c-pod", "n2")
    assert (m["server"]["pod"], m["server"]["mtu"]) == ("s-pod", 1450)
    assert m["harness"]["affinity"] is None


def test_a_run_that_cannot_start_or_fails_uses_the_protocol_actions(tmp_path):
    ex, cp, pods = _executor(tmp_path, ExecResult(rc=1, stdout="", stderr="boom"), "node n1 NotReady")
    slot = Slot(cp.case.key, 1, 1, 1)
    assert ex.run(cp, slot, 1, 1) == "failed"
    assert not [c for c in pods.calls if c[0] == "exec"]  # blocked: nothing exec'd
    (raw,) = find_raw_files(ex.cfg.raw_dir)
    m = read_sidecar(raw)
    assert m["error"] == "node n1 NotReady"
    assert (m["client"]["pod"], m["server"]["ip"]) == ("c-pod", "10.244.0.3")
    pods.why = None
    assert ex.run(cp, slot, 1, 1) == "failed"  # the client ran and failed: its server is restarted
    assert pods.calls[-1] == ("restart_server", cp.case.key)
