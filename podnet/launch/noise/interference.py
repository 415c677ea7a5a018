"""What competed with a run: CPU busy/steal of its machines, the launcher's CPU, the cluster daemons' CPU.

Every launched run's sidecar gets an ``interference`` mapping (checked by
:data:`podnet.parse.raw.sidecar_schema`):

- ``nodes``: per node, the CPU time split read from ``/proc/stat`` in the run's
  pods just before and just after the test: ``busy`` (the fraction of all CPUs'
  time not idle, not waiting for I/O and not stolen; the test's own load is part
  of it), ``steal`` (taken by the hypervisor), ``iowait``, ``cpus`` and
  ``cpu_busy`` (per CPU), ``window_s`` (from ``/proc/uptime``). The client's
  snapshots come from a fixed wrapper script around the client command that
  writes them to files in the pod's ``/tmp`` (never to the tool's output, which
  stays byte for byte the tool's); the server's from a short exec before and after
  the client, only when the server runs on another machine (another boot id).
- ``busy``/``steal``/``window_s``: the highest over the machines measured.
- ``launcher_cpu_s``: the launcher's own CPU seconds (``getrusage``) while the
  client ran, ``exec_wall_s`` that wall time, ``launcher_cpu_fraction`` their ratio.
- ``daemons`` (the embedded cluster, whose daemons run on the launcher's machine):
  CPU seconds of each daemon ``envs/cluster`` started (``/proc/<pid>/stat`` of the
  PIDs it records), the control plane's and the node agents' sums, and the whole
  ``podnet-daemons`` cgroup's (shims and helpers included) when it exists.
- ``foreign`` (the embedded cluster, with its daemons' cgroup): the launcher's machine's CPU time
  busy or stolen over the exec (``/proc/stat`` read by the launcher, which runs on that machine)
  minus the CPU of the cluster's pods (the kubelets' cgroupRoot: the run's client and server), of
  the daemons' cgroup and of the launcher: work that is neither the run's nor the cluster's, in
  CPU seconds (``cpu_s``) and as a share of the machine (``share``), which
  :mod:`podnet.launch.spec.disturbance` judges.

Nothing here polls the API during the run: the only calls are before the client
starts and after it ended.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnet.launch.noise import cpus
from podnet.launch.noise.cpus import READ_PERCPU
from podnet.launch.noise.procstat import (
    CLK_TCK,
    STAT_FIELDS,
    ProcStatError,
    cpu_usage,
    parse_snapshot,
    split_read,
    split_ticks,
)

#: files in the client pod's /tmp holding the snapshots taken around the client command
BEFORE, AFTER = "/tmp/podnet-stat.before", "/tmp/podnet-stat.after"
#: the wrapper around the client argv: snapshots to files (errors silenced), the command's own exit
#: code; each snapshot ends with the container's CPU time per CPU (:mod:`podnet.launch.noise.cpus`)
WRAPPER = (
    "{ cat /proc/uptime /proc/stat; " + READ_PERCPU + "; } >" + BEFORE + " 2>/dev/null; "
    '"$@"; rc=$?; '
    "{ cat /proc/uptime /proc/stat; " + READ_PERCPU + "; } >" + AFTER + " 2>/dev/null; exit $rc"
)
WRAPPER_NAME = "podnet-run"
#: reads (and removes) the client's snapshots; a missing file prints nothing for its section
READ_SCRIPT = (
    f'echo "== before"; cat {BEFORE}; echo "== after"; cat {AFTER}; '
    'echo "== boot_id"; cat /proc/sys/kernel/random/boot_id; '
    f"rm -f {BEFORE} {AFTER}"
)
#: one snapshot of a server pod's machine, with the server container's CPU time per CPU
SNAPSHOT = ["sh", "-c", "cat /proc/uptime /proc/stat /proc/sys/kernel/random/boot_id; " + READ_PERCPU]
#: daemons of the embedded cluster's control plane (the rest are node agents: kubelet-N, containerd-N...)
CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


# -- the launcher's machine: the launcher and the embedded cluster's daemons ------------------------------
def launcher_cpu_s() -> float:
    """CPU seconds (user + system) this process has used."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu_s(pid: int, start: str | None = None) -> float | None:
    """CPU seconds of process ``pid`` (all its threads); None when gone or recycled (start time differs)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    fields = text[text.rfind(")") + 2 :].split()
    if start is not None and fields[19] != start.strip():
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def pods_usage_file(daemon_usage: Path) -> Path | None:
    """The CPU usage file of the cluster's pods (the kubelets' cgroupRoot ``/<prefix>``, beside the
    daemons' ``/<prefix>-daemons``: ``envs/cluster/lib.sh``), or None when it does not exist."""
    group = daemon_usage.parent
    if not group.name.endswith("-daemons"):
        return None
    pods = group.with_name(group.name[: -len("-daemons")]) / daemon_usage.name
    return pods if pods.exists() else None


