"""The Kubernetes side of a launch: client set-up, namespace lifecycle, readiness, exec.

:class:`Kube` wraps the official ``kubernetes`` client. Every API call carries a
timeout; waiting loops have deadlines; errors about pods carry the pod's
events. Configuration: an explicit kubeconfig, else ``$KUBECONFIG``, else the
in-cluster service account, else ``~/.kube/config``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: container waiting reasons that will not fix themselves: fail at once
FATAL_WAITING = {
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
    "RunContainerError",
    "StartError",
}


#: held while an exec's websocket is set up (:meth:`Kube.exec`)
_STREAM_SETUP = threading.Lock()


class KubeError(RuntimeError):
    """A Kubernetes operation failed; the message says which object and why."""


@dataclass
class ExecResult:
    """What a command exec'd in a container did."""

    rc: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    #: the exec itself failed (e.g. executable not found); rc is None then
    error: str = ""


@dataclass
class PodFailure:
    """Why a pod did not become ready."""

    pod: str
    reason: str
    events: list[str]

    def message(self) -> str:
        ev = "; ".join(self.events[-6:]) if self.events else "no events"
        return f"pod {self.pod}: {self.reason}. Events: {ev}"


def _api_exception():
    from kubernetes.client import ApiException

    return ApiException


class Kube:
    """A connection to one cluster."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, api_timeout: float = 30):
        from kubernetes import client, config

        cfg = client.Configuration()
        env = os.environ.get("KUBECONFIG")
        if kubeconfig:
            if not Path(kubeconfig).exists():
                raise KubeError(
                    f"kubeconfig {kubeconfig} does not exist (run `make cluster-up`, or set launch.kubeconfig)"
                )
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
            self.source = f"kubeconfig {kubeconfig}"
        elif env:
            config.load_kube_config(
                config_file=env.split(os.pathsep)[0], context=context, client_configuration=cfg
            )
            self.source = f"$KUBECONFIG {env}"
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=cfg)
            self.source = "in-cluster service account"
        else:
            default = Path.home() / ".kube" / "config"
            if not default.exists():
                raise KubeError(
                    "no Kubernetes configuration: set launch.kubeconfig, $KUBECONFIG, run in a cluster, "
                    "or create ~/.kube/config"
                )
            config.load_kube_config(config_file=str(default), context=context, client_configuration=cfg)
            self.source = f"kubeconfig {default}"
        self.api_client = client.ApiClient(cfg)
        self.core = client.CoreV1Api(self.api_client)
        self.timeout = api_timeout
        self._client = client

    # ---- cluster facts ----------------------------------------------------------------
    def version(self) -> str:
        from kubernetes import client

        try:
            return str(client.VersionApi(self.api_client).get_code(_request_timeout=self.timeout).git_version)
        except Exception as exc:  # noqa: BLE001 - version is provenance, not essential
            return f"unknown ({exc.__class__.__name__})"

    def nodes(self) -> list[Any]:
        try:
            return list(self.core.list_node(_request_timeout=self.timeout).items)
        except _api_exception() as exc:
            raise KubeError(
                f"cannot list nodes ({exc.status} {exc.reason}): the launcher needs read access to nodes (envs/k8s/rbac.yaml)"
            ) from None
        except Exception as exc:  # noqa: BLE001 - connection errors of many kinds
            raise KubeError(f"cannot reach the Kubernetes API ({self.source}): {exc}") from None

    def daemonset_names(self, namespace: str = "kube-system") -> list[str]:
        """DaemonSet names in ``namespace`` (for CNI detection); [] when not allowed."""
        from kubernetes import client

        try:
            return [
                d.metadata.name
                for d in client.AppsV1Api(self.api_client)
                .list_namespaced_daemon_set(namespace, _request_timeout=self.timeout)
                .items
            ]
        except Exception:  # noqa: BLE001 - best effort
            return []

    # ---- namespaces ---------------------------------------------------------------------
    def create_namespace(self, body: dict[str, Any]) -> None:
        try:
            self.core.create_namespace(body, _request_timeout=self.timeout)
        except _api_exception() as exc:
            raise KubeError(
                f"cannot create namespace {body['metadata']['name']}: {exc.status} {exc.reason}: {_body_message(exc)}"
            ) from None

    def wait_service_account(self, namespace: str, timeout: float) -> None:
        """Pods need the namespace's default ServiceAccount, created asynchronously."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                self.core.read_namespaced_service_account("default", namespace, _request_timeout=self.timeout)
                return
            except _api_exception():
                time.sleep(0.3)
        raise KubeError(
            f"namespace {namespace}: the default ServiceAccount did not appear within {timeout:.0f}s (is kube-controller-manager running?)"
        )

    def namespaces(self, label_selector: str) -> list[Any]:
        return list(
            self.core.list_namespace(label_selector=label_selector, _request_timeout=self.timeout).items
        )

    def delete_namespace(self, name: str, timeout: float, wait: bool = True) -> bool:
        """Delete a namespace and (optionally) wait until it is gone; True when gone."""
        ApiException = _api_exception()
        try:
            self.core.delete_namespace(
                name,
                body={"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
                _request_timeout=self.timeout,
            )
        except ApiException as exc:
            if exc.status != 404:
                raise KubeError(f"cannot delete namespace {name}: {exc.status} {exc.reason}") from None
        if not wait:
            return False
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                self.core.read_namespace(name, _request_timeout=self.timeout)
            except ApiException as exc:
                if exc.status == 404:
                    return True
            time.sleep(0.5)
        return False

    # ---- objects in a namespace ------------------------------------------------------------
    def create(self, namespace: str, body: dict[str, Any]) -> None:
        kind = body["kind"]
        fn = {
            "Pod": self.core.create_namespaced_pod,
            "Service": self.core.create_namespaced_service,
            "ConfigMap": self.core.create_namespaced_config_map,
        }[kind]
        try:
            fn(namespace, body, _request_timeout=self.timeout)
        except _api_exception() as exc:
            raise KubeError(
                f"cannot create {kind} {body['metadata']['name']}: {exc.status} {exc.reason}: {_body_message(exc)}"
            ) from None

    def delete_labelled(self, namespace: str, label_selector: str, timeout: float) -> bool:
        """Delete this run's pods, Services and ConfigMaps in a shared namespace; True when gone."""
        ApiException = _api_exception()
        opts = {"label_selector": label_selector, "_request_timeout": self.timeout}
        for svc in self.core.list_namespaced_service(namespace, **opts).items:
            try:
                self.core.delete_namespaced_service(
                    svc.metadata.name, namespace, _request_timeout=self.timeout
                )
            except ApiException as exc:
                if exc.status != 404:
                    raise
        self.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0, **opts)
        self.core.delete_collection_namespaced_config_map(namespace, **opts)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self.core.list_namespaced_pod(namespace, **opts).items:
                return True
            time.sleep(0.5)
        return False

    def delete_pod(self, namespace: str, name: str, force: bool = False) -> None:
        """Delete one pod; ``force``: grace period 0, removed at once even when its kubelet is gone."""
        ApiException = _api_exception()
        try:
            self.core.delete_namespaced_pod(
                name,
                namespace,
                grace_period_seconds=0 if force else None,
                _request_timeout=self.timeout,
            )
        except ApiException as exc:
            if exc.status != 404:
                raise KubeError(f"cannot delete pod {namespace}/{name}: {exc.status} {exc.reason}") from None

    def pods(self, namespace: str, label_selector: str) -> dict[str, Any]:
        items = self.core.list_namespaced_pod(
            namespace, label_selector=label_selector, _request_timeout=self.timeout
        ).items
        return {p.metadata.name: p for p in items}

    def pod(self, namespace: str, name: str) -> Any:
        return self.core.read_namespaced_pod(name, namespace, _request_timeout=self.timeout)

    def service(self, namespace: str, name: str) -> Any:
        return self.core.read_namespaced_service(name, namespace, _request_timeout=self.timeout)

    def events(self, namespace: str, name: str) -> list[str]:
        """The object's events, oldest first, as 'Type Reason: message' lines."""
        try:
            items = self.core.list_namespaced_event(
                namespace, field_selector=f"involvedObject.name={name}", _request_timeout=self.timeout
            ).items
        except Exception as exc:  # noqa: BLE001
            return [f"(events unavailable: {exc.__class__.__name__})"]

        def when(e: Any) -> float:
            t = e.last_timestamp or e.event_time or e.first_timestamp or e.metadata.creation_timestamp
            return t.timestamp() if t else 0.0

        out = []
        for e in sorted(items, key=when):
            count = f" (x{e.count})" if e.count and e.count > 1 else ""
            out.append(f"{e.type} {e.reason}: {(e.message or '').strip()}{count}")
        return out

    def logs(self, namespace: str, pod: str, container: str, lines: int = 5, previous: bool = False) -> str:
        try:
            return str(
                self.core.read_namespaced_pod_log(
                    pod,
                    namespace,
                    container=container,
                    tail_lines=lines,
                    previous=previous,
                    _request_timeout=self.timeout,
                )
            ).strip()
        except Exception:  # noqa: BLE001
            return ""

    # ---- readiness ----------------------------------------------------------------------------
    def wait_ready(
        self,
        namespace: str,
        names: Iterable[str],
        label_selector: str,
        timeout: float,
        unschedulable: float,
        progress: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], dict[str, PodFailure]]:
        """Wait for pods to be Ready (servers listening: startup probes passed).

        Returns (ready pods by name, failures by name). A pod fails at once on an
        image or container-start error, after ``unschedulable`` seconds when the
        scheduler cannot place it, and at ``timeout`` otherwise.
        """
        waiting = set(names)
        ready: dict[str, Any] = {}
        failed: dict[str, PodFailure] = {}
        start = time.monotonic()
        unsched_since: dict[str, float] = {}
        last: dict[str, Any] = {}
        while waiting:
            now = time.monotonic()
            pods = self.pods(namespace, label_selector)
            for name in sorted(waiting):
                p = pods.get(name)
                if p is None:
                    continue
                last[name] = p
                why = pod_problem(p)
                if is_ready(p):
                    ready[name] = p
                elif why:
                    failed[name] = self._failure(namespace, p, why)
                elif unscheduled(p):
                    unsched_since.setdefault(name, now)
                    if now - unsched_since[name] >= unschedulable:
                        failed[name] = self._failure(
                            namespace, p, f"cannot be scheduled for {unschedulable:.0f}s"
                        )
            waiting -= set(ready) | set(failed)
            if not waiting:
                break
            if now - start >= timeout:
                for name in sorted(waiting):
                    p = last.get(name)
                    state = describe_pod(p) if p is not None else "not found"
                    failed[name] = self._failure(
                        namespace, p, f"not ready after {timeout:.0f}s ({state})", name=name
                    )
                break
            time.sleep(0.5)
        return ready, failed

    def _failure(self, namespace: str, pod: Any, reason: str, name: str | None = None) -> PodFailure:
        name = name or pod.metadata.name
        events = self.events(namespace, name)
        if pod is not None:
            for cs in pod.status.container_statuses or []:
                w = cs.state.waiting if cs.state else None
                if (
                    w
                    and w.reason in ("CrashLoopBackOff", "RunContainerError", "StartError")
                    or (cs.restart_count or 0) > 0
                ):
                    tail = self.logs(namespace, name, cs.name, previous=bool(cs.restart_count))
                    if tail:
                        reason += f"; container {cs.name} log: {tail[-400:]}"
        return PodFailure(pod=name, reason=reason, events=events)

    def container_ready(self, namespace: str, pod: str, container: str) -> tuple[bool, int]:
        """(ready, restart count) of one container."""
        p = self.pod(namespace, pod)
        for cs in p.status.container_statuses or []:
            if cs.name == container:
                return bool(cs.ready), int(cs.restart_count or 0)
        return False, 0

    # ---- exec ---------------------------------------------------------------------------------------
    def exec(
        self, namespace: str, pod: str, argv: list[str], timeout: float, container: str | None = None
    ) -> ExecResult:
        """Run ``argv`` (a list, no shell) in a container; wait at most ``timeout`` seconds."""
        from kubernetes.stream import stream
        from kubernetes.stream.ws_client import ERROR_CHANNEL, STDERR_CHANNEL, STDOUT_CHANNEL

        kwargs: dict[str, Any] = dict(
            command=list(argv), stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False
        )
        if container:
            kwargs["container"] = container
        try:
            # kubernetes' stream() swaps the shared client's call_api while it sets up: one at a time
            # (a latency-under-load run execs its load on a thread beside the probe's exec)
            with _STREAM_SETUP:
                ws = stream(self.core.connect_get_namespaced_pod_exec, pod, namespace, **kwargs)
        except Exception as exc:  # noqa: BLE001 - ApiException, websocket errors
            return ExecResult(
                rc=None, stdout="", stderr="", error=f"exec in {pod} failed to start: {_short(exc)}"
            )
        out: list[str] = []
        err: list[str] = []
        deadline = time.monotonic() + timeout
        try:
            while ws.is_open() and time.monotonic() < deadline:
                ws.update(timeout=min(1.0, max(deadline - time.monotonic(), 0.01)))
                out.append(ws.read_channel(STDOUT_CHANNEL))
                err.append(ws.read_channel(STDERR_CHANNEL))
            timed_out = ws.is_open()
            out.append(ws.read_channel(STDOUT_CHANNEL))
            err.append(ws.read_channel(STDERR_CHANNEL))
            status_text = ws.read_channel(ERROR_CHANNEL)
        except Exception as exc:  # noqa: BLE001 - connection dropped
            return ExecResult(
                rc=None,
                stdout="".join(out),
                stderr="".join(err),
                error=f"exec in {pod}: connection lost: {_short(exc)}",
            )
        finally:
            try:
                ws.close()
            except Exception:  # noqa: BLE001
                pass
        rc, error = (None, "") if timed_out else parse_exec_status(status_text)
        return ExecResult(rc=rc, stdout="".join(out), stderr="".join(err), timed_out=timed_out, error=error)


