"""Launch config: schema validation and plan expansion (cases, deduplicated pods, Services)."""

from __future__ import annotations

import copy

import pytest

from podnet.launch.spec.config import LaunchConfigError, from_mapping, load_config
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import build_plan, case_params
from tests.fakekube import make_node
from tests.launch_configs import HOST_HOST, experiment, pod_pod, pod_svc

BASE = experiment(
    [
        HOST_HOST,
        pod_pod("pod-pod-same", "same_node_as"),
        pod_pod("pod-pod-cross"),
        pod_svc(tests=["iperf3"]),
    ],
    {
        "iperf3": {
            "tests": [
                {"name": "tcp"},
                {"name": "udp", "params": {"protocol": "udp", "length": 16, "bandwidth": "100M"}},
            ]
        },
        "ping": {"tests": [{"name": "plain", "params": {"count": 3}}]},
    },
    raw_dir="raw/t",
)

NODES = [Node("n1", {"pool": "a"}), Node("n2", {"pool": "a"}), Node("n3", {"pool": "b"})]


def cfg(**launch_over):
    c = copy.deepcopy(BASE)
    c["launch"].update(launch_over)
    return from_mapping(c)


def test_cases_expand_scenario_major_with_selection():
    c = cfg()
    keys = [case.key for case in c.cases]
    assert keys[:3] == [
        ("host-host", "iperf3", "tcp"),
        ("host-host", "iperf3", "udp"),
        ("host-host", "ping", "plain"),
    ]
    assert [k for k in keys if k[0] == "pod-svc"] == [
        ("pod-svc", "iperf3", "tcp"),
        ("pod-svc", "iperf3", "udp"),
    ]
    assert len(keys) == 3 * 3 + 2


def test_tool_test_selector_and_unknown_names():
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"][0]["tests"] = ["iperf3:udp", "ping"]
    assert [x.key[1:] for x in from_mapping(c).cases if x.scenario.name == "host-host"] == [
        ("iperf3", "udp"),
        ("ping", "plain"),
    ]
    c["launch"]["scenarios"][0]["tests"] = ["iperf3:nope"]
    with pytest.raises(LaunchConfigError, match="has no test 'nope'"):
        from_mapping(c)
    c["launch"]["scenarios"][0]["tests"] = ["qperf"]
    with pytest.raises(LaunchConfigError, match="does not define"):
        from_mapping(c)


def test_schema_is_strict():
    c = copy.deepcopy(BASE)
    c["launch"]["repeat"] = 3  # typo of repeats
    with pytest.raises(LaunchConfigError, match="repeat"):
        from_mapping(c)
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"][0]["client"]["kind"] = "service"
    with pytest.raises(LaunchConfigError):
        from_mapping(c)
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"][0]["server"] = {"node": "n1", "same_node_as": "client"}
    with pytest.raises(LaunchConfigError):
        from_mapping(c)


def test_relative_both_ways_rejected():
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"][0]["server"] = {"kind": "host", "same_node_as": "client"}
    with pytest.raises(LaunchConfigError, match="relative to each other"):
        from_mapping(c)


def test_duplicate_names_rejected():
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"].append(copy.deepcopy(c["launch"]["scenarios"][0]))
    with pytest.raises(LaunchConfigError, match="unique"):
        from_mapping(c)


def test_ping_to_service_is_a_config_error():
    c = copy.deepcopy(BASE)
    del c["launch"]["scenarios"][3]["tests"]
    with pytest.raises(LaunchConfigError, match="ICMP"):
        build_plan(from_mapping(c), NODES)


def test_pods_are_deduplicated_and_services_made():
    plan = build_plan(cfg(), NODES)
    names = sorted(plan.pods)
    assert names == [
        "client-host-n2",
        "client-pod-n1",
        "client-pod-n2",
        "server-host-n1",
        "server-pod-n1",
    ]
    srv = plan.pods["server-pod-n1"]
    # one iperf3 server for the tcp and udp tests, with UDP on the Service for the udp test
    assert [s.argv for s in srv.servers] == [["iperf3", "-s", "-p", "15201"]]
    assert srv.servers[0].protocols == {"tcp", "udp"}
    assert srv.service == "svc-server-pod-n1"
    assert plan.pods["server-host-n1"].host_network and not plan.pods["server-pod-n1"].host_network
    by = {cp.case.key: cp for cp in plan.cases}
    assert by[("pod-pod-same", "iperf3", "tcp")].client_pod == "client-pod-n1"
    assert by[("pod-pod-cross", "iperf3", "tcp")].client_pod == "client-pod-n2"
    assert by[("pod-svc", "iperf3", "tcp")].service == "svc-server-pod-n1"
    assert by[("host-host", "ping", "plain")].server is None


def test_ports_default_high_and_overridable():
    c = cfg()
    assert case_params(c, c.tools["iperf3"][0])["port"] == 15201
    c2 = cfg(ports={"iperf3": 16000}, defaults={"duration": 2, "count": 7, "bogus": 1})
    p = case_params(c2, c2.tools["iperf3"][0])
    assert p["port"] == 16000 and p["duration"] == 2 and "count" not in p and "bogus" not in p
    assert case_params(c2, c2.tools["ping"][0])["count"] == 3  # the test's own params win


def test_missing_tool_is_skipped_and_gets_no_server():
    plan = build_plan(cfg(), NODES, {"iperf3": "image lacks iperf3"})
    assert all(cp.skipped for cp in plan.cases if cp.case.test.tool == "iperf3")
    assert all(not p.servers for p in plan.pods.values())


def test_quick_and_default_configs_load():
    for path in ("config/examples/quick.yaml", "config/config.yaml", "config/examples/quick-adaptive.yaml"):
        c = load_config(path)
        assert c.cases
        assert c.image_pull_policy == "Never"


def test_quick_runs_every_tool_in_every_scenario():
    c = load_config("config/examples/quick.yaml")
    tools = set(c.tools)
    assert {"iperf3", "ping", "qperf", "iperf2", "ab", "wrk"} <= tools
    assert c.repeats == 1
    for s in c.scenarios:
        used = {t.tool for t in s.tests}
        expected = tools - ({"ping"} if s.server.kind == "service" else set())
        assert used == expected, s.name
    nodes = [
        make_node(f"podnet-node-{i}", {"podnet.io/pool": "pool-a", "topology.kubernetes.io/zone": "zone-a"})
        for i in (1, 2)
    ]
    from podnet.launch.cluster.provenance import to_nodes

    plan = build_plan(c, to_nodes(nodes))
    assert all(p.placement.resolved for p in plan.pods.values())


def test_schema_documents_every_launch_key():
    from podnet.config.schema import load

    schema = load()
    launch = schema["properties"]["launch"]

    def walk(node, path):
        if not isinstance(node, dict):
            return
        for key, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and "$ref" not in sub and "allOf" not in sub:
                assert "description" in sub or "properties" in sub, f"{path}.{key} lacks a description"
            walk(sub, f"{path}.{key}")
        for key in ("additionalProperties", "items"):
            walk(node.get(key), path)

    walk(launch, "launch")
    walk(launch["$defs"]["endpoint"], "endpoint")
