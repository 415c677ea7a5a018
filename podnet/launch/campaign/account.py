"""The side-by-side adaptive account as typed values, turned into JSON only at the edge.

:class:`VariantJudged` is one primary variant comparison of
:class:`~podnet.launch.campaign.variantsampler.VariantSampler` (a treatment variant against the baseline
variant on one case and metric); :class:`SideBySideAccount` the whole account, whose
:meth:`SideBySideAccount.to_json` is ``raw/<exp>/_side_by_side/<launch id>.json``, key for key in the
order it always had.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from podnet.launch.rounds import stop as rule
from podnet.launch.rounds.stop import Comparison
from podnet.launch.spec.config import CaseKey

#: how a side-by-side account words the ends of the stop rule (:mod:`podnet.launch.rounds.stop`)
STOP_WORDS = {
    rule.NOTHING_TO_JUDGE: "no primary variant comparison (stats.primary by: variant) to judge",
    rule.ALL_MET: "every primary variant comparison met its target",
    rule.MAX_REPEATS: "max_repeats reached (or the unmet cases cannot run)",
    rule.FAILED_RUNS: "max_repeats reached (or the unmet cases cannot run)",
    rule.BUDGET_SPENT: rule.BUDGET_SPENT,
}


@dataclass(frozen=True, kw_only=True)
class VariantJudged(Comparison):
    """One side-by-side comparison: ``cases`` is its one case (:attr:`case`), run under both variants;
    ``ratio``, ``ci_low``, ``ci_high`` are its interval (None: no side-by-side interval yet, fewer than
    2 pairs, stated in ``note``); ``n_pairs`` the pairs it rests on."""

    variant: str
    baseline_variant: str
    metric: str
    n_pairs: int
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def case(self) -> CaseKey:
        return self.cases[0]

    def to_json(self) -> dict[str, Any]:
        interval = {"ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high}
        return {
            "variant": self.variant,
            "baseline_variant": self.baseline_variant,
            "case": list(self.case),
            "metric": self.metric,
            **(interval if self.ratio is not None else {}),
            "rel_half_width": self.rel_half_width,
            "target_rel_half_width": self.target_rel_half_width,
            "n_pairs": self.n_pairs,
            "met": self.met,
            **({"note": self.note} if self.note else {}),
        }


@dataclass(frozen=True, kw_only=True)
class SideBySideAccount:
    """The account of one side-by-side launch (fields in the file's key order)."""

    launch_id: str
    experiment: str
    variants: list[str]
    design: str
    added_rounds: int
    stop: str
    runs_launched: int
    min_to_stop: int
    max_repeats: int
    budget_s: float | None
    #: per case declared ``every_round``: the added rounds it joined under each variant
    #: (:class:`~podnet.launch.rounds.everyround.Joined`)
    every_round: list[dict[str, Any]] = field(default_factory=list)
    items: tuple[VariantJudged, ...]

    @property
    def met(self) -> int:
        """Comparisons that met their target."""
        return sum(it.met for it in self.items)

    def to_json(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self)}
        return doc | {"items": [it.to_json() for it in self.items]}
