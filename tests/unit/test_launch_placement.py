"""Placement: node name, label selector, relative to the peer, index; unresolved endpoints."""

from __future__ import annotations

from podnet.launch.spec.config import EndpointSpec, Scenario
from podnet.launch.spec.placement import Node, natural_key, resolve_endpoint, resolve_scenario

NODES = [
    Node("node-10", {"zone": "b", "pool": "edge"}),
    Node("node-2", {"zone": "a", "pool": "cloud"}),
    Node("node-1", {"zone": "a", "pool": "cloud"}),
    Node("node-3", {"zone": "b", "pool": "edge"}),
    Node("node-4", {"zone": "a"}, ready=False),
]


def sc(client: EndpointSpec, server: EndpointSpec) -> Scenario:
    return Scenario(name="s", client=client, server=server, tests=())


def test_default_is_first_ready_node_in_natural_order():
    assert sorted(["n-10", "n-2", "n-1"], key=natural_key) == ["n-1", "n-2", "n-10"]
    assert resolve_endpoint(EndpointSpec(), NODES).node == "node-1"


def test_by_name_and_unknown_name():
    assert resolve_endpoint(EndpointSpec(node="node-3"), NODES).node == "node-3"
    p = resolve_endpoint(EndpointSpec(node="node-4"), NODES)  # not ready
    assert not p.resolved and p.node_name == "node-4" and "node-4" in p.reason


def test_by_selector_and_index():
    sel = (("pool", "edge"),)
    assert resolve_endpoint(EndpointSpec(selector=sel), NODES).node == "node-3"
    assert resolve_endpoint(EndpointSpec(selector=sel, index=1), NODES).node == "node-10"
    p = resolve_endpoint(EndpointSpec(selector=sel, index=2), NODES)
    assert not p.resolved and "only 2 node(s)" in p.reason


def test_relative_same_and_other_node():
    c, s = resolve_scenario(sc(EndpointSpec(same_node_as="server"), EndpointSpec(node="node-2")), NODES)
    assert (c.node, s.node) == ("node-2", "node-2")
    c, s = resolve_scenario(sc(EndpointSpec(other_node_than="server"), EndpointSpec(node="node-1")), NODES)
    assert (c.node, s.node) == ("node-2", "node-1")
    # server placed relative to the client
    c, s = resolve_scenario(
        sc(
            EndpointSpec(selector=(("zone", "b"),)),
            EndpointSpec(other_node_than="client", selector=(("zone", "b"),)),
        ),
        NODES,
    )
    assert (c.node, s.node) == ("node-3", "node-10")


def test_cross_pool():
    c, s = resolve_scenario(
        sc(EndpointSpec(selector=(("pool", "edge"),)), EndpointSpec(selector=(("pool", "cloud"),))), NODES
    )
    assert (c.node, s.node) == ("node-3", "node-1")


def test_impossible_selector_is_unresolved_with_constraints():
    p = resolve_endpoint(EndpointSpec(selector=(("zone", "mars"),)), NODES)
    assert not p.resolved and p.selector == (("zone", "mars"),)
    aff = p.node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert aff["matchExpressions"] == [{"key": "zone", "operator": "In", "values": ["mars"]}]
    assert p.key().startswith("unresolved:")


def test_relative_to_an_unresolved_peer_is_blocked():
    c, s = resolve_scenario(
        sc(EndpointSpec(same_node_as="server"), EndpointSpec(selector=(("zone", "mars"),))), NODES
    )
    assert not s.resolved and not c.resolved and c.blocked_by_peer


def test_other_node_with_a_single_node():
    nodes = [Node("only")]
    c, s = resolve_scenario(sc(EndpointSpec(other_node_than="server"), EndpointSpec()), nodes)
    assert s.node == "only" and not c.resolved and c.not_nodes == ("only",)
    term = c.node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "NotIn", "values": ["only"]}]


def test_resolved_pod_pins_the_node_through_the_scheduler():
    p = resolve_endpoint(EndpointSpec(node="node-3"), NODES)
    term = p.node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-3"]}]}
