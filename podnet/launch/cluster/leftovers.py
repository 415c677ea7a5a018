"""``podnet cleanup``: delete what earlier launches left behind (their namespaces, or their objects in
a shared namespace), found by podnet's labels. A launch's own clean-up is :meth:`Workload.teardown`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from podnet.launch.cluster.workload import MANAGED_SELECTOR, delete_labelled, delete_namespaces
from podnet.launch.spec.plan import slug

log = logging.getLogger("podnet.launch")


def cleanup(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    experiment: str | None = None,
    namespace: str | None = None,
    timeout: float = 180,
    kube: Any = None,
) -> list[str]:
    """Delete leftovers of launches; returns what was deleted.

    Without ``namespace``: every namespace labelled with :data:`MANAGED_SELECTOR` (of one
    experiment if given). With ``namespace`` (shared-namespace mode): the podnet objects in it.
    """
    from podnet.launch.cluster.k8s import Kube

    if kubeconfig is None and Path(".cluster/kubeconfig").exists() and not os.environ.get("KUBECONFIG"):
        kubeconfig = ".cluster/kubeconfig"
    kube = kube or Kube(kubeconfig, context)
    selector = MANAGED_SELECTOR
    if experiment:
        selector += f",podnet.io/experiment={slug(experiment, 63)}"
    if namespace:
        pods = sorted(kube.pods(namespace, selector))
        delete_labelled(kube, namespace, selector, timeout)
        return [f"{namespace}/{p}" for p in pods]
    names = [ns.metadata.name for ns in kube.namespaces(selector)]
    for name in names:
        log.info("deleting namespace %s", name)
    if names:
        delete_namespaces(kube, names, timeout)
    return names