def host_ticks(path: str = "/proc/stat") -> tuple[int, ...] | None:
    """The aggregate CPU counters of the machine this process runs on (None when unreadable)."""
    try:
        return parse_snapshot(Path(path).read_text()).total
    except (OSError, ProcStatError):
        return None


def foreign_cpu(
    ticks: tuple[tuple[int, ...], tuple[int, ...]], own_s: dict[str, float], clk_tck: float = CLK_TCK
) -> dict[str, Any] | None:
    """Work on the machine that is neither the run's nor the cluster's, between two readings of its
    /proc/stat ``ticks`` (before, after): busy + stolen CPU seconds minus ``own_s`` (pods, daemons,
    launcher CPU seconds over the same interval); ``share`` of the machine's CPU time."""
    b, a = split_ticks(ticks[0]), split_ticks(ticks[1])
    d = {k: a[k] - b[k] for k in STAT_FIELDS}
    total = sum(d[k] for k in STAT_FIELDS[:8])
    if total <= 0 or any(v < 0 for v in d.values()):
        return None
    busy_s = (total - d["idle"] - d["iowait"]) / clk_tck  # steal stays in: the hypervisor's other work
    machine_s = total / clk_tck
    own = sum(own_s.values())
    return {
        "cpu_s": round(busy_s - own, 3),
        "share": round((busy_s - own) / machine_s, 4),
        "busy_cpu_s": round(busy_s, 3),
        "machine_cpu_s": round(machine_s, 3),
        **{f"{k}_cpu_s": round(v, 3) for k, v in own_s.items()},
    }


