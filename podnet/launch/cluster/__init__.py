"""The Kubernetes side of a launch.

- :mod:`.k8s`: the client: namespace lifecycle, readiness, exec.
- :mod:`.manifests`: pod/Service/ConfigMap bodies (pure functions).
- :mod:`.workload`: the launch's namespace, pods, Services; node health; clean-up.
- :mod:`.target`: what a run sees of a case's pods (:class:`~.target.CaseTarget`) and of the namespace.
- :mod:`.rbac`: the least-privilege manifests (``podnet/launch/policy/``) applied.
- :mod:`.leftovers`: what earlier launches left behind (``podnet cleanup``).
- :mod:`.provenance`: cluster/node/pod facts (and the time) recorded in sidecars.
- :mod:`.signals`: SIGINT/SIGTERM during a launch; clean-up shielded from them.

Imports only :mod:`podnet.launch.spec` of the launch stage.
"""
