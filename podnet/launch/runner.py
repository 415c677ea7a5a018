"""A whole launch, as ``podnet/launch/README.md`` describes it.

1. Learn the cluster (nodes, CNI, variant) and scan ``raw/`` for what is missing;
   with nothing missing, stop: no namespace, no pod.
2. Create the namespace, pods and Services (:mod:`podnet.launch.workload`).
3. Run the missing repeats in interleaved rounds, retrying failed runs once at
   the end unless their pods or nodes are broken (:mod:`podnet.launch.execute`).
4. Adaptive: add rounds of the cases whose headline interval is still too wide.
5. Delete everything, after success, on errors and on Ctrl-C / SIGTERM; write the
   manifest (:mod:`podnet.launch.results`).

:func:`launch` is what ``podnet launch`` and the Snakemake ``launch`` checkpoint call.
"""

from __future__ import annotations

import logging
import secrets
import shlex
import time
from pathlib import Path
from typing import Any

from podnet.launch import provenance
from podnet.launch.config import LaunchConfig, LaunchConfigError, load_config
from podnet.launch.execute import Executor
from podnet.launch.k8s import Kube, KubeError
from podnet.launch.leftovers import cleanup
from podnet.launch.plan import CasePlan, build_plan
from podnet.launch.results import LaunchResult, Tally, now_iso, write_logs
from podnet.launch.schedule import Slot, schedule
from podnet.launch.signals import Interrupted, interruptible
from podnet.launch.state import CaseKey, invalidate_stale_manifest, launch_complete, pending_runs, scan
from podnet.launch.warmup import warm_up
from podnet.launch.workload import Workload

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

    def __init__(self, cfg: LaunchConfig, kube: Any, *, launch_id: str | None = None, repo: str | Path = "."):
        self.cfg = cfg
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
        self.executor = Executor(self.cfg, w, self.facts, self.tally, launch_meta)

    def case_plan(self, key: CaseKey) -> CasePlan:
        assert self.workload.plan is not None
        return next(cp for cp in self.workload.plan.cases if cp.case.key == key)

    # -- rounds ------------------------------------------------------------------------------------------
    def run_rounds(self, pending: dict[CaseKey, list[int]], budget: int | None = None) -> int:
        """Run pending repeats in interleaved rounds, then one retry of transient failures; returns runs launched."""
        assert self.executor is not None
        keys = [c.key for c in self.cfg.cases if c.key in pending]
        rounds = schedule(keys, pending, self.cfg.order, self.cfg.seed)
        total = sum(len(r) for r in rounds) if budget is None else min(sum(len(r) for r in rounds), budget)
        n = 0
        retry: list[Slot] = []
        for rnd in rounds:
            self.result.rounds += 1
            for slot in rnd:
                if budget is not None and n >= budget:
                    return n
                cp = self.case_plan(slot.case)
                if cp.skipped:
                    continue
                n += 1
                if self.executor.run(cp, slot, total, n) != "ok" and not self.workload.blocked(cp):
                    retry.append(slot)
        # one retry pass for runs that failed on working pods and Ready nodes (transient failures)
        for slot in retry:
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
            log.info(
                "retrying %s r%03d (attempt %d)", cp.case.label, slot.repeat, st.next_attempt(slot.repeat)
            )
            self.executor.run(cp, slot, total, n)
        return n

    def adaptive_rounds(self, budget: int | None) -> None:
        """Add rounds of the cases whose interval is still too wide, up to max_repeats."""
        from podnet.stats import resolve

        cap = int(resolve(self.cfg.stats)["planning"]["max_repeats"])
        used = 0
        while True:
            pend: dict[CaseKey, list[int]] = {}
            for key in self.cases_needing_more():
                st = self.tally.states[key]
                last = max(st.attempts, default=0)
                if len(st.ok_repeats()) < cap and last < cap:
                    pend[key] = [last + 1]
            if not pend:
                log.info("adaptive: no case needs another repeat")
                return
            left = None if budget is None else budget - used
            if left is not None and left <= 0:
                log.info("adaptive: run budget (%d) used up", budget)
                return
            log.info("adaptive: %d case(s) need another repeat", len(pend))
            used += self.run_rounds(pend, left)

    def _tidy(self) -> Any:
        """Tidy rows of this variant's successful runs of the configured cases (None without any)."""
        from podnet.parse import parse_files

        states = self.tally.states.values()
        files = [a.path for st in states for atts in st.attempts.values() for a in atts if a.status == "ok"]
        if not files:
            return None
        parsed = parse_files(files, self.cfg.raw_dir, self.cfg.experiment)
        return parsed.tidy[parsed.tidy["variant"] == self.variant]

    def cases_needing_more(self) -> list[CaseKey]:
        """Cases of this launch whose headline interval is wider than the target (podnet.stats)."""
        from podnet.stats import cases_needing_more

        tidy = self._tidy()
        if tidy is None:
            return []
        need = cases_needing_more(tidy, self.cfg.stats, ["scenario", "tool", "test"])
        keys = {c.key for c in self.cfg.cases}
        plan = self.workload.plan
        runnable = {cp.case.key for cp in (plan.cases if plan else []) if not cp.skipped}
        found = ((d["scenario"], d["tool"], d["test"]) for d in need)
        return [k for k in found if k in keys and (plan is None or k in runnable)]

    def met_targets(self) -> None:
        """Each case's met_target (adaptive runs): every headline metric's interval within the target."""
        if not self.cfg.adaptive:
            return
        from podnet.stats import plan as stats_plan

        tidy = self._tidy()
        if tidy is None or not len(tidy):
            return
        pl = stats_plan(tidy, self.cfg.stats)
        met = pl[pl["headline"]].groupby(["scenario", "tool", "test"])["met_target"].all()
        for case in self.cfg.cases:
            if case.key in met.index:
                self.tally.outcome(case).met_target = bool(met.loc[case.key])

    # -- the whole launch -----------------------------------------------------------------------------------
    def run(self, dry_run: bool = False) -> LaunchResult:
        """Steps 1-5 of the module docstring; never raises for run failures."""
        cfg, result = self.cfg, self.result
        result.started = now_iso()
        try:
            with interruptible():
                facts = self.discover()
                pending = pending_runs(cfg, facts.variant, self.tally.states)
                more = [] if pending or not cfg.adaptive else self.cases_needing_more()
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
                    return result
                self.prepare(
                    set(pending) | set(more) | ({c.key for c in cfg.cases} if cfg.adaptive else set())
                )
                warm_up(self, set(pending) | set(more))
                self.run_rounds(pending, cfg.adaptive_max_runs)
                if cfg.adaptive:
                    budget = cfg.adaptive_max_runs
                    self.adaptive_rounds(None if budget is None else budget - result.launched)
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
        try:
            self.met_targets()
        except Exception as exc:  # noqa: BLE001 - a statistics problem must not hide the launch result
            log.warning("could not judge targets: %s", exc)
        result.node_failures.update({**self.workload.unreachable, **self.workload.nodes.seen})
        self.tally.finish(cfg.cases)
        return result

    def teardown(self) -> None:
        """Delete what this launch created (bounded wait); record what is left."""
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
        "launch %s: %d run(s) launched, %d ok, %d failed%s",
        result.launch_id or "-",
        result.launched,
        result.ok,
        result.failed,
        f"; {result.error}" if result.error else "",
    )
    return result
