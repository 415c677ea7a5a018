"""Adaptive rounds of a side-by-side launch (:class:`VariantSampler`), split from
:mod:`podnet.launch.campaign.sidebyside`, which runs the rounds it asks for.

With ``launch.adaptive``, added rounds go to the variant comparisons of the primary family
(``stats.primary`` entries ``by: variant``) whose side-by-side interval is still wider than its
target (or rests on fewer than ``stats.planning.min_to_stop`` pairs), until every one is met, a
case reaches ``stats.planning.max_repeats`` or ``launch.adaptive.budget`` cannot hold another round:
the stop rule of one launch (:mod:`podnet.launch.rounds.stop`), in this loop's words
(:data:`~podnet.launch.campaign.account.STOP_WORDS`). A round runs each unmet comparison's case
under its treatment and the baseline (:func:`needed_variants`), the idle point of each load point
among them, and every case declared ``every_round`` under each variant that can still run it
(:mod:`podnet.launch.rounds.everyround`); the round's predicted time counts them all. The account
is ``raw/<exp>/_side_by_side/<launch id>.json``
(:class:`~podnet.launch.campaign.account.SideBySideAccount`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from podnet.launch.campaign.account import STOP_WORDS, SideBySideAccount, VariantJudged
from podnet.launch.rounds import stop as rule
from podnet.launch.rounds.account import write_json
from podnet.launch.rounds.everyround import Joined, join
from podnet.launch.rounds.scale import by_scale
from podnet.launch.rounds.schedule import Slot, schedule
from podnet.launch.spec.config import CaseKey, LaunchConfig
from podnet.launch.spec.load import with_idle_points

if TYPE_CHECKING:
    from podnet.launch.rounds.runner import Launcher

log = logging.getLogger("podnet.launch")

#: one run to do: which variant's launcher, which slot
Pair = tuple["Launcher", Slot]


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


class Variants(Protocol):
    """What the sampler needs of a side-by-side launch
    (:class:`~podnet.launch.campaign.sidebyside.SideBySide` implements it)."""

    launch_id: str
    cfg: LaunchConfig
    launchers: list[Launcher]
    clock: Callable[[], float]

    def run_pairs(self, rounds: list[list[Pair]]) -> int:
        """Run side-by-side rounds (then each variant's retry pass); returns runs launched."""
        ...


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

    def __init__(self, sbs: Variants, t0: float):
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
        self._joined: Joined | None = None

    @property
    def joined(self) -> Joined:
        """The every-round cases' added rounds per variant (the account's ``every_round``)."""
        if self._joined is None:
            self._joined = Joined.of(self.sbs.cfg.cases, [L.variant for L in self.sbs.launchers])
        return self._joined

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
        ratio to idle is paired by round (:func:`podnet.launch.spec.load.with_idle_points`); then
        every case declared ``every_round`` that ``L`` can still run
        (:func:`podnet.launch.rounds.everyround.join`)."""

        def can_extend(k: CaseKey) -> bool:
            return L.can_run(k) and L.last_repeat(k) < self.cap

        full = with_idle_points(L.cfg.cases, keys)
        return join(L.cfg.cases, [k for k in full if k in keys or can_extend(k)], can_extend)

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
            self.joined.record({L.variant: ks for L, ks in per_keys})
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
                    continue  # no unmet comparison of this variant, no every-round case: it sits the round out
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
        path = write_json(Path(self.sbs.cfg.raw_dir) / "_side_by_side" / f"{self.sbs.launch_id}.json", doc)
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
            every_round=self.joined.to_json(),
            items=tuple(self.items),
        )
