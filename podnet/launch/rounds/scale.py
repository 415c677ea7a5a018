"""A launch's scale points (:mod:`podnet.launch.spec.scale`): objects made present and programmed
before a run, recorded in its sidecar; rounds grouped so that each point is set up once per round.

Before each counted run, :meth:`ScaleState.ensure` makes the namespace hold the run's point (a test
without ``scale``: no object). Going from one point to another:

1. the filler objects are created or deleted, :data:`~podnet.launch.cluster.objects.WORKERS` API
   calls at a time (Services with their EndpointSlices; the allowing policy first and last);
2. the API is asked what is present: the counts must be the point's;
3. the probe changes (:mod:`podnet.launch.rounds.scalechanges`): probe objects an interrupted set-up
   left are deleted, then ``scale.changes`` changes of each kind the point concerns are timed, each
   a fresh object: a Service whose EndpointSlice (one idle pod) is created and timed until a loop in
   a client pod first connects (``service_effect_s``: kube-proxy handles changes in order, so once
   the first probe answers, the fillers before it are in the datapath), then deleted and timed until
   its connects fail (``service_removed_s``); a deny policy on an idle target timed until its
   connects fail (``policy_effect_s``; a CNI that enforces no NetworkPolicy fails here), then
   deleted and timed until the target answers again (``policy_removed_s``). A point holding
   Services, or a point of a Services sweep (0 too), times Service changes; policies likewise;
4. no probe object is left for the point's runs;
5. the nodes' rule counts are read (:mod:`podnet.launch.cluster.datapath`).

The record (``scale`` in every sidecar of the point's runs) holds the point, what was created and
deleted and how fast (``objects_per_s``), the counts present, the probes' times (a list per probe,
one value per change in order), the rule counts and ``ready_s``. Anything short of that is a failed
run with the reason; the next run of a point sets it up again. The objects go with the launch's
namespace (so a shared namespace is refused).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from podnet.launch.cluster import datapath
from podnet.launch.cluster import objects as obj
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.rounds.scalechanges import Changes
from podnet.launch.rounds.scaleprobe import CONNECT_TIMEOUT, INTERVAL, ProbeFailed, Prober
from podnet.launch.rounds.schedule import Slot, schedule
from podnet.launch.spec.config import CaseKey, LaunchConfig
from podnet.launch.spec.scale import NONE, ScaleSpec

log = logging.getLogger("podnet.launch")

FILLER = f"{obj.SCALE_LABEL}=filler"
PROBE = f"{obj.SCALE_LABEL}=probe"
TARGET = f"{obj.PREFIX}-idle-target"
#: the probe record's settings (not times) among its ``*_s`` keys
SETTINGS = ("connect_timeout_s", "reach_attempt_every_s")


class ScaleFailure(RuntimeError):
    """A point's objects are not all present or programmed; the message says which and why."""


def key(spec: ScaleSpec) -> tuple[int, int, int, int, bool, bool]:
    """What of a point the objects and probes depend on (not its time limit nor its number of
    changes; no object: no endpoints or rules; the kinds whose changes it times)."""
    eps = spec.endpoints_per_service if spec.services else 0
    rules = spec.rules_per_policy if spec.network_policies else 0
    return (spec.services, eps, spec.network_policies, rules, spec.probes_services, spec.probes_policies)


def uses_scale(cfg: LaunchConfig) -> bool:
    return any(c.test.scale is not None for c in cfg.cases)


def by_scale(rounds: list[list[Slot]], cfg: LaunchConfig) -> list[list[Slot]]:
    """Each round's slots grouped by their point's object count, ascending in odd rounds and
    descending in even ones (each point set up once per round, each change small); order within a
    point kept. Unchanged when no test has ``scale``."""
    if not uses_scale(cfg):
        return rounds
    spec = {c.key: c.test.scale or NONE for c in cfg.cases}
    out = []
    for rnd in rounds:
        down = bool(rnd) and rnd[0].round % 2 == 0
        ordered = sorted(rnd, key=lambda s: spec[s.case].objects if s.case in spec else 0, reverse=down)
        out.append([replace(s, position=i + 1) for i, s in enumerate(ordered)])
    return out


def variant_rounds(
    cfg: LaunchConfig, keys: list[CaseKey], pending: dict[CaseKey, list[int]]
) -> list[list[Slot]]:
    """A side-by-side variant's base rounds as one launch of it runs them
    (:meth:`~podnet.launch.rounds.runner.Launcher.run`): interleaved (``launch.order``), each scale
    point set up once per round, ascending and descending in turn (:func:`by_scale`)."""
    return by_scale(schedule(keys, pending, cfg.order, cfg.seed), cfg)


