"""Least-privilege set-up: apply envs/k8s/rbac.yaml and make a kubeconfig of its ServiceAccount.

Equivalent kubectl commands are in envs/k8s/README.md; these helpers do the
same with the Python client (used by the integration tests, handy without kubectl).
The manifests are package data (``podnet/launch/policy/*.yaml``; ``envs/k8s/*.yaml`` link
to them), so an installed podnet finds them without the source tree.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


def policy_path(name: str) -> Path:
    """A least-privilege manifest shipped in the package (``rbac.yaml``, ``admission.yaml``...)."""
    return Path(str(resources.files("podnet.launch").joinpath("policy").joinpath(name)))


RBAC_PATH = policy_path("rbac.yaml")


def _documents(path: str | Path) -> Iterator[dict[str, Any]]:
    """The objects of a manifest file (empty YAML documents skipped)."""
    for doc in yaml.safe_load_all(Path(path).read_text(encoding="utf-8")):
        if doc:
            yield doc


def apply_rbac(api_client: Any, path: str | Path = RBAC_PATH) -> list[str]:
    """Create the objects of ``path`` (existing ones are left as they are); returns their kinds/names."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    rbac = client.RbacAuthorizationV1Api(api_client)
    done = []
    for doc in _documents(path):
        kind, meta = doc["kind"], doc["metadata"]
        ns = meta.get("namespace")
        create = {
            "Namespace": lambda d: core.create_namespace(d),
            "ServiceAccount": lambda d: core.create_namespaced_service_account(ns, d),
            "Role": lambda d: rbac.create_namespaced_role(ns, d),
            "RoleBinding": lambda d: rbac.create_namespaced_role_binding(ns, d),
            "ClusterRole": lambda d: rbac.create_cluster_role(d),
            "ClusterRoleBinding": lambda d: rbac.create_cluster_role_binding(d),
        }[kind]
        try:
            create(doc)
        except client.ApiException as exc:
            if exc.status != 409:  # AlreadyExists
                raise
        done.append(f"{kind}/{meta['name']}")
    return done


def service_account_kubeconfig(
    admin_kubeconfig: str | Path,
    out: str | Path,
    namespace: str = "podnet",
    service_account: str = "podnet-launcher",
    seconds: int = 3600,
) -> Path:
    """Write a kubeconfig that authenticates as the ServiceAccount with a short-lived token (TokenRequest)."""
    from kubernetes import client, config

    cfg = client.Configuration()
    config.load_kube_config(config_file=str(admin_kubeconfig), client_configuration=cfg)
    api = client.ApiClient(cfg)
    tr = client.CoreV1Api(api).create_namespaced_service_account_token(
        service_account, namespace, {"spec": {"expirationSeconds": int(seconds)}}
    )
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text(encoding="utf-8"))
    cluster = admin["clusters"][0]["cluster"]
    if "certificate-authority" in cluster and "certificate-authority-data" not in cluster:
        ca = Path(cluster["certificate-authority"])
        if not ca.is_absolute():
            ca = Path(admin_kubeconfig).parent / ca
        cluster = {
            "server": cluster["server"],
            "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
        }
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "podnet", "cluster": cluster}],
        "users": [{"name": service_account, "user": {"token": tr.status.token}}],
        "contexts": [
            {
                "name": "podnet-launcher",
                "context": {"cluster": "podnet", "user": service_account, "namespace": namespace},
            }
        ],
        "current-context": "podnet-launcher",
    }
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out.chmod(0o600)
    return out


ADMISSION_PATH = policy_path("admission.yaml")


def apply_admission(api_client: Any, images: list[str], path: str | Path = ADMISSION_PATH) -> list[str]:
    """Create (or replace) the ValidatingAdmissionPolicy of ``path``, allowing exactly ``images``."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    adm = client.AdmissionregistrationV1Api(api_client)
    done = []
    for doc in _documents(path):
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind == "ConfigMap":
            doc["data"]["images"] = ",".join(images)
        ns = doc["metadata"].get("namespace")
        create, replace = {
            "Namespace": (core.create_namespace, lambda n, d: core.replace_namespace(n, d)),
            "ConfigMap": (
                lambda d: core.create_namespaced_config_map(ns, d),
                lambda n, d: core.replace_namespaced_config_map(n, ns, d),
            ),
            "ValidatingAdmissionPolicy": (
                adm.create_validating_admission_policy,
                lambda n, d: _replace(
                    adm.read_validating_admission_policy, adm.replace_validating_admission_policy, n, d
                ),
            ),
            "ValidatingAdmissionPolicyBinding": (
                adm.create_validating_admission_policy_binding,
                lambda n, d: _replace(
                    adm.read_validating_admission_policy_binding,
                    adm.replace_validating_admission_policy_binding,
                    n,
                    d,
                ),
            ),
        }[kind]
        try:
            create(doc)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            if kind != "Namespace":
                replace(name, doc)
        done.append(f"{kind}/{name}")
    return done


def _replace(read: Any, replace: Any, name: str, doc: dict[str, Any]) -> None:
    doc = {**doc, "metadata": {**doc["metadata"], "resourceVersion": read(name).metadata.resource_version}}
    replace(name, doc)


def remove_admission(api_client: Any) -> None:
    """Delete what :func:`apply_admission` created (absent objects are fine)."""
    from kubernetes import client

    adm = client.AdmissionregistrationV1Api(api_client)
    core = client.CoreV1Api(api_client)
    for fn, name in (
        (adm.delete_validating_admission_policy_binding, "podnet-pods"),
        (adm.delete_validating_admission_policy, "podnet-pods"),
        (core.delete_namespace, "podnet-admission"),
    ):
        try:
            fn(name)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
