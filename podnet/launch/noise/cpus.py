"""Where a run's processes ran: the CPUs of its client, its server and the softirq work, read around
the run, and the placement they add up to (the sidecar's ``cpus``).

On two CPUs iperf3 runs at one of two speeds depending on where its client, its server and the
packets' softirq work land (same CPU about 15-17 Gbit/s between two network namespaces, split
8-11 Gbit/s), so where each process ran is part of a run's design (``launch.affinity``) and of its
record. Three readings, each a difference of counters taken just before and just after the client:

- ``client`` / ``server``: the container's CPU time per CPU (cgroup v1 ``cpuacct.usage_percpu``, read
  inside the container, where the runtime mounts its own cgroup): ``cpu_s`` per CPU, ``cpu`` the CPU
  that did at least :data:`DOMINANT` of the work (None: it moved between CPUs), ``share`` that CPU's
  part. A cgroup without per-CPU counters (cgroup v2) gives ``error`` instead.
- ``softirq``: the softirq time per CPU of the client's machine (``/proc/stat``'s seventh column, in
  the snapshots :mod:`podnet.launch.noise.interference` already takes), and its ``cpu`` as above.
- A test with a load on CPUs of its own (``load.affinity``) runs the load's client exec in the probe's
  client container: the client side is then read over the other CPUs only (``excluded``: the load's
  CPUs, recorded), since the pinned load cannot be the probe and would otherwise split the side.
- ``placement``: ``"c0/s0"`` (client on CPU 0, server on CPU 0), ``"c0/s1"``, with ``"c?"`` for a side
  that moved, ``"c0"`` without a server process; "" when nothing could be read. The tidy table's
  ``placement`` column; a group whose runs have more than one is flagged (summary ``placement_split``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podnet.launch.noise.procstat import ProcStatError, parse_snapshot

#: a side "ran on" a CPU when that CPU did at least this share of its CPU time over the run
DOMINANT = 0.8
#: a side with less CPU time than this over the run did too little to say where it ran (seconds)
MIN_CPU_S = 0.002
#: the container's per-CPU usage file (cgroup v1, either mount name), read inside the container
PERCPU_FILES = (
    "/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu",
    "/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage_percpu",
)
#: the marker of the per-CPU line in a snapshot (it follows /proc/uptime and /proc/stat)
MARK = "podnet_percpu"
#: shell that prints the container's per-CPU usage line (nothing when there is no such file)
READ_PERCPU = (
    "for f in "
    + " ".join(PERCPU_FILES)
    + '; do [ -r "$f" ] && { printf "'
    + MARK
    + ' "; cat "$f"; break; }; '
    "done"
)


@dataclass(frozen=True)
class Side:
    """Where one side's processes ran: CPU seconds per CPU, the dominant CPU (None: moved) and its share."""

    cpu_s: tuple[float, ...]
    cpu: int | None
    share: float | None
    #: CPUs left out of ``cpu`` and ``share`` (a load's own CPUs in the probe's container)
    excluded: tuple[int, ...] = ()

    def as_meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cpu_s": [round(x, 4) for x in self.cpu_s],
            "cpu": self.cpu,
            "share": self.share,
        }
        if self.excluded:
            out["excluded"] = list(self.excluded)
        return out


def parse_percpu(text: str) -> tuple[int, ...] | None:
    """The per-CPU nanoseconds of a :data:`MARK` line in ``text`` (None: no such line)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == MARK:
            try:
                return tuple(int(x) for x in parts[1:])
            except ValueError:
                return None
    return None


def side(
    before: tuple[int, ...] | None,
    after: tuple[int, ...] | None,
    scale: float = 1e-9,
    exclude: tuple[int, ...] = (),
) -> Side | None:
    """One side from two counter readings (``scale``: seconds per unit; ns for cgroups), or None when
    either is missing, they differ in length or a counter went backwards. ``exclude``: CPUs whose time
    is not this side's (kept in ``cpu_s``, left out of the dominant CPU and its share)."""
    if before is None or after is None or len(before) != len(after) or not before:
        return None
    d = [(a - b) * scale for b, a in zip(before, after, strict=True)]
    if any(x < 0 for x in d):
        return None
    out = tuple(c for c in sorted(set(exclude)) if 0 <= c < len(d))
    keep = [i for i in range(len(d)) if i not in out]
    total = sum(d[i] for i in keep)
    if not keep or total < MIN_CPU_S:
        return Side(tuple(d), None, None, out)
    top = max(keep, key=d.__getitem__)
    share = d[top] / total
    return Side(tuple(d), top if share >= DOMINANT else None, round(share, 4), out)


