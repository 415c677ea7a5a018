"""Kubernetes object bodies (plain dicts) for a launch: namespace, pods, Services, nginx ConfigMap.

Pure functions, unit-tested without a cluster. Least privilege by construction:
no privileged container, no privilege escalation, every capability dropped
(clients keep NET_RAW for ping), servers run as nobody (65534), a read-only
root filesystem with an emptyDir on /tmp, no service-account token, hostNetwork
only for endpoints of kind ``host``. Commands are argv lists; nothing is passed
through a shell.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from podnet.launch.spec.plan import PodPlan

MANAGED_BY = {"app.kubernetes.io/managed-by": "podnet"}
NOBODY = 65534
#: body served by nginx for the HTTP tools (ab, wrk): 1 KiB
HTTP_BODY = ("podnet http test body\n" * 47)[:1023] + "\n"
NGINX_CONFIG_MOUNT = "/etc/podnet"


def namespace_manifest(
    name: str, labels: Mapping[str, str], annotations: Mapping[str, str], pod_security: str = "baseline"
) -> dict[str, Any]:
    """A launch's namespace; ``pod_security``: the Pod Security level enforced (``privileged`` only when
    a pod needs hostNetwork or NET_RAW; envs/k8s/admission.yaml then still forbids the rest)."""
    psa = {"pod-security.kubernetes.io/enforce": pod_security, "pod-security.kubernetes.io/warn": "baseline"}
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": {**MANAGED_BY, **labels, **psa},
            "annotations": dict(annotations),
        },
    }


def nginx_conf(ports: list[int]) -> str:
    """nginx.conf for the HTTP servers: foreground, non-root, everything writable under /tmp."""
    listens = "\n".join(f"    listen {int(p)} reuseport;" for p in sorted(set(ports)))
    return f"""# written by podnet.launch.cluster.manifests (fixed text; only integer ports are filled in)
daemon off;
worker_processes auto;
pid /tmp/nginx.pid;
error_log stderr warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path /tmp/nginx-body;
  proxy_temp_path /tmp/nginx-proxy;
  fastcgi_temp_path /tmp/nginx-fastcgi;
  uwsgi_temp_path /tmp/nginx-uwsgi;
  scgi_temp_path /tmp/nginx-scgi;
  keepalive_requests 1000000;
  default_type text/plain;
  server {{
{listens}
    root {NGINX_CONFIG_MOUNT};
    location / {{ try_files /index.html =404; }}
  }}
}}
"""


def configmap_manifest(name: str, labels: Mapping[str, str], ports: list[int]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {**MANAGED_BY, **labels}},
        "data": {"nginx.conf": nginx_conf(ports), "index.html": HTTP_BODY},
    }


#: what a test container asks for without ``launch.resources`` (Burstable QoS: no limits)
DEFAULT_REQUESTS = {"cpu": "10m", "memory": "16Mi"}


def container_resources(guaranteed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A test container's resources: small requests and no limits, or with ``guaranteed``
    (``{"cpu": whole CPUs, "memory": "256Mi"}``) requests = limits, so the pod's QoS class is
    Guaranteed (every container of the pod gets the same)."""
    if not guaranteed:
        return {"requests": dict(DEFAULT_REQUESTS)}
    cpu = guaranteed["cpu"]
    if isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 1:
        raise ValueError(f"launch.resources.cpu must be a whole number of CPUs >= 1 (got {cpu!r})")
    r = {"cpu": str(cpu), "memory": str(guaranteed["memory"])}
    return {"requests": dict(r), "limits": dict(r)}