def parse_exec_status(text: str) -> tuple[int | None, str]:
    """The exit code from an exec's status channel, or (None, why the command did not run)."""
    if not text:
        return None, "no exit status received"
    try:
        st = yaml.safe_load(text)
    except yaml.YAMLError:
        return None, f"unreadable exit status: {text[:200]}"
    if not isinstance(st, dict):
        return None, f"unreadable exit status: {text[:200]}"
    if st.get("status") == "Success":
        return 0, ""
    for cause in (st.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message")), ""
            except (TypeError, ValueError):
                break
    return None, str(st.get("message") or text[:300])


def is_ready(pod: Any) -> bool:
    if pod.metadata.deletion_timestamp:
        return False
    conds = pod.status.conditions or []
    return pod.status.phase == "Running" and any(c.type == "Ready" and c.status == "True" for c in conds)


def unscheduled(pod: Any) -> bool:
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
        for c in (pod.status.conditions or [])
    )


def pod_problem(pod: Any) -> str:
    """A reason the pod will not become ready by waiting, or ''."""
    if pod.status.phase in ("Failed", "Succeeded"):
        return f"ended ({pod.status.phase}: {pod.status.reason or ''} {pod.status.message or ''})".strip()
    for cs in (pod.status.container_statuses or []) + (pod.status.init_container_statuses or []):
        w = cs.state.waiting if cs.state else None
        if w and w.reason in FATAL_WAITING:
            return f"container {cs.name}: {w.reason}: {(w.message or '').strip()}"
        t = cs.state.terminated if cs.state else None
        if t and (cs.restart_count or 0) >= 2:
            return f"container {cs.name} keeps exiting (exit code {t.exit_code}, {t.reason})"
    return ""


def describe_pod(pod: Any) -> str:
    parts = [f"phase {pod.status.phase}"]
    for c in pod.status.conditions or []:
        if c.status != "True":
            parts.append(f"{c.type}=False{f' ({c.reason})' if c.reason else ''}")
    for cs in pod.status.container_statuses or []:
        if not cs.ready:
            st = cs.state
            what = (
                (st.waiting and st.waiting.reason)
                or (st.terminated and f"terminated {st.terminated.reason}")
                or "running, not ready"
            )
            parts.append(f"{cs.name}: {what}")
    return ", ".join(parts)


def _body_message(exc: Any) -> str:
    try:
        return json.loads(exc.body).get("message", "")
    except Exception:  # noqa: BLE001
        return str(getattr(exc, "body", ""))[:300]


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return f"{exc.__class__.__name__}: {text[0][:300] if text else ''}"
