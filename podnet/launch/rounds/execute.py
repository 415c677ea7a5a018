"""One run: check the case can run, exec the client under ``timeout``, judge the output, write raw + sidecar.

Around the client, :mod:`podnet.launch.noise.interference` reads what competed with it (the sidecar's
``interference``); nothing asks the API while the client runs. A warm-up run (``launch.warmup``) is
written under ``raw/<exp>/_warmup/`` (a path the parse stage never reads) with ``warmup: true`` and
is not counted.

A run is ``ok`` when the tool finished in time and its adapter parses a
measurement from what it printed; anything else is ``failed`` with a reason
(exit code, time limit, unparsable output, the stderr tail). A run during which
its client or server container restarted keeps its status but is marked
``suspect`` with the restart counts. An ok run the machine's other work disturbed
(:mod:`podnet.launch.spec.disturbance`) gets ``status: disturbed`` while the round has
re-runs left (the launcher then runs it again), else stays ok with ``disturbed: true``.
Every sidecar records ``round_seq``, the ordinal of the launch round it ran in. A case with a
``load`` (latency under load) starts its load first and waits the lead-in before its probe
(:mod:`podnet.launch.rounds.underload`); the sidecar's ``load`` records it, and a load that failed
or did not cover the probe makes the run failed.
A ``netready`` case (time to a working pod network) creates its K pods and times them instead of
exec'ing a client (:mod:`podnet.launch.rounds.netready`). What a run needs of the cluster it asks through
:class:`~podnet.launch.rounds.interface.Pods`: per case one :class:`~podnet.launch.cluster.target.CaseTarget`
(containers, address, endpoints, image, tool version) and a few actions; the case carries its adapter.
"""

from __future__ import annotations

import json
import logging
import shlex
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.provenance import ClusterFacts, now_iso, read_cluster_info
from podnet.launch.cluster.target import CaseTarget, Container, Endpoint
from podnet.launch.noise.interference import Interference
from podnet.launch.rounds.interface import Pods
from podnet.launch.rounds.netready import is_netready
from podnet.launch.rounds.netready import run_case as run_netready
from podnet.launch.rounds.results import Tally
from podnet.launch.rounds.scale import ScaleState
from podnet.launch.rounds.schedule import Slot
from podnet.launch.rounds.state import raw_path, warmup_path
from podnet.launch.rounds.underload import LoadRun, LoadStart
from podnet.launch.spec.config import LaunchConfig
from podnet.launch.spec.disturbance import DisturbanceRule, RerunBudget
from podnet.launch.spec.disturbance import judge as judge_disturbance
from podnet.launch.spec.plan import CasePlan, pinned_argv
from podnet.parse.raw import write_raw
from podnet.tools.base import Adapter, Invocation, ParseError

log = logging.getLogger("podnet.launch")

#: exit status of ``timeout`` when it had to stop the command (137: killed after the grace period)
TIMEOUT_RC = 124
KILLED_RC = 137
#: seconds ``timeout -k`` waits after TERM before KILL
KILL_GRACE = 5
#: seconds the exec may take beyond the client's own limit (API round trips)
EXEC_SLACK = 15


@dataclass
class Judged:
    """The verdict on one exec: what to store, ok/failed, why, and a one-line summary for the log."""

    content: str
    status: str
    error: str = ""
    headline: str = ""


def judge(adapter: Adapter, r: ExecResult, requires: tuple[str, ...] = ()) -> Judged:
    """Ok when the client finished in time and ``adapter`` (the case's, :attr:`CasePlan.adapter`) parses a
    measurement from its output, including every metric in ``requires`` (:attr:`Invocation.requires`)."""
    candidates = [r.stdout]
    if r.stderr.strip():
        candidates.append(r.stdout + ("\n" if r.stdout and not r.stdout.endswith("\n") else "") + r.stderr)
    parse_error = unmeasured = ""
    finished = r.rc is not None and not r.timed_out and r.rc not in (TIMEOUT_RC, KILLED_RC)
    for text in candidates:
        if not text.strip():
            continue
        try:
            res = adapter.parse(text)
        except (ParseError, ValueError, KeyError, TypeError) as exc:
            parse_error = str(exc)
            continue
        missing = sorted(set(requires) - {m.metric for m in res.measurements})
        if missing:
            warnings = "; ".join(res.info.get("warnings", [])) or "the tool did not report them"
            unmeasured = f"measured no {', '.join(missing)}: {warnings}"
            continue
        if res.measurements and finished:
            return Judged(text, "ok", "", headline(adapter, res))
    why = []
    if r.error:
        why.append(r.error)
    if r.timed_out or r.rc in (TIMEOUT_RC, KILLED_RC):
        why.append("timed out (client killed at its time limit)")
    elif r.rc not in (0, None):
        why.append(f"exit code {r.rc}")
    if unmeasured:
        why.append(unmeasured)
    elif parse_error:
        why.append(f"output not parsable: {parse_error}")
    elif not r.stdout.strip():
        why.append("no output")
    tail = r.stderr.strip().splitlines()[-3:]
    if tail:
        why.append("stderr: " + " | ".join(tail))
    return Judged(r.stdout, "failed", "; ".join(why) or "failed")


