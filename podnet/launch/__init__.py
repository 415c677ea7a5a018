"""Launch stage: run the configured tool tests on a Kubernetes cluster -> raw/<experiment>/.

Sub-packages, bottom to top (each imports only those before it,
:data:`podnet.config.stages.LAUNCH_LAYERS`):

- :mod:`podnet.launch.spec`: the ``launch`` section as data -> cases, pods, argv.
- :mod:`podnet.launch.cluster`: the Kubernetes side (client, manifests, workload, RBAC, leftovers,
  provenance, signals).
- :mod:`podnet.launch.noise`: the machine's floor and what else ran beside each run.
- :mod:`podnet.launch.rounds`: the run loop (rounds, execution, state, warm-up, adaptive stop, results).
- :mod:`podnet.launch.campaign`: variants side by side, their clusters, publishing.
- :mod:`podnet.launch.cli`: ``podnet launch`` and ``podnet cleanup``.

``podnet/launch/policy/`` holds the least-privilege manifests (package data).
"""

from __future__ import annotations

from podnet.launch.spec.config import LaunchConfig, LaunchConfigError, load_config

__all__ = ["LaunchConfig", "LaunchConfigError", "load_config", "launch", "cleanup"]


def launch(*args, **kwargs):
    """See :func:`podnet.launch.rounds.runner.launch`."""
    from podnet.launch.rounds.runner import launch as _launch

    return _launch(*args, **kwargs)


def cleanup(*args, **kwargs):
    """See :func:`podnet.launch.cluster.leftovers.cleanup`."""
    from podnet.launch.cluster.leftovers import cleanup as _cleanup

    return _cleanup(*args, **kwargs)
