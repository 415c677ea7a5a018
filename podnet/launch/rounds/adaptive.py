"""Adaptive sampling: rounds added after the base rounds, judged on the declared primary comparisons.

After the base rounds (``repeats``, at least ``stats.planning.min_repeats``) the launcher parses
what raw/ holds for this variant and asks :func:`podnet.stats.precision.primary_precision` (the
statistics stage's own ratios, paired within a launch's interleaved rounds) how wide each primary
comparison's interval still is. The treatment case and the baseline case of every comparison
still wider than its target get one more interleaved round; cases outside the primary family get
the base repeats only. Without a by-scenario ``stats.primary`` each case's own headline interval is
judged (:func:`podnet.stats.cases_needing_more`). A case whose test is declared ``every_round``
joins each added round while it can run and is below the cap (:mod:`podnet.launch.rounds.everyround`),
counted in the round's predicted time. It stops when everything is met, when the next
round is predicted not to fit in ``launch.adaptive.budget`` (or ``adaptive.max_runs``), or when every unmet
comparison reached ``stats.planning.max_repeats`` or cannot run: the rule of
:mod:`podnet.launch.rounds.stop`, which side-by-side variants share. At the end
:meth:`Sampler.write_account` writes ``raw/<exp>/<variant>/_adaptive/<launch_id>.json``
(:class:`~podnet.launch.rounds.account.Account`, :func:`podnet.stats.account.account_schema`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podnet.launch.cluster.provenance import now_iso
from podnet.launch.rounds import stop as rule
from podnet.launch.rounds.account import Account, Ended, Judged, write_json
from podnet.launch.rounds.everyround import Joined, join
from podnet.launch.rounds.schedule import Slot, round_order
from podnet.launch.rounds.state import initial_repeats
from podnet.launch.spec.config import CaseKey
from podnet.launch.spec.load import with_idle_points

if TYPE_CHECKING:
    import pandas as pd

    from podnet.launch.rounds.interface import Rounds

log = logging.getLogger("podnet.launch")

#: the fixed protocol an adaptive launch is compared with (runs per case)
FIXED_REPEATS = 10


def fmt_duration(seconds: float) -> str:
    """``9m40s``, ``30m``, ``1h05m``, ``45s`` (rounded to the second)."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m" if m else f"{h}h"
    if m:
        return f"{m}m{sec:02d}s" if sec else f"{m}m"
    return f"{sec}s"


