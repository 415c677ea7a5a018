"""Least privilege on the embedded cluster: the ValidatingAdmissionPolicy of envs/k8s/admission.yaml
refuses forbidden pods in podnet namespaces, and the launcher's own pods pass it."""

from __future__ import annotations

import copy
import time
import uuid

import pytest

from podnet.launch.cluster import manifests
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.placement import Placement
from podnet.launch.spec.plan import PodPlan, ServerProc
from tests.integration.test_launch import leftovers, small

pytestmark = pytest.mark.cluster


def _pod(name: str, image: str, **spec) -> dict:
    container = {
        "name": "main",
        "image": image,
        "imagePullPolicy": "Never",
        "command": ["sleep", "infinity"],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], **spec},
    }


@pytest.fixture
def policy(core, image):
    from podnet.launch.cluster.rbac import apply_admission, remove_admission

    apply_admission(core.api_client, [image])
    ns = f"podnet-vap-{uuid.uuid4().hex[:6]}"
    # matched by the policy (app.kubernetes.io/name=podnet); not managed-by, so leftovers() ignores it
    core.create_namespace({"metadata": {"name": ns, "labels": {"app.kubernetes.io/name": "podnet"}}})
    try:
        yield ns
    finally:
        remove_admission(core.api_client)
        core.delete_namespace(ns)


def _refusal(core, ns: str, body: dict) -> str | None:
    """The API server's refusal message for a dry-run create of ``body`` (None when admitted)."""
    from kubernetes import client

    try:
        core.create_namespaced_pod(ns, copy.deepcopy(body), dry_run="All")
    except client.ApiException as exc:
        return f"{exc.status} {exc.body}"
    return None


def test_forbidden_pods_are_refused_and_the_launchers_pass(core, image, policy, tmp_path):
    ns = policy
    forbidden = {
        "privileged": _pod(
            "p1", image, container={"securityContext": {"privileged": True, "allowPrivilegeEscalation": True}}
        ),
        "hostPath": _pod("p2", image, volumes=[{"name": "root", "hostPath": {"path": "/"}}]),
        "only the test image": _pod("p3", "docker.io/library/busybox:latest"),
        "beyond NET_RAW": _pod(
            "p4",
            image,
            container={
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"add": ["SYS_ADMIN"]}}
            },
        ),
        "hostNetwork only": _pod("p5", image, hostNetwork=True),
        "hostPID": _pod("p6", image, hostPID=True),
    }
    # the policy is compiled asynchronously: wait until it answers
    end = time.monotonic() + 30
    while _refusal(core, ns, forbidden["privileged"]) is None:
        assert time.monotonic() < end, "the admission policy never took effect"
        time.sleep(0.5)
    for what, body in forbidden.items():
        why = _refusal(core, ns, body)
        assert why is not None and ("403" in why or "422" in why), f"{what}: admitted"
        assert "podnet-pods" in why, why  # refused by the policy (the namespace has no Pod Security level)
    # the launcher's own pods are admitted: a hostNetwork client with NET_RAW and an unprivileged server
    host_client = PodPlan("client-host-n", "client", "host", Placement(node="podnet-node-1"), net_raw=True)
    server = PodPlan(
        "server-pod-n",
        "server",
        "pod",
        Placement(node="podnet-node-1"),
        servers=[ServerProc("iperf3", "iperf3-1", ["iperf3", "-s", "-p", "15201"], 15201)],
    )
    for plan in (host_client, server):
        body = manifests.pod_manifest(plan, image=image, pull_policy="Never", labels={}, lifetime=600)
        assert _refusal(core, ns, body) is None, plan.name
    # and a launch (its own namespace, labelled podnet) runs under the policy
    cfg = from_mapping(small(tmp_path, "it-vap", ["host-host", "pod-pod-cross-node"], ["iperf3", "ping"]))
    result = launch(cfg)
    assert result.error == "" and result.failed == 0 and result.ok == result.launched == 4
    assert not leftovers(core)
