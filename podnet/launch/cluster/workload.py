"""The Kubernetes objects of one launch: namespace, pods, probes, Services; node health; clean-up.

:class:`Workload` creates what a launch's cases need (client pods first, so the
image can be probed for the tools before any server starts), records each
endpoint's address, node, interface and MTU, answers "can this case run now?"
(a failed pod, a NotReady node) and deletes everything at the end with a
bounded wait, force-deleting pods left on NotReady nodes.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from dataclasses import replace
from typing import Any

from podnet import tools as adapters
from podnet.launch.cluster import manifests, provenance
from podnet.launch.cluster.k8s import ExecResult, KubeError, PodFailure
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.cluster.signals import shielded
from podnet.launch.cluster.target import CaseTarget, Container, Endpoint, Space, case_target, object_name
from podnet.launch.spec.config import CaseKey, LaunchConfig
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import PLACEHOLDER_TARGET, CasePlan, Plan, build_plan, server_binaries, slug

log = logging.getLogger("podnet.launch")

#: label selector of every object podnet creates
MANAGED_SELECTOR = ",".join(f"{k}={v}" for k, v in manifests.MANAGED_BY.items())
#: the ConfigMap holding nginx's configuration (HTTP tools)
NGINX_CONFIGMAP = "podnet-nginx"
#: node conditions are re-read from the API at most this often (seconds)
NODE_RECHECK_S = 2.0
#: how an exec fails when the API server cannot reach the node's kubelet (before the node is NotReady)
KUBELET_UNREACHABLE = re.compile(
    r"dial tcp \S+:\d+: (connect: connection refused|i/o timeout|connect: no route to host)"
)


def node_down(node: Any) -> str | None:
    """``node X NotReady since T`` when a Node object's Ready condition is not True, else None."""
    for c in getattr(node.status, "conditions", None) or []:
        if c.type == "Ready":
            if c.status == "True":
                return None
            since = getattr(c, "last_transition_time", None)
            when = since.isoformat() if hasattr(since, "isoformat") else str(since or "unknown")
            return f"node {node.metadata.name} NotReady since {when}"
    return f"node {node.metadata.name} reports no Ready condition"


class NodeWatch:
    """Node conditions, re-read from the API at most every ``ttl`` seconds."""

    def __init__(self, kube: Any, ttl: float | None = None):
        self.kube = kube
        self.ttl = NODE_RECHECK_S if ttl is None else ttl
        self._at = float("-inf")
        self._down: dict[str, str] = {}
        #: every node seen not Ready during the launch -> the first reason seen
        self.seen: dict[str, str] = {}

    def down(self) -> dict[str, str]:
        """Nodes that are not Ready now -> why (``node X NotReady since T``)."""
        if time.monotonic() - self._at >= self.ttl:
            try:
                nodes = self.kube.nodes()
            except Exception as exc:  # noqa: BLE001 - keep the last answer; the runs report API errors
                log.warning("cannot read node conditions: %s", exc)
                return self._down
            self._down = {n.metadata.name: why for n in nodes if (why := node_down(n))}
            self._at = time.monotonic()
            for node, why in self._down.items():
                if node not in self.seen:
                    log.error("%s: its cases fail at once and are not retried in this launch", why)
                    self.seen[node] = why
        return self._down

    def why(self, node: str | None) -> str | None:
        return self.down().get(node) if node else None


