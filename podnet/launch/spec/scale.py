"""The cost of scale in the config language: a test's ``scale`` (objects the cluster holds while it runs).

``launch.tools.<tool>.tests[]`` may carry ``scale: {services: N, endpoints_per_service: E}`` or
``scale: {network_policies: N, rules_per_policy: R}`` (or both). Before a run of such a test the
launcher makes the launch's namespace hold exactly these objects (:mod:`podnet.launch.rounds.scale`):
N ClusterIP Services, each with one EndpointSlice of E addresses of idle pods, and N NetworkPolicies
selecting the test pods, one of which allows all ingress (so the test traffic passes) while the other
N - 1 carry R rules each that no test packet matches (so each packet walks them). It then waits until
the datapath has them (a probe created last takes effect), times ``changes`` probe changes of each
kind the point concerns (each a fresh object created and removed:
:mod:`podnet.launch.rounds.scalechanges`) and records what is present and what the nodes' datapath
holds in the run's sidecar (``scale``). A list of counts is a sweep: one test per value, named ``<name>-services-<N>`` (or ``-network_policies-<N>``), recorded as a sweep point over
``services`` (``network_policies``), 0 being the point without objects. A test without ``scale``
runs with no such object in the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podnet.launch.spec.sweep import SweepPoint

#: the scale keys that may be swept (each the tidy ``sweep_param`` of its points)
SWEPT = ("services", "network_policies")
#: seconds a scale point may take to be in the datapath (``scale.timeout`` overrides it)
DEFAULT_TIMEOUT = 300.0
#: probe changes timed per set-up and kind (``scale.changes``): each costs two probes, each its
#: effect time (0.1-2.5 s measured) plus a 1 s gap (kube-proxy's minSyncPeriod) in a probe session,
#: so about 2.5 s at <= 200 objects (about 5 s where each probe needs its own exec, 2 s lead each);
#: 3 changes triple a point's time-to-effect values for about 8 s per set-up (podnet/launch/README.md)
DEFAULT_CHANGES = 3


@dataclass(frozen=True)
class ScaleSpec:
    """The objects a test's runs see (config ``scale``; one value of each count)."""

    services: int = 0
    endpoints_per_service: int = 2
    network_policies: int = 0
    rules_per_policy: int = 4
    #: seconds the objects may take to be created and programmed before the point fails
    timeout: float = DEFAULT_TIMEOUT
    #: probe changes timed per set-up and kind (not part of what the objects depend on, as ``timeout``)
    changes: int = DEFAULT_CHANGES
    #: the count this point is a value of (``services`` / ``network_policies``; "" unswept): its
    #: kind is probed at 0 too, so the time to effect has its point without objects
    swept: str = ""

    @property
    def empty(self) -> bool:
        """No object: the zero point of a sweep (and the state of a test without ``scale``)."""
        return self.services == 0 and self.network_policies == 0

    @property
    def objects(self) -> int:
        """API objects this point holds (each Service with its EndpointSlice, each policy)."""
        return 2 * self.services + self.network_policies

    @property
    def idle_pods(self) -> int:
        """Idle pods the points' EndpointSlices address (reused by every Service)."""
        return max(1, self.endpoints_per_service)

    @property
    def probes_services(self) -> bool:
        """Service changes are timed at this point (it holds Services, or is a point of their sweep)."""
        return self.services > 0 or self.swept == "services"

    @property
    def probes_policies(self) -> bool:
        """Deny-policy changes are timed at this point (it holds policies, or is a point of their sweep)."""
        return self.network_policies > 0 or self.swept == "network_policies"

    def as_meta(self) -> dict[str, Any]:
        return {
            "services": self.services,
            "endpoints_per_service": self.endpoints_per_service,
            "network_policies": self.network_policies,
            "rules_per_policy": self.rules_per_policy,
            "changes": self.changes,
        }


#: the state of a test without ``scale``: none of these objects
NONE = ScaleSpec()


def scale_points(
    t: Mapping[str, Any],
) -> list[tuple[str, dict[str, Any], str, SweepPoint | None, ScaleSpec]] | None:
    """(name, params, description, point, scale) of each test a configured test with ``scale``
    stands for; None without ``scale``. ValueError with a ``sweep`` or ``load`` as well (one sweep
    per test), or with more than one swept count."""
    raw = t.get("scale")
    if not raw:
        return None
    if t.get("sweep") or t.get("load"):
        raise ValueError("a test with `scale` sweeps the object counts; it cannot have `sweep` or `load` too")
    swept = [k for k in SWEPT if isinstance(raw.get(k), list)]
    if len(swept) > 1:
        raise ValueError(f"scale: sweep one count at a time ({' and '.join(swept)} are both lists)")
    params = dict(t.get("params") or {})
    description = t.get("description", "")
    keys = ("endpoints_per_service", "rules_per_policy", "timeout", "changes")
    fixed = {k: raw[k] for k in keys if k in raw}
    counts = {k: raw.get(k, 0) for k in SWEPT}
    if not swept:
        spec = ScaleSpec(**{k: int(v) for k, v in counts.items()}, **fixed)
        return [(t["name"], params, _describe(description, spec), None, spec)]
    param = swept[0]
    out = []
    for v in counts[param]:
        counts_v = {**{k: int(c) for k, c in counts.items() if k != param}, param: int(v)}
        spec = ScaleSpec(**counts_v, **fixed, swept=param)
        name = f"{t['name']}-{param}-{v}"
        out.append((name, params, _describe(description, spec), SweepPoint(t["name"], param, int(v)), spec))
    return out


def _describe(description: str, spec: ScaleSpec) -> str:
    words = []
    if spec.services:
        words.append(f"{spec.services} Services x {spec.endpoints_per_service} endpoints")
    if spec.network_policies:
        words.append(f"{spec.network_policies} NetworkPolicies x {spec.rules_per_policy} rules")
    text = "(at scale: " + ", ".join(words) + ")" if words else "(at scale: no objects)"
    return (description + " " if description else "") + text
