"""One time-to-network run (tool ``netready``, :mod:`podnet.tools.netready`): K new pods, each timed
from its create call to the first answered packet in both directions.

The executor hands a ``netready`` case here instead of exec'ing a client (:func:`run_case`). A run:

1. opens a watch on this run's pods (:class:`podnet.launch.cluster.podwatch.PodWatch`: receive times
   on the launcher's clock, ms resolution);
2. creates K pods (``pods``) with the client endpoint's node affinity (the scheduler places them:
   scheduling is part of the time), each running the adapter's probe loop towards the server pod's IP
   (``probe`` container; ``hold`` keeps the pod up): ``burst`` creates them back to back, ``serial``
   one at a time, the next once the previous answered both probes;
3. once the watch shows a pod's IP, execs the same loop in the server pod (its ``main`` container,
   which keeps NET_RAW for this) towards the pod, on a thread per pod;
4. waits until every pod has both replies, or one of them failed (pod failed, a probe gave up, or its
   ``timeout`` from its create call passed: the reason names what it lacked);
5. reads each probe container's log (its printed times), deletes the pods (grace period 1 s) and waits
   until they are gone (bounded), so the next run does not start in this one's teardown;
6. writes the raw JSON (:func:`podnet.tools.netready.render`; one record per pod) with the usual
   sidecar, ``status: failed`` with the reason unless the adapter's parser (the same check the parse
   stage makes) takes every pod as network-ready.

Nothing here competes with the pods beyond the watch and the server-side execs; no interference
record is taken (the run's own pods are the machine's work). A run is never a number when a pod is
missing a time: the parse stage refuses it the same way.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.podwatch import PROBE, Milestones, PodWatch, probe_pod_manifest
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.rounds.schedule import Slot
from podnet.launch.rounds.state import raw_path, warmup_path
from podnet.launch.spec.plan import CasePlan
from podnet.parse.raw import write_raw
from podnet.tools import netready as nr
from podnet.tools.base import ParseError

log = logging.getLogger("podnet.launch")

TOOL = nr.ADAPTER.name
#: seconds between looks at the watch's record (no API call: the watch thread fills it)
POLL = 0.05
#: seconds the server-side probe's exec may take beyond its loop's deadline (API round trips)
EXEC_SLACK = 15
#: seconds to wait for a run's pods to be gone after their deletion
DELETE_WAIT = 60.0
#: seconds a new pod may live at most beyond its run's limit (activeDeadlineSeconds)
LIFETIME_SLACK = 120


def is_netready(cp: CasePlan) -> bool:
    """A case of the time-to-network tool."""
    return cp.case.test.tool == TOOL


@dataclass
class PodRun:
    """One new pod of a run: the launcher's create times, its deadline, the server-side probe, why it failed."""

    index: int
    name: str
    created: float | None = None
    create_returned: float | None = None
    deadline: float = 0.0
    in_thread: threading.Thread | None = field(default=None, repr=False)
    in_result: ExecResult | None = None
    in_argv: list[str] = field(default_factory=list)
    out: nr.ProbeTimes | None = None
    error: str = ""

    def in_done(self) -> bool:
        return self.in_thread is not None and not self.in_thread.is_alive()


def missing(m: Milestones, p: PodRun) -> str:
    """What pod ``p`` still lacks, first in the order a pod goes through them."""
    if m.scheduled is None:
        return "never scheduled"
    if m.ip_seen is None:
        return "IP never assigned"
    if m.started_seen is None:
        return "probe container never started"
    if m.probe_exit is None:
        return "probe from the pod never answered"
    return "probe to the pod never answered"