class Workload:
    """Namespace, pods and Services of one launch (``kube``: a :class:`~podnet.launch.cluster.k8s.Kube` or a double)."""

    def __init__(self, cfg: LaunchConfig, kube: Any, launch_id: str):
        self.cfg = cfg
        self.kube = kube
        self.launch_id = launch_id
        self.labels = {
            "app.kubernetes.io/name": "podnet",
            "podnet.io/experiment": slug(cfg.experiment, 63),
            "podnet.io/run": launch_id,
        }
        self.selector = f"podnet.io/run={launch_id}"
        self.namespace: str | None = None
        self.plan: Plan | None = None
        self.image = ""
        self.endpoints: dict[str, Endpoint] = {}
        #: server pod -> ClusterIP of the Service in front of it
        self.services: dict[str, str] = {}
        self.tool_versions: dict[str, str] = {}
        self.pod_failures: dict[str, str] = {}
        self.nodes = NodeWatch(kube)
        #: nodes whose kubelet the API server could not reach for an exec -> why, since when
        self.unreachable: dict[str, str] = {}
        self._prefix = "" if cfg.namespace_create else f"r{launch_id[-4:]}-"

    def pod_name(self, name: str) -> str:
        """The real object name of a planned pod (prefixed with the run in a shared namespace)."""
        return object_name(self._prefix, name)

    @property
    def space(self) -> Space:
        """The launch's namespace (:class:`.target.Space`), for what makes objects of its own there."""
        return Space(self.kube, self.namespace, dict(self.labels), self._prefix)

    def target(self, cp: CasePlan) -> CaseTarget:
        """Where and with what ``cp`` runs, from the pods as recorded (:func:`.target.case_target`)."""
        pod = self.plan.pods.get(cp.client_pod or "") if self.plan is not None else None
        placement = pod.placement if pod is not None else None
        return case_target(
            cp, self.endpoints, self.services, self._prefix, self.image, self.tool_versions, placement
        )

    def exec(self, where: Container, argv: list[str], timeout: float) -> ExecResult:
        """Run ``argv`` in a case's container (:attr:`.target.CaseTarget.client` or ``server``)."""
        return self.kube.exec(self.namespace, where.pod, argv, timeout, container=where.container)

    # -- set-up --------------------------------------------------------------------------------------
    def setup_namespace(self, pod_security: str = "baseline") -> None:
        cfg = self.cfg
        if cfg.namespace_create:
            name = f"{cfg.namespace_prefix}-{slug(cfg.experiment, 24)}-{secrets.token_hex(3)}"
            body = manifests.namespace_manifest(
                name,
                self.labels,
                {"podnet.io/config-sha256": cfg.config_sha256, "podnet.io/started": now_iso()},
                pod_security,
            )
            self.kube.create_namespace(body)
            self.namespace = name
            log.info("namespace %s created", name)
            self.kube.wait_service_account(name, cfg.timeouts["api"])
        else:
            self.namespace = cfg.namespace_name
            log.info("using namespace %s (objects labelled %s)", self.namespace, self.selector)

    def prepare(self, nodes: list[Node], cases: set[CaseKey]) -> dict[str, str]:
        """Pods and Services for ``cases``; returns the tools the image lacks (-> reason), which are skipped."""
        cfg = self.cfg
        self.image = cfg.resolve_image()
        self.plan = build_plan(cfg, nodes)
        wanted = [cp for cp in self.plan.cases if cp.case.key in cases]
        clients = sorted({cp.client_pod for cp in wanted if cp.client_pod})
        needs = any(p.needs_privileged_namespace for cp in wanted for p in self.plan.pods_of(cp))
        self.setup_namespace("privileged" if needs else "baseline")
        self.create_pods(clients)
        self.wait(clients)
        probe = next((self.pod_name(n) for n in clients if not self.endpoints[n].failure), None)
        missing = self.probe_tools(probe) if probe else {}
        for why in missing.values():
            log.warning("%s", why)
        # the final plan: without the servers of missing tools
        plan = build_plan(cfg, nodes, missing)
        plan.pods.update({n: p for n, p in self.plan.pods.items() if p.role == "client"})
        self.plan = plan
        wanted = [cp for cp in plan.cases if cp.case.key in cases and not cp.skipped]
        servers = sorted({cp.server_pod for cp in wanted if cp.server_pod})
        http_ports = sorted({s.port for n in servers for s in plan.pods[n].servers if s.http and s.port})
        if http_ports:
            body = manifests.configmap_manifest(self.pod_name(NGINX_CONFIGMAP), self.labels, http_ports)
            self.kube.create(self.namespace, body)
        self.create_pods(servers)
        for n in servers:
            if plan.pods[n].service:
                self.kube.create(
                    self.namespace, manifests.service_manifest(plan.pods[n], self.labels, self.pod_name)
                )
        self.wait(servers)
        self._service_ips()
        self._interfaces()
        return missing

    def create_pods(self, names: list[str]) -> None:
        assert self.plan is not None and self.namespace
        for name in names:
            body = manifests.pod_manifest(
                self.plan.pods[name],
                image=self.image,
                pull_policy=self.cfg.image_pull_policy,
                labels=self.labels,
                lifetime=int(self.cfg.timeouts["pod_lifetime"]),
                startup_seconds=self.cfg.timeouts["pod_ready"],
                configmap=self.pod_name(NGINX_CONFIGMAP),
                name=self.pod_name(name),
                guaranteed=self.cfg.resources,
            )
            self.kube.create(self.namespace, body)

    def wait(self, names: list[str]) -> None:
        """Wait until the pods are Ready (or failed); record each as an :class:`Endpoint`."""
        t = self.cfg.timeouts
        real = {self.pod_name(n): n for n in names}
        ready, failed = self.kube.wait_ready(
            self.namespace, list(real), self.selector, t["pod_ready"], t["unschedulable"]
        )
        for rname, pod in ready.items():
            image_id = next(
                (cs.image_id for cs in (pod.status.container_statuses or []) if cs.image_id), None
            )
            self.endpoints[real[rname]] = Endpoint(
                name=rname, ip=pod.status.pod_ip, node=pod.spec.node_name, image_id=image_id
            )
        for rname, fail in failed.items():
            msg = fail.message() if isinstance(fail, PodFailure) else str(fail)
            self.endpoints[real[rname]] = Endpoint(name=rname, failure=msg)
            self.pod_failures[real[rname]] = msg
            log.error("%s", msg)

    def _interfaces(self) -> None:
        """Interface name and MTU of every ready endpoint (``ip -j addr show``)."""
        assert self.plan is not None
        for name, ep in list(self.endpoints.items()):
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
            self.endpoints[name] = replace(ep, interface=facts.get("interface"), mtu=facts.get("mtu"))

    def probe_tools(self, client: str) -> dict[str, str]:
        """Tools whose binaries the image lacks (-> reason); records every other tool's version."""
        cfg = self.cfg
        needs = server_binaries(cfg)
        bins = sorted({b for v in needs.values() for b in v})
        # the binary names are positional arguments of a fixed script: never part of the script text
        script = 'for b do command -v "$b" >/dev/null 2>&1 || echo "$b"; done'
        argv = ["sh", "-c", script, "podnet-probe", *bins]
        r = self.kube.exec(self.namespace, client, argv, cfg.timeouts["api"], container="main")
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
        for tool, tests in cfg.tools.items():
            if tool in missing:
                continue
            try:
                inv = adapters.get(tool).invocation(dict(tests[0].params), PLACEHOLDER_TARGET)
            except Exception:  # noqa: BLE001 - no version then; the runs report the real error
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
                svc = self.kube.service(self.namespace, self.pod_name(pod.service or ""))
                self.services[pod.name] = svc.spec.cluster_ip
            except Exception as exc:  # noqa: BLE001
                self.pod_failures[pod.service or pod.name] = f"Service {pod.service}: {exc}"

    # -- can a case run now? ------------------------------------------------------------------------
    def node_problem(self, cp: CasePlan) -> str | None:
        """``node X NotReady since T`` (or ``... kubelet unreachable since T``) for the case's nodes."""
        for name in (cp.client_pod, cp.server_pod):
            ep = self.endpoints.get(name or "")
            if ep is None or not ep.node:
                continue
            why = self.nodes.why(ep.node) or self.unreachable.get(ep.node)
            if why:
                return why
        return None

    def exec_failed(self, pod: str | None, error: str) -> None:
        """An exec into ``pod`` did not start: when its kubelet is unreachable, no case runs on that node again
        in this launch (the node controller marks it NotReady only after its grace period)."""
        ep = self.endpoints.get(pod or "")
        m = KUBELET_UNREACHABLE.search(error or "")
        if ep is None or not ep.node or not m or ep.node in self.unreachable:
            return
        why = f"node {ep.node} kubelet unreachable since {now_iso()} ({m.group(0)})"
        self.unreachable[ep.node] = why
        log.error("%s: its cases fail at once and are not retried in this launch", why)

    def blocked(self, cp: CasePlan) -> str | None:
        """Why a case cannot run now (plan error, a failed pod, a NotReady node), else None."""
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
        if not reasons:
            down = self.node_problem(cp)
            if down:
                reasons.append(down)
        return "; ".join(reasons) if reasons else None

    def server_ready(self, cp: CasePlan) -> str | None:
        """Wait until the case's server container is ready (a TCP server: its port answers; any other:
        its process runs, e.g. after a crash and the kubelet's restart); the reason if it does not."""
        if cp.server is None or not cp.server_pod:
            return None
        limit = self.cfg.timeouts["server_ready"]
        end = time.monotonic() + limit
        name = self.pod_name(cp.server_pod)
        while True:
            try:
                ready, _ = self.kube.container_ready(self.namespace, name, cp.server.container)
            except Exception as exc:  # noqa: BLE001
                return f"server pod {name}: {exc}"
            if ready:
                return None
            down = self.node_problem(cp)
            if down:
                return down
            if time.monotonic() > end:
                events = "; ".join(self.kube.events(self.namespace, name)[-4:])
                return (
                    f"server {cp.server.container} in pod {name} not ready after {limit:.0f}s; "
                    f"events: {events or 'none'}"
                )
            time.sleep(0.5)

    def restarts(self, cp: CasePlan) -> dict[str, int]:
        """Restart counts of the case's client and server containers (those that can be read)."""
        out: dict[str, int] = {}
        for role, name, container in (
            ("client", cp.client_pod, "main"),
            ("server", cp.server_pod, cp.server.container if cp.server else None),
        ):
            if not name or not container:
                continue
            try:
                out[role] = self.kube.container_ready(self.namespace, self.pod_name(name), container)[1]
            except Exception:  # noqa: BLE001 - provenance only
                continue
        return out

    def restart_server(self, cp: CasePlan) -> None:
        """After a failed run: restart its server process (a stuck server must not fail later runs)."""
        if cp.server is None or cp.server.http or not cp.server_pod or self.node_problem(cp):
            return
        name = self.pod_name(cp.server_pod)
        c = cp.server.container
        try:
            _, before = self.kube.container_ready(self.namespace, name, c)
            r = self.kube.exec(
                self.namespace, name, ["kill", "-TERM", "1"], self.cfg.timeouts["api"], container=c
            )
            if r.rc is None:  # the exec did not reach the container (e.g. its kubelet is gone)
                log.warning("could not restart server %s in %s: %s", c, name, r.error)
                return
            end = time.monotonic() + self.cfg.timeouts["server_ready"]
            while time.monotonic() < end and not self.node_problem(cp):
                ready, count = self.kube.container_ready(self.namespace, name, c)
                if count > before and ready:
                    return
                time.sleep(0.5)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not restart server %s in %s: %s", c, name, exc)

    # -- clean-up -------------------------------------------------------------------------------------
    def teardown(self) -> tuple[bool | None, list[str]]:
        """Delete everything this launch created, waiting at most ``timeouts.namespace_delete``.

        Pods left on NotReady nodes (their kubelet cannot confirm the deletion) are
        force-deleted. Returns (gone, what could not be removed); (None, []) when
        nothing was created.
        """
        if not self.namespace:
            return None, []
        with shielded():
            try:
                if self.cfg.namespace_create:
                    log.info("deleting namespace %s", self.namespace)
                    return delete_namespaces(
                        self.kube, [self.namespace], self.cfg.timeouts["namespace_delete"]
                    )
                log.info("deleting this launch's objects in %s", self.namespace)
                return delete_labelled(
                    self.kube, self.namespace, self.selector, self.cfg.timeouts["namespace_delete"]
                )
            except Exception as exc:  # noqa: BLE001 - report, never mask the launch's own outcome
                log.error("clean-up failed: %s (run `podnet cleanup`)", exc)
                return False, [f"namespace {self.namespace} ({exc})"]