class Sampler:
    """The adaptive loop of one launch (its clock, budget, judgement, account); the launch is reached
    only through :class:`~podnet.launch.rounds.interface.Rounds` (the Launcher implements it)."""

    def __init__(self, launcher: Rounds, clock: Callable[[], float], t0: float | None = None):
        from podnet.stats import resolve

        self.L = launcher
        self.clock = clock
        self.t0 = clock() if t0 is None else t0
        self.settings = resolve(launcher.cfg.stats)
        self.cap = int(self.settings["planning"]["max_repeats"])
        self.target = float(self.settings["planning"]["target_rel_half_width"])
        self.primary = [p for p in self.settings["primary"] if p.get("by") == "scenario"]
        self.mode = "primary" if self.primary else "cases"
        # what a launch can judge: its own variant's by-scenario comparisons of the primary baselines
        bases = {str(p["baseline"]) for p in self.primary}
        comps = [
            c for c in self.settings["comparisons"] if c["by"] == "scenario" and str(c["baseline"]) in bases
        ]
        # the baseline case runs in every round one of its comparisons needs: pair the rounds both ran
        self.judged = rule.adaptive_settings(self.settings, comps, require_same_repeats=False) | {
            "primary": self.primary
        }
        self.nmin = int(self.settings["planning"]["min_repeats"])
        self.rule = rule.StopRule(self.cap, launcher.cfg.budget_s, launcher.cfg.adaptive_max_runs)
        self.stop = ""
        self.rounds = 0
        self.items: list[Judged] = []
        #: the every-round cases' adaptive rounds (the account's ``every_round``)
        self.joined = Joined.of(launcher.cfg.cases, [launcher.variant])

    # -- data --------------------------------------------------------------------------------------------
    def tidy(self, keys: set[CaseKey] | None = None) -> pd.DataFrame | None:
        """Tidy rows of this variant's successful runs of the configured cases (or of ``keys``)."""
        from podnet.parse import parse_files

        L = self.L
        files = [
            a.path
            for key, st in L.tally.states.items()
            if keys is None or key in keys
            for atts in st.attempts.values()
            for a in atts
            if a.status == "ok"
        ]
        if not files:
            return None
        parsed = parse_files(files, L.cfg.raw_dir, L.cfg.experiment)
        return parsed.tidy[parsed.tidy["variant"] == L.variant]

    def runnable(self, key: CaseKey) -> bool:
        """The case is in the launch's plan, its tool is in the image and its pods and nodes work."""
        return self.L.can_run(key)

    def last_repeat(self, key: CaseKey) -> int:
        return self.L.last_repeat(key)

    def at_cap(self, key: CaseKey) -> bool:
        return self.rule.capped(len(self.L.tally.states[key].ok_repeats()), self.last_repeat(key))

    def expected_pairs(self) -> list[tuple[CaseKey, CaseKey, list[str], float]]:
        """(treatment case, baseline case, metrics, target) the by-scenario primary entries declare for this config."""
        from podnet.stats.kinds import tool_headline

        scen = {s.name: s for s in self.L.cfg.scenarios}
        comps = {(c["by"], str(c["baseline"])): c for c in self.settings["comparisons"]}
        out = []
        for p in self.primary:
            base = scen.get(str(p["baseline"]))
            if base is None:
                continue
            comp_treat = comps.get(("scenario", str(p["baseline"])), {}).get("treatments")
            treats = [str(t) for t in (p.get("treatments") or comp_treat or scen)]
            for name in treats:
                sc = scen.get(name)
                if sc is None or name == base.name or (comp_treat and name not in map(str, comp_treat)):
                    continue
                for t in sc.tests:
                    specs = [str(x).partition(":") for x in p.get("tests") or []]
                    if specs and not any(t.tool == a and (not b or t.name == b) for a, _, b in specs):
                        continue
                    if t in base.tests:
                        metrics = [str(m) for m in p.get("metrics") or tool_headline(t.tool)]
                        target = float(p.get("target_rel_half_width", self.target))
                        out.append(((name, t.tool, t.name), (base.name, t.tool, t.name), metrics, target))
        return out

    # -- judgement ----------------------------------------------------------------------------------------
    def judge(self) -> list[Judged]:
        """One item per primary comparison (or per case's headline metric), met or not, with its cases."""
        return self._judge_primary() if self.mode == "primary" else self._judge_cases()

    def _judge_primary(self) -> list[Judged]:
        from podnet.stats.precision import primary_precision

        pairs = self.expected_pairs()
        keys = {k for t, b, _, _ in pairs for k in (t, b)}
        tidy = self.tidy(keys)
        prec = None
        if (
            tidy is not None
            and len(tidy)
            and set(tidy["scenario"]) & {str(p["baseline"]) for p in self.primary}
        ):
            prec = primary_precision(tidy, self.judged)
        items: list[Judged] = []
        seen = set()
        rows = prec[prec["by"] == "scenario"] if prec is not None else None
        for _, r in rows.iterrows() if rows is not None else ():
            treat = (str(r["scenario"]), str(r["tool"]), str(r["test"]))
            base = (str(r["baseline"]), str(r["tool"]), str(r["test"]))
            seen.add((treat, str(r["metric"])))
            items.append(_item(r, "scenario", treat, base))
        # metrics each (tool, test) produced in this launch, any scenario: a headline metric the test
        # never reports (qperf's tcp_lat has a latency, no throughput) is no comparison to judge
        produced: dict[tuple[str, str], set[str]] = {}
        if tidy is not None and len(tidy):
            for (tool, test), g in tidy.groupby(["tool", "test"]):
                produced[(str(tool), str(test))] = set(map(str, g["metric"]))
        for treat, base, metrics, target in pairs:  # declared, but no ratio: a side has no values
            made = produced.get((treat[1], treat[2]))
            for m in metrics:
                if made and m not in made:
                    continue
                if (treat, m) not in seen:
                    items.append(_declared(treat, base, m, target))
        return items

    def _judge_cases(self) -> list[Judged]:
        from podnet.stats import plan
        from podnet.stats.planning import precise

        tidy = self.tidy()
        if tidy is None or not len(tidy):
            return []
        pl = plan(tidy, self.settings)
        pl = pl[pl["headline"]]
        keys = {c.key for c in self.L.cfg.cases}
        items = []
        for _, r in pl.iterrows():
            key = (str(r["scenario"]), str(r["tool"]), str(r["test"]))
            if key not in keys:
                continue
            rhw, n = _num(r["rel_half_width"]), _num(r["n"])
            item = Judged(
                source="case",
                by="case",
                **{c: _val(r[c]) for c in ("scenario", "tool", "test", "metric", "direction", "streams")},
                interval="unpaired" if rhw is not None else "",
                rel_half_width=rhw,
                target_rel_half_width=float(r["target_rel_half_width"]),
                n=n,
                n_needed=_num(r["n_needed"]),
                met=bool(precise(rhw, r["target_rel_half_width"], r["n"], self.settings)),
                cases=(key,),
                # no interval once the minimum ran: failed runs (or a mean of 0), not noise
                more_helps=rhw is not None or (n or 0) < self.nmin,
            )
            items.append(item)
        return items

    # -- the loop -----------------------------------------------------------------------------------------
    def can_extend(self, key: CaseKey) -> bool:
        return self.runnable(key) and not self.at_cap(key)

    def wanted(self, items: list[Judged]) -> list[CaseKey]:
        """Cases of the open items (:meth:`~podnet.launch.rounds.stop.StopRule.open_cases`), config order."""
        want = self.rule.open_cases(items, self.can_extend)
        return [c.key for c in self.L.cfg.cases if c.key in want]

    def loop(self) -> None:
        """Add rounds until every item is met, the budget is spent or nothing more can run."""
        L, cfg = self.L, self.L.cfg
        while True:
            try:
                items = self.judge()
            except Exception as exc:  # noqa: BLE001 - a statistics problem must not fail the runs made
                log.warning("adaptive: cannot judge the runs (%s): no further round", exc)
                self.stop = f"judgement failed: {exc}"[:300]
                return
            self.items = items
            step = self.rule.step(items, self.runnable, self.at_cap)
            unmet = step.unmet
            if step.stop in (rule.NOTHING_TO_JUDGE, rule.ALL_MET):
                self.stop = rule.ALL_MET
                log.info("adaptive: every %s meets its target", self._noun())
                return
            # a load point's idle point runs in its round too: the ratio to idle is paired by round;
            # and every case declared every_round that can still run (before the round's time is predicted)
            keys = [
                k
                for k in with_idle_points(cfg.cases, step.cases)
                if k in step.cases or (self.runnable(k) and not self.at_cap(k))
            ]
            keys = join(cfg.cases, keys, self.can_extend)
            if step.stop:
                self.stop = step.stop
                log.info(
                    "adaptive: %d %s %s; none can run again (%s)",
                    len(unmet),
                    self._noun() + ("" if len(unmet) == 1 else "s"),
                    "misses its target" if len(unmet) == 1 else "miss their targets",
                    self.stop,
                )
                return
            nxt = L.times.predict(keys)
            used = self.clock() - self.t0
            if self.rule.over_budget(used, nxt):
                self.stop = rule.BUDGET_SPENT
                log.info(
                    "adaptive: budget spent: %s of %s used, the next round needs ~%s",
                    fmt_duration(used), fmt_duration(cfg.budget_s or 0), fmt_duration(nxt),
                )  # fmt: skip
                return
            if self.rule.over_runs(L.result.launched, len(keys)):
                self.stop = rule.BUDGET_SPENT
                log.info("adaptive: run budget (max_runs %d) spent", cfg.adaptive_max_runs)
                return
            self.rounds += 1
            self.joined.record({L.variant: keys})
            round_no = 1 + max((self.last_repeat(k) for k in L.tally.states), default=0)
            log.info("%s", self.progress(round_no, unmet, used, nxt))
            order = round_order(keys, cfg.order, cfg.seed, round_no)
            slots = [Slot(k, self.last_repeat(k) + 1, round_no, i + 1) for i, k in enumerate(order)]
            L.run_round(slots)

    def _noun(self) -> str:
        return "primary comparison" if self.mode == "primary" else "case headline metric"

    def progress(self, round_no: int, unmet: Sequence[Judged], used: float, nxt: float) -> str:
        """``adaptive round 7: 5 of 24 primary comparisons still miss ±5 % (worst ...); 9m40s of 30m budget left, next round ~1m10s``."""
        from podnet.stats.precision import half_width_text

        targets = {it.target_rel_half_width for it in self.items}
        goal = half_width_text(targets.pop()) if len(targets) == 1 else "their targets"
        judged = [
            (it.rel_half_width / it.target_rel_half_width, it)
            for it in unmet
            if it.rel_half_width is not None
        ]
        worst = max(judged, key=lambda x: x[0], default=(0.0, None))[1]
        w = f" (worst {worst.label} {half_width_text(worst.rel_half_width or 0)})" if worst else ""
        noun = "primary comparisons" if self.mode == "primary" else "case headline metrics"
        budget = self.L.cfg.budget_s
        left = (
            f"{fmt_duration(budget - used)} of {fmt_duration(budget)} budget left"
            if budget is not None
            else f"{fmt_duration(used)} used, no time budget"
        )
        return (
            f"adaptive round {round_no}: {len(unmet)} of {len(self.items)} {noun} still miss {goal}{w}; "
            f"{left}, next round ~{fmt_duration(nxt)}"
        )

    # -- the account --------------------------------------------------------------------------------------
    def reason(self, it: Judged) -> str:
        """Why an item ended as it did (:func:`podnet.launch.rounds.stop.reason`)."""
        return rule.reason(
            it,
            stop=self.stop,
            runnable=all(map(self.runnable, it.cases)),
            capped=any(map(self.at_cap, it.cases)),
            interrupted=self.L.result.interrupted,
            error=bool(self.L.result.error),
            no_interval_is_failure=self.mode == "primary",
        )

    def account(self) -> Account:
        """The machine-readable account of this launch (:func:`podnet.stats.account.account_schema`)."""
        from podnet.stats.account import ACCOUNT_VERSION

        L, cfg = self.L, self.L.cfg
        if not self.stop:  # the loop did not finish: judge what raw/ holds now
            self.items = self.judge()
            self.stop = "interrupted" if L.result.interrupted else "launch error" if L.result.error else ""
        items = tuple(Ended(it, self.reason(it)) for it in self.items)
        if not self.stop:
            self.stop = rule.ALL_MET if all(e.status == "met" for e in items) else rule.FAILED_RUNS
        runnable = [c for c in cfg.cases if self.runnable(c.key)]
        return Account(
            podnet_adaptive=ACCOUNT_VERSION,
            experiment=cfg.experiment,
            variant=L.variant,
            launch_id=L.launch_id,
            started=L.result.started,
            ended=now_iso(),
            mode=self.mode,
            target_rel_half_width=self.target,
            max_repeats=self.cap,
            budget_s=cfg.budget_s,
            max_runs=cfg.adaptive_max_runs,
            wall_s=round(self.clock() - self.t0, 3),
            base_rounds=initial_repeats(cfg),
            adaptive_rounds=self.rounds,
            stop=self.stop,
            cases=len(cfg.cases),
            runs_launched=L.result.launched,
            runs_recorded=sum(len(a) for st in L.tally.states.values() for a in st.attempts.values()),
            fixed_repeats=FIXED_REPEATS,
            fixed_protocol_runs=FIXED_REPEATS * len(runnable),
            every_round=self.joined.to_json(),
            items=items,
        )

    def write_account(self) -> Path:
        """``raw/<exp>/<variant>/_adaptive/<launch_id>.json`` (validated against the schema first)."""
        from podnet.stats.account import validate

        acc = self.account()
        doc = acc.to_json()
        validate(doc)
        path = write_json(
            Path(self.L.cfg.raw_dir) / self.L.variant / "_adaptive" / f"{self.L.launch_id}.json", doc
        )
        log.info(
            "adaptive: %d of %d %ss met their target (%s); %d runs launched, a fixed %d-repeat protocol: %d; %s",
            acc.met, len(acc.items), self._noun(), acc.stop, acc.runs_launched, FIXED_REPEATS,
            acc.fixed_protocol_runs, path,
        )  # fmt: skip
        return path

    def met_targets(self) -> None:
        """Each case's manifest ``met_target``: every judged item it belongs to is met."""
        flags: dict[CaseKey, bool] = {}
        for it in self.items:
            for c in it.cases:
                flags[c] = flags.get(c, True) and it.met
        for case in self.L.cfg.cases:
            if case.key in flags:
                self.L.tally.outcome(case).met_target = flags[case.key]