def verdict(m: Milestones, p: PodRun, now: float, timeout: float) -> str:
    """Why pod ``p`` has failed by ``now`` ("" while it may still make it, or once it made it)."""
    if p.error:
        return p.error
    if m.problem:
        return f"pod failed: {m.problem}"
    if m.probe_exit not in (None, 0):
        return f"probe from the pod never answered within {timeout:g} s (exit {m.probe_exit})"
    r = p.in_result
    if p.in_done() and (r is None or r.rc != 0):
        why = (r.error or f"exit {r.rc}") if r is not None else "no result"
        return f"probe to the pod never answered within {timeout:g} s ({why})"
    if now > p.deadline and not (m.probe_exit == 0 and p.in_done()):
        return f"timed out after {timeout:g} s: {missing(m, p)}"
    return ""


def record(p: PodRun, m: Milestones, in_probe: nr.ProbeTimes | None) -> dict[str, Any]:
    """The raw record of one pod (:mod:`podnet.tools.netready` says what each time is)."""
    out = p.out or nr.ProbeTimes(None, None, None)
    inn = in_probe or nr.ProbeTimes(None, None, None)
    return {
        "index": p.index,
        "name": p.name,
        "node": m.node,
        "ip": m.ip,
        "created": p.created,
        "create_returned": p.create_returned,
        "created_api": m.created_api,
        "scheduled": m.scheduled,
        "scheduled_api": m.scheduled_api,
        "sandbox": m.sandbox,
        "sandbox_api": m.sandbox_api,
        "ip_seen": m.ip_seen,
        "started_seen": m.started_seen,
        "started_api": m.started_api,
        "out_start": out.start,
        "out_reply": out.reply,
        "out_attempts": out.attempts,
        "out_exit": m.probe_exit,
        "in_start": inn.start,
        "in_reply": inn.reply,
        "in_attempts": inn.attempts,
        "in_exit": p.in_result.rc if p.in_result is not None else None,
        "error": p.error,
    }