class ScaleState:
    """The scale objects of one launch's namespace (``api``: an :class:`~podnet.launch.cluster.objects.ScaleApi`
    or a double; ``prober`` likewise)."""

    def __init__(
        self,
        cfg: LaunchConfig,
        workload: Any,
        info: dict[str, Any] | None,
        api: Any = None,
        prober: Any = None,
        clock: Callable[[], float] = time.monotonic,
        rules: Callable[[Any], dict[str, Any]] = datapath.rule_counts,
    ):
        self.cfg, self.w, self.info, self.clock, self.rules = cfg, workload, info, clock, rules
        self.api = api or obj.ScaleApi(workload.kube, workload.namespace)
        self.prober = prober or Prober(workload.kube, workload.namespace, self.probe_pod(), obj.SCALE_PORT)
        self.labels = dict(workload.labels)
        #: the point the namespace holds, verified (None: unknown, e.g. after a failure, or not yet
        #: counted: the first run, at no object, records the counts and rules too)
        self.point: tuple[int, int, int, int] | None = None
        #: the sidecars' ``scale`` record of that point
        self.record: dict[str, Any] = {"wanted": NONE.as_meta(), "present": {}, "ready_s": 0.0}
        #: idle pod -> its IP
        self.idle: dict[str, str] = {}
        self.eps: int | None = None
        self.rules_per: int | None = None
        #: the probe objects' running number (:class:`~podnet.launch.rounds.scalechanges.Changes`)
        self.serial = 0
        #: the launch round the point was set up in (None: not told)
        self.round_no: int | None = None

    @classmethod
    def for_launch(cls, cfg: LaunchConfig, workload: Any, info: dict[str, Any] | None) -> ScaleState | None:
        """The launch's scale state, or None when no test has ``scale``."""
        return cls(cfg, workload, info) if uses_scale(cfg) else None

    def probe_pod(self) -> str:
        """The client pod the probes run in: the first ready one of kind pod (else of kind host)."""
        plan = self.w.plan
        names = sorted(n for n, p in plan.pods.items() if p.role == "client") if plan else []
        ready = [n for n in names if n in self.w.endpoints and not self.w.endpoints[n].failure]
        ready.sort(key=lambda n: plan.pods[n].kind != "pod")
        return self.w.pod_name(ready[0]) if ready else ""

    def meta(self) -> dict[str, Any]:
        """The sidecar's ``scale``: the last point set up (with ``error`` when it failed)."""
        return dict(self.record)

    # -- a point ------------------------------------------------------------------------------------
    def ensure(self, spec: ScaleSpec | None, round_no: int | None = None) -> str | None:
        """Make the namespace hold ``spec``'s objects (None: none); None when they are present and
        programmed, else why not (the run then fails with it). ``round_no``: the launch round of the
        run; a point already held from another round is probed again (its objects stay), so each
        round gives each point its own probe times."""
        spec = spec or NONE
        if self.point == key(spec) and (round_no is None or round_no == self.round_no):
            return None
        self.point = None
        self.round_no = round_no
        t0 = self.clock()
        try:
            if not self.cfg.namespace_create:
                raise ScaleFailure(
                    "needs launch.namespace.create (the objects go with the launch's namespace)"
                )
            if not self.prober.pod:
                raise ScaleFailure("no ready client pod to probe from")
            self.record = self._apply(spec, t0 + spec.timeout)
        except (ScaleFailure, ProbeFailed) as exc:
            self.record = {"wanted": spec.as_meta(), "error": str(exc), "failed_after_s": self._since(t0)}
            log.error("scale point %s not ready: %s", _words(spec), exc)
            return f"scale point not ready: {exc}"
        except Exception as exc:  # noqa: BLE001 - API errors of many kinds: the point fails with them
            why = f"{exc.__class__.__name__}: {str(exc).strip()[:300]}"
            self.record = {"wanted": spec.as_meta(), "error": why, "failed_after_s": self._since(t0)}
            log.error("scale point %s not ready: %s", _words(spec), why)
            return f"scale point not ready: {why}"
        self.record["ready_s"] = self._since(t0)
        self.point = key(spec)
        log.info(
            "scale point %s ready after %.1fs: %s",
            _words(spec),
            self.record["ready_s"],
            _summary(self.record),
        )
        return None

    def release(self) -> dict[str, Any]:
        """Delete every scale object of the namespace (fillers and probes; the idle pods go with
        the namespace) at the API's bulk rate, before the namespace is deleted: a namespace holding
        thousands of Services took its controller more than the launcher's wait to empty (two
        namespaces of 5000 Services each hit the 180-s limit), one call per object, many at a time,
        takes about a minute. What was deleted, how fast, and the errors (none: all gone)."""
        self.point = None
        calls: list[Callable[[], Any]] = []
        for kind in ("EndpointSlice", "Service", "NetworkPolicy"):
            for sel in (FILLER, PROBE):
                calls += [
                    lambda k=kind, n=n: self.api.delete(k, n) for n in sorted(self.api.names(kind, sel))
                ]
        batch = self.api.many(calls)
        out = {"deleted": batch.done, "seconds": round(batch.seconds, 3), "objects_per_s": batch.per_s}
        if calls:
            log.info(
                "scale objects deleted before the namespace: %d in %.1fs (%s/s)%s",
                batch.done,
                batch.seconds,
                batch.per_s,
                f"; {len(batch.errors)} failed, e.g. {batch.errors[0]}" if batch.errors else "",
            )
        out["errors"] = batch.errors
        return out

    def _since(self, t0: float) -> float:
        return round(self.clock() - t0, 3)

    def _left(self, deadline: float) -> float:
        left = deadline - self.clock()
        if left <= 0:
            raise ScaleFailure("out of time (scale.timeout) before the probes")
        return left

    def _apply(self, spec: ScaleSpec, deadline: float) -> dict[str, Any]:
        rec: dict[str, Any] = {"wanted": spec.as_meta()}
        have = {k: self.api.names(k, FILLER) for k in ("Service", "EndpointSlice", "NetworkPolicy")}
        probes = {k: self.api.names(k, PROBE) for k in ("Service", "NetworkPolicy")}
        if spec.services or spec.probes_services:
            self._idle([f"{obj.PREFIX}-idle-{i}" for i in range(spec.idle_pods)])
        if spec.probes_policies:
            self._idle([TARGET])
        batches = [*self._services(spec, have), *self._policies(spec, have)]
        done = sum(b.done for b in batches)
        seconds = sum(b.seconds for b in batches)
        errors = [e for b in batches for e in b.errors]
        rec["applied"] = {
            "calls": done,
            "seconds": round(seconds, 3),
            "objects_per_s": round(done / seconds, 1) if seconds > 0 and done else None,
            "workers": getattr(self.api, "workers", None),
        }
        if errors:
            raise ScaleFailure(f"{len(errors)} API call(s) failed, e.g. {errors[0]}")
        present = {
            "services": len(self.api.names("Service", FILLER)),
            "endpoint_slices": len(self.api.names("EndpointSlice", FILLER)),
            "network_policies": len(self.api.names("NetworkPolicy", FILLER)),
        }
        rec["present"] = present
        wanted = {
            "services": spec.services,
            "endpoint_slices": spec.services,
            "network_policies": spec.network_policies,
        }
        short = [f"{present[k]} {k} of {v}" for k, v in wanted.items() if present[k] != v]
        if short:
            raise ScaleFailure("present: " + ", ".join(short))
        times = self._changes(spec, probes, deadline)
        rec["probe"] = {
            **times,
            "pod": self.prober.pod,
            "connect_timeout_s": CONNECT_TIMEOUT,
            "reach_attempt_every_s": INTERVAL,
        }
        rec["idle_pods"] = dict(self.idle)
        rec["rules"] = self.rules(self.info)
        rec["verified"] = now_iso()
        return rec

    def _idle(self, names: list[str]) -> None:
        """The idle pods (nginx on the scale port) exist and are ready; their IPs in :attr:`idle`."""
        missing = [n for n in names if n not in self.idle]
        if not missing:
            return
        w, t = self.w, self.cfg.timeouts
        self.api.create(obj.idle_configmap(self.labels), exist_ok=True)
        for n in missing:
            body = obj.idle_pod(
                n,
                image=w.image,
                pull_policy=self.cfg.image_pull_policy,
                labels=self.labels,
                lifetime=int(t["pod_lifetime"]),
            )
            self.api.create(body, exist_ok=True)
        ready, failed = w.kube.wait_ready(
            w.namespace, missing, w.selector, t["pod_ready"], t["unschedulable"]
        )
        if failed:
            why = "; ".join(f.message() if hasattr(f, "message") else str(f) for f in failed.values())
            raise ScaleFailure(f"idle pods not ready: {why}")
        self.idle.update({n: p.status.pod_ip for n, p in ready.items()})

    def _services(self, spec: ScaleSpec, have: dict[str, set[str]]) -> list[obj.Batch]:
        """Create and delete filler Services and their EndpointSlices (all, when the endpoints per
        Service changed)."""
        want = {obj.service_name(i) for i in range(1, spec.services + 1)}
        gone = obj.Batch()
        if self.eps is not None and self.eps != spec.endpoints_per_service:
            # every slice goes, then comes back with the new addresses
            slices = sorted(have["EndpointSlice"])
            gone = self.api.many([lambda s=s: self.api.delete("EndpointSlice", s) for s in slices])
            have = {**have, "EndpointSlice": set()}
        want_slices = {obj.slice_name(s) for s in want}
        addresses = (
            [self.idle[f"{obj.PREFIX}-idle-{i}"] for i in range(spec.idle_pods)] if spec.services else []
        )
        dels = [
            lambda s=s: self.api.delete("EndpointSlice", s)
            for s in sorted(have["EndpointSlice"] - want_slices)
        ]
        dels += [lambda s=s: self.api.delete("Service", s) for s in sorted(have["Service"] - want)]
        adds = [
            lambda s=s: self.api.create(obj.service(s, self.labels)) for s in sorted(want - have["Service"])
        ]
        adds += [
            lambda s=s: self.api.create(obj.endpoint_slice(s, addresses, self.labels))
            for s in sorted(want)
            if obj.slice_name(s) not in have["EndpointSlice"]
        ]
        if spec.services:
            self.eps = spec.endpoints_per_service
        return [gone, self.api.many(dels), self.api.many(adds)]

    def _policies(self, spec: ScaleSpec, have: dict[str, set[str]]) -> list[obj.Batch]:
        """Create and delete filler policies: the allowing one first (test pods never isolated
        without it) and last; all fillers again when the rules per policy changed."""
        n = spec.network_policies
        want = ({obj.ALLOW_POLICY} | {obj.policy_name(i) for i in range(1, n)}) if n else set()
        current = set(have["NetworkPolicy"])
        if self.rules_per is not None and self.rules_per != spec.rules_per_policy:
            stale = sorted(current - {obj.ALLOW_POLICY})
            out = [self.api.many([lambda p=p: self.api.delete("NetworkPolicy", p) for p in stale])]
            current -= set(stale)
        else:
            out = []
        if obj.ALLOW_POLICY in want and obj.ALLOW_POLICY not in current:
            out.append(self.api.many([lambda: self.api.create(obj.allow_policy(self.labels))]))
        index = {obj.policy_name(i): i for i in range(1, n)}
        out.append(
            self.api.many(
                [
                    lambda p=p: self.api.delete("NetworkPolicy", p)
                    for p in sorted(current - want - {obj.ALLOW_POLICY})
                ]
                + [
                    lambda p=p: self.api.create(
                        obj.filler_policy(index[p], spec.rules_per_policy, self.labels)
                    )
                    for p in sorted(want - current - {obj.ALLOW_POLICY})
                ]
            )
        )
        if obj.ALLOW_POLICY in current and obj.ALLOW_POLICY not in want:
            out.append(self.api.many([lambda: self.api.delete("NetworkPolicy", obj.ALLOW_POLICY)]))
        if n:
            self.rules_per = spec.rules_per_policy
        return out

    def _changes(self, spec: ScaleSpec, old: dict[str, set[str]], deadline: float) -> dict[str, Any]:
        """Probe objects left behind deleted, then the point's probe changes timed
        (:class:`~podnet.launch.rounds.scalechanges.Changes`), in one probe session where it opens
        (else one exec per probe, and ``no_session`` says why): a list of times per probe."""
        probing = spec.probes_services or spec.probes_policies
        session = self.prober.session() if probing and hasattr(self.prober, "session") else None
        timer = session or self.prober
        left = lambda: self._left(deadline)  # noqa: E731
        changes = Changes(self.api, timer, self.labels, self.idle, TARGET, left, self.serial)
        try:
            changes.drop_services(old["Service"])
            changes.drop_policies(old["NetworkPolicy"])
            if not probing:
                return {}
            n = max(1, int(spec.changes))
            out: dict[str, Any] = {"changes": n, "loop": "session" if session else "exec per probe"}
            if session is None and getattr(self.prober, "no_session", ""):
                out["no_session"] = self.prober.no_session
            if spec.probes_services:
                out.update(changes.services(n))
            if spec.probes_policies:
                out.update(changes.policies(n))
            return out
        finally:
            self.serial = changes.serial
            if session is not None:
                session.close()


def _words(spec: ScaleSpec) -> str:
    return f"{spec.services} Services x {spec.endpoints_per_service}, {spec.network_policies} policies x {spec.rules_per_policy}"


def _summary(rec: dict[str, Any]) -> str:
    a, p = rec.get("applied") or {}, rec.get("probe") or {}
    parts = [f"{a.get('calls', 0)} API calls in {a.get('seconds', 0)}s ({a.get('objects_per_s')}/s)"]
    parts += [f"{k} {v}" for k, v in p.items() if k.endswith("_s") and k not in SETTINGS]
    parts += [f"probes: {p['loop']}"] if p.get("loop") else []
    return ", ".join(parts)
