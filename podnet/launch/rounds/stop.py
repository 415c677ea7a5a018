"""The adaptive stop rule: one rule for a single launch (:class:`~.adaptive.Sampler`) and for
variants side by side (:class:`~podnet.launch.campaign.variantsampler.VariantSampler`). No I/O.

Whether a comparison is *met* is the statistics stage's rule (:func:`podnet.stats.planning.met`):
it is *precise* (:func:`podnet.stats.planning.precise`: its interval's relative half-width at most
its target on at least ``stats.planning.min_to_stop`` pairs; METHODS.md, "Two words: different and
precise"), or with ``stop_when_different`` its one p (``p_value``, the tables') below the stop's
per-look level (:func:`podnet.stats.onep.stops_as_different`). It is read from the tables
the samplers judge by (``met`` of :func:`podnet.stats.precision.primary_precision`, ``met`` of
:func:`podnet.stats.variants.variant_table` with ``stop=True``; a case's headline: ``precise``),
each judged at the paired interval's adaptive level
(:func:`adaptive_settings`). A comparison resting on fewer than :data:`FEWEST_PAIRS` pairs is never
met (:func:`too_few_pairs`). This module decides the rest:

- *open*: an unmet comparison another round can help (:attr:`Comparison.more_helps`) whose cases
  can all run again (runnable, below ``stats.planning.max_repeats``: :meth:`StopRule.capped`);
  the cases of the open comparisons get the next round (:meth:`StopRule.open_cases`);
- the loop's end (:meth:`StopRule.step`, :meth:`StopRule.over_budget`, :meth:`StopRule.over_runs`):
  :data:`NOTHING_TO_JUDGE`, :data:`ALL_MET`, :data:`MAX_REPEATS` (an unmet comparison's case is at
  the cap), :data:`FAILED_RUNS` (none at the cap: they cannot run), :data:`BUDGET_SPENT`;
- why one comparison ended as it did (:func:`reason`, a single launch's account).

What the callers keep: which comparisons they judge and their cases (a single launch: treatment and
baseline case of a by-scenario comparison, or one case's headline; side by side: one case under two
variants, run only by the variants of unmet comparisons, ``needed_variants``), what "runnable" and
"capped" read (one launch, or every variant's), the order of the cases, and the words of the stop
(side by side words the ends its own way, :data:`podnet.launch.campaign.account.STOP_WORDS`). Only
a single launch states :data:`NOTHING_TO_JUDGE` as :data:`ALL_MET`, has a run limit (``max_runs``),
ends with ``judgement failed: ...`` when the statistics raise, and gives each item a :func:`reason`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from podnet.launch.spec.config import CaseKey

#: the loop's ends (a single launch's account states these words, :data:`podnet.stats.account.REASONS`)
NOTHING_TO_JUDGE = "nothing to judge"
ALL_MET = "all met"
MAX_REPEATS = "max_repeats reached"
FAILED_RUNS = "failed runs"
BUDGET_SPENT = "budget spent"

#: an interval rests on at least this many pairs, else its comparison stays open
FEWEST_PAIRS = 2


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One judged comparison as the stop sees it (the samplers' account items extend it).

    ``more_helps`` is False for an unmet comparison a further round cannot give an interval (no
    interval once its minimum ran: failed runs or a mean of 0, not noise): it is never open.
    """

    cases: tuple[CaseKey, ...]
    met: bool
    rel_half_width: float | None
    target_rel_half_width: float
    note: str = ""
    more_helps: bool = True

    @property
    def too_few_pairs(self) -> bool:
        """Unmet because its interval rests on fewer than :data:`FEWEST_PAIRS` pairs (its note says so)."""
        return self.note.startswith(f"fewer than {FEWEST_PAIRS} pairs")


def too_few_pairs(pairs: float | None) -> bool:
    """An interval on fewer than :data:`FEWEST_PAIRS` pairs: its comparison is not met, whatever its width."""
    return (pairs or 0) < FEWEST_PAIRS


C = TypeVar("C", bound=Comparison)


