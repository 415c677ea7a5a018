"""`podnet cleanup` (podnet.launch.cluster.leftovers) on the fake cluster: podnet's namespaces go, of one
experiment when asked, and nothing else is touched."""

from __future__ import annotations

from podnet.launch import cleanup as package_cleanup
from podnet.launch.cluster.leftovers import cleanup
from podnet.launch.cluster.manifests import MANAGED_BY
from tests.fakekube import FakeKube, make_node


def _ns(kube: FakeKube, name: str, **labels: str) -> None:
    kube.create_namespace({"metadata": {"name": name, "labels": {**labels}}})


def test_cleanup_deletes_podnet_namespaces_of_one_experiment_or_all():
    k = FakeKube([make_node("n1")])
    _ns(k, "podnet-a-1", **MANAGED_BY, **{"podnet.io/experiment": "a"})
    _ns(k, "podnet-b-1", **MANAGED_BY, **{"podnet.io/experiment": "b"})
    _ns(k, "someone-else", team="x")
    assert cleanup(kube=k, experiment="a", timeout=1) == ["podnet-a-1"]
    assert sorted(k.namespaces_live) == ["podnet-b-1", "someone-else"]
    assert package_cleanup(kube=k, timeout=1) == ["podnet-b-1"]  # podnet.launch.cleanup is the same
    assert sorted(k.namespaces_live) == ["someone-else"]
    assert cleanup(kube=k, timeout=1) == []
