"""The tidy table: one row per (run, metric), SI units.

Every stage after parsing speaks this schema. A *run* is one raw file (one tool
invocation); its identity and context come from the raw file's sidecar
(:mod:`podnet.raw`), its measurements from the tool adapter
(:mod:`podnet.adapters`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

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
    "bit/s/s",  # iperf2 NetPwr-like figures where needed
}

#: Columns of tidy.parquet / tidy.csv, in order.
TIDY_COLUMNS = [
    "experiment",  # one pipeline run's name (config `experiment`)
    "variant",  # what is compared: a CNI, a mode, a cluster
    "scenario",  # the path: e.g. pod-pod-cross-node
    "tool",  # iperf3, ping, ...
    "test",  # tool-specific test: tcp, udp, flood, plain, TCP_RR, tcp_lat, http
    "protocol",  # tcp, udp, icmp, http
    "direction",  # forward (client->server), reverse, bidir-forward/-reverse, roundtrip
    "streams",  # parallel streams / concurrency
    "repeat",  # repeat number, 1-based
    "run_id",  # unique id of the run (the raw file's stem relative to raw/<exp>)
    "metric",  # throughput, sender_throughput, rtt_avg, loss, ...
    "value",
    "unit",
    "source",  # measured | reference (published values imported as-is)
    "raw_path",  # path of the raw file, relative to the repo/working dir
    "excerpt",  # True: values of an output pasted as an excerpt on purpose (sidecar `excerpt: true`)
    "launch_id",  # the launch that ran it (sidecar `launch.id`); "" for imported outputs
]

#: Columns a tidy table may lack (older tables, hand-made frames), with the value they mean.
OPTIONAL_COLUMNS = {"excerpt": False, "launch_id": ""}

#: Columns that identify a group of repeats for the statistics stage.
GROUP_COLUMNS = [
    "experiment",
    "variant",
    "scenario",
    "tool",
    "test",
    "protocol",
    "direction",
    "streams",
    "metric",
    "unit",
]

#: Columns of failed_runs.csv.
FAILED_COLUMNS = ["experiment", "raw_path", "tool", "error", "reason"]

#: Columns of intervals.parquet (within-run time series, e.g. iperf3 -i 1).
INTERVAL_COLUMNS = [
    "run_id",
    "stream",  # "sum" or a stream id
    "direction",
    "t_start",
    "t_end",
    "omitted",  # True for iperf3 -O warm-up intervals
    "metric",
    "value",
    "unit",
    "raw_path",
]


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


def empty_tidy() -> pd.DataFrame:
    """An empty tidy frame with the right columns and dtypes."""
    return coerce(pd.DataFrame(columns=TIDY_COLUMNS))


def coerce(df: pd.DataFrame) -> pd.DataFrame:
    """Order columns and fix dtypes of a tidy frame (missing columns are an error)."""
    missing = [c for c in TIDY_COLUMNS if c not in df.columns and c not in OPTIONAL_COLUMNS]
    if missing:
        raise ValueError(f"tidy table lacks columns: {', '.join(missing)}")
    df = df.assign(**{c: v for c, v in OPTIONAL_COLUMNS.items() if c not in df.columns})
    out = df[TIDY_COLUMNS].copy()
    for col in TIDY_COLUMNS:
        if col == "excerpt":
            out[col] = out[col].fillna(False).astype("bool")
        elif col in ("value",):
            out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
        elif col in ("streams", "repeat"):
            out[col] = pd.to_numeric(out[col], errors="coerce").astype("Int64")
        else:
            out[col] = out[col].astype("string")
    return out.reset_index(drop=True)


def frame(rows: Iterable[dict]) -> pd.DataFrame:
    """Build a tidy frame from row dicts."""
    rows = list(rows)
    if not rows:
        return empty_tidy()
    return coerce(pd.DataFrame(rows))
