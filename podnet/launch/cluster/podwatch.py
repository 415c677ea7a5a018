"""Pods as they come up: a watch that stamps each milestone with the launcher's receive time.

:class:`PodWatch` keeps one watch on the pods of a label selector open on a thread (re-opened from
the last resourceVersion every few seconds, so it stops promptly) and records, per pod, when the
launcher first *received* each milestone (``time.time()``, the launcher's wall clock, ms resolution)
beside the API's own time for it where the API has one (whole seconds): bound to a node
(``PodScheduled``), sandbox ready (``PodReadyToStartContainers``, Kubernetes >= 1.29), IP, the
probe container running and ended. The kubelet reports the last three in its status updates, so
their receive times include its reporting delay (what any client of the API sees).

:func:`probe_pod_manifest` is the body of one new pod of a time-to-network run
(:mod:`podnet.launch.rounds.netready`): a ``probe`` container running the adapter's probe loop
(root with NET_RAW only, for ping; it exits after its first reply or at its deadline) and a
``hold`` container that keeps the pod, and its network, alive (restartPolicy Never).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podnet.launch.cluster.k8s import pod_problem
from podnet.launch.cluster.manifests import MANAGED_BY, NOBODY, container_resources

log = logging.getLogger("podnet.launch")

#: the new pod's containers: the probe loop and the one that holds the pod
PROBE, HOLD = "probe", "hold"
#: seconds each watch request lasts before it is re-opened (bounds how long stop() takes)
WATCH_SLICE = 2


def _ts(t: Any) -> float | None:
    """Seconds since the epoch of an API time (a datetime), or None."""
    return t.timestamp() if t is not None and hasattr(t, "timestamp") else None


@dataclass
class Milestones:
    """What the watch saw of one pod: receive times (launcher clock) and the API's own (``*_api``)."""

    name: str
    created_api: float | None = None
    node: str | None = None
    scheduled: float | None = None
    scheduled_api: float | None = None
    sandbox: float | None = None
    sandbox_api: float | None = None
    ip: str | None = None
    ip_seen: float | None = None
    started_seen: float | None = None
    started_api: float | None = None
    probe_exit: int | None = None
    probe_ended_seen: float | None = None
    #: a reason the pod will not come up by waiting (failed, image error ...), "" if none
    problem: str = ""
    deleted: float | None = None


def _condition(pod: Any, kind: str) -> Any:
    return next((c for c in (pod.status.conditions or []) if c.type == kind), None)


def observe(m: Milestones, pod: Any, now: float) -> None:
    """Record in ``m`` the milestones ``pod`` (a V1Pod) shows, first sight only, received at ``now``."""
    meta, spec, status = pod.metadata, pod.spec, pod.status
    if m.created_api is None:
        m.created_api = _ts(meta.creation_timestamp)
    sched = _condition(pod, "PodScheduled")
    if m.scheduled is None and (spec.node_name or (sched is not None and sched.status == "True")):
        m.scheduled, m.node = now, spec.node_name
        m.scheduled_api = _ts(sched.last_transition_time) if sched is not None else None
    sandbox = _condition(pod, "PodReadyToStartContainers")
    if m.sandbox is None and sandbox is not None and sandbox.status == "True":
        m.sandbox, m.sandbox_api = now, _ts(sandbox.last_transition_time)
    if m.ip_seen is None and status.pod_ip:
        m.ip, m.ip_seen = status.pod_ip, now
    for cs in status.container_statuses or []:
        if cs.name != PROBE or cs.state is None:
            continue
        run, end = cs.state.running, cs.state.terminated
        if m.started_seen is None and (run is not None or end is not None):
            m.started_seen = now
            m.started_api = _ts(run.started_at if run is not None else end.started_at)
        if end is not None and m.probe_exit is None:
            m.probe_exit, m.probe_ended_seen = int(end.exit_code), now
    if not m.problem:
        m.problem = pod_problem(pod)