def _security(server: bool, net_raw: bool = False) -> dict[str, Any]:
    sc: dict[str, Any] = {
        "privileged": False,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    if server:
        sc.update(runAsUser=NOBODY, runAsGroup=NOBODY, runAsNonRoot=True)
    elif net_raw:
        # ping needs a raw ICMP socket; nothing else is kept
        sc["capabilities"]["add"] = ["NET_RAW"]
    return sc


def pod_manifest(
    pod: PodPlan,
    *,
    image: str,
    pull_policy: str,
    labels: Mapping[str, str],
    lifetime: int,
    startup_seconds: float = 180,
    configmap: str | None = None,
    name: str | None = None,
    guaranteed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The pod of one (deduplicated) endpoint; ``name`` is its object name (default the planned one);
    ``guaranteed``: ``launch.resources`` (Guaranteed QoS), see :func:`container_resources`."""
    name = name or pod.name
    tmp = {"name": "tmp", "mountPath": "/tmp"}
    resources = container_resources(guaranteed)
    containers: list[dict[str, Any]] = []
    # a server pod the launcher pings from (net_raw: netready) has a main container with NET_RAW, as a client
    if pod.role == "client" or not pod.servers or pod.net_raw:
        containers.append(
            {
                "name": "main",
                "image": image,
                "imagePullPolicy": pull_policy,
                "command": ["sleep", "infinity"],
                "securityContext": _security(
                    server=pod.role == "server" and not pod.net_raw, net_raw=pod.net_raw
                ),
                "volumeMounts": [tmp],
                "resources": copy.deepcopy(resources),
            }
        )
    for s in pod.servers:
        if s.http:
            argv = ["nginx", "-c", f"{NGINX_CONFIG_MOUNT}/nginx.conf", "-e", "stderr"]
            mounts = [tmp, {"name": "podnet-config", "mountPath": NGINX_CONFIG_MOUNT, "readOnly": True}]
        else:
            argv, mounts = list(s.argv), [tmp]
        argv = [*s.pin, *argv]  # its test's placement: the server started on its CPU (taskset)
        c: dict[str, Any] = {
            "name": s.container,
            "image": image,
            "imagePullPolicy": pull_policy,
            "command": argv,
            "securityContext": _security(server=True),
            "volumeMounts": mounts,
            "resources": copy.deepcopy(resources),
        }
        if s.tcp and s.port:
            c["ports"] = [
                {"containerPort": int(s.port), "protocol": "TCP", "name": f"p{len(containers) + 1}-tcp"}
            ]
            c["startupProbe"] = {
                "tcpSocket": {"port": int(s.port)},
                "periodSeconds": 1,
                "timeoutSeconds": 1,
                "failureThreshold": max(int(startup_seconds), 1),
            }
        containers.append(c)
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}]
    if configmap and any(s.http for s in pod.servers):
        volumes.append({"name": "podnet-config", "configMap": {"name": configmap}})
    spec: dict[str, Any] = {
        "hostNetwork": pod.host_network,
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 1,
        "activeDeadlineSeconds": int(lifetime),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": containers,
        "volumes": volumes,
    }
    if pod.host_network:
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    affinity = pod.placement.node_affinity()
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                **MANAGED_BY,
                **labels,
                "podnet.io/role": pod.role,
                "podnet.io/kind": pod.kind,
                "podnet.io/endpoint": name,
            },
        },
        "spec": spec,
    }


def service_manifest(
    pod: PodPlan, labels: Mapping[str, str], rename: Callable[[str], str] | None = None
) -> dict[str, Any]:
    """ClusterIP Service in front of a server pod: TCP (and UDP where a test uses it) per server port.

    ``rename`` maps planned names to object names (the pod's and the Service's), as the pods were created.
    """
    rename = rename or (lambda n: n)
    ports: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()
    wanted: list[tuple[int, str]] = []
    for s in pod.servers:
        if s.port:
            wanted += [
                (int(s.port), proto)
                for proto, on in (("TCP", s.tcp or "tcp" in s.protocols or s.http), ("UDP", s.udp))
                if on
            ]
        wanted += [(int(p), proto) for p in sorted(s.extra_ports) for proto in ("TCP", "UDP")]
    for port, proto in wanted:
        if (port, proto) not in seen:
            seen.add((port, proto))
            ports.append(
                {
                    "name": f"p{len(ports) + 1}-{proto.lower()}",
                    "port": port,
                    "targetPort": port,
                    "protocol": proto,
                }
            )
    if not ports:
        raise ValueError(f"server pod {pod.name} has no port for its Service {pod.service}")
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": rename(pod.service or ""), "labels": {**MANAGED_BY, **labels}},
        "spec": {
            "type": "ClusterIP",
            "selector": {
                "podnet.io/endpoint": rename(pod.name),
                **{k: v for k, v in labels.items() if k == "podnet.io/run"},
            },
            "ports": ports,
        },
    }