@dataclass
class Daemons:
    """The embedded cluster's daemons (pid files ``envs/cluster`` writes) and their cgroup, and the
    cgroup of its pods."""

    pid_dir: Path
    cgroup_usage: Path | None = None
    pods_usage: Path | None = None

    @classmethod
    def from_info(cls, info: dict[str, Any] | None) -> Daemons | None:
        """From the embedded cluster's info.json (``daemons.pid_dir``, ``daemon_cgroup.cpuacct``)."""
        d = (info or {}).get("daemons") or {}
        if not d.get("pid_dir") or not Path(d["pid_dir"]).is_dir():
            return None
        usage = ((info or {}).get("daemon_cgroup") or {}).get("cpu_usage_file")
        u = Path(usage) if usage and Path(usage).exists() else None
        return cls(Path(d["pid_dir"]), u, pods_usage_file(u) if u else None)

    def read(self) -> dict[str, Any]:
        """CPU seconds of each daemon alive now, and of the daemons' cgroup (None without one)."""
        per: dict[str, float] = {}
        for f in sorted(self.pid_dir.glob("*.pid")):
            try:
                pid = int(f.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            st = f.with_suffix(".start")
            start = st.read_text() if st.exists() else None
            s = proc_cpu_s(pid, start)
            if s is not None:
                per[f.stem] = s
        return {
            "per": per,
            "cgroup": cgroup_cpu_s(self.cgroup_usage) if self.cgroup_usage else None,
            "pods": cgroup_cpu_s(self.pods_usage) if self.pods_usage else None,
            "ticks": host_ticks() if self.pods_usage else None,
        }

    def read_cgroups(self) -> float | None:
        """CPU seconds of the daemons' and the pods' cgroups together (None when either is unreadable)."""
        a = cgroup_cpu_s(self.cgroup_usage) if self.cgroup_usage else None
        b = cgroup_cpu_s(self.pods_usage) if self.pods_usage else None
        return None if a is None or b is None else a + b


def cgroup_cpu_s(path: Path) -> float | None:
    """CPU seconds of a cgroup: v1 ``cpuacct.usage`` (ns) or v2 ``cpu.stat`` (``usage_usec``)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    if path.name == "cpu.stat":
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == "usage_usec":
                return int(v) / 1e6
        return None
    try:
        return int(text.split()[0]) / 1e9
    except (ValueError, IndexError):
        return None


def daemons_delta(before: dict[str, Any], after: dict[str, Any], wall: float) -> dict[str, Any]:
    """CPU seconds each daemon used between two :meth:`Daemons.read`, with sums and the share of one CPU."""
    by = {k: round(after["per"][k] - v, 3) for k, v in before["per"].items() if k in after["per"]}
    total = sum(by.values())
    cp = sum(v for k, v in by.items() if k in CONTROL_PLANE)
    out: dict[str, Any] = {
        "cpu_s": round(total, 3),
        "fraction": round(total / wall, 4) if wall > 0 else None,
        "control_plane_cpu_s": round(cp, 3),
        "node_agents_cpu_s": round(total - cp, 3),
        "by_daemon": by,
    }
    if before.get("cgroup") is not None and after.get("cgroup") is not None:
        out["cgroup_cpu_s"] = round(after["cgroup"] - before["cgroup"], 3)
    return out


def foreign_delta(before: dict[str, Any], after: dict[str, Any], launcher_s: float) -> dict[str, Any] | None:
    """``foreign`` (:func:`foreign_cpu`) between two :meth:`Daemons.read`, or None without the machine's
    counters, the pods' or the daemons' cgroup. A ``neighbours`` reading (the other clusters of a
    side-by-side set: their daemons and pods, :meth:`Interference.read`) counts as the experiment's own."""
    keys = ("ticks", "pods", "cgroup")
    if any(before.get(k) is None or after.get(k) is None for k in keys):
        return None
    own = {
        "pods": after["pods"] - before["pods"],
        "daemons": after["cgroup"] - before["cgroup"],
        "launcher": launcher_s,
    }
    if before.get("neighbours") is not None and after.get("neighbours") is not None:
        own["neighbour_clusters"] = after["neighbours"] - before["neighbours"]
    return foreign_cpu((before["ticks"], after["ticks"]), own)


# -- one run ------------------------------------------------------------------------------------------------
@dataclass
class Probe:
    """What :meth:`Interference.start` read before a client ran."""

    t0: float
    launcher: float
    daemons: dict[str, Any] | None
    server: str | None = None
    server_error: str | None = None
    #: what the server's readings started with (:attr:`Interference.server_pin`, or the run's own)
    server_pin: tuple[str, ...] = ()


class Interference:
    """Reads around each run; ``kube`` execs into pods (a :class:`~podnet.launch.cluster.k8s.Kube` or a double)."""

    def __init__(self, kube: Any, namespace: str | None, cluster_info: dict[str, Any] | None, timeout: float):
        self.kube = kube
        self.namespace = namespace
        self.daemons = Daemons.from_info(cluster_info)
        #: the other clusters of a side-by-side set (:func:`link_neighbours`)
        self.neighbours: list[Daemons] = []
        self.timeout = timeout
        #: node -> kernel boot id, as the snapshots showed (nodes with one boot id are one machine)
        self.boot_ids: dict[str, str] = {}
        #: what the server's readings start with (``taskset -c CPU``: on the server's CPU, so that the
        #: reading's own few milliseconds land where the server runs); a run may give its own (:meth:`start`)
        self.server_pin: list[str] = []

    def same_machine(self, facts: dict[str, dict[str, Any]], a: str | None, b: str | None) -> bool:
        """Whether nodes ``a`` and ``b`` are one machine: the same node, or the same kernel boot id
        (from the nodes' status, else from earlier snapshots)."""
        if not a or not b:
            return False
        if a == b:
            return True
        ba = (facts.get(a) or {}).get("boot_id") or self.boot_ids.get(a)
        bb = (facts.get(b) or {}).get("boot_id") or self.boot_ids.get(b)
        return bool(ba) and ba == bb

    @staticmethod
    def wrap(argv: list[str]) -> list[str]:
        """The client argv inside the snapshot wrapper (a fixed script; ``argv`` stays positional)."""
        return ["sh", "-c", WRAPPER, WRAPPER_NAME, *argv]

    def start(self, server: tuple[str, str] | None, server_pin: list[str] | None = None) -> Probe:
        """Before the client: the server's snapshot (``(pod, container)`` of the server process: its
        machine's counters when that is another machine than the client's, and always the container's
        CPU time per CPU), then the launcher's and the daemons' counters (last, nearest the run).
        ``server_pin``: where the server's readings start (the run's test's server CPU), else
        :attr:`server_pin`; :meth:`finish` reads it there again."""
        text = err = None
        pin = tuple(self.server_pin if server_pin is None else server_pin)
        if server is not None:
            argv = [*pin, *SNAPSHOT]
            r = self.kube.exec(self.namespace, server[0], argv, self.timeout, container=server[1])
            text, err = (
                (r.stdout, None) if r.rc == 0 else (None, r.error or r.stderr.strip()[:200] or "failed")
            )
        return Probe(time.monotonic(), launcher_cpu_s(), self.read(), text, err, pin)

    def read(self) -> dict[str, Any] | None:
        """:meth:`Daemons.read` of this cluster, with ``neighbours``: the CPU seconds of the other
        clusters' daemons and pods (None when one of their cgroups is unreadable, or there are none)."""
        if not self.daemons:
            return None
        out = self.daemons.read()
        if self.neighbours:
            parts = [n.read_cgroups() for n in self.neighbours]
            out["neighbours"] = (
                None if any(v is None for v in parts) else sum(p for p in parts if p is not None)
            )
        return out

    def finish(
        self,
        probe: Probe,
        client: tuple[str, str, str | None],
        server: tuple[str, str, str | None] | None,
        ran: bool = True,
        remote: bool = True,
        exclude_client: tuple[int, ...] = (),
    ) -> dict[str, Any]:
        """After the client: the sidecar's ``interference`` mapping, with ``cpus`` (where the client,
        the server and the softirq work ran: :mod:`podnet.launch.noise.cpus`). ``client``/``server``:
        (pod, container, node); ``server`` only when it was read in :meth:`start`; ``remote``: the
        server is another machine (its counters count as a machine's). ``ran`` False (the client's
        exec never started, e.g. its kubelet is gone): the pods are not asked again.
        ``exclude_client``: the CPUs of a load pinned apart from the probe in its client container."""
        wall = time.monotonic() - probe.t0
        launcher = launcher_cpu_s() - probe.launcher
        daemons_after = self.read()
        out: dict[str, Any] = {
            "exec_wall_s": round(wall, 3),
            "launcher_cpu_s": round(launcher, 3),
            "launcher_cpu_fraction": round(launcher / wall, 4) if wall > 0 else None,
        }
        nodes: dict[str, dict[str, Any]] = {}
        pod, container, node = client
        if not ran:
            out.update(nodes={node or "client": {"seen_by": "client", "error": "the client did not start"}})
            out.update(busy=None, steal=None, window_s=None, machines=0)
            self._daemons(out, probe, daemons_after, wall, launcher)
            return out
        r = self.kube.exec(self.namespace, pod, ["sh", "-c", READ_SCRIPT], self.timeout, container=container)
        before, after, boot = split_read(r.stdout) if r.rc == 0 else ("", "", None)
        nodes[node or "client"] = self._usage("client", before, after, boot, r)
        server_after = None
        if server is not None:
            pod, container, node = server
            r = self.kube.exec(
                self.namespace, pod, [*probe.server_pin, *SNAPSHOT], self.timeout, container=container
            )
            server_after = r.stdout if r.rc == 0 else None
            if remote and probe.server is None:
                nodes[node or "server"] = {
                    "seen_by": "server",
                    "error": f"no snapshot before: {probe.server_error}",
                }
            elif remote:
                nodes[node or "server"] = self._usage(
                    "server", probe.server, r.stdout if r.rc == 0 else "", None, r
                )
        out["cpus"] = cpus.from_readings(
            (before, after),
            (probe.server, server_after) if server else None,
            probe.server_error,
            CLK_TCK,
            exclude_client,
        )
        out["nodes"] = nodes
        ok = [n for n in nodes.values() if n.get("busy") is not None]
        for k in ("busy", "steal", "window_s"):
            out[k] = max(n[k] for n in ok) if ok else None
        self.boot_ids.update({name: n["boot_id"] for name, n in nodes.items() if n.get("boot_id")})
        out["machines"] = len(
            {n.get("boot_id") or name for name, n in nodes.items() if n.get("busy") is not None}
        )
        self._daemons(out, probe, daemons_after, wall, launcher)
        return out

    @staticmethod
    def _daemons(
        out: dict[str, Any], probe: Probe, after: dict[str, Any] | None, wall: float, launcher: float
    ) -> None:
        """``daemons`` and ``foreign`` into ``out`` when the daemons were read before and after."""
        if probe.daemons is None or after is None:
            return
        out["daemons"] = daemons_delta(probe.daemons, after, wall)
        foreign = foreign_delta(probe.daemons, after, launcher)
        if foreign is not None:
            out["foreign"] = foreign

    @staticmethod
    def _usage(role: str, before: str, after: str, boot: str | None, r: Any) -> dict[str, Any]:
        if not before.strip() or not after.strip():
            why = (
                r.error or r.stderr.strip()[:200]
                if r.rc != 0
                else "snapshot file missing (/tmp not writable?)"
            )
            return {"seen_by": role, "error": why or "no snapshot"}
        try:
            b, a = parse_snapshot(before), parse_snapshot(after)
            if boot:
                a.boot_id = b.boot_id = boot
            return {"seen_by": role, **cpu_usage(b, a)}
        except ProcStatError as exc:
            return {"seen_by": role, "error": str(exc)}


def link_neighbours(itfs: Sequence[Interference | None]) -> None:
    """In a side-by-side set each variant counts the other clusters' daemons and pods as the experiment's
    own work, not as other work that makes every run look disturbed (a shared cluster counts once)."""
    for i, itf in enumerate(itfs):
        if itf is None or itf.daemons is None:
            continue
        seen = {itf.daemons.pid_dir}
        itf.neighbours = []
        for j, other in enumerate(itfs):
            d = other.daemons if other is not None and j != i else None
            if d is not None and d.pid_dir not in seen:
                seen.add(d.pid_dir)
                itf.neighbours.append(d)
