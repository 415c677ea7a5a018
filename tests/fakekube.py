"""An in-memory stand-in for :class:`podnet.launch.cluster.k8s.Kube` (a test double: lives in tests/, not the package).

It schedules pods by their node affinity against a fixed node list, answers
``exec`` through a ``responder`` callable (argv -> ExecResult), and records
every call, so the runner's logic (interleaving, skip-existing, failures,
clean-up) is tested without a cluster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace as NS
from typing import Any

import yaml

from podnet.launch.cluster.k8s import ExecResult, PodFailure
from podnet.launch.noise import interference

#: real /proc/uptime + /proc/stat snapshots (tests/fixtures/procstat), answered to the launcher's reads
PROCSTAT = yaml.safe_load(
    (Path(__file__).resolve().parent / "fixtures" / "procstat" / "snapshots.yaml").read_text()
)

#: the client's and the server's container per-CPU usage (ns) before and after a run, as the wrapper
#: and the server's snapshot print them (podnet.launch.noise.cpus): the client on CPU 0, the server on 1
PERCPU = ("podnet_percpu 1000000000 5000000", "podnet_percpu 3900000000 5100000")
PERCPU_SERVER = ("podnet_percpu 2000000 700000000", "podnet_percpu 2100000 3300000000")


def make_node(name: str, labels: dict[str, str] | None = None, ip: str = "10.0.0.1") -> Any:
    return NS(
        metadata=NS(name=name, labels={"kubernetes.io/hostname": name, **(labels or {})}),
        spec=NS(unschedulable=False),
        status=NS(
            conditions=[NS(type="Ready", status="True")],
            addresses=[NS(type="InternalIP", address=ip)],
            node_info=NS(
                kernel_version="6.1.0-fake",
                os_image="Debian GNU/Linux 12 (bookworm)",
                kubelet_version="v1.33.0",
                container_runtime_version="containerd://1.6.20",
                architecture="amd64",
            ),
        ),
    )


def _fits(spec: dict[str, Any], node: Any) -> bool:
    aff = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not aff:
        return True
    for term in aff["nodeSelectorTerms"]:
        ok = True
        for f in term.get("matchFields", []):
            inside = node.metadata.name in f["values"]
            ok &= inside if f["operator"] == "In" else not inside
        for e in term.get("matchExpressions", []):
            ok &= node.metadata.labels.get(e["key"]) in e["values"]
        if ok:
            return True
    return False


class FakeKube:
    """Pods, Services and exec in memory."""

    source = "fake cluster"

    def __init__(
        self,
        nodes: list[Any],
        responder: Callable[[str, list[str]], ExecResult] | None = None,
        missing_binaries: set[str] | None = None,
    ):
        self._nodes = nodes
        self.responder = responder or (lambda pod, argv: ExecResult(rc=0, stdout="", stderr=""))
        self.missing = set(missing_binaries or ())
        self.namespaces_live: dict[str, dict[str, Any]] = {}
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.execs: list[tuple[str, list[str]]] = []
        self.client_runs: list[tuple[str, list[str]]] = []
        self.deleted: list[str] = []
        self.restarts: dict[tuple[str, str], int] = {}
        self.created_log: list[tuple[tuple[str, str, str], dict[str, Any]]] = []
        self._ip = 10
        #: pods whose deletion waits for a kubelet (their node is NotReady): only a force delete removes them
        self.stuck: set[tuple[str, str]] = set()
        self.force_deleted: list[str] = []
        #: nodes whose kubelet is gone: exec into their pods fails at once
        self.kubelet_down: set[str] = set()
        self._live: dict[str, Any] = {}
        #: every API call (name, time order), to check that none happens while a client runs
        self.calls: list[str] = []
        #: client argv run inside the interference wrapper
        self.wrapped: list[list[str]] = []
        #: (pod, ``taskset -c CPU``) of each exec the launcher started on a CPU
        self.pinned: list[tuple[str, list[str]]] = []
        #: (pod, ``chrt --batch 0``) of each exec the launcher started under SCHED_BATCH
        self.batched: list[tuple[str, list[str]]] = []
        #: pods whose snapshot reads fail (an image without cat, a read-only /tmp)
        self.no_snapshots: set[str] = set()
        self._server_reads: dict[str, int] = {}

    # faults
    def set_node_ready(self, name: str, ready: bool, since: str = "2026-01-01T00:00:00+00:00") -> None:
        """Flip a node's Ready condition (as the node controller does when its kubelet stops)."""
        node = next(n for n in self._nodes if n.metadata.name == name)
        node.status.conditions = [
            NS(type="Ready", status="True" if ready else "Unknown", last_transition_time=since)
        ]
        if not ready:  # its pods can no longer be deleted gracefully
            self.stuck |= {
                (ns, n) for (ns, kind, n), o in self.objects.items() if kind == "Pod" and self._on(n, name)
            }

    def _on(self, pod: str, node: str) -> bool:
        live = self._live.get(pod)
        return live is not None and live.spec.node_name == node

    # cluster facts
    def nodes(self) -> list[Any]:
        return self._nodes

    def version(self) -> str:
        return "v1.33.0-fake"

    def daemonset_names(self, namespace: str = "kube-system") -> list[str]:
        return []

    # namespaces
    def create_namespace(self, body: dict[str, Any]) -> None:
        self.namespaces_live[body["metadata"]["name"]] = body

    def wait_service_account(self, namespace: str, timeout: float) -> None:
        return None

    def delete_namespace(self, name: str, timeout: float, wait: bool = True) -> bool:
        self.objects = {k: v for k, v in self.objects.items() if k[0] != name or (k[0], k[2]) in self.stuck}
        if not any(k[0] == name for k in self.objects):
            self.namespaces_live.pop(name, None)
        if name not in self.deleted:
            self.deleted.append(name)
        return name not in self.namespaces_live

    def delete_pod(self, namespace: str, name: str, force: bool = False) -> None:
        if (namespace, name) in self.stuck and not force:
            return
        self.stuck.discard((namespace, name))
        self.objects.pop((namespace, "Pod", name), None)
        self.force_deleted.append(f"{namespace}/{name}")
        if namespace in self.deleted:  # a terminating namespace goes once its last pod is gone
            self.delete_namespace(namespace, 0)

    def pods(self, namespace: str, label_selector: str) -> dict[str, Any]:
        want = dict(kv.split("=", 1) for kv in label_selector.split(",") if kv)
        return {
            n: self._live.get(n) or NS(spec=NS(node_name=None))
            for (ns, kind, n), o in self.objects.items()
            if ns == namespace
            and kind == "Pod"
            and all(o["metadata"]["labels"].get(k) == v for k, v in want.items())
        }

    def namespaces(self, label_selector: str) -> list[Any]:
        want = dict(kv.split("=", 1) for kv in label_selector.split(","))
        return [
            NS(metadata=NS(name=n))
            for n, b in self.namespaces_live.items()
            if all(b["metadata"]["labels"].get(k) == v for k, v in want.items())
        ]

    def delete_labelled(self, namespace: str, label_selector: str, timeout: float) -> bool:
        k, _, v = label_selector.partition("=")
        self.objects = {
            key: o
            for key, o in self.objects.items()
            if not (key[0] == namespace and o["metadata"]["labels"].get(k) == v)
        }
        self.deleted.append(f"{namespace}:{label_selector}")
        return True

    # objects
    def create(self, namespace: str, body: dict[str, Any]) -> None:
        key = (namespace, body["kind"], body["metadata"]["name"])
        self.objects[key] = body
        self.created_log.append((key, body))

    def pods_created(self) -> list[dict[str, Any]]:
        return [o for (ns, kind, _), o in self.objects.items() if kind == "Pod"]

    def _pod_obj(self, body: dict[str, Any], node: Any) -> Any:
        self._ip += 1
        host = body["spec"].get("hostNetwork")
        ip = node.status.addresses[0].address if host else f"10.244.0.{self._ip}"
        return NS(
            metadata=NS(name=body["metadata"]["name"], deletion_timestamp=None),
            spec=NS(node_name=node.metadata.name),
            status=NS(
                phase="Running",
                pod_ip=ip,
                conditions=[NS(type="Ready", status="True")],
                container_statuses=[
                    NS(name=c["name"], image_id="sha256:fake", ready=True, restart_count=0)
                    for c in body["spec"]["containers"]
                ],
            ),
        )

    def wait_ready(
        self,
        namespace: str,
        names: Any,
        label_selector: str,
        timeout: float,
        unschedulable: float,
        progress: Any = None,
    ):
        ready: dict[str, Any] = {}
        failed: dict[str, PodFailure] = {}
        for name in names:
            body = self.objects[(namespace, "Pod", name)]
            fits = [n for n in self._nodes if _fits(body["spec"], n)]
            if not fits:
                failed[name] = PodFailure(
                    pod=name,
                    reason=f"cannot be scheduled for {unschedulable:.0f}s",
                    events=[
                        f"Warning FailedScheduling: 0/{len(self._nodes)} nodes are available: "
                        f"{len(self._nodes)} node(s) didn't match Pod's node affinity/selector."
                    ],
                )
                continue
            pod = self._pod_obj(body, fits[0])
            self._live[name] = pod
            ready[name] = pod
        return ready, failed

    def pod(self, namespace: str, name: str) -> Any:
        return self._live[name]

    def service(self, namespace: str, name: str) -> Any:
        return NS(spec=NS(cluster_ip="10.96.0.42"))

    def events(self, namespace: str, name: str) -> list[str]:
        return []

    def logs(self, *a: Any, **k: Any) -> str:
        return ""

    def container_ready(self, namespace: str, pod: str, container: str) -> tuple[bool, int]:
        node = self._live[pod].spec.node_name if pod in self._live else None
        down = any(n.metadata.name == node and n.status.conditions[0].status != "True" for n in self._nodes)
        return not down, self.restarts.get((pod, container or ""), 0)

    def __getattribute__(self, name: str) -> Any:
        """Records each API method used (in order) in ``calls``."""
        attr = object.__getattribute__(self, name)
        if name in _API:
            object.__getattribute__(self, "calls").append(name)
        return attr

    def exec(
        self, namespace: str, pod: str, argv: list[str], timeout: float, container: str | None = None
    ) -> ExecResult:
        self.execs.append((pod, list(argv)))
        if argv[:3] == ["chrt", "--batch", "0"]:  # affinity.policy batch: chrt before taskset
            self.batched.append((pod, list(argv[:3])))
            argv = list(argv[3:])
        if argv[:2] == ["taskset", "-c"]:  # launch.affinity: the exec started on a CPU
            self.pinned.append((pod, list(argv[:3])))
            argv = list(argv[3:])
        if argv[:2] == ["sh", "-c"] and argv[3:4] == [interference.WRAPPER_NAME]:
            self.wrapped.append(list(argv))
            argv = list(argv[4:])
        if argv == ["sh", "-c", interference.READ_SCRIPT]:
            if pod in self.no_snapshots:
                return ExecResult(rc=0, stdout="== before\n== after\n== boot_id\n", stderr="")
            text = "== before\n{}{}\n== after\n{}{}\n== boot_id\n{}\n".format(
                PROCSTAT["before"], PERCPU[0], PROCSTAT["after"], PERCPU[1], PROCSTAT["boot_id"]
            )
            return ExecResult(rc=0, stdout=text, stderr="")
        if argv == interference.SNAPSHOT:
            if pod in self.no_snapshots:
                return ExecResult(rc=1, stdout="", stderr="cat: not found")
            k = self._server_reads[pod] = self._server_reads.get(pod, 0) + 1
            text = PROCSTAT["before" if k % 2 else "after"] + PROCSTAT["boot_id"] + "\n"
            return ExecResult(rc=0, stdout=text + PERCPU_SERVER[0 if k % 2 else 1] + "\n", stderr="")
        node = self._live[pod].spec.node_name if pod in self._live else None
        if node in self.kubelet_down:
            return ExecResult(
                rc=None,
                stdout="",
                stderr="",
                error=f"exec in {pod} failed to start: dial tcp {node}:10250: connect: connection refused",
            )
        if argv[:2] == ["sh", "-c"] and argv[3:4] == ["podnet-probe"]:
            return ExecResult(
                rc=0, stdout="".join(f"{b}\n" for b in argv[4:] if b in self.missing), stderr=""
            )
        if argv[:3] == ["ip", "-j", "addr"]:
            ip = self._live[pod].status.pod_ip
            return ExecResult(
                rc=0,
                stdout=json.dumps([{"ifname": "eth0", "mtu": 1500, "addr_info": [{"local": ip}]}]),
                stderr="",
            )
        if argv[:1] == ["kill"]:
            key = (pod, container or "")
            self.restarts[key] = self.restarts.get(key, 0) + 1
            return ExecResult(rc=0, stdout="", stderr="")
        if argv[:1] == ["timeout"]:
            self.calls.append("client-run")
            self.client_runs.append((pod, list(argv)))
            return self.responder(pod, list(argv[4:]))
        # version commands
        return ExecResult(rc=0, stdout=f"{argv[0]} 1.0 (fake)\n", stderr="")


#: the methods of FakeKube that stand for API calls
_API = {n for n, v in vars(FakeKube).items() if callable(v) and not n.startswith("_")} - {
    "set_node_ready",
    "pods_created",
}
