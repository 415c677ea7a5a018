"""Variants side by side: one launch of the same experiment under several variants at once,
interleaved run by run.

Each variant is one :class:`~podnet.launch.rounds.runner.Launcher` (its own cluster, or its own name on a
shared cluster for an A/A check), all with one launch id. Round r runs repeat r of every pending
case; within the round each case runs under every variant back to back, the variants in an order
drawn per case (``random.Random(f"{seed}:{round}:{case}")``), so the runs of one round are taken
close in time and the machine's drift is common to both sides of a pair. Every variant's runs of one
round carry the same ``round_seq`` (one counter for all; the retry pass is a round of its own). The
statistics pair a variant's run with the baseline variant's run of the same launch id and round
(:func:`podnet.stats.variants.side_by_side`, design ``side-by-side`` in ``variants.csv``).

With ``launch.adaptive``, added rounds go to the variant comparisons of the primary family
(``stats.primary`` entries ``by: variant``) whose side-by-side interval is still wider than its
target (or rests on fewer than ``stats.planning.min_to_stop`` pairs), until every one is met, a
case reaches ``stats.planning.max_repeats`` or ``launch.adaptive.budget`` cannot hold another round:
the stop rule of one launch (:mod:`podnet.launch.rounds.stop`), in this loop's words
(:data:`~podnet.launch.campaign.account.STOP_WORDS`). The account is
``raw/<exp>/_side_by_side/<launch id>.json`` (:class:`~podnet.launch.campaign.account.SideBySideAccount`);
each variant's launch log is
``raw/<exp>/_launch/<launch id>.<variant>.json``.

    python -m podnet.launch.campaign.sidebyside CONFIG CONFIG [...]   # one config per variant (make compare)

The configs must be one experiment (same raw_dir, scenarios and tests) with distinct
``launch.variant`` names; the first is the baseline of the variant comparisons. Only the first
runs the interleaved noise floor (``launch.floor``): one floor per machine. Variant i's server
ports are ``launch.ports`` + i x 1000 (:func:`variant_ports`), so variants sharing one cluster (an
A/A) never want one host port for two hostNetwork servers; a test that pins its own ``port`` keeps it.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from podnet.launch.campaign.account import STOP_WORDS, SideBySideAccount, VariantJudged
from podnet.launch.cluster.k8s import Kube, KubeError
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.cluster.signals import Interrupted, interruptible
from podnet.launch.noise.idle import hold_cpu_latency
from podnet.launch.noise.interference import link_neighbours
from podnet.launch.rounds import stop as rule
from podnet.launch.rounds.results import LaunchResult, configure_logging, write_logs
from podnet.launch.rounds.runner import Launcher
from podnet.launch.rounds.scale import by_scale, variant_rounds
from podnet.launch.rounds.schedule import Slot, schedule
from podnet.launch.rounds.state import pending_runs
from podnet.launch.rounds.warmup import warm_up
from podnet.launch.spec.config import CaseKey, LaunchConfig, LaunchConfigError, load_config
from podnet.launch.spec.load import LOAD_PORT, with_idle_points

log = logging.getLogger("podnet.launch")

#: one run to do: which variant's launcher, which slot
Pair = tuple[Launcher, Slot]

#: variant i's server ports are the configured ones + i x this: two variants on one cluster (an A/A)
#: run their hostNetwork servers on the same nodes, and one port cannot serve both
PORT_STRIDE = 1000


def variant_ports(cfg: LaunchConfig, i: int) -> dict[str, int]:
    """Variant ``i``'s server ports (``launch.ports``, the load's too, + ``i`` x :data:`PORT_STRIDE`)."""
    ports = {k: int(v) + PORT_STRIDE * i for k, v in {"load": LOAD_PORT, **cfg.ports}.items()}
    high = [k for k, v in ports.items() if v > 65535]
    if high:
        raise LaunchConfigError(
            f"variant {cfg.variant}: launch.ports {', '.join(high)} + {PORT_STRIDE * i} (its place side by "
            f"side) passes 65535: configure lower ports"
        )
    return ports


def check_configs(cfgs: Sequence[LaunchConfig]) -> None:
    """One experiment under distinct variant names; raises :class:`LaunchConfigError` otherwise."""
    if len(cfgs) < 2:
        raise LaunchConfigError("side by side needs at least two variants")
    names = [c.variant for c in cfgs]
    if any(not n or n == "auto" for n in names) or len(set(names)) != len(names):
        raise LaunchConfigError(f"side by side needs distinct launch.variant names (got {names})")
    first = cfgs[0]
    for c in cfgs[1:]:
        if (c.experiment, Path(c.raw_dir)) != (first.experiment, Path(first.raw_dir)):
            raise LaunchConfigError(
                f"variant {c.variant}: experiment {c.experiment} in {c.raw_dir}, the first is "
                f"{first.experiment} in {first.raw_dir}: side by side is one experiment"
            )
        if [k.key for k in c.cases] != [k.key for k in first.cases]:
            raise LaunchConfigError(f"variant {c.variant}: its cases differ from {first.variant}'s")


def interleave(per_variant: Sequence[tuple[Launcher, list[list[Slot]]]], seed: int) -> list[list[Pair]]:
    """Merge each variant's rounds into side-by-side rounds: round i holds every variant's round i,
    case by case in the first variant's order, the variants of one case in a drawn order."""
    out: list[list[Pair]] = []
    for i in range(max((len(r) for _, r in per_variant), default=0)):
        by_case: dict[object, list[Pair]] = {}
        order: list[object] = []
        for launcher, rounds in per_variant:
            for slot in rounds[i] if i < len(rounds) else []:
                if slot.case not in by_case:
                    order.append(slot.case)
                by_case.setdefault(slot.case, []).append((launcher, slot))
        rnd: list[Pair] = []
        for case in order:
            pairs = by_case[case]
            random.Random(f"{seed}:{i + 1}:{'/'.join(map(str, case))}").shuffle(pairs)  # type: ignore[arg-type]
            rnd.extend(pairs)
        out.append(rnd)
    return out