def _force_stuck_pods(kube: Any, namespace: str, selector: str, watch: NodeWatch) -> list[str]:
    """Force-delete this namespace's pods on NotReady nodes; returns the remaining pods, described."""
    left = []
    try:
        pods = kube.pods(namespace, selector)
    except Exception:  # noqa: BLE001 - the namespace may be gone already
        return []
    for name, pod in pods.items():
        why = watch.why(getattr(pod.spec, "node_name", None))
        if why:
            try:
                kube.delete_pod(namespace, name, force=True)
                log.warning("pod %s/%s force-deleted: %s", namespace, name, why)
                continue
            except Exception as exc:  # noqa: BLE001
                why = f"{why}; force delete failed: {exc}"
        left.append(f"pod {namespace}/{name}" + (f" ({why})" if why else ""))
    return left


def delete_namespaces(kube: Any, names: list[str], timeout: float) -> tuple[bool, list[str]]:
    """Delete namespaces and wait (bounded) until they are gone; (all gone, what is left)."""
    for name in names:
        kube.delete_namespace(name, timeout, wait=False)
    watch = NodeWatch(kube)
    end = time.monotonic() + timeout
    left = list(names)
    while True:
        stuck = [p for n in left for p in _force_stuck_pods(kube, n, "", watch)]
        alive = {ns.metadata.name for ns in kube.namespaces(MANAGED_SELECTOR)}
        left = [n for n in names if n in alive]
        if not left:
            return True, []
        if time.monotonic() >= end:
            what = [f"namespace {n}" for n in left] + stuck
            log.warning(
                "not removed after %.0fs: %s (`podnet cleanup` deletes leftovers)", timeout, ", ".join(what)
            )
            return False, what
        time.sleep(1)


def delete_labelled(kube: Any, namespace: str, selector: str, timeout: float) -> tuple[bool, list[str]]:
    """Delete one launch's objects in a shared namespace; (all gone, what is left)."""
    if kube.delete_labelled(namespace, selector, timeout / 2):
        return True, []
    left = _force_stuck_pods(kube, namespace, selector, NodeWatch(kube))
    if left and kube.delete_labelled(namespace, selector, timeout / 2):
        return True, []
    log.warning(
        "not removed: %s (`podnet cleanup --namespace %s` deletes leftovers)", ", ".join(left), namespace
    )
    return not left, left
