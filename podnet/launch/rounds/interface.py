"""What the adaptive stop and the warm-up need of a launch, as small typed interfaces.

:class:`~podnet.launch.rounds.runner.Launcher` implements both (structurally: ``typing.Protocol``);
:class:`~podnet.launch.rounds.adaptive.Sampler` and :func:`~podnet.launch.rounds.warmup.warm_up`
take these, not the Launcher, so neither imports the runner.
"""

from __future__ import annotations

from typing import Protocol

from podnet.launch.rounds.results import LaunchResult, RunTimes, Tally
from podnet.launch.rounds.schedule import Slot
from podnet.launch.spec.config import CaseKey, LaunchConfig
from podnet.launch.spec.plan import CasePlan


class Rounds(Protocol):
    """A launch the adaptive stop can extend: its config and identity, what it ran so far, and
    "run these slots as one more round"."""

    @property
    def cfg(self) -> LaunchConfig: ...
    @property
    def variant(self) -> str: ...
    @property
    def launch_id(self) -> str: ...
    @property
    def tally(self) -> Tally: ...
    @property
    def result(self) -> LaunchResult: ...
    @property
    def times(self) -> RunTimes: ...

    def can_run(self, key: CaseKey) -> bool:
        """The case is planned, its tool is in the image, its pods and nodes work."""
        ...

    def last_repeat(self, key: CaseKey) -> int:
        """The highest repeat number the case has on disk or in this launch."""
        ...

    def run_round(self, slots: list[Slot]) -> int:
        """Run ``slots`` as one more round (failures retried at its end); returns runs launched."""
        ...


class WarmUps(Protocol):
    """A launch that can run uncounted warm-ups: its config, each case's plan, one warm-up run."""

    @property
    def cfg(self) -> LaunchConfig: ...
    @property
    def ready(self) -> bool:
        """Prepared: pods made, an executor to run with."""
        ...

    def case_plan(self, key: CaseKey) -> CasePlan:
        """The case's plan (pods, argv; ``skipped`` when it cannot run)."""
        ...

    def run_warmup(self, cp: CasePlan, slot: Slot, total: int, n: int) -> None:
        """Run one uncounted warm-up of ``cp`` (the ``n``-th of ``total``)."""
        ...
