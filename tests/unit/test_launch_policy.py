"""The least-privilege manifests podnet.launch.cluster.rbac applies are package data, read through
importlib.resources (a non-editable install has no envs/k8s/); envs/k8s/*.yaml are links to them."""

from __future__ import annotations

import fnmatch
import tomllib
from importlib import resources
from pathlib import Path

import yaml

import podnet.launch
from podnet.launch.cluster import rbac
from tests.conftest import REPO

PACKAGE = Path(podnet.launch.__file__).resolve().parent


def test_the_manifests_are_read_from_the_package():
    for path, kinds in (
        (rbac.RBAC_PATH, {"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}),
        (rbac.ADMISSION_PATH, {"ValidatingAdmissionPolicy", "ConfigMap"}),
    ):
        assert path.resolve().parent == PACKAGE / "policy", path
        assert path == Path(str(resources.files("podnet.launch") / "policy" / path.name))
        docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
        assert kinds <= {d["kind"] for d in docs}, path.name
    sa = [d for d in yaml.safe_load_all(rbac.RBAC_PATH.read_text()) if d and d["kind"] == "ServiceAccount"]
    assert [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in sa] == [
        ("podnet", "podnet-launcher")
    ]


def test_envs_k8s_is_the_same_files_not_copies():
    for f in sorted((PACKAGE / "policy").glob("*.yaml")):
        link = REPO / "envs" / "k8s" / f.name
        assert link.is_symlink() and link.resolve() == f.resolve(), f.name


def test_pyproject_ships_every_policy_manifest():
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = data["podnet.launch"]
    for f in sorted((PACKAGE / "policy").iterdir()):
        rel = f.relative_to(PACKAGE).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), f"{rel} is not package data"


def test_apply_rbac_creates_each_object_of_the_packaged_manifest(monkeypatch):
    from kubernetes import client

    created = []

    class Api:
        def __init__(self, api_client):
            pass

        def __getattr__(self, name):
            def create(*args):
                body = args[-1]
                created.append((name, body["metadata"]["name"]))
                if body["kind"] == "Namespace":  # already there: left as it is
                    raise client.ApiException(status=409)

            return create

    monkeypatch.setattr(client, "CoreV1Api", Api)
    monkeypatch.setattr(client, "RbacAuthorizationV1Api", Api)
    done = rbac.apply_rbac(object())
    docs = [d for d in yaml.safe_load_all(rbac.RBAC_PATH.read_text()) if d]
    assert done == [f"{d['kind']}/{d['metadata']['name']}" for d in docs]
    assert [n for _, n in created] == [d["metadata"]["name"] for d in docs]
    assert ("create_namespaced_service_account", "podnet-launcher") in created