def _num(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def _val(v: Any) -> Any:
    import pandas as pd

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    if hasattr(v, "item"):
        v = v.item()
    return v if isinstance(v, str) else (int(v) if float(v).is_integer() else float(v))


def _item(r: Any, by: str, treat: CaseKey, base: CaseKey) -> Judged:
    """A judged primary comparison; one with fewer than 2 pairs is unmet, whatever its unpaired interval."""
    rhw, pairs = _num(r["rel_half_width"]), _num(r["n_pairs"]) or 0
    short = (
        f"fewer than 2 pairs ({pairs:.0f}) within the launch's rounds" if rule.too_few_pairs(pairs) else ""
    )
    return Judged(
        source="ratio",
        by=by,
        baseline=str(r["baseline"]),
        treatment=str(r["treatment"]),
        **{c: _val(r[c]) for c in ("scenario", "tool", "test", "metric", "direction", "streams")},
        interval=str(r["interval"]),
        **{c: _num(r[c]) for c in ("ratio", "low", "high")},
        rel_half_width=rhw,
        target_rel_half_width=float(r["target_rel_half_width"]),
        n=_num(r["n"]),
        n_needed=_num(r["n_needed"]),
        met=bool(r["met"]) and not short,
        cases=(treat, base),
        note=short,
        more_helps=rhw is not None,  # no interval once its rounds ran: failed runs (or a mean of 0)
    )


def _declared(treat: CaseKey, base: CaseKey, metric: str, target: float) -> Judged:
    """A declared primary comparison without a ratio (a side has no values): unmet, no round helps."""
    return Judged(
        source="declared",
        by="scenario",
        baseline=base[0],
        treatment=treat[0],
        scenario=treat[0],
        tool=treat[1],
        test=treat[2],
        metric=metric,
        rel_half_width=None,
        target_rel_half_width=target,
        met=False,
        cases=(treat, base),
        more_helps=False,
    )
