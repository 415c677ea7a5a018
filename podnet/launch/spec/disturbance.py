"""Disturbed runs: the machine busy with work that is not the run's own, judged right after each run.

The interference record of a run on the embedded cluster (:mod:`podnet.launch.noise.interference`) holds
``foreign``: over the client's exec, the launcher's machine's CPU time that was busy (or stolen by the
hypervisor) minus what the cluster's pods (the run's client and server, in the kubelets' cgroupRoot),
the cluster's daemons (their cgroup) and the launcher itself used, as a share of the machine
(``share``: 0.25 = half a CPU of a 2-CPU machine, over the whole run). That is work that is not the
run's own nor the cluster's: another program, a build, another cluster, a CPU hog.

A run is *disturbed* when that share is above ``launch.disturbance.threshold``. The default threshold is
derived from quiet runs (:func:`derive_threshold`; the numbers are in ``podnet/stats/METHODS.md``,
"Disturbed runs"). The launcher then re-runs it at once, in the same round (its first attempt gets
``status: disturbed``: kept on disk, never a value, never counted done), at most
``max_reruns_per_round`` times per round and variant; past that budget the run is kept as ``ok`` with
``disturbed: true`` (tidy column ``disturbed``). Runs without a ``foreign`` record (a real cluster, an
old sidecar) are not judged (``disturbed`` absent).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from podnet.config import schema


@dataclass(frozen=True)
class DisturbanceRule:
    """``launch.disturbance``: whether runs are judged, the threshold share and the re-run budget."""

    enabled: bool = True
    threshold: float = 0.2
    max_reruns_per_round: int = 3

    @classmethod
    def from_config(cls, raw: Mapping[str, Any] | None) -> DisturbanceRule:
        """The rule from ``launch.disturbance`` (schema defaults for absent keys)."""
        d = {**schema.defaults("launch", "disturbance"), **(raw or {})}
        return cls(bool(d["enabled"]), float(d["threshold"]), int(d["max_reruns_per_round"]))


@dataclass(frozen=True)
class Verdict:
    """One run's judgement: its foreign share (None: not measurable), the threshold, disturbed or not."""

    share: float | None
    threshold: float
    disturbed: bool

    def reason(self) -> str:
        """The sidecar's words for a disturbed run."""
        return (
            f"disturbed: the machine was {100 * (self.share or 0):.0f} % busy with other work than the "
            f"run's own and the cluster's (threshold {100 * self.threshold:.0f} %)"
        )


def foreign_share(interference: Mapping[str, Any] | None) -> float | None:
    """The run's foreign share of the machine (``interference.foreign.share``), or None."""
    foreign = (interference or {}).get("foreign")
    if not isinstance(foreign, Mapping):
        return None
    share = foreign.get("share")
    if share is None or isinstance(share, bool):
        return None
    x = float(share)
    return x if math.isfinite(x) else None


def judge(interference: Mapping[str, Any] | None, rule: DisturbanceRule) -> Verdict | None:
    """The verdict on one run, or None when the rule is off or the run's record cannot tell."""
    if not rule.enabled:
        return None
    share = foreign_share(interference)
    if share is None:
        return None
    return Verdict(share, rule.threshold, share > rule.threshold)


class RerunBudget:
    """Re-runs of disturbed runs left in the current round (one per launcher, reset at each round)."""

    def __init__(self, rule: DisturbanceRule):
        self.rule = rule
        self.used = 0

    def new_round(self) -> None:
        self.used = 0

    def take(self) -> bool:
        """One re-run, if the round's budget has one left."""
        if self.used >= self.rule.max_reruns_per_round:
            return False
        self.used += 1
        return True


def derive_threshold(quiet_shares: Iterable[float], quantile: float = 0.99, margin: float = 0.05) -> float:
    """The threshold a set of quiet runs' foreign shares supports: their ``quantile`` (0.99) plus
    ``margin`` (0.05 of the machine), so that about 1 in 100 quiet runs would be re-run for nothing
    and a foreign load must reach a tenth of a CPU (2 CPUs) above the quiet tail to count."""
    xs = sorted(float(x) for x in quiet_shares if x is not None and math.isfinite(float(x)))
    if not xs:
        raise ValueError("no quiet run with a foreign share: nothing to derive a threshold from")
    pos = quantile * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    q = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    return round(max(q, 0.0) + margin, 3)
