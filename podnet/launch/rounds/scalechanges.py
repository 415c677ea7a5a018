"""The probe changes of a scale point's set-up (:mod:`podnet.launch.rounds.scale`): each a fresh object
created and timed until the datapath obeys it, then removed and timed until it no longer does.

``changes`` (config ``scale.changes``) changes of each kind the point concerns
(:attr:`~podnet.launch.spec.scale.ScaleSpec.probes_services`, ``probes_policies``), in sequence:

- a Service change: a probe Service (no endpoints yet; all of the set-up's are created first) gets
  its EndpointSlice (one idle pod), timed until a client connects through the Service
  (``service_effect_s``); then the Service is deleted and timed until a connect fails
  (``service_removed_s``); the slices are deleted after the last change (each timed change is one
  event for kube-proxy, whose syncs are at least ``minSyncPeriod``, 1 s, apart);
- a policy change: the idle target answers (checked once before the first), a new deny policy on it
  is created and timed until a connect fails (``policy_effect_s``), then deleted and timed until it
  answers again (``policy_removed_s``).

Each time is one probe of a :class:`~podnet.launch.rounds.scaleprobe.ProbeSession` (one exec for
the set-up, each change ``GAP`` s, 1 s, after the previous probe ended) or, where no session opens,
of :meth:`~podnet.launch.rounds.scaleprobe.Prober.timed` (its own exec, started ``LEAD`` s, 2 s,
before the change): a change costs two probes, about 2 x (1 s + its effect time), or 2 x (2 s +
its effect time + the exec's return) without a session. The
first Service or policy change of a set-up comes right after the point's fillers were created, so
its effect time includes whatever of their programming is still under way (kube-proxy and felix
work in order): it shows the point is programmed, and stats treats it apart. No probe object is left
when the set-up ends; probe objects left by an interrupted set-up are deleted (untimed) first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podnet.launch.cluster import objects as obj
from podnet.launch.rounds.scaleprobe import ProbeFailed

#: the sidecar's ``scale.probe`` lists, one value per change in order (seconds)
TIMES = ("service_effect_s", "service_removed_s", "policy_effect_s", "policy_removed_s")


class Changes:
    """Times a set-up's probe changes (``api``: a :class:`~podnet.launch.cluster.objects.ScaleApi` or
    a double; ``prober``: a :class:`~podnet.launch.rounds.scaleprobe.Prober` or a double;
    ``left()``: seconds left before the point's time-out, raising when none)."""

    def __init__(
        self,
        api: Any,
        prober: Any,
        labels: dict[str, str],
        idle: dict[str, str],
        target: str,
        left: Callable[[], float],
        serial: int = 0,
    ):
        self.api, self.prober, self.labels, self.idle = api, prober, labels, idle
        self.target, self.left = target, left
        #: the probe objects' running number (names never reused within a launch)
        self.serial = serial

    def _name(self, what: str) -> str:
        self.serial += 1
        return f"{obj.PREFIX}-{what}-{self.serial}"

    def drop_services(self, names: set[str]) -> None:
        """Delete probe Services and their EndpointSlices (left by an interrupted set-up; untimed)."""
        for s in sorted(names):
            self.api.delete("EndpointSlice", obj.slice_name(s))
            self.api.delete("Service", s)

    def drop_policies(self, names: set[str]) -> None:
        for p in sorted(names):
            self.api.delete("NetworkPolicy", p)

    def services(self, n: int) -> dict[str, Any]:
        """``n`` Service changes: their effect and removal times and the probe Services' IPs. Each
        timed change is one API call, so that kube-proxy sees one event per change: the ``n`` probe
        Services (no endpoints yet) are created first, a change creates one's EndpointSlice (timed
        until reached) and deletes the Service (timed until gone), and the slices go after the
        last change. A second event within kube-proxy's ``minSyncPeriod`` (1 s) would make the
        next change wait for its sync (measured: 1.05 s instead of 0.12 s)."""
        effect: list[float] = []
        removed: list[float] = []
        first = self.idle[f"{obj.PREFIX}-idle-0"]
        names = [self._name("probe") for _ in range(n)]
        try:
            ips = [
                str(self.api.create(obj.service(s, self.labels, role="probe")).spec.cluster_ip) for s in names
            ]
            getattr(self.prober, "touch", lambda: None)()  # the first endpoints come after their sync
            for name, ip in zip(names, ips):
                body = obj.endpoint_slice(name, [first], self.labels, role="probe")
                effect.append(self.prober.timed("reach", ip, lambda b=body: self.api.create(b), self.left()))
                drop = lambda s=name: self.api.delete("Service", s)  # noqa: E731
                removed.append(self.prober.timed("fail", ip, drop, self.left()))
        finally:  # their slices (and, after a failure, the Services left)
            self.drop_services(set(names))
        return {"service_effect_s": effect, "service_removed_s": removed, "service_ips": ips}

    def policies(self, n: int) -> dict[str, Any]:
        """``n`` deny-policy changes on the idle target: their effect and removal times."""
        effect: list[float] = []
        removed: list[float] = []
        target = self.idle[self.target]
        # the target answers before the first deny, so its refusal is the deny's doing
        self.prober.timed("reach", target, None, self.left())
        for _ in range(n):
            body = obj.deny_policy(self._name("deny"), self.target, self.labels)
            try:
                effect.append(
                    self.prober.timed("fail", target, lambda b=body: self.api.create(b), self.left())
                )
            except ProbeFailed as exc:
                raise ProbeFailed(f"{exc} (does the CNI enforce NetworkPolicy?)") from None
            name = body["metadata"]["name"]
            removed.append(
                self.prober.timed("reach", target, lambda p=name: self.drop_policies({p}), self.left())
            )
        return {"policy_effect_s": effect, "policy_removed_s": removed}
