"""The objects of a scale point (:mod:`podnet.launch.spec.scale`): their bodies and a client that
creates and deletes many of them at once.

Every object carries the launch's labels (``app.kubernetes.io/managed-by=podnet``, ``podnet.io/run``)
and ``podnet.io/scale`` (``filler``: counted in the point; ``probe``: the probes that show the
datapath has them; ``idle``: the idle pods and their nginx ConfigMap), so they go with the launch's
namespace, and ``podnet cleanup`` finds what an interrupted launch left. Services have no selector:
their EndpointSlices (``endpointslice.kubernetes.io/managed-by: podnet.io``) list idle pods'
addresses, the same pods for every Service. Policies select the launch's test pods (role client or
server), never the idle pods: one allows all ingress, the others carry rules from 198.18.0.0/15
(RFC 2544's benchmarking range) that no test packet matches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.cluster import manifests
from podnet.launch.spec.placement import Placement
from podnet.launch.spec.plan import PodPlan, ServerProc

#: label on every scale object: filler | probe | idle
SCALE_LABEL = "podnet.io/scale"
#: the idle pods' TCP port (nginx) and the port of every scale Service
SCALE_PORT = 15299
PREFIX = "podnet-scale"
IDLE_CONFIGMAP = f"{PREFIX}-nginx"
#: EndpointSlices podnet writes (the endpointslice controller leaves them alone)
SLICE_MANAGER = "podnet.io"
#: concurrent API calls when creating or deleting a point's objects
WORKERS = 8
#: the test pods' roles the policies select
TEST_ROLES = ("client", "server")


def _meta(name: str, labels: Mapping[str, str], role: str) -> dict[str, Any]:
    return {"name": name, "labels": {**manifests.MANAGED_BY, **labels, SCALE_LABEL: role}}


def service_name(i: int) -> str:
    return f"{PREFIX}-svc-{i:05d}"


def slice_name(service: str) -> str:
    return f"{service}-ep"


def policy_name(i: int) -> str:
    return f"{PREFIX}-np-{i:05d}"


#: the policy that lets the test traffic pass (named to sort after every filler: calico orders
#: policies of equal order by name, so a packet walks the fillers first)
ALLOW_POLICY = f"{PREFIX}-np-zz-allow"


def service(name: str, labels: Mapping[str, str], role: str = "filler") -> dict[str, Any]:
    """A ClusterIP Service without selector (its EndpointSlice is written by podnet)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, labels, role),
        "spec": {"type": "ClusterIP", "ports": [{"name": "p", "port": SCALE_PORT, "protocol": "TCP"}]},
    }


def endpoint_slice(
    svc: str, addresses: Iterable[str], labels: Mapping[str, str], role: str = "filler"
) -> dict[str, Any]:
    """The EndpointSlice of Service ``svc``: one ready endpoint per address, port ``SCALE_PORT``."""
    meta = _meta(slice_name(svc), labels, role)
    meta["labels"].update(
        {"kubernetes.io/service-name": svc, "endpointslice.kubernetes.io/managed-by": SLICE_MANAGER}
    )
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta,
        "addressType": "IPv4",
        "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addresses],
        "ports": [{"name": "p", "port": SCALE_PORT, "protocol": "TCP"}],
    }


def _test_pods(labels: Mapping[str, str]) -> dict[str, Any]:
    run = {k: v for k, v in labels.items() if k == "podnet.io/run"}
    return {
        "matchLabels": run,
        "matchExpressions": [{"key": "podnet.io/role", "operator": "In", "values": list(TEST_ROLES)}],
    }


def allow_policy(labels: Mapping[str, str]) -> dict[str, Any]:
    """The policy that allows all ingress to the test pods (so the test traffic passes)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(ALLOW_POLICY, labels, "filler"),
        "spec": {"podSelector": _test_pods(labels), "policyTypes": ["Ingress"], "ingress": [{}]},
    }


def filler_rule(n: int) -> dict[str, Any]:
    """Rule ``n``: from one 198.18.0.0/15 address to one TCP port (no test packet matches it)."""
    a = n % (1 << 17)
    return {
        "from": [{"ipBlock": {"cidr": f"198.{18 + (a >> 16)}.{(a >> 8) & 255}.{a & 255}/32"}}],
        "ports": [{"protocol": "TCP", "port": 1024 + n % 60000}],
    }


def filler_policy(i: int, rules: int, labels: Mapping[str, str]) -> dict[str, Any]:
    """Filler policy ``i`` (1-based): ``rules`` ingress rules that match no test packet."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(policy_name(i), labels, "filler"),
        "spec": {
            "podSelector": _test_pods(labels),
            "policyTypes": ["Ingress"],
            "ingress": [filler_rule((i - 1) * rules + j) for j in range(rules)],
        },
    }


