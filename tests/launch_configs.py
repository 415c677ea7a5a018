"""Experiment configs for the launcher's tests: one builder and the scenarios and tools they share.

Every call returns a fresh deep copy, so a test may change what it gets.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from podnet.launch.spec.config import LaunchConfig, from_mapping

#: hostNetwork client and server on two nodes: the baseline path
HOST_HOST = {
    "name": "host-host",
    "client": {"kind": "host", "other_node_than": "server"},
    "server": {"kind": "host"},
}

#: iperf3 TCP and a 3-packet ping: the two tools most launcher tests run
IPERF3_PING = {
    "iperf3": {"tests": [{"name": "tcp"}]},
    "ping": {"tests": [{"name": "plain", "params": {"count": 3}}]},
}


def pod_pod(name: str = "pod-pod", placement: str = "other_node_than", **extra: Any) -> dict[str, Any]:
    """Two ordinary pods, the client on another node than the server (or ``same_node_as``)."""
    return {"name": name, "client": {"kind": "pod", placement: "server"}, "server": {"kind": "pod"}, **extra}


def pod_svc(name: str = "pod-svc", **extra: Any) -> dict[str, Any]:
    """A pod client on another node than the ClusterIP Service's server pod."""
    return {
        "name": name,
        "client": {"kind": "pod", "other_node_than": "server"},
        "server": {"kind": "service"},
        **extra,
    }


def experiment(
    scenarios: list[dict[str, Any]],
    tools: dict[str, Any] | None = None,
    *,
    raw_dir: str | Path | None = None,
    stats: dict[str, Any] | None = None,
    name: str = "t",
    **launch: Any,
) -> dict[str, Any]:
    """An experiment config with a launch section (image ``img:1`` unless given) as a plain mapping."""
    # never the machine's own embedded cluster (.cluster/info.json: its daemons' and pods' CPU would
    # judge the fake runs disturbed whenever a real cluster is up beside the unit tests)
    section = {
        "image": "img:1",
        "cluster_info": "/nonexistent/podnet-unit-test/info.json",
        **launch,
        "tools": tools or IPERF3_PING,
        "scenarios": scenarios,
    }
    cfg: dict[str, Any] = {"experiment": name, "launch": section}
    if raw_dir is not None:
        cfg["raw_dir"] = str(raw_dir)
    if stats is not None:
        cfg["stats"] = stats
    return copy.deepcopy(cfg)


def launch_config(
    scenarios: list[dict[str, Any]], tools: dict[str, Any] | None = None, **kw: Any
) -> LaunchConfig:
    """:func:`experiment` validated and built into a :class:`LaunchConfig`."""
    return from_mapping(experiment(scenarios, tools, **kw))
