"""A whole launch, as ``podnet/launch/README.md`` describes it.

1. Learn the cluster (nodes, CNI, variant) and scan ``raw/`` for what is missing;
   with nothing missing, stop: no namespace, no pod.
2. Create the namespace, pods and Services (:mod:`podnet.launch.cluster.workload`).
3. Run the missing repeats in interleaved rounds, retrying failed runs once at
   the end unless their pods or nodes are broken (:mod:`podnet.launch.rounds.execute`).
4. Adaptive: add rounds of the cases whose headline interval is still too wide.
5. Delete everything, after success, on errors and on Ctrl-C / SIGTERM; write the
   manifest (:mod:`podnet.launch.rounds.results`).

:func:`launch` is what ``podnet launch`` and the Snakemake ``launch`` checkpoint call.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podnet.launch.cluster import provenance
from podnet.launch.cluster.k8s import Kube, KubeError
from podnet.launch.cluster.leftovers import cleanup
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.cluster.signals import Interrupted, interruptible
from podnet.launch.cluster.workload import Workload
from podnet.launch.noise.floor import LaunchFloor
from podnet.launch.noise.idle import hold_cpu_latency
from podnet.launch.rounds.adaptive import Sampler
from podnet.launch.rounds.execute import Executor
from podnet.launch.rounds.results import LaunchResult, RunTimes, Tally, write_logs
from podnet.launch.rounds.scale import ScaleState, by_scale
from podnet.launch.rounds.schedule import RoundSeq, Slot, schedule
from podnet.launch.rounds.state import invalidate_stale_manifest, launch_complete, pending_runs, scan
from podnet.launch.rounds.warmup import warm_up
from podnet.launch.spec.config import CaseKey, LaunchConfig, LaunchConfigError, load_config
from podnet.launch.spec.plan import CasePlan, build_plan

__all__ = [
    "Interrupted",
    "LaunchResult",
    "Launcher",
    "cleanup",
    "invalidate_stale_manifest",
    "launch",
    "launch_complete",
    "pending_runs",
]

log = logging.getLogger("podnet.launch")


class Launcher:
    """One launch of one config against one cluster (``kube``: a :class:`Kube` or a test double)."""

    def __init__(
        self,
        cfg: LaunchConfig,
        kube: Any,
        *,
        launch_id: str | None = None,
        repo: str | Path = ".",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.cfg = cfg
        #: seconds, monotonic: times runs and the adaptive budget (tests pass a fake one)
        self.clock = clock
        self.times = RunTimes()
        self.sampler: Sampler | None = None
        self.launch_id = launch_id or (time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2))
        self.result = LaunchResult(
            experiment=cfg.experiment,
            launch_id=self.launch_id,
            order=cfg.order,
            seed=cfg.seed,
            adaptive=cfg.adaptive,
        )
        self.workload = Workload(cfg, kube, self.launch_id)
        self.commit = provenance.git_commit(Path(repo))
        self.facts: provenance.ClusterFacts | None = None
        self.tally = Tally(self.result, {})
        self.executor: Executor | None = None
        self.floor: LaunchFloor | None = None
        #: round ordinals (a side-by-side launch gives its variants one shared counter)
        self.seq = RoundSeq()

    @property
    def variant(self) -> str:
        return self.facts.variant if self.facts else ""

    def discover(self) -> provenance.ClusterFacts:
        """Nodes, versions, CNI and variant (read-only API calls); then what raw/ already holds."""
        self.facts = provenance.discover(self.cfg, self.workload.kube)
        self.result.variant, self.result.cni = self.facts.variant, self.facts.cni
        self.tally.states.update(scan(self.cfg.raw_dir, self.facts.variant, self.cfg.cases))
        return self.facts

    def prepare(self, cases: set[CaseKey]) -> None:
        """Namespace, pods and Services for ``cases``; tools the image lacks are skipped."""
        assert self.facts is not None
        w = self.workload
        # launch.floor: refused here, before anything is created, where it cannot run
        self.floor = LaunchFloor.start(self.cfg, self.facts.variant, [n.name for n in self.facts.nodes])
        try:
            missing = w.prepare(self.facts.nodes, cases)
        finally:
            self.result.namespace = w.namespace
            self.result.pod_failures.update(w.pod_failures)
        self.result.skipped_tools = missing
        for c in self.cfg.cases:
            if c.test.tool in missing:
                self.tally.outcome(c).skipped = missing[c.test.tool]
        launch_meta = {
            "id": self.launch_id,
            "experiment": self.cfg.experiment,
            "namespace": w.namespace,
            "config_sha256": self.cfg.config_sha256,
            "git_commit": self.commit,
            "image": w.image,
        }
        embedded = "embedded" in self.facts.cluster
        info = provenance.read_cluster_info(self.cfg.cluster_info) if embedded else None
        scale = ScaleState.for_launch(self.cfg, w, info)  # the cases' scale points (rounds/scale.py)
        self.executor = Executor(self.cfg, w, self.facts, self.tally, launch_meta, scale)

    def case_plan(self, key: CaseKey) -> CasePlan:
        assert self.workload.plan is not None
        return next(cp for cp in self.workload.plan.cases if cp.case.key == key)

    def can_run(self, key: CaseKey) -> bool:
        """The case is in the launch's plan (or nothing is planned yet), its tool is in the image and
        its pods and nodes work."""
        plan = self.workload.plan
        if plan is None:
            return True
        cp = next((c for c in plan.cases if c.case.key == key), None)
        return cp is not None and not cp.skipped and not self.workload.blocked(cp)

    def last_repeat(self, key: CaseKey) -> int:
        """The highest repeat number attempted for the case (0: none yet)."""
        return max(self.tally.states[key].attempts, default=0)

    # -- rounds ------------------------------------------------------------------------------------------
    def run_rounds(
        self,
        pending: dict[CaseKey, list[int]],
        budget: int | None = None,
        rounds: list[list[Slot]] | None = None,
    ) -> int:
        """Run pending repeats (or the given ``rounds``) in interleaved rounds, then one retry of transient
        failures; returns runs launched. Each run's wall time is recorded for the adaptive budget."""
        assert self.executor is not None
        if rounds is None:
            keys = [c.key for c in self.cfg.cases if c.key in pending]
            rounds = schedule(keys, pending, self.cfg.order, self.cfg.seed)
        rounds = by_scale(rounds, self.cfg)  # each scale point set up once per round
        total = sum(len(r) for r in rounds) if budget is None else min(sum(len(r) for r in rounds), budget)
        n = 0
        retry: list[Slot] = []
        for rnd in rounds:
            self.start_round(rnd)
            for slot in rnd:
                if budget is not None and n >= budget:
                    return n
                cp = self.case_plan(slot.case)
                if cp.skipped:
                    continue
                n += 1
                if self.run_one(cp, slot, total, n) != "ok" and not self.workload.blocked(cp):
                    retry.append(slot)
        return self.retry(retry, total, n, budget)

    def run_round(self, slots: list[Slot]) -> int:
        """One more round of ``slots`` (the adaptive stop's; :class:`~.interface.Rounds`)."""
        return self.run_rounds({}, None, rounds=[slots])

    @property
    def ready(self) -> bool:
        """Prepared: an executor to run with (:class:`~.interface.WarmUps`)."""
        return self.executor is not None

    def run_warmup(self, cp: CasePlan, slot: Slot, total: int, n: int) -> None:
        """One uncounted warm-up run (:class:`~.interface.WarmUps`)."""
        assert self.executor is not None
        self.executor.run(cp, slot, total, n, warmup=True)

    def enter_round(self, seq: int | None = None) -> int:
        """Runs from now on are of round ``seq`` (else the next ordinal): their sidecars' ``round_seq``,
        and a fresh budget of disturbed-run re-runs."""
        assert self.executor is not None
        self.executor.round_seq = self.seq.next() if seq is None else seq
        self.executor.reruns.new_round()
        return self.executor.round_seq

    def start_round(self, rnd: list[Slot], seq: int | None = None) -> None:
        """Count a round (ordinal ``seq``, else the next) and run the noise floor at its start
        (:mod:`podnet.launch.noise.floor`)."""
        assert self.executor is not None
        now = self.enter_round(seq)
        self.result.rounds += 1
        if self.floor is not None:
            self.result.floor_runs += len(self.floor.round(rnd, self.executor.launch_meta, now))
            self.result.floor_stopped = self.floor.stopped

    def retry(
        self, slots: list[Slot], total: int, n: int, budget: int | None = None, seq: int | None = None
    ) -> int:
        """One retry pass for runs that failed on working pods and Ready nodes (transient failures);
        ``n``: runs launched so far, returned with the retries added. The pass is a round of its own
        (ordinal ``seq``, else the next): a retried run pairs with the runs of its own time."""
        entered = False
        for slot in slots:
            st = self.tally.states[slot.case]
            if slot.repeat in st.ok_repeats() or st.exhausted(slot.repeat, self.cfg.max_attempts):
                continue
            if budget is not None and n >= budget:
                break
            cp = self.case_plan(slot.case)
            why = self.workload.blocked(cp)
            if why:  # e.g. its node went NotReady since: a later launch retries it
                log.warning("not retrying %s r%03d: %s", cp.case.label, slot.repeat, why)
                continue
            n += 1
            if not entered:
                entered = True
                self.enter_round(seq)
            log.info(
                "retrying %s r%03d (attempt %d)", cp.case.label, slot.repeat, st.next_attempt(slot.repeat)
            )
            self.run_one(cp, slot, total, n)
        return n

    def run_one(self, cp: CasePlan, slot: Slot, total: int, n: int) -> str:
        """One run, timed by the launch's clock; a run judged disturbed (:mod:`podnet.launch.spec.disturbance`)
        runs again at once, in the same round, while the round has re-runs left. Returns ok / failed."""
        assert self.executor is not None
        while True:
            t0 = self.clock()
            try:
                status = self.executor.run(cp, slot, total, n)
            finally:
                self.times.add(slot.case, self.clock() - t0)
            if status != "disturbed":
                return status

    # -- the whole launch -----------------------------------------------------------------------------------
    def run(self, dry_run: bool = False) -> LaunchResult:
        """Steps 1-5 of the module docstring; never raises for run failures."""
        cfg, result = self.cfg, self.result
        t0 = self.clock()  # the budget counts from here
        result.started = now_iso()
        try:
            with interruptible(), hold_cpu_latency(cfg.cpu_latency_us) as idle:
                result.cpu_latency = idle.as_record()
                facts = self.discover()
                pending = pending_runs(cfg, facts.variant, self.tally.states)
                if cfg.adaptive:
                    self.sampler = Sampler(self, self.clock, t0)
                more = [] if pending or not self.sampler else self.sampler.wanted(self.sampler.judge())
                log.info(
                    "experiment %s, variant %s: %d case(s), %d run(s) missing%s",
                    cfg.experiment,
                    facts.variant,
                    len(cfg.cases),
                    sum(len(v) for v in pending.values()),
                    f", {len(more)} case(s) need more repeats (adaptive)" if more else "",
                )
                if dry_run:
                    self.dry_run(pending)
                    return result
                if not pending and not more:
                    log.info("nothing to launch: every run is in %s", cfg.raw_dir)
                    self.sampler = None  # no launch, no account
                    return result
                self.prepare(
                    set(pending) | set(more) | ({c.key for c in cfg.cases} if cfg.adaptive else set())
                )
                result.warmups += warm_up(self, set(pending) | set(more))
                self.run_rounds(pending, cfg.adaptive_max_runs)
                if self.sampler:
                    self.sampler.loop()
        except Interrupted as exc:
            result.interrupted = True
            result.error = f"interrupted ({exc.args[0] if exc.args else 'SIGINT'})"
            log.error("interrupted: cleaning up")
        except (KubeError, LaunchConfigError) as exc:
            result.error = str(exc)
            log.error("%s", exc)
        except Exception as exc:
            result.error = f"{exc.__class__.__name__}: {str(exc).strip()[:500]}"
            log.exception("launch failed")
        finally:
            self.teardown()
            result.ended = now_iso()
        if self.sampler and not dry_run and self.executor is not None:
            try:
                result.adaptive_account = str(self.sampler.write_account())
                self.sampler.met_targets()
            except Exception as exc:  # noqa: BLE001 - a statistics problem must not hide the launch result
                log.warning("could not judge the adaptive targets: %s", exc)
        result.node_failures.update({**self.workload.unreachable, **self.workload.nodes.seen})
        self.tally.finish(cfg.cases)
        return result

    def teardown(self) -> None:
        """Delete what this launch created (bounded wait); record what is left."""
        if self.floor is not None:
            self.floor.close()
        scale = self.executor.scale if self.executor is not None else None
        if scale is not None and self.cfg.namespace_create:
            try:  # many objects: faster by the bulk API than by the namespace's controller
                scale.release()
            except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the namespace deletion still takes them
                log.warning("scale objects not deleted before the namespace: %s", exc)
        gone, left = self.workload.teardown()
        if gone is not None:
            self.result.namespace_deleted = gone
            self.result.leftovers = left

    def dry_run(self, pending: dict[CaseKey, list[int]]) -> None:
        """Log the pods and the rounds a launch would create and run."""
        assert self.facts is not None
        plan = build_plan(self.cfg, self.facts.nodes)
        for p in plan.pods.values():
            where = p.placement.node or f"UNPLACED ({p.placement.reason})"
            servers = ", ".join(shlex.join(s.argv) if s.argv else "nginx" for s in p.servers)
            log.info(
                "pod %-32s %-6s %-4s on %s%s",
                p.name,
                p.role,
                p.kind,
                where,
                f": {servers}" if servers else "",
            )
        keys = [c.key for c in self.cfg.cases if c.key in pending]
        for rnd in schedule(keys, pending, self.cfg.order, self.cfg.seed):
            log.info("round %d: %s", rnd[0].round if rnd else 0, " ".join("/".join(s.case) for s in rnd))