def deny_policy(name: str, target: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """A policy that isolates one idle pod and allows it nothing (the policy probe)."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _meta(name, labels, "probe"),
        "spec": {
            "podSelector": {"matchLabels": {"podnet.io/endpoint": target}},
            "policyTypes": ["Ingress"],
            "ingress": [],
        },
    }


def idle_pod(
    name: str, *, image: str, pull_policy: str, labels: Mapping[str, str], lifetime: int
) -> dict[str, Any]:
    """An idle pod: nginx on ``SCALE_PORT`` (the test pods' least-privilege settings), role ``scale-idle``."""
    plan = PodPlan(
        name=name,
        role="scale-idle",
        kind="pod",
        placement=Placement(node=None),
        servers=[ServerProc(tool="nginx", container="idle", argv=[], port=SCALE_PORT, http=True)],
    )
    body = manifests.pod_manifest(
        plan, image=image, pull_policy=pull_policy, labels=labels, lifetime=lifetime, configmap=IDLE_CONFIGMAP
    )
    body["metadata"]["labels"][SCALE_LABEL] = "idle"
    return body


def idle_configmap(labels: Mapping[str, str]) -> dict[str, Any]:
    body = manifests.configmap_manifest(IDLE_CONFIGMAP, labels, [SCALE_PORT])
    body["metadata"]["labels"][SCALE_LABEL] = "idle"
    return body


@dataclass
class Batch:
    """What one batch of creates or deletes did."""

    done: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def per_s(self) -> float | None:
        return round(self.done / self.seconds, 1) if self.seconds > 0 and self.done else None


class ScaleApi:
    """Creates, deletes and counts scale objects in one namespace, on an API client of its own (an
    exec's set-up swaps the shared client's call function: :meth:`podnet.launch.cluster.k8s.Kube.exec`)."""

    def __init__(self, kube: Any, namespace: str, workers: int = WORKERS):
        from kubernetes import client

        self.ns = namespace
        self.timeout = float(getattr(kube, "timeout", 30))
        api = client.ApiClient(kube.api_client.configuration)
        self.core = client.CoreV1Api(api)
        self.disc = client.DiscoveryV1Api(api)
        self.net = client.NetworkingV1Api(api)
        self.workers = workers
        self._exc = client.ApiException

    def _fns(self, kind: str) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
        """(create, delete, list) of a kind."""
        c, d, n = self.core, self.disc, self.net
        return {
            "Service": (c.create_namespaced_service, c.delete_namespaced_service, c.list_namespaced_service),
            "EndpointSlice": (
                d.create_namespaced_endpoint_slice,
                d.delete_namespaced_endpoint_slice,
                d.list_namespaced_endpoint_slice,
            ),
            "NetworkPolicy": (
                n.create_namespaced_network_policy,
                n.delete_namespaced_network_policy,
                n.list_namespaced_network_policy,
            ),
            "Pod": (c.create_namespaced_pod, c.delete_namespaced_pod, c.list_namespaced_pod),
            "ConfigMap": (
                c.create_namespaced_config_map,
                c.delete_namespaced_config_map,
                c.list_namespaced_config_map,
            ),
        }[kind]

    def create(self, body: dict[str, Any], exist_ok: bool = False) -> Any:
        """Create one object; returns what the API server answered (e.g. a Service's cluster IP);
        ``exist_ok``: one of that name existing already is fine (None then)."""
        try:
            return self._fns(body["kind"])[0](self.ns, body, _request_timeout=self.timeout)
        except self._exc as exc:
            if exist_ok and exc.status == 409:
                return None
            raise

    def delete(self, kind: str, name: str) -> None:
        """Delete one object (gone already: fine)."""
        try:
            self._fns(kind)[1](name, self.ns, _request_timeout=self.timeout)
        except self._exc as exc:
            if exc.status != 404:
                raise

    def names(self, kind: str, selector: str) -> set[str]:
        items = self._fns(kind)[2](self.ns, label_selector=selector, _request_timeout=self.timeout).items
        return {i.metadata.name for i in items if not i.metadata.deletion_timestamp}

    def many(self, calls: list[Callable[[], Any]]) -> Batch:
        """Run API calls ``WORKERS`` at a time; the batch's count, wall time and errors."""
        out = Batch()
        if not calls:
            return out
        t0 = time.monotonic()
        pool = ThreadPoolExecutor(max_workers=self.workers)
        try:
            for f in [pool.submit(c) for c in calls]:
                try:
                    f.result()
                    out.done += 1
                except Exception as exc:  # noqa: BLE001 - collected: the point fails with them
                    out.errors.append(f"{exc.__class__.__name__}: {str(exc).strip()[:200]}")
        finally:  # interrupted (Ctrl-C, SIGTERM): the calls not yet started are dropped
            pool.shutdown(wait=True, cancel_futures=True)
        out.seconds = time.monotonic() - t0
        return out
