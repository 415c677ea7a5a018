"""The machine's noise floor: the experiment's own tool commands between two bare network namespaces.

A cluster adds noise to every measurement (kubelets, the control plane, the
CNI datapath, the launcher). How much is only known against a reference taken
on the same machine in the same session: the same adapters' command lines,
run between two network namespaces joined by one veth pair, with nothing else
on the path. Runs are written like the launcher's (``raw/<experiment>/floor/
netns-veth/<tool>-<test>/rNNN.<ext>`` with a provenance sidecar, variant
``floor``), so the normal pipeline parses them and ``summary.csv`` has the
floor's CV beside every cluster group's; :func:`noise_vs_floor` divides them.

Needs root (network namespaces) and the tools on the host (``make floor-tools``).
Namespaces, links and server processes are removed on exit, on error and on
Ctrl-C.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from podnet import tools as adapters
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.noise import cpus
from podnet.launch.noise.interference import CLK_TCK, host_ticks
from podnet.launch.spec.plan import pinned_argv
from podnet.parse.raw import write_raw
from podnet.parse.tidy import FLOOR_STANDALONE_SCENARIO, FLOOR_VARIANT

#: namespaces and addresses of the floor (10.211.255.0/30: away from the embedded cluster's ranges)
NS_CLIENT, NS_SERVER = "podnet-floor-c", "podnet-floor-s"
LINK_CLIENT, LINK_SERVER = "pnfloor-c", "pnfloor-s"
IP_CLIENT, IP_SERVER = "10.211.255.1", "10.211.255.2"
VARIANT, SCENARIO = FLOOR_VARIANT, FLOOR_STANDALONE_SCENARIO


@dataclass(frozen=True)
class Names:
    """Namespaces, veth ends and addresses of one floor (two floors with different names coexist)."""

    ns_client: str = NS_CLIENT
    ns_server: str = NS_SERVER
    link_client: str = LINK_CLIENT
    link_server: str = LINK_SERVER
    ip_client: str = IP_CLIENT
    ip_server: str = IP_SERVER


#: the floor ``podnet floor`` runs; the launcher's interleaved floor has its own (podnet.launch.noise.floor)
STANDALONE = Names()


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


#: the embedded cluster's link shaper (tbf), which the floor uses too: one shaper for both
SHAPE_SH = Path(__file__).resolve().parents[3] / "envs" / "cluster" / "shape.sh"


def shape(ns: str, dev: str, rate: str) -> None:
    """Shape ``dev``'s egress in namespace ``ns`` to ``rate`` as the cluster's fabric ports are
    (``envs/cluster/shape.sh``); a ValueError naming the rate when it is not understood."""
    r = subprocess.run(["bash", str(SHAPE_SH), ns, dev, rate], capture_output=True, text=True)
    if r.returncode:
        raise ValueError(f"link rate {rate!r}: {(r.stderr or r.stdout).strip() or f'exit {r.returncode}'}")


def _in_ns(ns: str, argv: Sequence[str]) -> list[str]:
    # nsenter, not `ip netns exec`: the latter remounts /sys, which the tools do not need
    return ["nsenter", f"--net=/var/run/netns/{ns}", "--", *argv]


def cpu_times() -> tuple[int, int, int]:
    """(busy, steal, total) jiffies of the whole machine from /proc/stat (:func:`~.interference.host_ticks`)."""
    fields = host_ticks()
    if fields is None:
        raise OSError("cannot read /proc/stat")
    user, nice, system, idle, iowait, irq, softirq, steal = (list(fields) + [0] * 8)[:8]
    total = user + nice + system + idle + iowait + irq + softirq + steal
    return total - idle - iowait - steal, steal, total


def cpu_share(before: tuple[int, int, int], after: tuple[int, int, int]) -> dict[str, float]:
    """Busy and steal fractions of the machine between two :func:`cpu_times` readings."""
    busy, steal, total = (a - b for a, b in zip(after, before, strict=True))
    if total <= 0:
        return {"busy": 0.0, "steal": 0.0}
    return {"busy": round(busy / total, 4), "steal": round(steal / total, 4)}


def floor_interference(
    before: tuple[int, int, int], after: tuple[int, int, int], wall_s: float, launcher_cpu_s: float
) -> dict[str, Any]:
    """The sidecar's ``interference`` of a floor run, in the launched runs' shape
    (:mod:`podnet.launch.noise.interference`): both namespaces are this one machine, measured once."""
    share = cpu_share(before, after)
    machine = {"seen_by": "client", **share, "cpus": os.cpu_count() or 1, "window_s": round(wall_s, 3)}
    return {
        **share,
        "window_s": round(wall_s, 3),
        "machines": 1,
        "exec_wall_s": round(wall_s, 3),
        "launcher_cpu_s": round(launcher_cpu_s, 3),
        "launcher_cpu_fraction": round(launcher_cpu_s / wall_s, 4) if wall_s > 0 else None,
        "nodes": {platform.node() or "localhost": machine},
    }


@dataclass
class FloorTest:
    """One test of the experiment's config, run on the floor."""

    tool: str
    name: str
    params: dict[str, Any]
    #: the test's ``affinity``, else ``launch.affinity``: the client and server started there (taskset), or None
    affinity: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        """``tool:name``, as config selectors write it."""
        return f"{self.tool}:{self.name}"