class Step(NamedTuple, Generic[C]):
    """What the rule says after a judgement: ``stop`` (one of the ends above, ``""`` to go on), the
    unmet comparisons, and the cases the next round runs (empty when it stops)."""

    stop: str
    unmet: tuple[C, ...]
    cases: frozenset[CaseKey]


@dataclass(frozen=True)
class StopRule:
    """The limits of one adaptive loop: ``max_repeats`` per case (``stats.planning``), the wall-clock
    ``budget_s`` and run limit ``max_runs`` (``launch.adaptive``; None: unlimited)."""

    max_repeats: int
    budget_s: float | None = None
    max_runs: int | None = None

    def capped(self, *repeats: int) -> bool:
        """Any of ``repeats`` (a case's repeat counts, as the caller reads them) reached the cap."""
        return any(r >= self.max_repeats for r in repeats)

    def open_cases(
        self, comparisons: Iterable[Comparison], can_extend: Callable[[CaseKey], bool]
    ) -> frozenset[CaseKey]:
        """The cases of the open comparisons: unmet, ``more_helps``, every case ``can_extend``
        (runnable and not capped)."""
        want: set[CaseKey] = set()
        for c in comparisons:
            if c.met or not c.more_helps:
                continue
            if all(can_extend(k) for k in c.cases):
                want.update(c.cases)
        return frozenset(want)

    def step(
        self,
        comparisons: Sequence[C],
        runnable: Callable[[CaseKey], bool],
        capped: Callable[[CaseKey], bool],
    ) -> Step[C]:
        """Stop (nothing judged, all met, no open comparison) or the cases of the next round; the
        budget is asked next, with the round's predicted time (:meth:`over_budget`)."""
        if not comparisons:
            return Step(NOTHING_TO_JUDGE, (), frozenset())
        unmet = tuple(c for c in comparisons if not c.met)
        if not unmet:
            return Step(ALL_MET, (), frozenset())
        cases = self.open_cases(unmet, lambda k: runnable(k) and not capped(k))
        if not cases:
            at_cap = any(capped(k) for c in unmet for k in c.cases)
            return Step(MAX_REPEATS if at_cap else FAILED_RUNS, unmet, frozenset())
        return Step("", unmet, cases)

    def over_budget(self, used_s: float, next_s: float) -> bool:
        """The next round (``next_s`` predicted) would end past the wall-clock budget."""
        return self.budget_s is not None and used_s + next_s > self.budget_s

    def over_runs(self, launched: int, next_runs: int) -> bool:
        """The next round's runs would pass ``max_runs``."""
        return self.max_runs is not None and launched + next_runs > self.max_runs


def reason(
    c: Comparison,
    *,
    stop: str,
    runnable: bool,
    capped: bool,
    interrupted: bool = False,
    error: bool = False,
    no_interval_is_failure: bool = True,
) -> str:
    """Why comparison ``c`` ended as it did (:data:`podnet.stats.account.REASONS`): ``stop`` is the
    loop's end, ``runnable``/``capped`` whether all its cases can run / any is at the cap.
    ``no_interval_is_failure``: an unmet comparison without an interval is put down to failed runs
    (a single launch's primary comparisons; its cases' headlines are not)."""
    if c.met:
        return "met"
    if interrupted:
        return "interrupted"
    if c.too_few_pairs:
        return "fewer than 2 pairs"
    if c.rel_half_width is None and no_interval_is_failure or not runnable:
        return FAILED_RUNS
    if capped:
        return MAX_REPEATS
    if stop == BUDGET_SPENT:
        return BUDGET_SPENT
    return "launch error" if error else FAILED_RUNS


def adaptive_settings(
    settings: Mapping[str, Any], comparisons: list[dict[str, Any]], **paired: Any
) -> dict[str, Any]:
    """The resolved stats ``settings`` a sampler judges with: its ``comparisons`` and the paired
    interval at its adaptive level (``paired.adaptive``: 1 - alpha/2, :mod:`podnet.stats.robust`,
    since the rounds' number comes from this stop), with the caller's further ``paired`` keys."""
    return {
        **settings,
        "comparisons": comparisons,
        "paired": {**settings["paired"], **paired, "adaptive": True},
    }