class SideBySide:
    """One launch of several variants at once (``kubes[i]`` talks to variant ``cfgs[i]``'s cluster)."""

    def __init__(
        self,
        cfgs: Sequence[LaunchConfig],
        kubes: Sequence[Any],
        *,
        launch_id: str | None = None,
        repo: str | Path = ".",
        clock: Callable[[], float] = time.monotonic,
    ):
        check_configs(cfgs)
        self.launch_id = launch_id or (time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2))
        self.clock = clock
        # one noise floor per machine (the first variant's); each variant its own server ports
        cfgs = [
            cfgs[0],
            *(replace(c, floor_tests=(), ports=variant_ports(c, i)) for i, c in enumerate(cfgs) if i),
        ]
        self.launchers = [
            Launcher(c, k, launch_id=self.launch_id, repo=repo, clock=clock)
            for c, k in zip(cfgs, kubes, strict=True)
        ]
        self.cfg = cfgs[0]
        self.sampler: VariantSampler | None = None
        # one round ordinal for every variant: the runs of one side-by-side round share it
        for L in self.launchers[1:]:
            L.seq = self.launchers[0].seq

    @property
    def results(self) -> list[LaunchResult]:
        return [L.result for L in self.launchers]

    def run_pairs(self, rounds: list[list[Pair]]) -> int:
        """Run side-by-side rounds, then each variant's retry pass; returns runs launched."""
        total = {id(L): 0 for L in self.launchers}
        for rnd in rounds:
            for launcher, _ in rnd:
                total[id(launcher)] += 1
        retry: dict[int, list[Slot]] = {id(L): [] for L in self.launchers}
        done = {id(L): 0 for L in self.launchers}  # this call's runs per variant: the log's [n/total]
        n = 0
        seq = self.launchers[0].seq
        for rnd in rounds:
            now = seq.next()  # this round's ordinal, the same for every variant
            for launcher in self.launchers:
                mine = [s for L, s in rnd if L is launcher]
                if mine:
                    launcher.start_round(mine, now)
            for launcher, slot in rnd:
                cp = launcher.case_plan(slot.case)
                if cp.skipped:
                    continue
                done[id(launcher)] += 1
                n += 1
                status = launcher.run_one(cp, slot, total[id(launcher)], done[id(launcher)])
                if status != "ok" and not launcher.workload.blocked(cp):
                    retry[id(launcher)].append(slot)
        again = seq.next() if any(retry.values()) else None  # one retry pass of every variant: one round
        for launcher in self.launchers:
            before = done[id(launcher)]
            added = launcher.retry(retry[id(launcher)], total[id(launcher)], before, seq=again) - before
            n += added
        return n

    def run(self) -> list[LaunchResult]:
        """Discover every variant, create the workloads, warm up, run the base rounds side by side,
        then the adaptive rounds; always delete everything. Never raises for run failures."""
        t0 = self.clock()
        try:  # the idle-state hold of the first variant's config, as a single launch holds its own
            with interruptible(), hold_cpu_latency(self.cfg.cpu_latency_us) as idle:
                for L in self.launchers:
                    L.result.started, L.result.cpu_latency = now_iso(), idle.as_record()
                pending: dict[int, dict[CaseKey, list[int]]] = {}
                for L in self.launchers:
                    facts = L.discover()
                    pending[id(L)] = pending_runs(L.cfg, facts.variant, L.tally.states)
                adaptive = self.cfg.adaptive
                if adaptive:
                    self.sampler = VariantSampler(self, t0)
                log.info(
                    "side by side, experiment %s, launch %s: %s",
                    self.cfg.experiment,
                    self.launch_id,
                    ", ".join(
                        f"{L.variant} {sum(len(v) for v in pending[id(L)].values())} run(s) missing"
                        for L in self.launchers
                    ),
                )
                if not any(pending.values()) and not adaptive:
                    log.info("nothing to launch: every run is in %s", self.cfg.raw_dir)
                    return self.results
                every = {c.key for c in self.cfg.cases}
                for L in self.launchers:
                    L.prepare(set(pending[id(L)]) | (every if adaptive else set()))
                link_neighbours([L.executor.interference if L.executor else None for L in self.launchers])
                for L in self.launchers:
                    L.result.warmups += warm_up(L, set(pending[id(L)]))
                per_variant = []
                for L in self.launchers:
                    keys = [c.key for c in L.cfg.cases if c.key in pending[id(L)]]
                    per_variant.append((L, variant_rounds(L.cfg, keys, pending[id(L)])))
                self.run_pairs(interleave(per_variant, self.cfg.seed))
                if self.sampler is not None:
                    self.sampler.loop()
        except Interrupted as exc:
            for r in self.results:
                r.interrupted = True
                r.error = f"interrupted ({exc.args[0] if exc.args else 'SIGINT'})"
            log.error("interrupted: cleaning up")
        except (KubeError, LaunchConfigError) as exc:
            for r in self.results:
                r.error = str(exc)
            log.error("%s", exc)
        except Exception as exc:
            for r in self.results:
                r.error = f"{exc.__class__.__name__}: {str(exc).strip()[:500]}"
            log.exception("side-by-side launch failed")
        finally:
            for L in self.launchers:
                L.teardown()
                L.result.ended = now_iso()
        if self.sampler is not None:
            try:
                self.sampler.write_account()
            except Exception as exc:  # noqa: BLE001 - a statistics problem must not hide the launch result
                log.warning("could not write the side-by-side account: %s", exc)
        for L in self.launchers:
            L.result.node_failures.update({**L.workload.unreachable, **L.workload.nodes.seen})
            L.tally.finish(L.cfg.cases)
        return self.results


