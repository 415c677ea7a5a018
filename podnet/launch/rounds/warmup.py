"""Uncounted warm-up runs at the start of a launch (``launch.warmup``).

Before the first round, ``warmup`` times in config order, each case that has runs
in this launch (``launch.warmup_per: case``) or, by default (``tool``), each tool's
first such case on each scenario: what a first run pays (the tool's first exec in
the pods, the path's ARP/conntrack/TCP-metrics entries, the server's first
connection) is paid once per tool and path, and the tool's other tests there run
warm. The outputs are kept (raw files are never thrown away)
under ``raw/<exp>/_warmup/<launch id>/``, which the parse stage never reads, and
their sidecars say ``warmup: true``. They are neither counted in the launch's
tallies nor retried; a failed warm-up is logged and the case still runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from podnet.launch.rounds.schedule import Slot
from podnet.launch.spec.config import Case, CaseKey

if TYPE_CHECKING:
    from podnet.launch.rounds.interface import WarmUps

log = logging.getLogger("podnet.launch")


def warmup_cases(cases: Sequence[Case], wanted: set[CaseKey], per: str = "tool") -> list[Case]:
    """The cases that get a warm-up, in config order: every wanted case (``per="case"``), or the
    first wanted case of each (scenario, tool) (``per="tool"``)."""
    out: list[Case] = []
    seen: set[tuple[str, str]] = set()
    for c in cases:
        if c.key not in wanted:
            continue
        if per == "tool":
            pair = (c.scenario.name, c.test.tool)
            if pair in seen:
                continue
            seen.add(pair)
        out.append(c)
    return out


def warm_up(launch: WarmUps, keys: Iterable[CaseKey]) -> int:
    """Run the warm-ups of ``keys`` (a launch after ``prepare``); returns how many ran."""
    cfg = launch.cfg
    wanted = set(keys)
    if cfg.warmup <= 0 or not launch.ready or not wanted:
        return 0
    plans = [launch.case_plan(c.key) for c in warmup_cases(cfg.cases, wanted, cfg.warmup_per)]
    plans = [cp for cp in plans if not cp.skipped]
    total = len(plans) * cfg.warmup
    log.info("warm-up: %d run(s), not counted", total)
    n = 0
    for k in range(1, cfg.warmup + 1):
        for pos, cp in enumerate(plans, 1):
            n += 1
            launch.run_warmup(cp, Slot(cp.case.key, k, 0, pos), total, n)
    return n