class NetReadyRun:
    """The pods of one run and the loop that waits for them (``ex``: the :class:`Executor`; the
    namespace from its :attr:`Pods.space`, the case's pods from its :meth:`Pods.target`)."""

    def __init__(self, ex: Any, cp: CasePlan, s: nr.Settings):
        self.ex, self.cp, self.s = ex, cp, s
        space, t = ex.pods.space, ex.pods.target(cp)
        self.target = t
        self.kube, self.ns = space.kube, space.namespace
        self.api = float(ex.cfg.timeouts["api"])
        token = secrets.token_hex(3)
        self.selector = f"podnet.io/netready={token}"
        self.labels = {**space.labels, "podnet.io/netready": token}
        self.pods = [PodRun(i, space.name(f"netready-{token}-{i:02d}")) for i in range(1, s.pods + 1)]
        sep = t.server_endpoint
        assert t.server is not None and sep is not None  # the case ran: its server pod is up
        self.server_pod, self.server_ip, self.server_node = t.server.pod, sep.ip, sep.node
        self.node = t.client.node
        self.affinity = t.client_placement.node_affinity() if t.client_placement is not None else {}
        self.watch = PodWatch(getattr(self.kube, "core", None), self.ns, self.selector, self.api)
        self.teardown_s: float | None = None
        self.left: list[str] = []

    def body(self, p: PodRun) -> dict[str, Any]:
        cfg = self.ex.cfg
        return probe_pod_manifest(
            p.name,
            image=self.target.image,
            pull_policy=cfg.image_pull_policy,
            labels=self.labels,
            probe=nr.probe_argv(str(self.server_ip), self.s),
            node_affinity=self.affinity,
            lifetime=int(self.s.run_limit + LIFETIME_SLACK),
            guaranteed=cfg.resources,
        )

    def create(self, p: PodRun) -> None:
        body = self.body(p)
        p.created = time.time()
        try:
            self.kube.create(self.ns, body)
        except Exception as exc:  # noqa: BLE001 - KubeError and connection errors alike
            p.error = f"create failed: {exc}"
        p.create_returned = time.time()
        p.deadline = p.created + self.s.timeout

    def start_in_probe(self, p: PodRun, ip: str) -> None:
        """Exec the probe loop in the server pod towards ``ip`` on a thread (limit: the pod's deadline)."""
        limit = max(1.0, p.deadline - time.time())
        p.in_argv = ["timeout", "-k", "2", f"{limit:.1f}", *nr.probe_argv(ip, self.s)]

        def work() -> None:
            p.in_result = self.kube.exec(
                self.ns, self.server_pod, p.in_argv, limit + EXEC_SLACK, container="main"
            )

        p.in_thread = threading.Thread(target=work, name=f"podnet-netready-{p.index}", daemon=True)
        p.in_thread.start()

    def wait(self, pods: list[PodRun]) -> bool:
        """Wait until each of ``pods`` made it or one failed; True when all made it."""
        while True:
            now = time.time()
            pending = False
            for p in pods:
                m = self.watch.get(p.name)
                if m.ip and p.in_thread is None and not p.error:
                    self.start_in_probe(p, m.ip)
                p.error = verdict(m, p, now, self.s.timeout)
                if p.error:
                    return False
                if not (m.probe_exit == 0 and p.in_done()):
                    pending = True
            if not pending:
                return True
            time.sleep(POLL)

    def run(self) -> list[dict[str, Any]]:
        """Create, wait, read, delete; the pods' records."""
        self.watch.start()
        try:
            if self.s.mode == "burst":
                for p in self.pods:
                    self.create(p)
                self.wait(self.pods)
            else:
                for p in self.pods:
                    self.create(p)
                    if not self.wait([p]):
                        break
            return self.records()
        finally:
            self.delete()
            self.watch.stop()

    def records(self) -> list[dict[str, Any]]:
        """Each pod's record: its probe log read now; a pod still short of a time when the run stopped
        (another pod failed first) gets that as its error."""
        failed = next((p for p in self.pods if p.error), None)
        out = []
        for p in self.pods:
            m = self.watch.get(p.name)
            if p.created is not None and m.started_seen is not None:
                p.out = nr.probe_times(self.kube.logs(self.ns, p.name, PROBE, lines=20))
            if p.in_thread is not None:
                p.in_thread.join(0 if failed else EXEC_SLACK)
            inn = nr.probe_times(p.in_result.stdout) if p.in_result is not None else None
            if not p.error and failed is not None:
                done = m.probe_exit == 0 and inn is not None and inn.reply is not None
                if not done:
                    what = missing(m, p) if p.created is not None else "not created"
                    p.error = f"{what}: the run stopped when pod {failed.index} failed"
            if not p.error and m.probe_exit == 0 and (p.out is None or p.out.reply is None):
                p.error = "probe from the pod answered, but its log holds no reply time"
            out.append(record(p, m, inn))
        return out

    def delete(self) -> None:
        """Delete the run's pods (their 1-s grace period) and wait, bounded, until they are gone."""
        t0 = time.monotonic()
        if any(p.in_thread is not None and p.in_thread.is_alive() for p in self.pods):
            # a failed run's server-side loops still ping: end them before the next run
            argv = ["pkill", "-f", "podnet-netready"]
            self.kube.exec(self.ns, self.server_pod, argv, self.api, container="main")
        for p in self.pods:
            if p.created is None:
                continue
            try:
                self.kube.delete_pod(self.ns, p.name)  # graceful: gone once its kubelet confirms
            except Exception as exc:  # noqa: BLE001 - the namespace's deletion removes it at the end
                log.warning("netready: could not delete pod %s: %s", p.name, exc)
        end = t0 + DELETE_WAIT
        while time.monotonic() < end:
            try:
                left = sorted(self.kube.pods(self.ns, self.selector))
            except Exception:  # noqa: BLE001
                left = ["(pods unreadable)"]
            if not left:
                self.teardown_s = round(time.monotonic() - t0, 3)
                return
            time.sleep(0.5)
        self.left = left
        log.warning("netready: pods not gone %.0f s after deletion: %s", DELETE_WAIT, ", ".join(left))

    def document(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        s = self.s
        return {
            nr.FORMAT: nr.VERSION,
            "mode": s.mode,
            "pods": s.pods,
            "timeout_s": s.timeout,
            "interval_s": s.interval,
            "node": self.node,
            "server": {"pod": self.server_pod, "ip": self.server_ip, "node": self.server_node},
            "clock": "seconds since the epoch; launcher, watch, pod and server-pod times on one machine's clock",
            "watch_error": self.watch.error,
            "teardown_s": self.teardown_s,
            "pods_left": self.left,
            "records": records,
        }


def judge(text: str) -> tuple[str, str, str]:
    """(status, error, headline) of a run's raw text, by the adapter's parser (the parse stage's check)."""
    try:
        res = nr.ADAPTER.parse(text)
    except ParseError as exc:
        return "failed", str(exc), ""
    ready = sorted(m.value for m in res.measurements if m.metric == "net_ready_s")
    return "ok", "", f"net_ready_s median {ready[len(ready) // 2]:.3f} s, max {ready[-1]:.3f} s"


def run_case(ex: Any, cp: CasePlan, slot: Slot, tag: str, warmup: bool) -> str:
    """One repeat of a netready case: its pods, raw file and sidecar; returns the run's status."""
    case = cp.case
    s = nr.Settings.of(dict(cp.params))
    attempt = 1 if warmup else ex.tally.states[case.key].next_attempt(slot.repeat)
    meta = ex.sidecar(cp, slot, attempt)
    meta.update(protocol="icmp", direction="roundtrip", streams=s.concurrency)
    run = NetReadyRun(ex, cp, s)
    started, t0 = now_iso(), time.monotonic()
    try:
        records = run.run()
    except Exception as exc:  # noqa: BLE001 - the API failed under the run: a failed run, the launch goes on
        log.error("%s: failed: %s", tag, exc)
        if not warmup:
            ex.record_failure(cp, slot, f"netready: the run broke off: {type(exc).__name__}: {exc}")
        return "failed"
    elapsed, ended = time.monotonic() - t0, now_iso()
    text = nr.render(run.document(records))
    status, error, headline = judge(text)
    argv = nr.probe_argv(str(run.server_ip), s)
    meta.update(
        status=status,
        **({"error": error} if error else {}),
        command=argv,
        command_line=shlex.join(argv),
        server_command=None,
        target=run.server_ip,
        started=started,
        ended=ended,
        elapsed_s=round(elapsed, 3),
        exit_code=None,
        tool_version=run.target.tool_version,
        client=ex.endpoint_meta(run.target.client_endpoint, case.scenario.client),
        server=ex.endpoint_meta(run.target.server_endpoint, case.scenario.server),
        cluster=ex.facts.cluster,
        image=run.target.image,
        launch=ex.launch_meta,
        netready={
            "pods": s.pods,
            "mode": s.mode,
            "timeout_s": s.timeout,
            "interval_s": s.interval,
            "node": run.node,
            "in_probe_command": ["timeout", "-k", "2", "<seconds left>", *nr.probe_argv("<pod ip>", s)],
            "teardown_s": run.teardown_s,
            "pods_left": run.left,
        },
    )
    if warmup:
        meta["warmup"] = True
        path = warmup_path(ex.cfg.raw_dir, ex.launch_meta["id"], ex.facts.variant, case, "json", slot.repeat)
        write_raw(path, text, meta)
        log.info("%s: %s (not counted)", tag, status if status == "ok" else error)
        return status
    path = raw_path(ex.cfg.raw_dir, ex.facts.variant, case, slot.repeat, attempt, "json")
    write_raw(path, text, meta)
    ex.tally.note(case, slot.repeat, attempt, status, path, error)
    if status == "ok":
        log.info("%s: ok %s (%.1fs; pods gone in %s s)", tag, headline, elapsed, run.teardown_s)
    else:
        log.error("%s: failed: %s", tag, error)
    return status
