"""Interleaved rounds: every round runs each pending case once, never all repeats of a case in a row.

``interleaved``: round r holds the cases whose repeat r is pending, in config
order (A B C A B C ...). ``shuffled``: each round's order is a permutation
drawn from ``random.Random(f"{seed}:{r}")``, so the order is reproducible from
the recorded seed; when a round would start with the case the previous round
ended with, the first two are swapped. ``blocked``: each round runs the scenarios of one test back
to back (tests in config order, a test's scenarios in config order on even rounds and reversed on odd
ones), so the two runs of a round's pair are seconds apart rather than a round apart, and neither
side always runs first after another tool.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
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


#: the launch orders (``launch.order``)
ORDERS = ("interleaved", "shuffled", "blocked")


def test_of(item: object) -> Hashable:
    """A case key's block for ``blocked``: its (tool, test), the scenario left out."""
    return tuple(item[1:]) if isinstance(item, tuple) else item  # type: ignore[return-value]


def round_order(
    items: Sequence[T], order: str, seed: int, round_no: int, block: Callable[[T], Hashable] = test_of
) -> list[T]:
    """The order of one round's items (``block``: what a ``blocked`` round keeps together)."""
    out = list(items)
    if order == "shuffled":
        random.Random(f"{seed}:{round_no}").shuffle(out)
    elif order == "blocked":
        blocks: dict[Hashable, list[T]] = {}
        for it in out:
            blocks.setdefault(block(it), []).append(it)
        flip = round_no % 2 == 1
        out = [it for b in blocks.values() for it in (b[::-1] if flip else b)]
    elif order != "interleaved":
        raise ValueError(f"unknown order {order!r} ({', '.join(ORDERS)})")
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
