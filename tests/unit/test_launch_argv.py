"""Config values never reach a shell: they stay single argv elements; pods are least-privilege."""

from __future__ import annotations

import copy

import pytest

from podnet.launch.cluster.manifests import MANAGED_BY, configmap_manifest, pod_manifest, service_manifest
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import build_plan
from tests.launch_configs import HOST_HOST, experiment, launch_config, pod_pod, pod_svc

EVIL = "1M; rm -rf / #$(reboot) `id` && echo"

CFG = experiment(
    [HOST_HOST, pod_svc()],
    {
        "iperf3": {"tests": [{"name": "udp", "params": {"protocol": "udp", "bandwidth": EVIL}}]},
        "wrk": {"tests": [{"name": "http", "params": {"path": "/a b;$(x)"}}]},
    },
)
NODES = [Node("n1"), Node("n2")]


def plan():
    return build_plan(from_mapping(copy.deepcopy(CFG)), NODES)


def test_metacharacters_stay_one_argv_element():
    p = plan()
    cp = next(c for c in p.cases if c.case.test.tool == "iperf3")
    argv = cp.invocation("10.0.0.9").client
    assert EVIL in argv  # exactly one element, unsplit, unquoted
    assert argv[argv.index(EVIL) - 1] == "-b"
    assert argv[0] == "iperf3"  # no shell in front
    wrk = next(c for c in p.cases if c.case.test.tool == "wrk").invocation("10.0.0.9").client
    assert wrk[-1] == "http://10.0.0.9:15280/a b;$(x)"


def test_runner_wraps_argv_without_a_shell():
    from podnet.launch.cluster.k8s import ExecResult
    from podnet.launch.cluster.workload import Workload
    from tests.fakekube import FakeKube, make_node

    cfg = from_mapping({**copy.deepcopy(CFG), "raw_dir": "/nonexistent-podnet-test"})
    cfg.tools.pop("wrk")
    seen = []

    def responder(pod, argv):
        seen.append(argv)
        return ExecResult(rc=1, stdout="", stderr="nope")

    k = FakeKube([make_node("n1"), make_node("n2")], responder)
    w = Workload(cfg, k, "20260101-000000-abcd")
    # the image probe passes binary names as positional arguments after a fixed script
    w.namespace = "ns"
    w.plan = build_plan(cfg, NODES)
    w.image = "img:1"
    w.create_pods(["client-host-n2"])
    w.wait(["client-host-n2"])
    w.probe_tools("client-host-n2")
    probe = next(a for _, a in k.execs if a[:2] == ["sh", "-c"])
    assert probe[2] == 'for b do command -v "$b" >/dev/null 2>&1 || echo "$b"; done'
    assert probe[3] == "podnet-probe" and "iperf3" in probe[4:]


def test_pods_are_least_privilege():
    p = plan()
    for pod in p.pods.values():
        body = pod_manifest(
            pod,
            image="img:1",
            pull_policy="Never",
            labels={"podnet.io/run": "x"},
            lifetime=600,
            configmap="cm",
        )
        spec = body["spec"]
        assert spec["automountServiceAccountToken"] is False
        assert spec["hostNetwork"] is (pod.kind == "host")
        for c in spec["containers"]:
            sc = c["securityContext"]
            assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
            assert sc["capabilities"]["drop"] == ["ALL"]
            assert set(sc["capabilities"].get("add", [])) <= {"NET_RAW"}
            assert isinstance(c["command"], list)
            assert c["command"][:2] != ["sh", "-c"] and c["command"][:2] != ["/bin/sh", "-c"]
            if pod.role == "server":
                assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 65534
        assert MANAGED_BY.items() <= body["metadata"]["labels"].items()


def test_server_containers_and_probes():
    p = plan()
    srv = p.pods["server-pod-n1"]
    body = pod_manifest(srv, image="img:1", pull_policy="Never", labels={}, lifetime=600, configmap="cm")
    names = {c["name"]: c for c in body["spec"]["containers"]}
    assert names["iperf3-1"]["command"] == ["iperf3", "-s", "-p", "15201"]
    assert names["iperf3-1"]["startupProbe"]["tcpSocket"]["port"] == 15201
    assert names["http-1"]["command"][0] == "nginx"
    assert {"name": "podnet-config", "configMap": {"name": "cm"}} in body["spec"]["volumes"]
    svc = service_manifest(srv, {"podnet.io/run": "x"})
    ports = {(q["port"], q["protocol"]) for q in svc["spec"]["ports"]}
    assert ports == {(15201, "TCP"), (15201, "UDP"), (15280, "TCP")}
    assert svc["spec"]["selector"] == {"podnet.io/endpoint": "server-pod-n1", "podnet.io/run": "x"}
    conf = configmap_manifest("cm", {}, [15280])["data"]["nginx.conf"]
    assert "listen 15280 reuseport;" in conf and "daemon off;" in conf


@pytest.mark.parametrize(
    "scenarios,tools,level,net_raw",
    [
        ([pod_pod()], {"iperf3": {"tests": [{"name": "tcp"}]}}, "baseline", False),
        ([pod_pod()], {"ping": {"tests": [{"name": "plain"}]}}, "privileged", True),
        ([HOST_HOST], {"iperf3": {"tests": [{"name": "tcp"}]}}, "privileged", False),
    ],
)
def test_namespace_is_privileged_only_when_a_pod_needs_it(tmp_path, scenarios, tools, level, net_raw):
    from podnet.launch.rounds.runner import launch
    from tests.fakekube import FakeKube, make_node
    from tests.unit.test_launch_runner import ok_responder

    k = FakeKube([make_node("n1"), make_node("n2")], ok_responder)
    namespaces = []
    create_namespace = k.create_namespace
    k.create_namespace = lambda body: (namespaces.append(body), create_namespace(body))
    assert (
        launch(
            launch_config(scenarios, tools, raw_dir=tmp_path / "raw", variant="v", repeats=1), kube=k
        ).failed
        == 0
    )
    (ns,) = namespaces
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == level
    clients = [
        b
        for (_, kind, _), b in k.created_log
        if kind == "Pod" and b["metadata"]["labels"]["podnet.io/role"] == "client"
    ]
    caps = {
        x
        for b in clients
        for ct in b["spec"]["containers"]
        for x in ct["securityContext"]["capabilities"].get("add", [])
    }
    assert caps == ({"NET_RAW"} if net_raw else set())