def needed_variants(unmet: Sequence[VariantJudged], baseline: str) -> dict[CaseKey, set[str]]:
    """Per case, the variants an adaptive round must run: the baseline and each treatment with an unmet
    comparison on that case. A variant whose comparisons are all met (or that is in none, e.g. an
    exploratory one) sits the adaptive rounds out: the round's time goes to the pairs still unmet."""
    out: dict[CaseKey, set[str]] = {}
    for it in unmet:
        out.setdefault(it.case, {baseline}).add(str(it.variant))
    return out


class VariantSampler:
    """Adaptive rounds across variants: more side-by-side rounds of the cases whose primary variant
    comparison is not yet met (the same interval ``variants.csv`` states), by the stop rule of one
    launch (:class:`~podnet.launch.rounds.stop.StopRule`): a comparison is one case under two
    variants, capped when any variant's case reached ``max_repeats``, runnable when every variant can
    run it; no ``max_runs``."""

    def __init__(self, sbs: SideBySide, t0: float):
        from podnet.stats import resolve
        from podnet.stats.precision import min_to_stop

        self.sbs = sbs
        self.t0 = t0
        cfg = sbs.cfg
        s = resolve(cfg.stats)
        base = sbs.launchers[0].cfg.variant
        comps = [c for c in s["comparisons"] if c.get("by") != "variant"]
        comps.append({"by": "variant", "baseline": base})
        self.settings = rule.adaptive_settings(s, comps)
        self.primary = [p for p in s["primary"] if p.get("by") == "variant"]
        self.cap = int(s["planning"]["max_repeats"])
        self.nmin = min_to_stop(s)
        self.budget = cfg.budget_s
        self.rule = rule.StopRule(self.cap, self.budget)
        self.rounds = 0
        self.stop = ""
        self.items: list[VariantJudged] = []

    def judge(self) -> list[VariantJudged]:
        """The primary family's side-by-side rows of ``variants.csv`` over this variant set's runs."""
        from podnet.parse import parse_files
        from podnet.stats.variants import variant_table

        files = [
            a.path
            for L in self.sbs.launchers
            for st in L.tally.states.values()
            for atts in st.attempts.values()
            for a in atts
            if a.status == "ok"
        ]
        if not files or not self.primary:
            return []
        cfg = self.sbs.cfg
        parsed = parse_files(files, cfg.raw_dir, cfg.experiment)
        vt = variant_table(parsed.tidy, self.settings, stop=True)
        rows = vt[(vt["design"] == "side-by-side") & (vt["role"] == "primary")] if not vt.empty else vt
        items = [
            VariantJudged(
                variant=str(r["variant"]),
                baseline_variant=str(r["baseline_variant"]),
                cases=((str(r["scenario"]), str(r["tool"]), str(r["test"])),),
                metric=str(r["metric"]),
                ratio=float(r["ratio"]),
                ci_low=float(r["ci_low"]),
                ci_high=float(r["ci_high"]),
                rel_half_width=float(r["rel_half_width"]),
                target_rel_half_width=float(r["target_rel_half_width"]),
                n_pairs=int(r["n_pairs"]),
                met=bool(r["met"]),  # podnet.stats.planning.met: precise, or its p below the stop's level
            )
            for _, r in rows.iterrows()
            # cases of this launch only: a load's rows (iperf3 in a probe's test) are no case of theirs
            if (str(r["scenario"]), str(r["tool"]), str(r["test"])) in {c.key for c in cfg.cases}
        ]
        return items + self._unpaired(parsed.tidy, items)

    def _unpaired(self, tidy: Any, items: list[VariantJudged]) -> list[VariantJudged]:
        """An unmet item for every declared primary variant comparison without a side-by-side interval
        (fewer than 2 pairs): the loop never reports the family met while one has no pairs."""
        from podnet.stats.kinds import tool_headline

        base = self.sbs.launchers[0].variant
        seen = {(it.variant, it.case, it.metric) for it in items}
        made = {(str(a), str(b)): set(map(str, g["metric"])) for (a, b), g in tidy.groupby(["tool", "test"])}
        out = []
        for p in self.primary:
            if str(p["baseline"]) != base:
                continue
            others = [
                L.variant for L in self.sbs.launchers[1:]
            ]  # a treatment not launched here is not judged
            treats = [str(t) for t in p.get("treatments") or others if str(t) in others]
            for case in self.sbs.cfg.cases:
                sc, tool, test = (str(x) for x in case.key)
                specs = [str(x).partition(":") for x in p.get("tests") or []]
                if specs and not any(tool == a and (not b or test == b) for a, _, b in specs):
                    continue
                metrics = [str(m) for m in p.get("metrics") or tool_headline(tool)]
                for m in metrics:
                    if (tool, test) in made and m not in made[(tool, test)]:
                        continue  # a headline metric this test never reports is nothing to compare
                    for v in treats:
                        if (v, (sc, tool, test), m) not in seen:
                            target = p.get(
                                "target_rel_half_width", self.settings["planning"]["target_rel_half_width"]
                            )
                            out.append(
                                VariantJudged(
                                    variant=v,
                                    baseline_variant=base,
                                    cases=((sc, tool, test),),
                                    metric=m,
                                    rel_half_width=None,
                                    target_rel_half_width=float(target),
                                    n_pairs=0,
                                    met=False,
                                    note=f"fewer than {rule.FEWEST_PAIRS} pairs of its rounds",
                                )
                            )
        return out

    def _at_cap(self, key: CaseKey) -> bool:
        return self.rule.capped(*(L.last_repeat(key) for L in self.sbs.launchers))

    def _runnable(self, key: CaseKey) -> bool:
        return all(L.can_run(key) for L in self.sbs.launchers)

    def _with_idle(self, L: Launcher, keys: list[CaseKey]) -> list[CaseKey]:
        """``keys`` and the idle point of each load point among them that ``L`` can still run: its
        ratio to idle is paired by round (:func:`podnet.launch.spec.load.with_idle_points`)."""
        full = with_idle_points(L.cfg.cases, keys)
        return [k for k in full if k in keys or (L.can_run(k) and L.last_repeat(k) < self.cap)]

    def loop(self) -> None:
        """Add side-by-side rounds until the family is met, the cap or the budget stops it."""
        clock = self.sbs.clock
        while True:
            self.items = self.judge()
            step = self.rule.step(self.items, self._runnable, self._at_cap)
            if step.stop:
                self.stop = STOP_WORDS[step.stop]
                return
            unmet, keys = step.unmet, sorted(step.cases)
            base = self.sbs.launchers[0].variant
            needs = needed_variants(unmet, base)
            per_keys = [
                (L, self._with_idle(L, [k for k in keys if L.variant in needs.get(k, ())]))
                for L in self.sbs.launchers
            ]
            used = clock() - self.t0
            nxt = sum(L.times.predict(ks) for L, ks in per_keys if ks)
            if self.rule.over_budget(used, nxt):
                self.stop = STOP_WORDS[rule.BUDGET_SPENT]
                return
            self.rounds += 1
            worst = max(unmet, key=lambda it: it.rel_half_width or float("inf"))
            hw = worst.rel_half_width
            (sc, tool, test) = worst.case
            log.info(
                "side-by-side adaptive round %d: %d of %d primary variant comparisons still miss their "
                "target (worst %s %s %s/%s %s %s at %d pairs); next round ~%ds",
                self.rounds, len(unmet), len(self.items), worst.variant, worst.baseline_variant,
                tool, test, sc, f"±{100 * hw:.1f} %" if hw is not None else "no interval", worst.n_pairs, int(nxt),
            )  # fmt: skip
            per_variant = []
            for L, ks in per_keys:
                if not ks:
                    continue  # no unmet comparison of this variant: it sits the round out
                last = {k: L.last_repeat(k) for k in ks}
                pending = {k: [last[k] + 1] for k in ks}
                rounds = schedule(ks, pending, L.cfg.order, L.cfg.seed + self.rounds)
                slots = [s for rnd in rounds for s in rnd]
                per_variant.append((L, by_scale([slots], L.cfg)))
            self.sbs.run_pairs(interleave(per_variant, self.sbs.cfg.seed + self.rounds))

    def write_account(self) -> Path:
        """``raw/<exp>/_side_by_side/<launch id>.json``: every judged item, the stop reason, the runs."""
        acc = self.account()
        doc = acc.to_json()
        path = Path(self.sbs.cfg.raw_dir) / "_side_by_side" / f"{self.sbs.launch_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
        log.info(
            "side by side: %d of %d primary variant comparisons met their target (%s); %d added round(s); %s",
            acc.met, len(acc.items), acc.stop, acc.added_rounds, path,
        )  # fmt: skip
        return path

    def account(self) -> SideBySideAccount:
        """Every judged item, the stop reason, the runs."""
        return SideBySideAccount(
            launch_id=self.sbs.launch_id,
            experiment=self.sbs.cfg.experiment,
            variants=[L.variant for L in self.sbs.launchers],
            design="side-by-side",
            added_rounds=self.rounds,
            stop=self.stop,
            runs_launched=sum(L.result.launched for L in self.sbs.launchers),
            min_to_stop=self.nmin,
            max_repeats=self.cap,
            budget_s=self.budget,
            items=tuple(self.items),
        )


