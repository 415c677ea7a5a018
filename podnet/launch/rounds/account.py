"""A single launch's adaptive account as typed values, turned into JSON only at the edge.

:class:`Judged` is one judged comparison (or one case's headline metric) of
:class:`~podnet.launch.rounds.adaptive.Sampler`; :class:`Account` the whole account, whose
:meth:`Account.to_json` is the file ``raw/<exp>/<variant>/_adaptive/<launch_id>.json``
(:func:`podnet.stats.account.account_schema`), key for key in the order it always had.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, NamedTuple

from podnet.launch.rounds.stop import Comparison

#: where a judged item came from: a ratio row of the statistics, a declared comparison without a
#: ratio (a side has no values), a case's own headline interval; the JSON keys of each differ
Source = Literal["ratio", "declared", "case"]


@dataclass(frozen=True, kw_only=True)
class Judged(Comparison):
    """One judged item of a single launch: ``cases`` are (treatment, baseline) of a by-scenario
    comparison, or the one case of a headline (``by="case"``); ``n`` the pairs (or values) its interval
    rests on, ``n_needed`` the repeats that would meet the target at the observed noise."""

    source: Source
    by: str
    scenario: str
    tool: str
    test: str
    metric: str
    baseline: str | None = None
    treatment: str | None = None
    direction: Any = None
    streams: Any = None
    interval: str = ""
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    n: float | None = None
    n_needed: float | None = None

    @property
    def label(self) -> str:
        """``pod-pod/host-host iperf3 tcp throughput`` (a case's: ``pod-pod iperf3 tcp throughput``)."""
        where = f"{self.treatment}/{self.baseline}" if self.baseline else self.scenario
        return f"{where} {self.tool} {self.test} {self.metric}"

    def to_json(self) -> dict[str, Any]:
        """The item as the account states it (with ``met``; :meth:`Ended.to_json` swaps it for status and reason)."""
        head = {"by": self.by, "baseline": self.baseline, "treatment": self.treatment}
        what = {
            "scenario": self.scenario,
            "tool": self.tool,
            "test": self.test,
            "metric": self.metric,
            "direction": self.direction,
            "streams": self.streams,
            "interval": self.interval,
        }
        ratio = {"ratio": self.ratio, "low": self.low, "high": self.high} if self.source == "ratio" else {}
        width = {
            "rel_half_width": self.rel_half_width,
            "target_rel_half_width": self.target_rel_half_width,
            "n": self.n,
            "n_needed": self.n_needed,
            "met": self.met,
        }
        cases = {"cases": [list(c) for c in self.cases]}
        note = {"note": self.note} if self.note else {}
        if self.source == "declared":
            return {**what, **width, **head, **cases, **note}
        return {**head, **what, **ratio, **width, **cases, **note}


class Ended(NamedTuple):
    """A judged item at the launch's end, with why it ended so (:func:`podnet.launch.rounds.stop.reason`)."""

    item: Judged
    reason: str

    @property
    def status(self) -> str:
        return "met" if self.item.met else "unmet"

    def to_json(self) -> dict[str, Any]:
        doc = {k: v for k, v in self.item.to_json().items() if k != "met"}
        return doc | {"status": self.status, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class Account:
    """The machine-readable account of one adaptive launch (fields in the file's key order)."""

    podnet_adaptive: int
    experiment: str
    variant: str
    launch_id: str
    started: str
    ended: str
    mode: str
    target_rel_half_width: float
    max_repeats: int
    budget_s: float | None
    max_runs: int | None
    wall_s: float
    base_rounds: int
    adaptive_rounds: int
    stop: str
    cases: int
    runs_launched: int
    runs_recorded: int
    fixed_repeats: int
    fixed_protocol_runs: int
    #: per case declared ``every_round``: the adaptive rounds it joined (:class:`~.everyround.Joined`)
    every_round: list[dict[str, Any]] = field(default_factory=list)
    items: tuple[Ended, ...]

    @property
    def met(self) -> int:
        """Items that met their target."""
        return sum(e.status == "met" for e in self.items)

    def to_json(self) -> dict[str, Any]:
        doc = {f.name: getattr(self, f.name) for f in fields(self)}
        return doc | {"items": [e.to_json() for e in self.items]}


def write_json(path: Path, doc: Any) -> Path:
    """Write an account ``doc`` to ``path`` as indented JSON, whole or not at all (a temporary file
    renamed over it), its directory made if missing; ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
