"""Is the machine quiet enough to start measuring? Checked before ``make seeds`` (issue 46).

The seed campaigns run for hours; started beside other work, every run would be judged disturbed
and re-run or kept flagged (:mod:`podnet.launch.spec.disturbance`). The check measures the machine's
other work the way a run's ``interference.foreign`` does (:func:`.interference.foreign_cpu`): its
``/proc/stat`` busy and stolen CPU time minus this process's own CPU time, as a share of the
machine's CPU time, over :data:`WINDOWS` windows of :data:`WINDOW_S` seconds.

The rule (:func:`judge_quiet`): the machine is busy when the median window's share is above the
threshold of a disturbed run (``launch.disturbance.threshold``, the schema's default 0.2: 0.4 CPU
of a 2-CPU machine); the median, so that one window's blip decides nothing. Windows that could not
be measured (no ``/proc/stat``) are left out; with none measured nothing is judged (the check says
so and passes). Busy: the message says what was measured and the command exits 1, unless
``--busy-ok`` (``make seeds SEEDS_BUSY_OK=1``) starts anyway.

    python -m podnet.launch.noise.quiet [--windows 5] [--seconds 1] [--busy-ok]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from podnet.launch.noise.interference import foreign_cpu, host_ticks, launcher_cpu_s
from podnet.launch.spec.disturbance import DisturbanceRule

#: the windows measured, and each one's length in seconds (5 s in all)
WINDOWS, WINDOW_S = 5, 1.0


@dataclass(frozen=True)
class Quiet:
    """The check's judgement: each window's share of other work, their median, the threshold."""

    shares: tuple[float, ...]
    threshold: float
    window_s: float
    cpus: int

    @property
    def median(self) -> float | None:
        """The median window's share (None: no window measured)."""
        return statistics.median(self.shares) if self.shares else None

    @property
    def busy(self) -> bool:
        """Whether the median window's share is above the threshold."""
        return self.median is not None and self.median > self.threshold

    def message(self, what: str = "the campaigns") -> str:
        """What was measured and what it means, in one paragraph."""
        if self.median is None:
            return (
                f"quiet check: the machine's CPU time could not be read (/proc/stat): {what} start unchecked"
            )
        each = ", ".join(f"{100 * s:.0f}" for s in self.shares)
        measured = (
            f"{100 * self.median:.0f} % of the machine's CPU time ({self.cpus} CPUs; median of "
            f"{len(self.shares)} windows of {self.window_s:g} s: {each} %) was work other than this "
            f"check's, against {100 * self.threshold:.0f} % above which a run is judged disturbed "
            "(launch.disturbance.threshold)"
        )
        if not self.busy:
            return f"quiet check: the machine is quiet: {measured}"
        return (
            f"quiet check: the machine is busy: {measured}. Started now, {what} would measure that "
            "work too and judge their runs disturbed: wait for it to end, or start anyway with "
            "--busy-ok (make seeds SEEDS_BUSY_OK=1)"
        )


def judge_quiet(
    shares: Sequence[float | None], threshold: float, window_s: float = WINDOW_S, cpus: int = 1
) -> Quiet:
    """The judgement on windows' shares of other work (None: a window not measured, left out)."""
    return Quiet(tuple(float(s) for s in shares if s is not None), float(threshold), window_s, cpus)


def sample(
    windows: int = WINDOWS,
    seconds: float = WINDOW_S,
    read: Callable[[], tuple[int, ...] | None] = host_ticks,
    own: Callable[[], float] = launcher_cpu_s,
    sleep: Callable[[float], None] = time.sleep,
) -> list[float | None]:
    """Each window's share of the machine busy with other work than this process's
    (:func:`.interference.foreign_cpu`); None for a window whose counters could not be read."""
    out: list[float | None] = []
    for _ in range(windows):
        t0, c0 = read(), own()
        sleep(seconds)
        t1, c1 = read(), own()
        f = foreign_cpu((t0, t1), {"check": c1 - c0}) if t0 and t1 else None
        out.append(None if f is None else max(0.0, float(f["share"])))
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure, print the judgement; exit 1 when busy (0 with ``--busy-ok``)."""
    ap = argparse.ArgumentParser(
        prog="python -m podnet.launch.noise.quiet", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--windows", type=int, default=WINDOWS, help="windows measured (default %(default)s)")
    ap.add_argument(
        "--seconds", type=float, default=WINDOW_S, help="each window's length (default %(default)s)"
    )
    ap.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="share of other work above which the machine is busy (default: launch.disturbance.threshold's)",
    )
    ap.add_argument("--what", default="the campaigns", help="what would start, for the message")
    ap.add_argument("--busy-ok", action="store_true", help="start even when busy (the message is printed)")
    args = ap.parse_args(argv)
    threshold = DisturbanceRule.from_config(None).threshold if args.threshold is None else args.threshold
    q = judge_quiet(sample(args.windows, args.seconds), threshold, args.seconds, os.cpu_count() or 1)
    print(q.message(args.what), file=sys.stderr if q.busy else sys.stdout)
    if q.busy and args.busy_ok:
        print(f"quiet check: --busy-ok: {args.what} start anyway", file=sys.stderr)
        return 0
    return 1 if q.busy else 0


if __name__ == "__main__":
    sys.exit(main())
