"""Launch stage: run the configured tool tests on a Kubernetes cluster -> raw/<experiment>/.

Modules:

- :mod:`podnet.launch.config`: the ``launch`` section of a config as data
  (endpoints, scenarios, tools/tests, repeats, timeouts), validated.
- :mod:`podnet.launch.placement`: node resolution of endpoint placements
  (node name, label selector, same/other node relative to the peer).
- :mod:`podnet.launch.plan`: cases, deduplicated pods/Services, argv of every run.
- :mod:`podnet.launch.state`: what raw/ already holds; which runs are missing.
- :mod:`podnet.launch.schedule`: interleaved (or shuffled, seeded) rounds.
- :mod:`podnet.launch.manifests`: pod/Service/ConfigMap bodies (pure functions).
- :mod:`podnet.launch.k8s`: the Kubernetes client: namespace lifecycle, readiness, exec.
- :mod:`podnet.launch.provenance`: cluster/node/pod facts recorded in sidecars.
- :mod:`podnet.launch.workload`: the launch's namespace, pods, Services; node health; clean-up.
- :mod:`podnet.launch.execute`: one run: exec, judge, raw file + sidecar.
- :mod:`podnet.launch.results`: per-case counts, the manifest and the launch log.
- :mod:`podnet.launch.signals`: SIGINT/SIGTERM during a launch and its clean-up.
- :mod:`podnet.launch.runner`: the whole launch (fixed or adaptive rounds).
"""

from __future__ import annotations

from podnet.launch.config import LaunchConfig, LaunchConfigError, load_config

__all__ = ["LaunchConfig", "LaunchConfigError", "load_config", "launch", "cleanup"]


def launch(*args, **kwargs):
    """See :func:`podnet.launch.runner.launch`."""
    from podnet.launch.runner import launch as _launch

    return _launch(*args, **kwargs)


def cleanup(*args, **kwargs):
    """See :func:`podnet.launch.leftovers.cleanup`."""
    from podnet.launch.leftovers import cleanup as _cleanup

    return _cleanup(*args, **kwargs)
