"""What the adaptive stop, the warm-up and a run need of a launch, as small typed interfaces.

:class:`~podnet.launch.rounds.runner.Launcher` implements :class:`Rounds` and :class:`WarmUps`
(structurally: ``typing.Protocol``); :class:`~podnet.launch.rounds.adaptive.Sampler` and
:func:`~podnet.launch.rounds.warmup.warm_up` take these, not the Launcher, so neither imports the
runner. :class:`~podnet.launch.cluster.workload.Workload` implements :class:`Pods`: the executor
(:mod:`.execute`, with :mod:`.underload` and :mod:`.netready`) takes that, not the workload.
"""

from __future__ import annotations

from typing import Protocol

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.target import CaseTarget, Container, Space
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


class Pods(Protocol):
    """What a run needs of the launch's pods: per case, where and with what it runs (one frozen
    :class:`~podnet.launch.cluster.target.CaseTarget`), whether it can run now, and the few actions a
    run takes on its pods."""

    @property
    def space(self) -> Space:
        """The launch's namespace (a time-to-network run's pods; the interference reads)."""
        ...

    def target(self, cp: CasePlan) -> CaseTarget:
        """The case's client and server containers, target address, endpoints, image, tool version."""
        ...

    def blocked(self, cp: CasePlan) -> str | None:
        """Why the case cannot run now (plan error, a failed pod, a NotReady node), else None."""
        ...

    def server_ready(self, cp: CasePlan) -> str | None:
        """Wait until the case's server container is ready; the reason when it is not."""
        ...

    def exec(self, where: Container, argv: list[str], timeout: float) -> ExecResult:
        """Run ``argv`` in one of a case's containers."""
        ...

    def exec_failed(self, pod: str | None, error: str) -> None:
        """An exec into the planned ``pod`` did not start (an unreachable kubelet fails its node's cases)."""
        ...

    def restarts(self, cp: CasePlan) -> dict[str, int]:
        """Restart counts of the case's client and server containers."""
        ...

    def restart_server(self, cp: CasePlan) -> None:
        """After a failed run: restart the case's server process."""
        ...
