"""What the nodes' datapath holds: rule counts in each node's network namespace (embedded cluster).

The embedded cluster's nodes are network namespaces of this machine (``info.json`` ``nodes[].netns``,
under ``/run/netns``); kube-proxy (iptables or nftables mode), flannel and calico's felix program
their rules there. As root, the launcher counts per node: ``iptables-save`` rules (``-A`` lines) per
table, with the ``iptables`` on PATH (the backend kube-proxy and felix drive), and ``nft -j list
ruleset`` rules and set/map elements per table; beside them the nodes' ipsets and cilium's BPF map
entries (:mod:`podnet.launch.cluster.datapath_maps`). Elsewhere (a real cluster, not root) the
record says why there is no count; it is provenance, never a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from podnet.launch.cluster import datapath_maps

NETNS_DIR = Path("/run/netns")
#: seconds one listing may take
LIST_TIMEOUT = 60

Runner = Callable[[list[str]], str]


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=LIST_TIMEOUT, check=True).stdout


def iptables_counts(text: str) -> dict[str, int]:
    """Rules per table of ``iptables-save`` output (``*table`` headers, ``-A`` lines)."""
    out: dict[str, int] = {}
    table = ""
    for line in text.splitlines():
        if line.startswith("*"):
            table = line[1:].strip()
            out.setdefault(table, 0)
        elif line.startswith("-A ") and table:
            out[table] += 1
    return out


def nft_counts(text: str) -> dict[str, dict[str, int]]:
    """Per ``<family> <table>``: its rules and the elements of its sets and maps (``nft -j list ruleset``)."""
    out: dict[str, dict[str, int]] = {}
    for item in json.loads(text or "{}").get("nftables", []):
        for kind, obj in item.items():
            if kind not in ("rule", "set", "map") or not isinstance(obj, dict):
                continue
            t = out.setdefault(f"{obj.get('family')} {obj.get('table')}", {"rules": 0, "elements": 0})
            if kind == "rule":
                t["rules"] += 1
            else:
                t["elements"] += len(obj.get("elem") or [])
    return out


def node_netns(info: Mapping[str, Any] | None) -> dict[str, str]:
    """Node name -> its network namespace, from the embedded cluster's ``info.json``."""
    nodes = (info or {}).get("nodes")
    if not isinstance(nodes, list):
        return {}
    return {str(n["name"]): str(n["netns"]) for n in nodes if isinstance(n, dict) and n.get("netns")}


def unavailable(info: Mapping[str, Any] | None, netns_dir: Path = NETNS_DIR) -> str | None:
    """Why rules cannot be counted here, or None."""
    if not node_netns(info):
        return "not the embedded cluster (no info.json with node network namespaces)"
    if os.geteuid() != 0:
        return "the launcher is not root (node network namespaces)"
    if not shutil.which("nsenter"):
        return "nsenter is not installed"
    away = [n for n, ns in node_netns(info).items() if not (netns_dir / ns).exists()]
    if away:
        return f"node network namespaces not on this machine: {', '.join(sorted(away))}"
    return None


def rule_counts(
    info: Mapping[str, Any] | None, run: Runner = _run, netns_dir: Path = NETNS_DIR
) -> dict[str, Any]:
    """Per node: ``iptables`` rules per table and their ``iptables_total``, ``nft`` per table
    (rules, elements) and ``nft_rules`` / ``nft_elements`` totals, ipsets and cilium's map entries
    (:func:`podnet.launch.cluster.datapath_maps.node_maps`); or ``{"unavailable": why}``."""
    if run is _run:
        why = unavailable(info, netns_dir)
        if why:
            return {"unavailable": why}
    out: dict[str, Any] = {}
    for node, ns in sorted(node_netns(info).items()):
        enter = ["nsenter", f"--net={netns_dir / ns}", "--"]
        rec: dict[str, Any] = {}
        try:
            ipt = iptables_counts(run([*enter, "iptables-save"]))
            rec.update(iptables=ipt, iptables_total=sum(ipt.values()))
        except (OSError, subprocess.SubprocessError) as exc:
            rec["iptables_error"] = str(exc)[:200]
        try:
            nft = nft_counts(run([*enter, "nft", "-j", "list", "ruleset"]))
            rec.update(
                nft=nft,
                nft_rules=sum(t["rules"] for t in nft.values()),
                nft_elements=sum(t["elements"] for t in nft.values()),
            )
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            rec["nft_error"] = str(exc)[:200]
        rec.update(datapath_maps.node_maps(info, node, enter, run))
        out[node] = rec
    return out