def launch_side_by_side(
    configs: Sequence[str | Path | LaunchConfig], *, kubes: Sequence[Any] | None = None
) -> list[LaunchResult]:
    """Launch the variant configs side by side; write each variant's launch log."""
    cfgs = [c if isinstance(c, LaunchConfig) else load_config(c) for c in configs]
    kubes = (
        list(kubes) if kubes is not None else [Kube(c.kubeconfig, c.context, c.timeouts["api"]) for c in cfgs]
    )
    sbs = SideBySide(cfgs, kubes)
    results = sbs.run()
    for cfg, res in zip(cfgs, results, strict=True):
        write_logs(cfg, res, None, name=f"{res.launch_id}.{cfg.variant}")
        log.info(
            "launch %s, variant %s: %d run(s) launched, %d ok, %d failed%s",
            res.launch_id, cfg.variant, res.launched, res.ok, res.failed, f"; {res.error}" if res.error else "",
        )  # fmt: skip
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m podnet.launch.campaign.sidebyside", description=__doc__.split("\n")[0]
    )
    ap.add_argument("configs", nargs="+", help="one experiment config per variant (the first: the baseline)")
    args = ap.parse_args(argv)
    configure_logging()
    try:
        results = launch_side_by_side(args.configs)
    except (LaunchConfigError, KubeError) as exc:
        print(f"podnet side-by-side: {exc}", file=sys.stderr)
        return 2
    return 1 if any(r.error or r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
