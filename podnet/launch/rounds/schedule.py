"""Interleaved rounds: every round runs each pending case once, never all repeats of a case in a row.

``interleaved``: round r holds the cases whose repeat r is pending, in config
order (A B C A B C ...). ``shuffled``: each round's order is a permutation
drawn from ``random.Random(f"{seed}:{r}")``, so the order is reproducible from
the recorded seed; when a round would start with the case the previous round
ended with, the first two are swapped.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Slot:
    """One run to do: which case, which repeat, where it sits in the schedule."""

    case: object
    repeat: int
    round: int
    position: int


@dataclass
class RoundSeq:
    """The ordinals (0, 1, 2, ...) of a launch's rounds as they run: every round, adaptive round and
    retry pass takes the next one (a sidecar's ``round_seq``). The variants of a side-by-side launch
    share one, so the runs of one side-by-side round carry the same ordinal."""

    last: int = -1

    def next(self) -> int:
        self.last += 1
        return self.last


def round_order(items: Sequence[T], order: str, seed: int, round_no: int) -> list[T]:
    """The order of one round's items."""
    out = list(items)
    if order == "shuffled":
        random.Random(f"{seed}:{round_no}").shuffle(out)
    elif order != "interleaved":
        raise ValueError(f"unknown order {order!r} (interleaved or shuffled)")
    return out


def schedule(
    cases: Sequence[T],
    pending: Mapping[T, Sequence[int]],
    order: str = "interleaved",
    seed: int = 1,
) -> list[list[Slot]]:
    """Rounds of slots for the ``pending`` repeats of each case (rounds keyed by repeat number)."""
    by_repeat: dict[int, list[T]] = {}
    for c in cases:
        for r in pending.get(c, ()):
            by_repeat.setdefault(int(r), []).append(c)
    rounds: list[list[Slot]] = []
    last: T | None = None
    for r in sorted(by_repeat):
        items = round_order(by_repeat[r], order, seed, r)
        if len(items) > 1 and last is not None and items[0] == last:
            items[0], items[1] = items[1], items[0]
        rounds.append([Slot(case=c, repeat=r, round=r, position=i + 1) for i, c in enumerate(items)])
        if items:
            last = items[-1]
    return rounds


def flatten(rounds: Sequence[Sequence[Slot]]) -> list[Slot]:
    return [s for rnd in rounds for s in rnd]