def launch(
    config: str | Path | LaunchConfig,
    *,
    kubeconfig: str | None = None,
    manifest: str | Path | None = None,
    dry_run: bool = False,
    kube: Any = None,
) -> LaunchResult:
    """Run a config's launch; write the manifest (JSON) when asked. Never raises for run failures."""
    cfg = config if isinstance(config, LaunchConfig) else load_config(config)
    if kubeconfig:
        cfg.kubeconfig = kubeconfig
    launcher: Launcher | None = None
    try:
        kube = kube or Kube(cfg.kubeconfig, cfg.context, cfg.timeouts["api"])
        launcher = Launcher(cfg, kube)
        result = launcher.run(dry_run=dry_run)
    except KubeError as exc:
        log.error("%s", exc)
        result = LaunchResult(experiment=cfg.experiment, launch_id="", error=str(exc), started=now_iso())
        result.ended = now_iso()
    except KeyboardInterrupt:
        if launcher is not None:
            launcher.teardown()
        result = LaunchResult(
            experiment=cfg.experiment, launch_id="", interrupted=True, error="interrupted", started=now_iso()
        )
        result.ended = now_iso()
    if not dry_run:
        write_logs(cfg, result, manifest)
    log.info(
        "launch %s: %d run(s) launched, %d ok, %d failed%s%s",
        result.launch_id or "-",
        result.launched,
        result.ok,
        result.failed,
        f", {result.disturbed} disturbed and re-run, {result.disturbed_kept} disturbed and kept"
        if result.disturbed or result.disturbed_kept
        else "",
        f"; {result.error}" if result.error else "",
    )
    return result
