"""What a tool adapter extracts from one output: measurements in SI units, interval series, facts.

The parse stage (:mod:`podnet.parse.tidy`) turns these into tidy rows with the run's identity
from its sidecar.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Units used in the tidy table. Everything is SI or a plain count.
UNITS = {
    "bit/s",  # throughput
    "s",  # time, latency
    "packets/s",
    "requests/s",
    "transactions/s",
    "messages/s",
    "bytes",
    "bytes/s",
    "count",
    "fraction",  # loss, CPU use (1.0 = one whole CPU / 100 %)
    "s/byte",  # CPU cost per byte moved (qperf send/recv cost)
    "s/bit",  # CPU-seconds per bit moved (podnet.parse.cost)
    "bit/s/s",  # iperf2 NetPwr-like figures where needed
}


@dataclass(frozen=True)
class Measurement:
    """One metric of one run as an adapter reports it.

    Fields left as ``None`` are filled from the run's sidecar
    (protocol, direction, streams, test).
    """

    metric: str
    value: float
    unit: str
    direction: str | None = None
    protocol: str | None = None
    test: str | None = None
    streams: int | None = None
    #: only for adapters whose one file holds many cases (published reference tables)
    variant: str | None = None
    scenario: str | None = None
    tool: str | None = None
    #: one of several units measured in one run (netready's pods: the pod's index), the tidy ``pod``
    pod: str | None = None

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit {self.unit!r} of metric {self.metric!r} is not a tidy unit")


@dataclass(frozen=True)
class IntervalPoint:
    """One interval sample of a within-run series (seconds since the run started)."""

    t_start: float
    t_end: float
    metric: str
    value: float
    unit: str
    stream: str = "sum"
    direction: str | None = None
    omitted: bool = False


@dataclass
class ParseResult:
    """What an adapter extracts from one raw output."""

    measurements: list[Measurement] = field(default_factory=list)
    intervals: list[IntervalPoint] = field(default_factory=list)
    #: facts found in the output (tool version, local/remote host, conf block...)
    info: dict[str, object] = field(default_factory=dict)
    #: test name / protocol / direction / streams as read from the output itself
    test: str | None = None
    protocol: str | None = None
    direction: str | None = None
    streams: int | None = None
