"""Beside the rule counts (:mod:`podnet.launch.cluster.datapath`): the sets and maps a CNI's datapath
holds per node of the embedded cluster.

- ipsets (calico's iptables dataplane keeps its selectors' and ipBlocks' members in them; kube-proxy
  in IPVS mode too): ``ipset list -t`` in the node's network namespace (an ipset belongs to one):
  ``ipset_sets`` and ``ipset_entries`` in total, and the sets and entries whose name starts with
  ``cali`` (``calico_ipsets``, ``calico_ipset_entries``).
- cilium's BPF maps: each agent pins its maps in a bpffs of its own mount namespace (envs/cluster:
  one agent per node, each ``unshare -m``), so the launcher enters it (``nsenter -t <agent pid> -m``,
  the pid from the cluster's ``daemons.pid_dir``) and counts the entries of the load-balancer maps
  (``cilium_lb4_*``), the endpoints' policy maps (``cilium_policy_*``) and the ipcache with
  ``bpftool map dump pinned`` (its closing ``Found N elements``): ``cilium_maps`` (entries per map),
  ``cilium_policy_entries`` and ``cilium_lb_entries``.

Where a tool, the agent or its maps are not there, the node's record says why (``ipset_error``,
``cilium_error``): provenance, never a failure.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Runner = Callable[[list[str]], str]
#: where cilium pins its maps, in the agent's mount namespace (``--bpf-root=/sys/fs/bpf``)
GLOBALS = "/sys/fs/bpf/tc/globals"
#: the maps counted
CILIUM_PREFIXES = ("cilium_policy_", "cilium_lb4_", "cilium_ipcache")
PROC = Path("/proc")
_ERRORS = (OSError, subprocess.SubprocessError, ValueError)


def ipset_counts(text: str) -> dict[str, int]:
    """Entries per set of ``ipset list -t`` output (``Name:`` and ``Number of entries:`` lines)."""
    out: dict[str, int] = {}
    name = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "Name":
            name = value
            out[name] = 0
        elif key == "Number of entries" and name is not None:
            out[name] = int(value)
    return out


def bpftool_count(text: str) -> int:
    """The element count ``bpftool map dump`` prints last; ValueError without it."""
    found = re.findall(r"^Found (\d+) elements?\s*$", text, re.MULTILINE)
    if not found:
        raise ValueError(f"bpftool printed no element count ({text.strip()[-120:]!r})")
    return int(found[-1])


def node_index(info: Mapping[str, Any] | None, node: str) -> int | None:
    """The embedded cluster's 1-based number of ``node`` (its place in ``info.json`` ``nodes``)."""
    for i, n in enumerate((info or {}).get("nodes") or [], start=1):
        if isinstance(n, Mapping) and str(n.get("name")) == node:
            return i
    return None


def is_cilium(info: Mapping[str, Any] | None) -> bool:
    return str((info or {}).get("cni", "")).startswith("cilium") or "cilium" in (info or {})


def agent_pid(info: Mapping[str, Any] | None, index: int, proc: Path = PROC) -> int:
    """The pid of node ``index``'s cilium-agent (its pid file, checked against ``/proc``); OSError
    or ValueError saying why not."""
    pid_dir = ((info or {}).get("daemons") or {}).get("pid_dir")
    if not pid_dir:
        raise ValueError("the cluster's info.json names no daemons.pid_dir")
    pid = int((Path(pid_dir) / f"cilium-agent-{index}.pid").read_text().strip())
    comm = (proc / str(pid) / "comm").read_text().strip()
    if comm != "cilium-agent":
        raise ValueError(f"pid {pid} of cilium-agent-{index}.pid is {comm!r}, not cilium-agent")
    return pid


def ipsets(enter: list[str], run: Runner, which: Callable[[str], str | None]) -> dict[str, Any]:
    """A node's ipsets (``enter``: the command prefix into its network namespace)."""
    if which("ipset") is None:
        return {"ipset_error": "ipset is not installed"}
    try:
        sets = ipset_counts(run([*enter, "ipset", "list", "-t"]))
    except _ERRORS as exc:
        return {"ipset_error": str(exc)[:200]}
    cali = {k: v for k, v in sets.items() if k.startswith("cali")}
    return {
        "ipset_sets": len(sets),
        "ipset_entries": sum(sets.values()),
        "calico_ipsets": len(cali),
        "calico_ipset_entries": sum(cali.values()),
    }


def cilium_maps(
    info: Mapping[str, Any] | None,
    node: str,
    run: Runner,
    which: Callable[[str], str | None],
    proc: Path = PROC,
) -> dict[str, Any]:
    """Entries of node ``node``'s cilium maps (:data:`CILIUM_PREFIXES`), or ``cilium_error``."""
    if which("bpftool") is None:
        return {"cilium_error": "bpftool is not installed"}
    index = node_index(info, node)
    if index is None:
        return {"cilium_error": f"node {node} is not in the cluster's info.json"}
    try:
        enter = ["nsenter", "-t", str(agent_pid(info, index, proc)), "-m", "--"]
        names = sorted(n for n in run([*enter, "ls", GLOBALS]).split() if n.startswith(CILIUM_PREFIXES))
        if not names:
            raise ValueError(f"no cilium map pinned in {GLOBALS}")
        dump = [*enter, "bpftool", "map", "dump", "pinned"]
        maps = {n: bpftool_count(run([*dump, f"{GLOBALS}/{n}"])) for n in names}
    except _ERRORS as exc:
        return {"cilium_error": str(exc)[:200]}
    return {
        "cilium_maps": maps,
        "cilium_policy_entries": sum(v for k, v in maps.items() if k.startswith("cilium_policy_")),
        "cilium_lb_entries": sum(v for k, v in maps.items() if k.startswith("cilium_lb4_")),
    }


def node_maps(
    info: Mapping[str, Any] | None,
    node: str,
    enter: list[str],
    run: Runner,
    which: Callable[[str], str | None] | None = None,
    proc: Path = PROC,
) -> dict[str, Any]:
    """A node's ipset counts and, on a cilium cluster, its BPF map entries (keys above; ``which``:
    where a tool is, :func:`shutil.which` by default)."""
    which = which or shutil.which
    out = ipsets(enter, run, which)
    if is_cilium(info):
        out.update(cilium_maps(info, node, run, which, proc))
    return out
