"""Tests declared to run in every round (``launch.tools.<tool>.tests[].every_round: true``).

The base rounds (``launch.repeats``) run every case. An adaptive round runs only the cases of the
unmet primary comparisons (:mod:`podnet.launch.rounds.stop`) and the idle point of each load point
among them (:func:`podnet.launch.spec.load.with_idle_points`). A case whose test is declared
``every_round`` joins each adaptive round too, while it can run and is below
``stats.planning.max_repeats``, so a test judged outside the primary family (netready's time to
network beside a latency family) gets a run a variant in every round the launch holds, paired by
round like the base rounds'. It never starts a round of its own: the stop rule decides whether
there is a round; :func:`join` adds the case to it before the round's time is predicted
(``RunTimes.predict``), so the budget check counts its runs. Both samplers use it: a single launch
(:class:`~podnet.launch.rounds.adaptive.Sampler`) and variants side by side
(:class:`~podnet.launch.campaign.variantsampler.VariantSampler`, each variant that can run it), and
both state in their account, per every-round case and variant, the adaptive rounds it joined
(:class:`Joined`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.spec.config import Case, CaseKey


def declared(cases: Iterable[Case]) -> list[CaseKey]:
    """The keys of the cases whose test is declared ``every_round``, in the launch's order."""
    return [c.key for c in cases if c.test.every_round]


def join(
    cases: Sequence[Case], keys: Iterable[CaseKey], can_extend: Callable[[CaseKey], bool]
) -> list[CaseKey]:
    """``keys`` (one adaptive round's cases) and every declared every-round case that
    ``can_extend`` (runnable, below the cap), in the order of ``cases`` (the launch's)."""
    want = set(keys)
    extra = {k for k in declared(cases) if k not in want and can_extend(k)}
    return [c.key for c in cases if c.key in want or c.key in extra]


@dataclass
class Joined:
    """The account's record of the every-round cases: per case and variant, the adaptive rounds it
    ran in (of :attr:`rounds`, the adaptive rounds started); fewer when it could not run or had
    reached ``max_repeats``."""

    cases: tuple[CaseKey, ...]
    rounds: int = 0
    joined: dict[CaseKey, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, cases: Iterable[Case], variants: Sequence[str]) -> Joined:
        """Nothing joined yet, for the launch's declared cases under ``variants``."""
        keys = tuple(declared(cases))
        return cls(keys, 0, {k: dict.fromkeys(variants, 0) for k in keys})

    def record(self, per_variant: Mapping[str, Iterable[CaseKey]]) -> None:
        """One adaptive round started: ``per_variant`` its cases under each variant."""
        self.rounds += 1
        for variant, keys in per_variant.items():
            for k in keys:
                if k in self.joined:
                    self.joined[k][variant] = self.joined[k].get(variant, 0) + 1

    def to_json(self) -> list[dict[str, Any]]:
        """``[{"case": [scenario, tool, test], "joined": {variant: rounds}, "of": adaptive rounds}]``."""
        return [{"case": list(k), "joined": dict(self.joined[k]), "of": self.rounds} for k in self.cases]
