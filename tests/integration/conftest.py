"""Fixtures for the integration tests that run against the embedded cluster (make cluster-up).

The tests use the admin kubeconfig at .cluster/kubeconfig (CLUSTER_ID=k: the cluster beside it,
.cluster-k/kubeconfig) and the Python ``kubernetes`` client.
Without a running cluster they are skipped, unless PODNET_REQUIRE_CLUSTER=1 (CI), where a missing
cluster is an error.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnet.launch.campaign import run as campaign
from podnet.parse.raw import find_raw_files, read_sidecar

REPO = Path(__file__).resolve().parents[2]
STATE = REPO / campaign.state_dir(int(os.environ.get("CLUSTER_ID") or 0))


def example_config(example: str, experiment: str, tmp_path: Path, **launch: Any) -> dict:
    """``config/examples/<example>`` pointed at this cluster (its kubeconfig, image and cluster
    info), renamed ``experiment``, its raw files under ``tmp_path``, ``launch`` keys updated."""
    cfg = yaml.safe_load((REPO / "config" / "examples" / example).read_text())
    cfg.update(experiment=experiment, raw_dir=str(tmp_path / "raw"))
    cfg["launch"].update(
        kubeconfig=str(STATE / "kubeconfig"),
        image_file=str(STATE / "image"),
        cluster_info=str(STATE / "info.json"),
        **launch,
    )
    return cfg


def sidecars_all_ok(raw_dir: Path) -> dict[str, dict]:
    """Every raw file's sidecar under ``raw_dir`` by its relative path, asserting none failed."""
    side = {f.relative_to(raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(raw_dir)}
    bad = {k: v.get("error") for k, v in side.items() if v["status"] != "ok"}
    assert not bad, bad
    return side


def _no_cluster(reason: str):
    if os.environ.get("PODNET_REQUIRE_CLUSTER") == "1":
        pytest.fail(f"PODNET_REQUIRE_CLUSTER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cluster_info() -> dict:
    info = STATE / "info.json"
    if not (STATE / "kubeconfig").exists() or not info.exists():
        _no_cluster("no running cluster (.cluster/kubeconfig missing; run make cluster-up)")
    return json.loads(info.read_text())


@pytest.fixture(scope="session")
def image(cluster_info) -> str:
    return (STATE / "image").read_text().strip()


@pytest.fixture(scope="session")
def core(cluster_info):
    kubernetes = pytest.importorskip("kubernetes")
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(STATE / "kubeconfig"), client_configuration=cfg)
    api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg))
    try:
        api.list_node(_request_timeout=10)
    except Exception as e:  # noqa: BLE001
        _no_cluster(f"API server not reachable: {e}")
    return api


@dataclass
class ExecResult:
    rc: int
    out: str
    err: str


class Kube:
    """Small helpers around CoreV1Api for pods in one throwaway namespace."""

    def __init__(self, api, namespace: str, image: str):
        self.api = api
        self.ns = namespace
        self.image = image

    def pod(
        self,
        name: str,
        node: str,
        *,
        host_network: bool = False,
        nginx: bool = False,
        labels: dict | None = None,
    ) -> dict:
        from kubernetes import client

        cmd = None
        if nginx:
            cmd = ["/bin/sh", "-c", "nginx && exec sleep infinity"]
        body = client.V1Pod(
            metadata=client.V1ObjectMeta(name=name, labels=labels or {"app": name}),
            spec=client.V1PodSpec(
                node_selector={"kubernetes.io/hostname": node},
                host_network=host_network,
                termination_grace_period_seconds=0,
                automount_service_account_token=False,
                containers=[
                    client.V1Container(name="main", image=self.image, image_pull_policy="Never", command=cmd)
                ],
            ),
        )
        self.api.create_namespaced_pod(self.ns, body)
        return {"name": name, "node": node}

    def wait_running(self, names: list[str], timeout: float = 90) -> dict[str, object]:
        end = time.time() + timeout
        pods: dict[str, object] = {}
        while time.time() < end:
            pods = {n: self.api.read_namespaced_pod(n, self.ns) for n in names}
            if all(p.status.phase == "Running" and p.status.pod_ip for p in pods.values()):
                return pods
            failed = [n for n, p in pods.items() if p.status.phase in ("Failed", "Succeeded")]
            assert not failed, f"pods ended: {failed}"
            time.sleep(0.5)
        states = {n: (p.status.phase, p.status.container_statuses) for n, p in pods.items()}
        raise AssertionError(f"pods not Running after {timeout}s: {states}")

    def exec(self, pod: str, cmd: list[str], timeout: int = 60) -> ExecResult:
        from kubernetes.stream import stream

        ws = stream(
            self.api.connect_get_namespaced_pod_exec,
            pod,
            self.ns,
            command=cmd,
            stderr=True,
            stdin=False,
            stdout=True,
            tty=False,
            _preload_content=False,
        )
        out, err = [], []
        end = time.time() + timeout
        while ws.is_open() and time.time() < end:
            ws.update(timeout=1)
            if ws.peek_stdout():
                out.append(ws.read_stdout())
            if ws.peek_stderr():
                err.append(ws.read_stderr())
        timed_out = ws.is_open()
        ws.close()
        rc = -1
        if not timed_out:
            try:
                rc = ws.returncode
            except (ValueError, KeyError, TypeError, IndexError) as e:
                # the error channel carried a failure that is not an exit code
                err.append(f"exec failed: {e}")
        else:
            err.append(f"exec timed out after {timeout}s")
        return ExecResult(rc=rc if rc is not None else -1, out="".join(out), err="".join(err))

    def check(self, pod: str, cmd: list[str], timeout: int = 60) -> str:
        r = self.exec(pod, cmd, timeout)
        assert r.rc == 0, f"{pod}: {' '.join(cmd)} -> rc={r.rc}\nstdout: {r.out}\nstderr: {r.err}"
        return r.out


@pytest.fixture(scope="module")
def kube(core, image):
    from kubernetes import client

    ns = f"podnet-it-{uuid.uuid4().hex[:6]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    # the namespace's default ServiceAccount is created asynchronously; pods need it
    end = time.time() + 30
    while time.time() < end:
        try:
            core.read_namespaced_service_account("default", ns)
            break
        except client.ApiException:
            time.sleep(0.3)
    yield Kube(core, ns, image)
    core.delete_namespace(ns, body=client.V1DeleteOptions(grace_period_seconds=0))


@pytest.fixture(scope="session")
def node_names(cluster_info) -> list[str]:
    return [n["name"] for n in cluster_info["nodes"]]
