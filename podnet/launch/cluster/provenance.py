"""Facts recorded in every sidecar: cluster and node versions, the CNI, pod addresses and MTU.

Node facts come from Node status (``nodeInfo``); the CNI is what the config
declares, else the embedded cluster's ``info.json``, else the nodes'
``podnet.io/cni`` label, else a guess from kube-system DaemonSet names.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnet.launch.spec.placement import Node


def now_iso() -> str:
    """UTC now, ISO 8601 with milliseconds and ``Z``."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: DaemonSet name fragments -> CNI (first match wins)
CNI_DAEMONSETS = [
    ("cilium", "cilium"),
    ("calico", "calico"),
    ("canal", "canal"),
    ("flannel", "flannel"),
    ("weave", "weave"),
    ("antrea", "antrea"),
    ("kube-router", "kube-router"),
    ("terway", "terway"),
    ("kindnet", "kindnet"),
    ("kube-ovn", "kube-ovn"),
    ("spiderpool", "spiderpool"),
    ("multus", "multus"),
    ("aws-node", "aws-vpc-cni"),
    ("azure-cni", "azure-cni"),
]

ZONE_LABEL = "topology.kubernetes.io/zone"
POOL_LABEL = "podnet.io/pool"


def node_facts(node: Any) -> dict[str, Any]:
    """Kernel, OS, kubelet, runtime, address, zone and pool of a Node object."""
    info = node.status.node_info
    labels = node.metadata.labels or {}
    ips = [a.address for a in (node.status.addresses or []) if a.type == "InternalIP"]
    return {
        "name": node.metadata.name,
        "kernel": info.kernel_version,
        "os": info.os_image,
        "kubelet": info.kubelet_version,
        "container_runtime": info.container_runtime_version,
        "architecture": info.architecture,
        "internal_ip": ips[0] if ips else None,
        # the kernel's boot id: nodes with the same one are one machine (the embedded cluster)
        "boot_id": getattr(info, "boot_id", None),
        "zone": labels.get(ZONE_LABEL),
        "pool": labels.get(POOL_LABEL),
    }


def to_nodes(items: list[Any]) -> list[Node]:
    """Node objects -> placement nodes (ready and schedulable flags from status/spec)."""
    out = []
    for n in items:
        ready = any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
        out.append(
            Node(
                name=n.metadata.name,
                labels=dict(n.metadata.labels or {}),
                ready=ready,
                schedulable=not n.spec.unschedulable,
            )
        )
    return out


def read_cluster_info(path: str | Path) -> dict[str, Any] | None:
    """The embedded cluster's info.json, or None."""
    p = Path(path)
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def detect_cni(
    declared: str | None, info: dict[str, Any] | None, nodes: list[Node], daemonsets: list[str] | None = None
) -> tuple[str, str]:
    """(cni, how it was known): declared > info.json > node label > DaemonSets > unknown."""
    if declared:
        return declared, "declared in the config"
    if info and info.get("cni"):
        return str(info["cni"]), "embedded cluster info.json"
    labels = {n.labels.get("podnet.io/cni") for n in nodes} - {None}
    if len(labels) == 1:
        return str(labels.pop()), "node label podnet.io/cni"
    for ds in daemonsets or []:
        for frag, cni in CNI_DAEMONSETS:
            if frag in ds:
                return cni, f"kube-system DaemonSet {ds}"
    return "unknown", "not declared and not detected"


def variant_name(configured: str, cni: str) -> str:
    """The variant of a launch: the configured name, or the CNI for ``auto``."""
    if configured != "auto":
        return configured
    v = re.sub(r"[^A-Za-z0-9._-]+", "-", cni).strip("-.")
    return v if v and v != "unknown" else "default"


def interface_for(ip_addr_json: str, address: str | None) -> dict[str, Any]:
    """From ``ip -j addr show`` output: the interface holding ``address`` (name, mtu)."""
    try:
        links = json.loads(ip_addr_json)
    except (json.JSONDecodeError, TypeError):
        return {}
    for link in links if isinstance(links, list) else []:
        for a in link.get("addr_info", []):
            if address and a.get("local") == address:
                return {"interface": link.get("ifname"), "mtu": link.get("mtu")}
    return {}


def git_commit(repo: str | Path = ".") -> str | None:
    """HEAD of the repository the launcher runs from (provenance), when it is a git checkout."""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def first_line(text: str, limit: int = 200) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


@dataclass
class ClusterFacts:
    """What a launch learns about the cluster before it creates anything (read-only API calls)."""

    nodes: list[Node]
    #: node name -> :func:`node_facts`
    node_facts: dict[str, dict[str, Any]]
    #: Kubernetes version, CNI and how it was known, API source, embedded cluster settings
    cluster: dict[str, Any]
    variant: str
    cni: str


#: embedded-cluster settings from info.json recorded in every sidecar
EMBEDDED_KEYS = (
    "cluster_id",
    "cni_datapath",
    "encapsulation",
    "calico",
    "cilium",
    "edge_tunnel",
    "pod_mtu",
    "link_rate",
    "kube_proxy_mode",
    "containerd_version",
    "runc_version",
    "daemon_cgroup",
)


def discover(cfg: Any, kube: Any) -> ClusterFacts:
    """Nodes, versions, CNI and variant of the cluster ``kube`` talks to, for the config ``cfg``."""
    raw_nodes = kube.nodes()
    nodes = to_nodes(raw_nodes)
    info = read_cluster_info(cfg.cluster_info)
    host = getattr(getattr(getattr(kube, "api_client", None), "configuration", None), "host", None)
    if info and host and info.get("api_server") and info["api_server"].rstrip("/") != str(host).rstrip("/"):
        info = None  # info.json of another cluster
    daemonsets = [] if (cfg.cni or (info and info.get("cni"))) else kube.daemonset_names()
    cni, how = detect_cni(cfg.cni, info, nodes, daemonsets)
    cluster: dict[str, Any] = {
        "kubernetes_version": kube.version(),
        "cni": cni,
        "cni_source": how,
        "api": getattr(kube, "source", ""),
    }
    if info:
        cluster["embedded"] = {k: info.get(k) for k in EMBEDDED_KEYS if k in info}
    return ClusterFacts(
        nodes=nodes,
        node_facts={n.metadata.name: node_facts(n) for n in raw_nodes},
        cluster=cluster,
        variant=variant_name(cfg.variant, cni),
        cni=cni,
    )