class PodWatch:
    """One watch on the pods of ``selector`` in ``namespace`` (``core``: a CoreV1Api), on a thread."""

    def __init__(self, core: Any, namespace: str, selector: str, api_timeout: float = 30):
        self.core = core
        self.namespace = namespace
        self.selector = selector
        self.api_timeout = api_timeout
        self.pods: dict[str, Milestones] = {}
        self.lock = threading.Lock()
        self.error = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rv = ""

    def start(self) -> PodWatch:
        """List once (the resourceVersion to watch from), then watch on a thread."""
        lst = self.core.list_namespaced_pod(
            self.namespace, label_selector=self.selector, _request_timeout=self.api_timeout
        )
        self._rv = lst.metadata.resource_version
        self._thread = threading.Thread(target=self._run, name="podnet-podwatch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        from kubernetes import watch

        while not self._stop.is_set():
            w = watch.Watch()
            try:
                for ev in w.stream(
                    self.core.list_namespaced_pod,
                    self.namespace,
                    label_selector=self.selector,
                    resource_version=self._rv,
                    timeout_seconds=WATCH_SLICE,
                    _request_timeout=self.api_timeout,
                ):
                    now = time.time()
                    pod = ev["object"]
                    self._rv = pod.metadata.resource_version or self._rv
                    self.note(pod, now, deleted=ev["type"] == "DELETED")
                    if self._stop.is_set():
                        break
            except Exception as exc:  # noqa: BLE001 - an expired resourceVersion, a dropped connection
                self.error = f"{type(exc).__name__}: {exc}"[:300]
                log.debug("pod watch: %s; listing again", self.error)
                self._relist()
            finally:
                w.stop()

    def _relist(self) -> None:
        """After a broken watch: list (every pod's state now, received now) and go on from there."""
        try:
            lst = self.core.list_namespaced_pod(
                self.namespace, label_selector=self.selector, _request_timeout=self.api_timeout
            )
        except Exception:  # noqa: BLE001 - the next slice tries again
            time.sleep(0.2)
            return
        now = time.time()
        for pod in lst.items:
            self.note(pod, now)
        self._rv = lst.metadata.resource_version

    def note(self, pod: Any, now: float, deleted: bool = False) -> None:
        name = pod.metadata.name
        with self.lock:
            m = self.pods.setdefault(name, Milestones(name))
            observe(m, pod, now)
            if deleted and m.deleted is None:
                m.deleted = now

    def get(self, name: str) -> Milestones:
        """A copy of what was seen of pod ``name`` so far."""
        with self.lock:
            return copy.copy(self.pods.get(name) or Milestones(name))

    def stop(self) -> None:
        """Stop watching (the thread ends with its current slice, at most :data:`WATCH_SLICE` s on)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(0.2)


def probe_pod_manifest(
    name: str,
    *,
    image: str,
    pull_policy: str,
    labels: Mapping[str, str],
    probe: list[str],
    node_affinity: Mapping[str, Any],
    lifetime: int,
    guaranteed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One new pod of a time-to-network run: ``probe`` (the loop's argv) and ``hold`` containers."""
    resources = container_resources(guaranteed)
    base = {"privileged": False, "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True}
    probe_sc = {**base, "capabilities": {"drop": ["ALL"], "add": ["NET_RAW"]}}
    hold_sc = {
        **base,
        "capabilities": {"drop": ["ALL"]},
        "runAsUser": NOBODY,
        "runAsGroup": NOBODY,
        "runAsNonRoot": True,
    }
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        # deleted gracefully: the kubelet confirms (its sandbox torn down) before the pod is gone
        "terminationGracePeriodSeconds": 1,
        "activeDeadlineSeconds": int(lifetime),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": PROBE,
                "image": image,
                "imagePullPolicy": pull_policy,
                "command": list(probe),
                "securityContext": probe_sc,
                "resources": copy.deepcopy(resources),
            },
            {
                "name": HOLD,
                "image": image,
                "imagePullPolicy": pull_policy,
                "command": ["sleep", "infinity"],
                "securityContext": hold_sc,
                "resources": copy.deepcopy(resources),
            },
        ],
    }
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": dict(node_affinity)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {**MANAGED_BY, **labels, "podnet.io/role": "netready", "podnet.io/endpoint": name},
        },
        "spec": spec,
    }