def softirq(before: list[tuple[int, ...]], after: list[tuple[int, ...]], clk_tck: float) -> Side | None:
    """The softirq time per CPU between two /proc/stat readings' per-CPU lines (ticks)."""
    if not before or len(before) != len(after) or any(len(t) < 7 for t in (*before, *after)):
        return None
    return side(tuple(t[6] for t in before), tuple(t[6] for t in after), 1.0 / clk_tck)


def label(client: Side | None, server: Side | None, has_server: bool) -> str:
    """The run's placement: ``c<cpu>/s<cpu>`` (``?`` for a side that moved or did too little to say),
    ``c<cpu>`` without a server process, "" when the client could not be read."""
    if client is None:
        return ""

    def one(s: Side | None) -> str:
        return "?" if s is None or s.cpu is None else str(s.cpu)

    return f"c{one(client)}/s{one(server)}" if has_server else f"c{one(client)}"


def record(
    client: Side | None,
    server: Side | None,
    irq: Side | None,
    has_server: bool,
    errors: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The sidecar's ``cpus`` mapping."""
    out: dict[str, Any] = {"placement": label(client, server, has_server)}
    for name, s in (("client", client), ("server", server), ("softirq", irq)):
        if s is not None:
            out[name] = s.as_meta()
        elif name != "server" or has_server:
            out[name] = {"error": (errors or {}).get(name, "not readable")}
    return out


def per_cpu_ticks(text: str) -> list[tuple[int, ...]]:
    """The per-CPU lines (``cpu0``, ``cpu1``, ...) of /proc/stat text, as tick tuples ([] when the text
    is not /proc/stat): :func:`podnet.launch.noise.procstat.parse_snapshot`'s."""
    try:
        return parse_snapshot(text).cpus
    except ProcStatError:
        return []


def from_readings(
    client: tuple[str, str],
    server: tuple[str | None, str | None] | None,
    server_error: str | None,
    clk_tck: float,
    exclude_client: tuple[int, ...] = (),
) -> dict[str, Any]:
    """The run's ``cpus`` (:func:`record`) from the client's snapshots before and after (/proc/stat and
    its container's per-CPU line, :data:`podnet.launch.noise.interference.WRAPPER`) and, for a case with
    a server process, the server container's readings before and after (None: not read).
    ``exclude_client``: CPUs of the client container that ran a load pinned apart from the probe."""
    errors = {"client": "no per-CPU usage in the client's cgroup (cgroup v2?)"}
    c = side(parse_percpu(client[0]), parse_percpu(client[1]), exclude=exclude_client)
    srv = None
    if server is not None:
        if server[0] is None or server[1] is None:
            errors["server"] = f"server not read: {server_error or 'exec failed'}"
        else:
            srv = side(parse_percpu(server[0]), parse_percpu(server[1]))
            if srv is None:
                errors["server"] = "no per-CPU usage in the server's cgroup (cgroup v2?)"
    irq = softirq(per_cpu_ticks(client[0]), per_cpu_ticks(client[1]), clk_tck)
    if irq is None:
        errors["softirq"] = "no per-CPU /proc/stat lines in the client's snapshots"
    return record(c, srv, irq, server is not None, errors)


def processor(pid: int) -> int | None:
    """The CPU process ``pid`` last ran on (``/proc/<pid>/stat``'s 39th field), None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
    try:
        return int(fields[36])
    except (IndexError, ValueError):
        return None


class Sampler:
    """Where local processes run, sampled every ``interval`` s in a thread while a run lasts (the
    noise floor's client and server, whose processes this machine sees): :meth:`side` counts samples
    per CPU as :func:`side` counts CPU time."""

    def __init__(self, pids: dict[str, int], ncpu: int, interval: float = 0.05):
        import threading

        self.pids, self.ncpu, self.interval = pids, ncpu, interval
        self.counts: dict[str, list[int]] = {k: [0] * ncpu for k in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def add(self, name: str, pid: int) -> None:
        """Sample one more process from now on (e.g. the client once it started)."""
        self.counts.setdefault(name, [0] * self.ncpu)
        self.pids = {**self.pids, name: pid}

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for name, pid in self.pids.items():
                cpu = processor(pid)
                if cpu is not None and 0 <= cpu < self.ncpu:
                    self.counts[name][cpu] += 1

    def side(self, name: str) -> Side | None:
        """Where ``name`` ran, in samples per CPU (None: never sampled)."""
        c = self.counts.get(name)
        if not c or not sum(c):
            return None
        return side(tuple(0 for _ in c), tuple(c), 1.0)
