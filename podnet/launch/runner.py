"""A whole launch: plan, namespace, pods, interleaved runs, raw files + sidecars, clean-up.

:func:`launch` is what ``podnet launch`` and the Snakemake ``launch`` checkpoint
call. It only runs what ``raw/`` lacks (see :mod:`podnet.launch.state`); with
nothing missing it does not touch the cluster's workloads at all. The
namespace (or, in a shared namespace, every object of this launch) is deleted
at the end: after success, after a failure, and on Ctrl-C / SIGTERM.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import secrets
import shlex
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podnet import adapters
from podnet.adapters.base import ParseError
from podnet.launch import manifests, provenance
from podnet.launch.config import Case, LaunchConfig, LaunchConfigError, load_config
from podnet.launch.k8s import ExecResult, Kube, KubeError, PodFailure
from podnet.launch.placement import Node
from podnet.launch.plan import PLACEHOLDER_TARGET, CasePlan, Plan, build_plan, server_binaries, slug
from podnet.launch.schedule import Slot, schedule
from podnet.launch.state import CaseState, missing_repeats, raw_path, scan
from podnet.raw import write_raw

log = logging.getLogger("podnet.launch")

#: exit status of ``timeout`` when it had to stop the command
TIMEOUT_RC = 124
KILL_GRACE = 5


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during the launch."""


@dataclass
class CaseOutcome:
    """Counts of one case after the launch."""

    scenario: str
    tool: str
    test: str
    ok: int = 0
    failed: int = 0
    launched: int = 0
    skipped: str = ""
    last_error: str = ""
    met_target: bool | None = None


