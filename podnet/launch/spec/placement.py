"""Which node an endpoint runs on: by name, by label selector, or relative to its peer.

Resolution is pure (nodes in, node names out) so it is unit-tested without a
cluster. An endpoint that matches no node is *unresolved*: it still becomes a
pod, whose node selector / affinity the scheduler cannot satisfy, so the
failure is reported with the pod's own events (FailedScheduling ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.spec.config import EndpointSpec, Scenario


@dataclass(frozen=True)
class Node:
    """A schedulable node as placement sees it."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    ready: bool = True
    schedulable: bool = True


@dataclass(frozen=True)
class Placement:
    """Where one endpoint's pod goes.

    ``node`` is set when resolved. Otherwise ``selector`` / ``not_nodes`` /
    ``node_name`` are the constraints the pod carries (the scheduler then
    reports why no node fits) and ``reason`` says why nothing matched.
    """

    node: str | None
    selector: tuple[tuple[str, str], ...] = ()
    node_name: str | None = None
    not_nodes: tuple[str, ...] = ()
    reason: str = ""
    #: unresolved only because the peer endpoint has no node: no pod is made for it
    blocked_by_peer: bool = False

    @property
    def resolved(self) -> bool:
        return self.node is not None

    def key(self) -> str:
        """Identity for deduplicating pods: the node, or the unmet constraints."""
        if self.node:
            return self.node
        parts = [f"name={self.node_name}"] if self.node_name else []
        parts += [f"{k}={v}" for k, v in self.selector]
        parts += [f"not={n}" for n in self.not_nodes]
        return "unresolved:" + ",".join(parts)

    def node_affinity(self) -> dict[str, Any]:
        """The pod's nodeAffinity (required terms) expressing this placement."""
        fields: list[dict[str, Any]] = []
        exprs: list[dict[str, Any]] = []
        if self.node:
            fields.append({"key": "metadata.name", "operator": "In", "values": [self.node]})
        else:
            if self.node_name:
                fields.append({"key": "metadata.name", "operator": "In", "values": [self.node_name]})
            if self.not_nodes:
                fields.append({"key": "metadata.name", "operator": "NotIn", "values": list(self.not_nodes)})
            exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in self.selector]
        term: dict[str, Any] = {}
        if fields:
            term["matchFields"] = fields
        if exprs:
            term["matchExpressions"] = exprs
        if not term:
            return {}
        return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}


def natural_key(name: str) -> list[Any]:
    """Sort key that orders node-2 before node-10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def usable(nodes: Iterable[Node]) -> list[Node]:
    """Ready, schedulable nodes in natural name order."""
    return sorted((n for n in nodes if n.ready and n.schedulable), key=lambda n: natural_key(n.name))


def _matches(node: Node, selector: tuple[tuple[str, str], ...]) -> bool:
    return all(node.labels.get(k) == v for k, v in selector)


def resolve_endpoint(spec: EndpointSpec, nodes: list[Node], peer: Placement | None = None) -> Placement:
    """Resolve one endpoint; ``peer`` is the resolved other side when ``spec`` is relative."""
    nodes = usable(nodes)
    if spec.node:
        if any(n.name == spec.node for n in nodes):
            return Placement(node=spec.node)
        return Placement(
            node=None, node_name=spec.node, reason=f"no ready, schedulable node named {spec.node!r}"
        )
    candidates = [n for n in nodes if _matches(n, spec.selector)]
    not_nodes: tuple[str, ...] = ()
    if spec.relative_to:
        if peer is None or not peer.resolved:
            return Placement(
                node=None,
                selector=spec.selector,
                reason=f"placed relative to the {spec.relative_to}, which has no node",
                blocked_by_peer=True,
            )
        if spec.same_node_as:
            candidates = [n for n in candidates if n.name == peer.node]
            if not candidates:
                return Placement(
                    node=None,
                    node_name=peer.node,
                    selector=spec.selector,
                    reason=f"the {spec.same_node_as}'s node {peer.node} does not match the selector",
                )
        else:
            not_nodes = (peer.node,)  # type: ignore[assignment]
            candidates = [n for n in candidates if n.name != peer.node]
    if not candidates:
        what = " and ".join(
            ([f"labels {', '.join(f'{k}={v}' for k, v in spec.selector)}"] if spec.selector else [])
            + ([f"not {not_nodes[0]}"] if not_nodes else [])
        )
        return Placement(
            node=None,
            selector=spec.selector,
            not_nodes=not_nodes,
            reason=f"no ready, schedulable node with {what or 'any label'}",
        )
    if spec.index >= len(candidates):
        return Placement(
            node=None,
            selector=spec.selector,
            not_nodes=not_nodes,
            reason=f"index {spec.index} but only {len(candidates)} node(s) match ({', '.join(n.name for n in candidates)})",
        )
    return Placement(node=candidates[spec.index].name)


def resolve_scenario(scenario: Scenario, nodes: list[Node]) -> tuple[Placement, Placement]:
    """(client, server) placements of a scenario: the absolute side first, then the relative one."""
    if scenario.client.relative_to == "server":
        server = resolve_endpoint(scenario.server, nodes)
        client = resolve_endpoint(scenario.client, nodes, server)
    else:
        client = resolve_endpoint(scenario.client, nodes)
        server = resolve_endpoint(scenario.server, nodes, client)
    return client, server