class FloorBusy(RuntimeError):
    """Another process on this machine has a floor with the same names up."""


#: one lock file per floor's names: a live floor's namespaces are never taken for a stale one's
LOCK_DIR = Path("/run/lock")


class Floor:
    """Two network namespaces joined by a veth pair; :meth:`run` one test between them."""

    def __init__(self, mtu: int = 1500, names: Names = STANDALONE, link_rate: str | None = None):
        self.mtu = mtu
        self.names = names
        #: both veth ends shaped to this rate (e.g. "1gbit") by the cluster's own shaper, or unshaped
        self.link_rate = link_rate
        self._servers: list[subprocess.Popen] = []
        self._lockfile: Any = None

    def _lock(self) -> None:
        """Hold this floor's lock (released in :meth:`down`); FloorBusy when another process has it."""
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        fh = open(LOCK_DIR / f"podnet-{self.names.ns_client}.lock", "a+")  # held until down()
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise FloorBusy(
                f"the floor namespaces {self.names.ns_client}/{self.names.ns_server} are in use by another "
                f"process on this machine (lock {LOCK_DIR}/podnet-{self.names.ns_client}.lock)"
            ) from None
        self._lockfile = fh

    def __enter__(self) -> Floor:
        self._lock()
        self.rebuild()
        return self

    def intact(self) -> bool:
        """Whether both namespaces and the veth between them are still there (another tool, or a
        person, may have deleted them while a launch ran)."""
        n = self.names
        if not all(Path(f"/var/run/netns/{ns}").exists() for ns in (n.ns_client, n.ns_server)):
            return False
        r = subprocess.run(["ip", "-n", n.ns_client, "link", "show", n.link_client], capture_output=True)
        return r.returncode == 0

    def rebuild(self) -> None:
        """(Re)make the namespaces and the veth from nothing, under the lock this process holds."""
        n = self.names
        self.down(unlock=False)  # a stale floor left by a killed run (no live process holds its lock)
        try:
            _ip("netns", "add", n.ns_client)
            _ip("netns", "add", n.ns_server)
            _ip(
                "link",
                "add",
                n.link_client,
                "mtu",
                str(self.mtu),
                "type",
                "veth",
                "peer",
                "name",
                n.link_server,
            )
            for link, ns, addr in (
                (n.link_client, n.ns_client, n.ip_client),
                (n.link_server, n.ns_server, n.ip_server),
            ):
                _ip("link", "set", link, "netns", ns)
                _ip("-n", ns, "addr", "add", f"{addr}/30", "dev", link)
                _ip("-n", ns, "link", "set", link, "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                if self.link_rate:
                    shape(ns, link, self.link_rate)
        except BaseException:
            self.down()  # half a floor is removed too
            raise

    def __exit__(self, *exc: object) -> None:
        self.down()

    def down(self, unlock: bool = True) -> None:
        """Stop this floor's servers (by PID), delete its namespaces (the veth goes with them) and
        release its lock."""
        for proc in self._servers:
            _stop(proc)
        self._servers.clear()
        for ns in (self.names.ns_client, self.names.ns_server):
            if Path(f"/var/run/netns/{ns}").exists():
                subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
        if unlock and self._lockfile is not None:
            self._lockfile.close()  # closing the file releases the flock
            self._lockfile = None

    def _client(self, argv: list[str], timeout: float, where: cpus.Sampler) -> tuple[bytes, int, str]:
        """Run the client in its namespace (sampled by ``where`` as ``client``): output, exit code, error."""
        proc = subprocess.Popen(
            _in_ns(self.names.ns_client, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        where.add("client", proc.pid)  # nsenter and taskset exec the tool: one process, one pid
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            return out or b"", -1, f"timed out after {timeout:.0f} s"
        return out, proc.returncode, err.decode(errors="replace").strip()

    def _start_server(self, argv: list[str], port: int | None, timeout: float = 10.0) -> subprocess.Popen:
        proc = subprocess.Popen(
            _in_ns(self.names.ns_server, argv),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._servers.append(proc)
        deadline = time.monotonic() + timeout
        while port is not None and time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"server {shlex.join(argv)} exited with {proc.returncode}: {err.strip()}")
            ss = subprocess.run(
                _in_ns(self.names.ns_server, ["ss", "-Hltn", f"sport = :{port}"]),
                capture_output=True,
                text=True,
            )
            if ss.stdout.strip():
                return proc
            time.sleep(0.05)
        if port is not None:
            raise RuntimeError(
                f"server {shlex.join(argv)} did not listen on TCP {port} within {timeout:.0f} s"
            )
        return proc

    def run(
        self,
        test: FloorTest,
        repeat: int,
        raw_dir: Path,
        experiment: str,
        *,
        variant: str = VARIANT,
        scenario: str = SCENARIO,
        extra: dict[str, Any] | None = None,
    ) -> Path:
        """Run one repeat of ``test``; write its raw output and sidecar; return the raw path.

        The run is ``raw_dir/<variant>/<scenario>/<tool>-<test>/r<repeat>.<ext>``; ``extra`` sidecar
        keys (e.g. the launcher's ``launch`` and ``round``) are added to the floor's own.
        """
        n = self.names
        adapter = adapters.get(test.tool)
        inv = adapter.invocation(dict(test.params), n.ip_server)
        client_argv = [*pinned_argv(test.affinity, "client"), *map(str, inv.client)]
        server_argv = [*pinned_argv(test.affinity, "server"), *map(str, inv.server)] if inv.server else None
        if adapter.server_kind == "http":
            raise RuntimeError(f"{test.tool}: the floor has no HTTP server (nginx) yet")
        meta: dict[str, Any] = {
            "tool": test.tool,
            "experiment": experiment,
            "variant": variant,
            "scenario": scenario,
            "repeat": repeat,
            "test": test.name,
            "protocol": inv.protocol,
            "direction": inv.direction,
            "streams": inv.streams,
            "command": [str(a) for a in inv.client],
            "command_line": shlex.join(str(a) for a in inv.client),
            "server_command": server_argv,
            **({"placement_command": client_argv[:3]} if client_argv[:1] == ["taskset"] else {}),
            "params": {k: v for k, v in test.params.items() if v is not None},
            "duration_s": inv.duration,
            "client": {"netns": n.ns_client, "ip": n.ip_client},
            "server": {"netns": n.ns_server, "ip": n.ip_server},
            "floor": {
                "link": "veth",
                "mtu": self.mtu,
                "kernel": platform.release(),
                **(
                    {"link_rate": self.link_rate, "shaper": "tbf (envs/cluster/shape.sh)"}
                    if self.link_rate
                    else {}
                ),
            },
            "tool_version": _version(inv.version),
            **(extra or {}),
        }
        server = self._start_server(server_argv, inv.port) if server_argv else None
        try:
            meta["started"] = now_iso()
            cpu0, own0, t0 = cpu_times(), time.process_time(), time.monotonic()
            irq0 = _per_cpu()
            with cpus.Sampler({"server": server.pid} if server else {}, os.cpu_count() or 1) as where:
                out, rc, err = self._client(client_argv, inv.duration + 30, where)
            wall = time.monotonic() - t0
            meta["cpus"] = cpus.record(
                where.side("client"),
                where.side("server") if server else None,
                cpus.softirq(irq0, _per_cpu(), CLK_TCK),
                server is not None,
                {"client": "not sampled", "server": "not sampled"},
            )
            meta["interference"] = floor_interference(cpu0, cpu_times(), wall, time.process_time() - own0)
            meta["ended"] = now_iso()
            meta["elapsed_s"] = round(wall, 3)
        finally:
            if server is not None:
                _stop(server)
                self._servers.remove(server)
        meta["exit_code"] = rc
        meta["status"] = "ok" if rc == 0 and out.strip() else "failed"
        if meta["status"] == "failed":
            meta["error"] = err or f"exit code {rc}"
        ext = "json" if out.lstrip().startswith(b"{") else "txt"
        path = raw_dir / variant / scenario / f"{test.tool}-{test.name}" / f"r{repeat:03d}.{ext}"
        return write_raw(path, out, meta)


def _per_cpu() -> list[tuple[int, ...]]:
    """This machine's per-CPU /proc/stat counters (for the softirq work's CPU)."""
    try:
        return cpus.per_cpu_ticks(Path("/proc/stat").read_text())
    except OSError:
        return []


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _version(argv: list[str]) -> str | None:
    if not argv or not shutil.which(argv[0]):
        return None
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else None


def tests_from_config(config: dict[str, Any], selectors: Sequence[str] = ()) -> list[FloorTest]:
    """The config's ``launch.tools`` tests (``tool:name`` selectors; all when empty) with their
    parameters: ``launch.defaults`` the adapter knows, then the test's own ``params``; placed by the
    test's own ``affinity``, else ``launch.affinity``."""
    launch = config.get("launch") or {}
    defaults = launch.get("defaults") or {}
    placed = launch.get("affinity") or None  # placed as the launch places them (taskset; -A for iperf3)
    out = []
    for tool, spec in (launch.get("tools") or {}).items():
        adapter = adapters.get(tool)
        for t in (spec or {}).get("tests") or []:
            key = f"{tool}:{t['name']}"
            if selectors and key not in selectors and tool not in selectors:
                continue
            params = {k: v for k, v in defaults.items() if k in adapter.defaults}
            affinity = t.get("affinity") or placed
            if affinity and "affinity" in adapter.defaults:
                params["affinity"] = [affinity.get("client"), affinity.get("server")]
            params.update(t.get("params") or {})
            if "port" in adapter.defaults and "port" not in params and adapter.default_port:
                params["port"] = adapter.default_port
            out.append(FloorTest(tool, t["name"], params, affinity))
    unknown = set(selectors) - {f"{t.tool}:{t.name}" for t in out} - {t.tool for t in out}
    if unknown:
        raise ValueError(f"floor: no test {', '.join(sorted(unknown))} in the config's launch.tools")
    return out


def run_floor(
    tests: Sequence[FloorTest],
    raw_dir: Path,
    experiment: str,
    repeats: int,
    seed: int = 1,
    log: Any = print,
    link_rate: str | None = None,
) -> Iterator[Path]:
    """Run ``repeats`` interleaved rounds of ``tests`` on a fresh floor (its veth shaped to
    ``link_rate`` when given); skip repeats already on disk."""
    import random

    with Floor(link_rate=link_rate) as floor:
        for r in range(1, repeats + 1):
            order = list(tests)
            random.Random(f"{seed}:{r}").shuffle(order)
            for t in order:
                done = (raw_dir / VARIANT / SCENARIO / f"{t.tool}-{t.name}").glob(f"r{r:03d}.*")
                if any(not p.name.endswith(".meta.yaml") for p in done):
                    continue
                if not shutil.which(adapters.get(t.tool).binary or t.tool):
                    log(f"floor: {t.tool} is not installed on this machine; skipped")
                    continue
                path = floor.run(t, r, raw_dir, experiment)
                log(f"floor: {t.tool}-{t.name} r{r:03d} -> {path}")
                yield path


def noise_vs_floor(summary: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (tool, test, metric): the floor's CV, each cluster group's CV, and their ratio.

    For the floor interleaved with a launch (``launch.floor``), with the same-launch rule,
    intervals and primary paths, use :func:`podnet.stats.noise.noise_table` (``noise_floor.csv``).

    ``summary`` is one experiment's summary.csv holding both the floor's groups
    (variant ``floor``) and the cluster's. Only headline metrics unless ``metrics``.
    """
    s = summary.copy()
    wanted = set(metrics) if metrics else set(adapters.headline_metrics())
    s = s[s["metric"].isin(wanted)]
    keys = ["tool", "test", "metric"]
    floor = s[s["variant"] == VARIANT][[*keys, "cv", "n"]].rename(columns={"cv": "floor_cv", "n": "floor_n"})
    cluster = s[s["variant"] != VARIANT]
    out = cluster.merge(floor, on=keys, how="inner")
    out["cv_ratio"] = out["cv"] / out["floor_cv"]
    cols = ["variant", "scenario", *keys, "n", "cv", "floor_n", "floor_cv", "cv_ratio"]
    return out[cols].sort_values(["tool", "test", "metric", "scenario"]).reset_index(drop=True)