@dataclass
class LaunchResult:
    """What a launch did; written as the launch manifest (JSON)."""

    experiment: str
    launch_id: str
    variant: str = ""
    cni: str = ""
    namespace: str | None = None
    started: str = ""
    ended: str = ""
    launched: int = 0
    ok: int = 0
    failed: int = 0
    rounds: int = 0
    interrupted: bool = False
    error: str = ""
    adaptive: bool = False
    skipped_tools: dict[str, str] = field(default_factory=dict)
    pod_failures: dict[str, str] = field(default_factory=dict)
    cases: list[CaseOutcome] = field(default_factory=list)
    order: str = "interleaved"
    seed: int = 1
    namespace_deleted: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["cases"] = [dict(c.__dict__) for c in self.cases]
        return d

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.error else 0


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---- signals --------------------------------------------------------------------------------------
@contextlib.contextmanager
def _signal_handlers(handler: Any) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` while the block runs (main thread only)."""
    old: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def _interruptible() -> contextlib.AbstractContextManager[None]:
    """SIGTERM behaves like Ctrl-C (raises :class:`Interrupted`) while the block runs."""

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted(signal.Signals(signum).name)

    return _signal_handlers(handler)


def _shielded() -> contextlib.AbstractContextManager[None]:
    """Clean-up must finish: ignore SIGINT/SIGTERM while it runs."""
    return _signal_handlers(signal.SIG_IGN)


# ---- what is missing --------------------------------------------------------------------------------
def initial_repeats(cfg: LaunchConfig) -> int:
    """Repeats of the fixed rounds (adaptive: at least stats.planning.min_repeats)."""
    if not cfg.adaptive:
        return cfg.repeats
    from podnet.stats import resolve

    return max(cfg.repeats, int(resolve(cfg.stats)["planning"]["min_repeats"]))


def pending_runs(
    cfg: LaunchConfig, variant: str, states: dict | None = None
) -> dict[tuple[str, str, str], list[int]]:
    """Missing repeats of the fixed rounds, by case key (cases with none are left out)."""
    states = states if states is not None else scan(cfg.raw_dir, variant, cfg.cases)
    reps = range(1, initial_repeats(cfg) + 1)
    out = {}
    for case in cfg.cases:
        miss = missing_repeats(states[case.key], reps, cfg.max_attempts)
        if miss:
            out[case.key] = miss
    return out


def offline_variant(cfg: LaunchConfig) -> str | None:
    """The variant when it is known without asking the cluster (config or info.json), else None."""
    if cfg.variant != "auto":
        return cfg.variant
    if cfg.cni:
        return provenance.variant_name("auto", cfg.cni)
    info = provenance.read_cluster_info(cfg.cluster_info)
    if info and info.get("cni"):
        return provenance.variant_name("auto", str(info["cni"]))
    return None


def launch_complete(cfg: LaunchConfig) -> bool | None:
    """Whether raw/ holds every fixed-round run (done or out of attempts); None if the variant is unknown offline.

    Filesystem only. Adaptive rounds are not judged here: a launch only ends once
    no case needs more, so a finished adaptive launch is complete by construction.
    """
    variant = offline_variant(cfg)
    if variant is None:
        return None
    return not pending_runs(cfg, variant)


def invalidate_stale_manifest(cfg: LaunchConfig, manifest: str | Path) -> bool:
    """Remove the launch checkpoint's manifest when raw/ lacks runs, so Snakemake launches them.

    The manifest marks "raw/ is complete for this config"; once runs are missing
    (never run, deleted, or failed and still retryable) it is stale. Returns True if removed.
    """
    m = Path(manifest)
    if m.exists() and launch_complete(cfg) is False:
        m.unlink()
        log.info("%s: runs are missing in %s, the launch will run again", m, cfg.raw_dir)
        return True
    return False


# ---- the launch ---------------------------------------------------------------------------------------------
@dataclass
class _Endpoint:
    """A pod as the runs see it."""

    name: str
    ip: str | None = None
    node: str | None = None
    image_id: str | None = None
    interface: str | None = None
    mtu: int | None = None
    failure: str | None = None


class Launcher:
    """One launch of one config against one cluster (``kube``: a :class:`Kube` or a test double)."""

    def __init__(self, cfg: LaunchConfig, kube: Any, *, launch_id: str | None = None, repo: str | Path = "."):
        self.cfg = cfg
        self.kube = kube
        self.launch_id = launch_id or (time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2))
        self.repo = Path(repo)
        self.result = LaunchResult(
            experiment=cfg.experiment,
            launch_id=self.launch_id,
            order=cfg.order,
            seed=cfg.seed,
            adaptive=cfg.adaptive,
        )
        self.namespace: str | None = None
        self.labels = {
            "app.kubernetes.io/name": "podnet",
            "podnet.io/experiment": slug(cfg.experiment, 63),
            "podnet.io/run": self.launch_id,
        }
        self.selector = f"podnet.io/run={self.launch_id}"
        self.endpoints: dict[str, _Endpoint] = {}
        self.services: dict[str, str] = {}
        self.tool_versions: dict[str, str] = {}
        self.node_facts: dict[str, dict[str, Any]] = {}
        self.cluster: dict[str, Any] = {}
        self.image = ""
        self.plan: Plan | None = None
        self.states: dict[tuple[str, str, str], CaseState] = {}
        self.outcomes: dict[tuple[str, str, str], CaseOutcome] = {}
        self.variant = ""
        self.commit = provenance.git_commit(self.repo)
        self._prefix = "" if cfg.namespace_create else f"r{self.launch_id[-4:]}-"

    # -- set-up ------------------------------------------------------------------------------------------
    def discover(self) -> list[Node]:
        """Nodes, versions, CNI and variant (read-only API calls)."""
        cfg = self.cfg
        raw_nodes = self.kube.nodes()
        nodes = provenance.to_nodes(raw_nodes)
        self.node_facts = {n.metadata.name: provenance.node_facts(n) for n in raw_nodes}
        info = provenance.read_cluster_info(cfg.cluster_info)
        host = getattr(getattr(getattr(self.kube, "api_client", None), "configuration", None), "host", None)
        if (
            info
            and host
            and info.get("api_server")
            and info["api_server"].rstrip("/") != str(host).rstrip("/")
        ):
            info = None  # info.json of another cluster
        daemonsets = [] if (cfg.cni or (info and info.get("cni"))) else self.kube.daemonset_names()
        cni, how = provenance.detect_cni(cfg.cni, info, nodes, daemonsets)
        self.variant = provenance.variant_name(cfg.variant, cni)
        self.cluster = {
            "kubernetes_version": self.kube.version(),
            "cni": cni,
            "cni_source": how,
            "api": getattr(self.kube, "source", ""),
        }
        if info:
            self.cluster["embedded"] = {
                k: info.get(k)
                for k in (
                    "cni_datapath",
                    "pod_mtu",
                    "link_rate",
                    "kube_proxy_mode",
                    "containerd_version",
                    "runc_version",
                )
                if k in info
            }
        self.result.variant, self.result.cni = self.variant, cni
        return nodes

    def _outcome(self, case: Case) -> CaseOutcome:
        if case.key not in self.outcomes:
            s, t, n = case.key
            self.outcomes[case.key] = CaseOutcome(scenario=s, tool=t, test=n)
        return self.outcomes[case.key]

    def _pod_name(self, name: str) -> str:
        return (self._prefix + name)[:63].rstrip("-")

    def setup_namespace(self) -> None:
        cfg = self.cfg
        if cfg.namespace_create:
            name = f"{cfg.namespace_prefix}-{slug(cfg.experiment, 24)}-{secrets.token_hex(3)}"
            body = manifests.namespace_manifest(
                name,
                self.labels,
                {"podnet.io/config-sha256": cfg.config_sha256, "podnet.io/started": now_iso()},
            )
            self.kube.create_namespace(body)
            self.namespace = name
            self.result.namespace = name
            log.info("namespace %s created", name)
            self.kube.wait_service_account(name, cfg.timeouts["api"])
        else:
            self.namespace = cfg.namespace_name
            self.result.namespace = cfg.namespace_name
            log.info("using namespace %s (objects labelled %s)", self.namespace, self.selector)

    def teardown(self) -> None:
        """Delete everything this launch created; waits (bounded) until it is gone."""
        if not self.namespace:
            return
        t = self.cfg.timeouts["namespace_delete"]
        with _shielded():
            try:
                if self.cfg.namespace_create:
                    log.info("deleting namespace %s", self.namespace)
                    gone = self.kube.delete_namespace(self.namespace, t)
                else:
                    log.info("deleting this launch's objects in %s", self.namespace)
                    gone = self.kube.delete_labelled(self.namespace, self.selector, t)
            except Exception as exc:  # noqa: BLE001 - report, never mask the launch's own outcome
                log.error("clean-up failed: %s (run `podnet cleanup`)", exc)
                gone = False
            self.result.namespace_deleted = gone
            if not gone:
                log.warning(
                    "namespace %s not gone after %.0fs; `podnet cleanup` deletes leftovers", self.namespace, t
                )

    def _create_pods(self, names: list[str]) -> None:
        assert self.plan is not None and self.namespace
        cfg = self.cfg
        for name in names:
            pod = self.plan.pods[name]
            real = self._pod_name(name)
            body = manifests.pod_manifest(
                _renamed(pod, real),
                image=self.image,
                pull_policy=cfg.image_pull_policy,
                labels=self.labels,
                lifetime=int(cfg.timeouts["pod_lifetime"]),
                startup_seconds=cfg.timeouts["pod_ready"],
                configmap=self._pod_name("podnet-nginx"),
            )
            self.kube.create(self.namespace, body)

    def _wait(self, names: list[str]) -> None:
        cfg = self.cfg
        real = {self._pod_name(n): n for n in names}
        ready, failed = self.kube.wait_ready(
            self.namespace,
            list(real),
            self.selector,
            cfg.timeouts["pod_ready"],
            cfg.timeouts["unschedulable"],
        )
        for rname, pod in ready.items():
            self.endpoints[real[rname]] = _Endpoint(
                name=rname,
                ip=pod.status.pod_ip,
                node=pod.spec.node_name,
                image_id=next(
                    (cs.image_id for cs in (pod.status.container_statuses or []) if cs.image_id), None
                ),
            )
        for rname, fail in failed.items():
            msg = fail.message() if isinstance(fail, PodFailure) else str(fail)
            self.endpoints[real[rname]] = _Endpoint(name=rname, failure=msg)
            self.result.pod_failures[real[rname]] = msg
            log.error("%s", msg)

    def _interfaces(self) -> None:
        """Interface name and MTU of every ready endpoint (``ip -j addr show``)."""
        assert self.plan is not None
        for name, ep in self.endpoints.items():
            if ep.failure or not ep.ip:
                continue
            pod = self.plan.pods[name]
            container = pod.servers[0].container if pod.role == "server" and pod.servers else "main"
            r = self.kube.exec(
                self.namespace,
                ep.name,
                ["ip", "-j", "addr", "show"],
                self.cfg.timeouts["api"],
                container=container,
            )
            facts = provenance.interface_for(r.stdout, ep.ip) if r.rc == 0 else {}
            ep.interface, ep.mtu = facts.get("interface"), facts.get("mtu")

    def _probe_tools(self, client: str) -> dict[str, str]:
        """Tools whose binaries the image lacks (-> reason), and every tool's version."""
        cfg = self.cfg
        needs = server_binaries(cfg)
        bins = sorted({b for v in needs.values() for b in v})
        # the binary names are positional arguments of a fixed script: never part of the script text
        script = 'for b do command -v "$b" >/dev/null 2>&1 || echo "$b"; done'
        r = self.kube.exec(
            self.namespace,
            client,
            ["sh", "-c", script, "podnet-probe", *bins],
            cfg.timeouts["api"],
            container="main",
        )
        if r.rc != 0:
            raise KubeError(
                f"probing the image for tools failed in pod {client}: {r.error or r.stderr.strip()}"
            )
        absent = set(r.stdout.split())
        missing: dict[str, str] = {}
        for tool, b in needs.items():
            lacking = [x for x in b if x in absent]
            if lacking:
                hint = adapters.get(tool).install_hint
                missing[tool] = f"the image {self.image} lacks {', '.join(lacking)}: {tool} tests skipped" + (
                    f" ({hint})" if hint else ""
                )
        for tool in cfg.tools:
            if tool in missing:
                continue
            tests = cfg.tools[tool]
            try:
                inv = adapters.get(tool).invocation(dict(tests[0].params), PLACEHOLDER_TARGET)
            except Exception:  # noqa: BLE001
                continue
            if inv.version:
                v = self.kube.exec(
                    self.namespace, client, list(inv.version), cfg.timeouts["api"], container="main"
                )
                self.tool_versions[tool] = provenance.first_line(v.stdout or v.stderr) or "unknown"
        return missing

    def _service_ips(self) -> None:
        assert self.plan is not None
        for pod in self.plan.services:
            try:
                svc = self.kube.service(self.namespace, self._pod_name(pod.service or ""))
                self.services[pod.name] = svc.spec.cluster_ip
            except Exception as exc:  # noqa: BLE001
                self.result.pod_failures[pod.service or pod.name] = f"Service {pod.service}: {exc}"

    def prepare(self, nodes: list[Node], pending_cases: set[tuple[str, str, str]]) -> None:
        """Pods and Services for the cases that have work to do; tools probed in the image."""
        cfg = self.cfg
        self.image = cfg.resolve_image()
        self.plan = build_plan(cfg, nodes)
        wanted = [cp for cp in self.plan.cases if cp.case.key in pending_cases]
        clients = sorted({cp.client_pod for cp in wanted if cp.client_pod})
        self.setup_namespace()
        self._create_pods(clients)
        self._wait(clients)
        probe = next((self._pod_name(n) for n in clients if not self.endpoints[n].failure), None)
        missing: dict[str, str] = {}
        if probe:
            missing = self._probe_tools(probe)
            for _tool, why in missing.items():
                log.warning("%s", why)
        self.result.skipped_tools = missing
        # the final plan: without the servers of missing tools
        plan = build_plan(cfg, nodes, missing)
        plan.pods.update({n: p for n, p in self.plan.pods.items() if p.role == "client"})
        self.plan = plan
        wanted = [cp for cp in plan.cases if cp.case.key in pending_cases and not cp.skipped]
        servers = sorted({cp.server_pod for cp in wanted if cp.server_pod})
        http_ports = sorted({s.port for n in servers for s in plan.pods[n].servers if s.http and s.port})
        if http_ports:
            self.kube.create(
                self.namespace,
                manifests.configmap_manifest(self._pod_name("podnet-nginx"), self.labels, http_ports),
            )
        self._create_pods(servers)
        for n in servers:
            pod = plan.pods[n]
            if pod.service:
                body = manifests.service_manifest(_renamed(pod, self._pod_name(n)), self.labels)
                body["metadata"]["name"] = self._pod_name(pod.service)
                self.kube.create(self.namespace, body)
        self._wait(servers)
        self._service_ips()
        self._interfaces()

    # -- runs --------------------------------------------------------------------------------------------------
    def _case_plan(self, case: Case) -> CasePlan:
        assert self.plan is not None
        return next(cp for cp in self.plan.cases if cp.case.key == case.key)

    def _blocked(self, cp: CasePlan) -> str | None:
        """Why a case cannot run now (plan error or a failed pod), else None."""
        reasons = []
        for role, name in (("client", cp.client_pod), ("server", cp.server_pod)):
            ep = self.endpoints.get(name) if name else None
            if ep is not None and ep.failure:
                reasons.append(f"{role} {ep.failure}")
            elif name and ep is None:
                reasons.append(f"{role} pod {name} was not created")
        if cp.service and cp.server_pod and cp.server_pod not in self.services and not reasons:
            reasons.append(f"Service {cp.service} has no cluster IP")
        if cp.error:
            reasons.insert(0, cp.error)
        return "; ".join(reasons) if reasons else None

    def _server_ready(self, cp: CasePlan) -> str | None:
        """Wait until the case's server container is ready; the reason if it does not get so."""
        if cp.server is None or not cp.server.tcp or not cp.server_pod:
            return None
        end = time.monotonic() + self.cfg.timeouts["server_ready"]
        name = self._pod_name(cp.server_pod)
        while True:
            try:
                ready, _ = self.kube.container_ready(self.namespace, name, cp.server.container)
            except Exception as exc:  # noqa: BLE001
                return f"server pod {name}: {exc}"
            if ready:
                return None
            if time.monotonic() > end:
                events = "; ".join(self.kube.events(self.namespace, name)[-4:])
                return f"server {cp.server.container} in pod {name} not ready after {self.cfg.timeouts['server_ready']:.0f}s; events: {events or 'none'}"
            time.sleep(0.5)

    def _restart_server(self, cp: CasePlan) -> None:
        """After a failed run: restart its server process (a stuck server must not fail later runs)."""
        if cp.server is None or cp.server.http or not cp.server_pod:
            return
        name = self._pod_name(cp.server_pod)
        try:
            _, before = self.kube.container_ready(self.namespace, name, cp.server.container)
            self.kube.exec(
                self.namespace,
                name,
                ["kill", "-TERM", "1"],
                self.cfg.timeouts["api"],
                container=cp.server.container,
            )
            end = time.monotonic() + self.cfg.timeouts["server_ready"]
            while time.monotonic() < end:
                ready, count = self.kube.container_ready(self.namespace, name, cp.server.container)
                if count > before and ready:
                    return
                time.sleep(0.5)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not restart server %s in %s: %s", cp.server.container, name, exc)

    def _sidecar(self, cp: CasePlan, slot: Slot, attempt: int) -> dict[str, Any]:
        case = cp.case
        meta: dict[str, Any] = {
            "tool": case.test.tool,
            "variant": self.variant,
            "scenario": case.scenario.name,
            "test": case.test.name,
            "repeat": slot.repeat,
            "attempt": attempt,
            "round": slot.round,
            "position": slot.position,
            "order": self.cfg.order,
            "shuffle_seed": self.cfg.seed,
            "kind": "measured",
            "source": "podnet launch",
        }
        if cp.template is not None:
            meta.update(
                protocol=cp.template.protocol, direction=cp.template.direction, streams=cp.template.streams
            )
        meta["params"] = _plain(cp.params)
        meta["scenario_description"] = case.scenario.description
        return meta

    def _endpoint_meta(self, name: str | None, role: str, spec: Any) -> dict[str, Any]:
        ep = self.endpoints.get(name or "")
        d: dict[str, Any] = {"kind": spec.pod_kind, "placement": spec.describe()}
        if ep is None:
            return d
        d.update(
            pod=ep.name,
            node=ep.node,
            ip=ep.ip,
            host_network=spec.pod_kind == "host",
            interface=ep.interface,
            mtu=ep.mtu,
        )
        if ep.node and ep.node in self.node_facts:
            d["node_info"] = self.node_facts[ep.node]
        return d

    def _write(
        self, cp: CasePlan, slot: Slot, attempt: int, content: str, meta: dict[str, Any], ext: str
    ) -> Path:
        path = raw_path(self.cfg.raw_dir, self.variant, cp.case, slot.repeat, attempt, ext)
        write_raw(path, content, meta)
        return path

    def _launch_meta(self) -> dict[str, Any]:
        return {
            "id": self.launch_id,
            "experiment": self.cfg.experiment,
            "namespace": self.namespace,
            "config_sha256": self.cfg.config_sha256,
            "git_commit": self.commit,
            "image": self.image,
        }

    def record_failure(self, cp: CasePlan, slot: Slot, reason: str) -> None:
        """A run that could not even start: an empty raw file and a failed sidecar."""
        st = self.states[cp.case.key]
        attempt = st.next_attempt(slot.repeat)
        meta = self._sidecar(cp, slot, attempt)
        t = now_iso()
        meta.update(
            status="failed",
            error=reason,
            started=t,
            ended=t,
            client=self._endpoint_meta(cp.client_pod, "client", cp.case.scenario.client),
            server=self._endpoint_meta(cp.server_pod, "server", cp.case.scenario.server),
            cluster=self.cluster,
            launch=self._launch_meta(),
        )
        path = self._write(cp, slot, attempt, "", meta, "txt")
        self._note(cp, slot, attempt, "failed", path, reason)

    def _note(self, cp: CasePlan, slot: Slot, attempt: int, status: str, path: Path, error: str = "") -> None:
        from podnet.launch.state import Attempt

        st = self.states[cp.case.key]
        st.attempts.setdefault(slot.repeat, []).append(Attempt(slot.repeat, attempt, status, path, error))
        out = self._outcome(cp.case)
        out.launched += 1
        self.result.launched += 1
        if status == "ok":
            out.ok += 1
            self.result.ok += 1
        else:
            out.failed += 1
            out.last_error = error
            self.result.failed += 1

    def run_slot(self, cp: CasePlan, slot: Slot, total: int, index: int) -> str:
        """Run one repeat of one case; returns its status (ok / failed)."""
        case = cp.case
        tag = f"[{index}/{total}] round {slot.round} {case.label} r{slot.repeat:03d}"
        blocked = self._blocked(cp)
        if blocked:
            log.error("%s: cannot run: %s", tag, blocked)
            self.record_failure(cp, slot, blocked)
            return "failed"
        not_ready = self._server_ready(cp)
        if not_ready:
            log.error("%s: %s", tag, not_ready)
            self.record_failure(cp, slot, not_ready)
            return "failed"
        server_ep = self.endpoints.get(cp.server_pod or "")
        target = (
            self.services[cp.server_pod]
            if cp.service and cp.server_pod
            else (server_ep.ip if server_ep else None)
        )
        inv = cp.invocation(str(target))
        limit = float(inv.duration) + float(self.cfg.timeouts["run_margin"])
        argv = ["timeout", "-k", str(KILL_GRACE), f"{limit:g}", *[str(a) for a in inv.client]]
        attempt = self.states[case.key].next_attempt(slot.repeat)
        meta = self._sidecar(cp, slot, attempt)
        meta.update(protocol=inv.protocol, direction=inv.direction, streams=inv.streams)
        started = now_iso()
        t0 = time.monotonic()
        r: ExecResult = self.kube.exec(
            self.namespace,
            self._pod_name(cp.client_pod or ""),
            argv,
            limit + KILL_GRACE + 15,
            container="main",
        )
        elapsed = time.monotonic() - t0
        ended = now_iso()
        content, status, error, headline = self._judge(case.test.tool, r)
        ext = "json" if content.lstrip().startswith("{") else "txt"
        meta.update(
            status=status,
            **({"error": error} if error else {}),
            command=[str(a) for a in inv.client],
            command_line=shlex.join(str(a) for a in inv.client),
            timeout_command=argv[:4],
            server_command=(
                cp.server.argv if cp.server and not cp.server.http else (["nginx"] if cp.server else None)
            ),
            target=target,
            service=(
                {"name": self._pod_name(cp.service or ""), "cluster_ip": target} if cp.service else None
            ),
            started=started,
            ended=ended,
            elapsed_s=round(elapsed, 3),
            exit_code=r.rc,
            stderr=r.stderr[-2000:] if r.stderr else "",
            tool_version=self.tool_versions.get(case.test.tool),
            client=self._endpoint_meta(cp.client_pod, "client", case.scenario.client),
            server=self._endpoint_meta(cp.server_pod, "server", case.scenario.server),
            cluster=self.cluster,
            image=self.image,
            image_id=(self.endpoints[cp.client_pod].image_id if cp.client_pod in self.endpoints else None),
            launch=self._launch_meta(),
        )
        path = self._write(cp, slot, attempt, content, meta, ext)
        self._note(cp, slot, attempt, status, path, error)
        if status == "ok":
            log.info("%s: ok %s(%.1fs)", tag, f"{headline} " if headline else "", elapsed)
        else:
            log.error("%s: failed: %s", tag, error)
            self._restart_server(cp)
        return status

    @staticmethod
    def _judge(tool: str, r: ExecResult) -> tuple[str, str, str, str]:
        """(raw content, status, error, headline) of one exec: ok when the adapter parses a measurement."""
        adapter = adapters.get(tool)
        candidates = [r.stdout]
        if r.stderr.strip():
            candidates.append(
                r.stdout + ("\n" if r.stdout and not r.stdout.endswith("\n") else "") + r.stderr
            )
        parse_error = ""
        finished = r.rc is not None and not r.timed_out and r.rc not in (TIMEOUT_RC, 137)
        for text in candidates:
            if not text.strip():
                continue
            try:
                res = adapter.parse(text)
            except (ParseError, ValueError, KeyError, TypeError) as exc:
                parse_error = str(exc)
                continue
            if res.measurements and finished:
                return text, "ok", "", _headline(tool, res)
        why = []
        if r.error:
            why.append(r.error)
        if r.timed_out or r.rc in (TIMEOUT_RC, 137):
            why.append("timed out (client killed at its time limit)")
        elif r.rc not in (0, None):
            why.append(f"exit code {r.rc}")
        if parse_error:
            why.append(f"output not parsable: {parse_error}")
        elif not r.stdout.strip():
            why.append("no output")
        tail = r.stderr.strip().splitlines()[-3:]
        if tail:
            why.append("stderr: " + " | ".join(tail))
        return r.stdout, "failed", "; ".join(why) or "failed", ""

    # -- rounds ---------------------------------------------------------------------------------------------------
    def run_rounds(self, pending: dict[tuple[str, str, str], list[int]], budget: int | None = None) -> int:
        """Run pending repeats in interleaved rounds; returns how many runs were launched."""
        cases = [c for c in self.cfg.cases if c.key in pending]
        keyed = {c.key: c for c in cases}
        rounds = schedule([c.key for c in cases], pending, self.cfg.order, self.cfg.seed)
        total = sum(len(r) for r in rounds)
        if budget is not None:
            total = min(total, budget)
        n = 0
        retry: list[Slot] = []
        for rnd in rounds:
            self.result.rounds += 1
            for slot in rnd:
                if budget is not None and n >= budget:
                    return n
                cp = self._case_plan(keyed[slot.case])
                if cp.skipped:
                    continue
                n += 1
                status = self.run_slot(cp, slot, total, n)
                if status != "ok" and not self._blocked(cp):
                    retry.append(slot)
        # one retry pass for runs that failed on working pods (transient failures)
        for slot in retry:
            st = self.states[slot.case]
            if slot.repeat in st.ok_repeats() or st.exhausted(slot.repeat, self.cfg.max_attempts):
                continue
            if budget is not None and n >= budget:
                break
            cp = self._case_plan(keyed[slot.case])
            n += 1
            log.info(
                "retrying %s r%03d (attempt %d)", cp.case.label, slot.repeat, st.next_attempt(slot.repeat)
            )
            self.run_slot(cp, slot, total, n)
        return n

    def adaptive_rounds(self, budget: int | None) -> None:
        """Add rounds of the cases whose interval is still too wide, up to max_repeats."""
        from podnet.stats import resolve

        s = resolve(self.cfg.stats)
        cap = int(s["planning"]["max_repeats"])
        used = 0
        while True:
            need = self.cases_needing_more()
            pend: dict[tuple[str, str, str], list[int]] = {}
            for key in need:
                st = self.states[key]
                attempted = set(st.attempts)
                if len(st.ok_repeats()) >= cap or max(attempted, default=0) >= cap:
                    continue
                pend[key] = [max(attempted, default=0) + 1]
            if not pend:
                log.info("adaptive: no case needs another repeat")
                return
            left = None if budget is None else budget - used
            if left is not None and left <= 0:
                log.info("adaptive: run budget (%d) used up", budget)
                return
            log.info("adaptive: %d case(s) need another repeat", len(pend))
            used += self.run_rounds(pend, left)

    def _tidy(self):
        """Tidy rows of this variant's successful runs of the configured cases."""
        from podnet.parse import parse_files

        files = [
            a.path
            for st in self.states.values()
            for atts in st.attempts.values()
            for a in atts
            if a.status == "ok"
        ]
        if not files:
            return None
        parsed = parse_files(files, self.cfg.raw_dir, self.cfg.experiment)
        return parsed.tidy[parsed.tidy["variant"] == self.variant]

    def cases_needing_more(self) -> list[tuple[str, str, str]]:
        """Cases of this launch whose headline interval is wider than the target (podnet.stats)."""
        from podnet.stats import cases_needing_more

        tidy = self._tidy()
        if tidy is None:
            return []
        need = cases_needing_more(tidy, self.cfg.stats, ["scenario", "tool", "test"])
        keys = {c.key for c in self.cfg.cases}
        runnable = {cp.case.key for cp in (self.plan.cases if self.plan else []) if not cp.skipped}
        return [
            k
            for k in ((d["scenario"], d["tool"], d["test"]) for d in need)
            if k in keys and (not self.plan or k in runnable)
        ]

    def met_targets(self) -> None:
        """Each case's met_target (adaptive runs): every headline metric's interval within the target."""
        if not self.cfg.adaptive:
            return
        from podnet.stats import plan as stats_plan

        tidy = self._tidy()
        if tidy is None or not len(tidy):
            return
        pl = stats_plan(tidy, self.cfg.stats)
        pl = pl[pl["headline"]]
        met = pl.groupby(["scenario", "tool", "test"])["met_target"].all()
        for case in self.cfg.cases:
            if case.key in met.index:
                self._outcome(case).met_target = bool(met.loc[case.key])

    # -- the whole launch --------------------------------------------------------------------------------------------
    def run(self, dry_run: bool = False) -> LaunchResult:
        cfg = self.cfg
        self.result.started = now_iso()
        try:
            with _interruptible():
                nodes = self.discover()
                self.states = scan(cfg.raw_dir, self.variant, cfg.cases)
                pending = pending_runs(cfg, self.variant, self.states)
                more = [] if pending or not cfg.adaptive else self.cases_needing_more()
                n_pending = sum(len(v) for v in pending.values())
                log.info(
                    "experiment %s, variant %s: %d case(s), %d run(s) missing%s",
                    cfg.experiment,
                    self.variant,
                    len(cfg.cases),
                    n_pending,
                    f", {len(more)} case(s) need more repeats (adaptive)" if more else "",
                )
                if dry_run:
                    self._dry_run(nodes, pending)
                    return self.result
                if not pending and not more:
                    log.info("nothing to launch: every run is in %s", cfg.raw_dir)
                    return self.result
                cases_with_work = (
                    set(pending) | set(more) | ({c.key for c in cfg.cases} if cfg.adaptive else set())
                )
                self.prepare(nodes, cases_with_work)
                for key, reason in self.result.skipped_tools.items():
                    for c in cfg.cases:
                        if c.test.tool == key:
                            self._outcome(c).skipped = reason
                self.run_rounds(pending, cfg.adaptive_max_runs)
                if cfg.adaptive:
                    left = (
                        None
                        if cfg.adaptive_max_runs is None
                        else cfg.adaptive_max_runs - self.result.launched
                    )
                    self.adaptive_rounds(left)
        except Interrupted as exc:
            self.result.interrupted = True
            self.result.error = f"interrupted ({exc.args[0] if exc.args else 'SIGINT'})"
            log.error("interrupted: cleaning up")
        except (KubeError, LaunchConfigError) as exc:
            self.result.error = str(exc)
            log.error("%s", exc)
        except Exception as exc:
            self.result.error = f"{exc.__class__.__name__}: {str(exc).strip()[:500]}"
            log.exception("launch failed")
        finally:
            self.teardown()
            self.result.ended = now_iso()
        try:
            self.met_targets()
        except Exception as exc:  # noqa: BLE001 - a statistics problem must not hide the launch result
            log.warning("could not judge targets: %s", exc)
        for case in cfg.cases:
            out = self._outcome(case)
            st = self.states.get(case.key)
            if st is not None:
                out.ok = len(st.ok_repeats())
        self.result.cases = [self._outcome(c) for c in cfg.cases]
        return self.result

    def _dry_run(self, nodes: list[Node], pending: dict[tuple[str, str, str], list[int]]) -> None:
        plan = build_plan(self.cfg, nodes)
        for p in plan.pods.values():
            where = p.placement.node or f"UNPLACED ({p.placement.reason})"
            servers = ", ".join(shlex.join(s.argv) if s.argv else "nginx" for s in p.servers)
            log.info(
                "pod %-32s %-6s %-4s on %s%s",
                p.name,
                p.role,
                p.kind,
                where,
                f": {servers}" if servers else "",
            )
        rounds = schedule(
            [c.key for c in self.cfg.cases if c.key in pending], pending, self.cfg.order, self.cfg.seed
        )
        for rnd in rounds:
            log.info("round %d: %s", rnd[0].round if rnd else 0, " ".join("/".join(s.case) for s in rnd))


def _renamed(pod: Any, name: str) -> Any:
    import copy

    p = copy.copy(pod)
    p.name = name
    if pod.service:
        p.service = pod.service
    return p


def _headline(tool: str, res: Any) -> str:
    """The progress log's summary of a run: its first headline metric, in readable units."""
    adapter = adapters.get(tool)
    values = {m.metric: m for m in res.measurements}
    for metric in adapter.headline:
        m = values.get(metric)
        if m is None:
            continue
        if m.unit == "bit/s":
            return f"{metric} {m.value / 1e9:.3g} Gbit/s"
        if m.unit == "s":
            return f"{metric} {m.value * 1e6:.4g} us"
        return f"{metric} {m.value:.4g} {m.unit}"
    return ""


def _plain(obj: Any) -> Any:
    """Params as plain YAML-safe values."""
    return json.loads(json.dumps(obj, default=str))


# ---- entry points -----------------------------------------------------------------------------------------------------
def launch(
    config: str | Path | LaunchConfig,
    *,
    kubeconfig: str | None = None,
    manifest: str | Path | None = None,
    dry_run: bool = False,
    kube: Any = None,
) -> LaunchResult:
    """Run a config's launch; write the manifest (JSON) when asked. Never raises for run failures."""
    cfg = config if isinstance(config, LaunchConfig) else load_config(config)
    if kubeconfig:
        cfg.kubeconfig = kubeconfig
    launcher: Launcher | None = None
    try:
        kube = kube or Kube(cfg.kubeconfig, cfg.context, cfg.timeouts["api"])
        launcher = Launcher(cfg, kube)
        result = launcher.run(dry_run=dry_run)
    except KubeError as exc:
        log.error("%s", exc)
        result = LaunchResult(
            experiment=cfg.experiment, launch_id="", error=str(exc), started=now_iso(), ended=now_iso()
        )
    except KeyboardInterrupt:
        if launcher is not None:
            launcher.teardown()
        result = LaunchResult(
            experiment=cfg.experiment,
            launch_id="",
            interrupted=True,
            error="interrupted",
            started=now_iso(),
            ended=now_iso(),
        )
    if not dry_run:
        _write_logs(cfg, result, manifest)
    log.info(
        "launch %s: %d run(s) launched, %d ok, %d failed%s",
        result.launch_id or "-",
        result.launched,
        result.ok,
        result.failed,
        f"; {result.error}" if result.error else "",
    )
    return result


def _write_logs(cfg: LaunchConfig, result: LaunchResult, manifest: str | Path | None) -> None:
    text = json.dumps(result.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
    if result.launched and result.launch_id:
        d = cfg.raw_dir / "_launch"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{result.launch_id}.json").write_text(text, encoding="utf-8")
    if manifest:
        m = Path(manifest)
        m.parent.mkdir(parents=True, exist_ok=True)
        tmp = m.with_name(m.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(m)


def cleanup(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    experiment: str | None = None,
    namespace: str | None = None,
    timeout: float = 180,
    kube: Any = None,
) -> list[str]:
    """Delete leftovers of launches; returns what was deleted.

    Without ``namespace``: every namespace labelled app.kubernetes.io/managed-by=podnet (of one
    experiment if given). With ``namespace`` (shared-namespace mode): the podnet objects in it.
    """
    if kubeconfig is None and Path(".cluster/kubeconfig").exists() and not _env_kubeconfig():
        kubeconfig = ".cluster/kubeconfig"
    kube = kube or Kube(kubeconfig, context)
    selector = "app.kubernetes.io/managed-by=podnet"
    if experiment:
        selector += f",podnet.io/experiment={slug(experiment, 63)}"
    if namespace:
        pods = sorted(kube.pods(namespace, selector))
        kube.delete_labelled(namespace, selector, timeout)
        return [f"{namespace}/{p}" for p in pods]
    names = [ns.metadata.name for ns in kube.namespaces(selector)]
    for name in names:
        log.info("deleting namespace %s", name)
        kube.delete_namespace(name, timeout, wait=False)
    end = time.monotonic() + timeout
    while names and time.monotonic() < end:
        left = {ns.metadata.name for ns in kube.namespaces(selector)}
        if not left & set(names):
            break
        time.sleep(1)
    return names


def _env_kubeconfig() -> str | None:
    import os

    return os.environ.get("KUBECONFIG")