def headline(adapter: Adapter, res: Any) -> str:
    """The progress log's summary of a run: its first headline metric, in readable units."""
    values = {m.metric: m for m in res.measurements}
    for metric in adapter.headline:
        m = values.get(metric)
        if m is None:
            continue
        if m.unit == "bit/s":
            return f"{metric} {m.value / 1e9:.3g} Gbit/s"
        if m.unit == "s":
            return f"{metric} {m.value * 1e6:.4g} us"
        return f"{metric} {m.value:.4g} {m.unit}"
    return ""


def _plain(obj: Any) -> Any:
    """Params as plain YAML-safe values."""
    return json.loads(json.dumps(obj, default=str))


class Executor:
    """Runs single repeats of cases in the launch's pods and records each (raw file + sidecar).

    ``pods``: what a run needs of the cluster (:class:`~podnet.launch.rounds.interface.Pods`: a
    :class:`~podnet.launch.cluster.workload.Workload` or a double); ``scale``: the launch's scale
    points (:mod:`.scale`; None: no test has ``scale``), made by the launcher."""

    def __init__(
        self,
        cfg: LaunchConfig,
        pods: Pods,
        facts: ClusterFacts,
        tally: Tally,
        launch_meta: dict[str, Any],
        scale: ScaleState | None = None,
    ):
        self.cfg = cfg
        self.pods = pods
        self.facts = facts
        self.tally = tally
        self.launch_meta = launch_meta
        #: (server pod, container) -> monotonic time its last test ended (``Invocation.server_gap``)
        self.server_free: dict[tuple[str, str], float] = {}
        self.interference: Interference | None = None
        #: the ordinal of the launch round now running (set by the launcher; None: warm-ups)
        self.round_seq: int | None = None
        self.rule = cfg.disturbance or DisturbanceRule()
        #: re-runs of disturbed runs left in this round (the launcher resets it at each round)
        self.reruns = RerunBudget(self.rule)
        if cfg.interference:
            info = read_cluster_info(cfg.cluster_info) if "embedded" in facts.cluster else None
            space = pods.space
            self.interference = Interference(space.kube, space.namespace, info, cfg.timeouts["api"])
        #: the objects of the cases' scale points (:mod:`.scale`; None: no test has `scale`)
        self.scale = scale

    def _sides(self, cp: CasePlan, t: CaseTarget) -> tuple[Container, Container | None, bool]:
        """The client's container, the server process's container (read around the run for where it
        ran; None when the case has no server process) and whether the server is another machine
        (then its machine's counters are read too)."""
        if t.server is None or cp.server is None:
            return t.client, None, False
        remote = self.interference is not None and not self.interference.same_machine(
            self.facts.node_facts, t.client.node, t.server.node
        )
        return t.client, t.server, remote

    def run(self, cp: CasePlan, slot: Slot, total: int, index: int, warmup: bool = False) -> str:
        """Run one repeat of one case (a warm-up: not counted, kept apart); returns ok / failed."""
        case = cp.case
        tag = f"[{index}/{total}] round {slot.round} {case.label} r{slot.repeat:03d}"
        if warmup:
            tag = f"[warm-up {index}/{total}] {case.label}"
        not_runnable = self.pods.blocked(cp) or self.pods.server_ready(cp)
        if not not_runnable and self.scale is not None and not warmup:  # the case's objects first
            not_runnable = self.scale.ensure(case.test.scale, self.round_seq)  # probed once per round
        if not_runnable:
            log.error("%s: cannot run: %s", tag, not_runnable)
            if not warmup:
                self.record_failure(cp, slot, not_runnable)
            return "failed"
        if is_netready(cp):  # time to network: K new pods, not one exec (rounds/netready.py)
            return run_netready(self, cp, slot, tag, warmup)
        t = self.pods.target(cp)
        target = t.address
        inv = cp.invocation(str(target))
        self._server_gap(cp, inv)
        limit = float(inv.duration) + float(self.cfg.timeouts["run_margin"])
        argv = ["timeout", "-k", str(KILL_GRACE), f"{limit:g}", *[str(a) for a in inv.client]]
        # the test's placement (its own affinity, else launch.affinity): the exec starts on the client's
        # CPU (taskset), the snapshot wrapper with it; the server's readings on the server's
        placed = case.test.placed(self.cfg.affinity)
        pin = pinned_argv(placed, "client")
        attempt = 1 if warmup else self.tally.states[case.key].next_attempt(slot.repeat)
        meta = self.sidecar(cp, slot, attempt)
        meta.update(protocol=inv.protocol, direction=inv.direction, streams=inv.streams)
        before = self.pods.restarts(cp)
        client_side, server_side, remote = self._sides(cp, t)
        started_load = self._start_load(cp, t, slot, str(target), inv, tag, warmup)
        if started_load.failed:
            return "failed"
        load = started_load.run
        apart = cp.case.test.load.apart(placed) if load is not None and cp.case.test.load else ()
        ia = self.interference
        server_pin = pinned_argv(placed, "server")
        probe = ia.start(server_side[:2] if server_side else None, server_pin) if ia else None
        started = now_iso()
        t0 = time.monotonic()
        r = self.pods.exec(
            client_side, [*pin, *(ia.wrap(argv) if ia else argv)], limit + KILL_GRACE + EXEC_SLACK
        )
        elapsed = time.monotonic() - t0
        ended = now_iso()
        if cp.server and cp.server_pod:
            self.server_free[(cp.server_pod, cp.server.container)] = time.monotonic()
        if ia and probe:
            started_ok = not (r.rc is None and r.error and not r.timed_out)
            meta["interference"] = ia.finish(
                probe, client_side, server_side, ran=started_ok, remote=remote, exclude_client=apart
            )
            if "cpus" in meta["interference"]:  # where the client, server and softirq work ran
                meta["cpus"] = meta["interference"].pop("cpus")
        if r.rc is None and r.error:
            self.pods.exec_failed(cp.client_pod, r.error)
        restarted = {
            k: v - before[k] for k, v in self.pods.restarts(cp).items() if k in before and v > before[k]
        }
        verdict = judge(cp.adapter, r, inv.requires)
        ext = "json" if verdict.content.lstrip().startswith("{") else "txt"
        timing = {"started": started, "ended": ended, "elapsed_s": round(elapsed, 3)}
        if load is not None:
            probe_path = raw_path(self.cfg.raw_dir, self.facts.variant, case, slot.repeat, attempt, ext)
            wait = float(load.inv.duration) + float(self.cfg.timeouts["run_margin"]) + KILL_GRACE + EXEC_SLACK
            meta["load"], why = load.finish(cp, probe_path, {**meta, **timing}, judge, wait)
            if why and verdict.status == "ok":
                verdict = replace(verdict, status="failed", error=why)
            if why:
                self.pods.restart_server(replace(cp, server=cp.load_server))
        if not warmup:
            verdict = self._disturbance(verdict, meta)
        self._describe(meta, cp, t, inv, argv, verdict, r, timing)
        if pin:
            meta["placement_command"] = pin
        if restarted:
            meta.update(suspect=True, restarts=restarted)
        if warmup:
            return self._keep_warmup(cp, slot, tag, verdict, r, meta, ext)
        return self._keep_counted(cp, slot, attempt, tag, verdict, r, meta, ext, restarted, elapsed)

    def _start_load(
        self, cp: CasePlan, t: CaseTarget, slot: Slot, target: str, inv: Invocation, tag: str, warmup: bool
    ) -> LoadStart:
        """Start a latency-under-load case's load and wait its lead-in (:mod:`.underload`): the load
        running, none (another case, or a warm-up, which runs the probe alone), or failed when its
        server is not ready (recorded as a failed run)."""
        if not cp.load or warmup or cp.case.test.load is None:
            return LoadStart()
        why = self.pods.server_ready(replace(cp, server=cp.load_server))
        if why:
            log.error("%s: cannot run the load: %s", tag, why)
            self.record_failure(cp, slot, f"load: {why}")
            return LoadStart(failed=True)
        margin = float(self.cfg.timeouts["run_margin"])
        # the load's own CPUs (load.affinity), else where its probe runs (the test's placement)
        pin = pinned_argv(cp.case.test.load.placed(cp.case.test.placed(self.cfg.affinity)), "client")
        load = LoadRun.start(self.pods, t.client, cp, target, float(inv.duration), margin, KILL_GRACE, pin)
        load.lead_in(cp.case.test.load.lead_in)
        return LoadStart(run=load)

    def _disturbance(self, verdict: Judged, meta: dict[str, Any]) -> Judged:
        """Judge an ok run's interference record: ``disturbed`` (and ``disturbance``) into ``meta``;
        status ``disturbed`` when the round has a re-run left, else ok and flagged."""
        v = judge_disturbance(meta.get("interference"), self.rule) if verdict.status == "ok" else None
        if v is None:
            return verdict
        meta["disturbed"] = v.disturbed
        if not v.disturbed:
            return verdict
        rerun = self.reruns.take()
        meta["disturbance"] = {
            "share": v.share,
            "threshold": v.threshold,
            "action": "re-run" if rerun else "kept",
            "round_seq": self.round_seq,
        }
        if not rerun:
            return verdict
        return replace(verdict, status="disturbed", error=f"{v.reason()}: re-run in the same round")

    def _server_gap(self, cp: CasePlan, inv: Invocation) -> None:
        """Wait until the case's server has had ``inv.server_gap`` seconds since its last test ended."""
        if not inv.server_gap or cp.server is None or not cp.server_pod:
            return
        last = self.server_free.get((cp.server_pod, cp.server.container))
        if last is not None:
            rest = inv.server_gap - (time.monotonic() - last)
            if rest > 0:
                time.sleep(rest)

    def _describe(
        self,
        meta: dict[str, Any],
        cp: CasePlan,
        t: CaseTarget,
        inv: Invocation,
        argv: list[str],
        verdict: Judged,
        r: ExecResult,
        timing: dict[str, Any],
    ) -> None:
        """The run's outcome, commands, endpoints and provenance into its sidecar ``meta``."""
        case, target = cp.case, t.address
        meta.update(
            status=verdict.status,
            **({"error": verdict.error} if verdict.error else {}),
            command=[str(a) for a in inv.client],
            command_line=shlex.join(str(a) for a in inv.client),
            timeout_command=argv[:4],
            server_command=(
                [*cp.server.pin, *(cp.server.argv if not cp.server.http else ["nginx"])]
                if cp.server
                else None
            ),
            target=target,
            service=({"name": t.service, "cluster_ip": target} if t.service else None),
            **timing,
            exit_code=r.rc,
            stderr=r.stderr[-2000:] if r.stderr else "",
            tool_version=t.tool_version,
            client=self.endpoint_meta(t.client_endpoint, case.scenario.client),
            server=self.endpoint_meta(t.server_endpoint, case.scenario.server),
            cluster=self.facts.cluster,
            image=t.image,
            image_id=t.image_id,
            launch=self.launch_meta,
        )

    def _keep_warmup(
        self,
        cp: CasePlan,
        slot: Slot,
        tag: str,
        verdict: Judged,
        r: ExecResult,
        meta: dict[str, Any],
        ext: str,
    ) -> str:
        """Write an uncounted warm-up run apart (restarting a server the failed run may have left stuck)."""
        case = cp.case
        meta["warmup"] = True
        path = warmup_path(
            self.cfg.raw_dir, self.launch_meta["id"], self.facts.variant, case, ext, slot.repeat
        )
        write_raw(path, verdict.content, meta)
        log.info("%s: %s (not counted)", tag, verdict.status if verdict.status == "ok" else verdict.error)
        if verdict.status != "ok" and (r.rc is not None or r.timed_out):
            self.pods.restart_server(cp)
        return verdict.status

    def _keep_counted(
        self,
        cp: CasePlan,
        slot: Slot,
        attempt: int,
        tag: str,
        verdict: Judged,
        r: ExecResult,
        meta: dict[str, Any],
        ext: str,
        restarted: dict[str, int],
        elapsed: float,
    ) -> str:
        """Write a counted run, tally it, log it (restarting the server after a failure the client saw)."""
        case = cp.case
        path = self._write(cp, slot, attempt, verdict.content, meta, ext)
        flagged = bool(meta.get("disturbed"))
        self.tally.note(
            case,
            slot.repeat,
            attempt,
            verdict.status,
            path,
            verdict.error,
            suspect=bool(restarted),
            disturbed=flagged,
        )
        if verdict.status == "disturbed":
            log.warning("%s: %s", tag, verdict.error)
        elif verdict.status == "ok":
            warn = f" SUSPECT: restarted during the run: {restarted}" if restarted else ""
            if flagged:
                warn += " DISTURBED (kept: no re-run left in this round)"
            log.info(
                "%s: ok %s(%.1fs)%s", tag, f"{verdict.headline} " if verdict.headline else "", elapsed, warn
            )
        else:
            log.error("%s: failed: %s", tag, verdict.error)
            if r.rc is not None or r.timed_out:  # the client ran: its server may be stuck
                self.pods.restart_server(cp)
        return verdict.status

    def record_failure(self, cp: CasePlan, slot: Slot, reason: str) -> None:
        """A run that could not even start: an empty raw file and a failed sidecar."""
        attempt = self.tally.states[cp.case.key].next_attempt(slot.repeat)
        meta = self.sidecar(cp, slot, attempt)
        where, t = self.pods.target(cp), now_iso()
        meta.update(
            status="failed",
            error=reason,
            started=t,
            ended=t,
            client=self.endpoint_meta(where.client_endpoint, cp.case.scenario.client),
            server=self.endpoint_meta(where.server_endpoint, cp.case.scenario.server),
            cluster=self.facts.cluster,
            launch=self.launch_meta,
        )
        path = self._write(cp, slot, attempt, "", meta, "txt")
        self.tally.note(cp.case, slot.repeat, attempt, "failed", path, reason)

    def sidecar(self, cp: CasePlan, slot: Slot, attempt: int) -> dict[str, Any]:
        """The sidecar keys every run of a case has, before it runs."""
        case = cp.case
        meta: dict[str, Any] = {
            "tool": case.test.tool,
            "variant": self.facts.variant,
            "scenario": case.scenario.name,
            "test": case.test.name,
            "repeat": slot.repeat,
            "attempt": attempt,
            "round": slot.round,
            **({"round_seq": self.round_seq} if self.round_seq is not None else {}),
            "position": slot.position,
            "order": self.cfg.order,
            "shuffle_seed": self.cfg.seed,
            "kind": "measured",
            "source": "podnet launch",
        }
        if cp.template is not None:
            t = cp.template
            meta.update(protocol=t.protocol, direction=t.direction, streams=t.streams)
        meta["params"] = _plain(cp.params)
        if case.test.sweep is not None:
            meta["sweep"] = _plain(case.test.sweep.as_meta())
        if self.scale is not None:  # the scale point the run sees (:mod:`.scale`)
            meta["scale"] = self.scale.meta()
        if case.test.load is not None:  # the load's record (the idle point's: streams 0, no file)
            meta["load"] = case.test.load.as_meta()
        meta["scenario_description"] = case.scenario.description
        meta["harness"] = self.cfg.harness_settings(cp.adapter, cp.params, case.test)
        return meta

    def endpoint_meta(self, ep: Endpoint | None, spec: Any) -> dict[str, Any]:
        """Pod, node, IP, hostNetwork, interface, MTU and node facts of one side of a run (``ep``: its
        pod as recorded, :class:`~podnet.launch.cluster.target.CaseTarget`; None: no pod)."""
        d: dict[str, Any] = {"kind": spec.pod_kind, "placement": spec.describe()}
        if ep is None:
            return d
        d.update(
            pod=ep.name,
            node=ep.node,
            ip=ep.ip,
            host_network=spec.pod_kind == "host",
            interface=ep.interface,
            mtu=ep.mtu,
        )
        if ep.node and ep.node in self.facts.node_facts:
            d["node_info"] = self.facts.node_facts[ep.node]
        return d

    def _write(
        self, cp: CasePlan, slot: Slot, attempt: int, content: str, meta: dict[str, Any], ext: str
    ) -> Path:
        path = raw_path(self.cfg.raw_dir, self.facts.variant, cp.case, slot.repeat, attempt, ext)
        write_raw(path, content, meta)
        return path
