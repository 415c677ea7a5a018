"""The tidy table: one row per (run, metric), SI units.

Every stage after parsing speaks this schema. A *run* is one raw file (one tool
invocation); its identity and context come from the raw file's sidecar
(:mod:`podnet.parse.raw`), its measurements from the tool adapter
(:mod:`podnet.tools`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

# what an adapter returns (podnet.tools.result), re-exported: the tidy table is built from it
from podnet.tools.result import UNITS, IntervalPoint, Measurement, ParseResult  # noqa: F401

#: the noise floor's runs: the scenario of the floor interleaved with a launch's rounds
#: (podnet.launch.noise.floor), and the variant and scenario of ``podnet floor``'s own
#: (podnet.launch.noise.netns_floor); no config scenario may use them
FLOOR_SCENARIO = "floor-netns-veth"
FLOOR_VARIANT, FLOOR_STANDALONE_SCENARIO = "floor", "netns-veth"

#: Columns of tidy.parquet / tidy.csv, in order.
TIDY_COLUMNS = [
    "experiment",  # one pipeline run's name (config `experiment`)
    "variant",  # what is compared: a CNI, a mode, a cluster
    "scenario",  # the path: e.g. pod-pod-cross-node
    "tool",  # iperf3, ping, ...
    "test",  # the configured test's name (sidecar `test`), else the output's: tcp, flood, TCP_RR, tcp_lat, http
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
    "sweep",  # the swept test's configured name (sidecar `sweep.test`); "" when not a sweep point
    "sweep_param",  # the swept adapter parameter: streams, length, bandwidth, ...
    "sweep_value",  # its value here, a number in SI units (bandwidth in bit/s, sizes in bytes)
    "round_seq",  # ordinal (0, 1, ...) of the launch round the run ran in (sidecar `round_seq`); <NA> if unknown
    "disturbed",  # True: the launcher judged the run disturbed and kept it (no re-run left in its round)
    "placement",  # where the run's processes ran (sidecar `cpus.placement`): c0/s0 = client CPU 0, server CPU 0
]

#: Columns a tidy table may lack (older tables, hand-made frames), with the value they mean.
OPTIONAL_COLUMNS = {
    "excerpt": False,
    "launch_id": "",
    "sweep": "",
    "sweep_param": "",
    "sweep_value": float("nan"),
    "round_seq": pd.NA,
    "disturbed": False,
    "placement": "",
}

#: Columns a tidy table has only when a run of it has them (absent otherwise, so tables without
#: such runs keep their columns): ``role`` is ``probe`` / ``load`` for the two outputs of a
#: latency-under-load run (:mod:`podnet.parse.underload`), "" for every other run; ``pod`` is the
#: index of the pod a row measures in a run of several pods (netready: one row per pod and metric;
#: such rows are in no summary of runs, :func:`podnet.stats._data.split_sources`), "" otherwise.
PRESENT_COLUMNS = {"role": "", "pod": ""}

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

#: ``error`` of a failed-table row that is a run judged disturbed and re-run (sidecar ``status:
#: disturbed``): the parse stage lists it in disturbed_runs.csv, not in failed_runs.csv
DISTURBED_ERROR = "Disturbed"

#: Columns of disturbed_runs.csv: every run the launcher judged disturbed, re-run or kept
DISTURBED_COLUMNS = [
    "experiment",
    "raw_path",
    "variant",
    "scenario",
    "tool",
    "test",
    "repeat",
    "round_seq",
    "launch_id",
    "share",  # the run's foreign share of the machine's CPU time (interference.foreign.share)
    "threshold",  # launch.disturbance.threshold when it was judged
    "action",  # re-run (status disturbed: no value) or kept (ok, disturbed: true: its values are in tidy)
]

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


def empty_tidy() -> pd.DataFrame:
    """An empty tidy frame with the right columns and dtypes."""
    return coerce(pd.DataFrame(columns=TIDY_COLUMNS))


def flag_column(col: pd.Series) -> pd.Series:
    """A True/False column, also from text (a tidy CSV read as text: "False" is False, not a
    non-empty string's True); missing is False."""
    if col.dtype == bool:
        return col
    text = col.astype("string").fillna("").str.strip().str.lower()
    return text.isin(["true", "1"]).astype("bool")


def coerce(df: pd.DataFrame) -> pd.DataFrame:
    """Order columns and fix dtypes of a tidy frame (missing columns are an error)."""
    missing = [c for c in TIDY_COLUMNS if c not in df.columns and c not in OPTIONAL_COLUMNS]
    if missing:
        raise ValueError(f"tidy table lacks columns: {', '.join(missing)}")
    df = df.assign(**{c: v for c, v in OPTIONAL_COLUMNS.items() if c not in df.columns})
    extra = [c for c in PRESENT_COLUMNS if c in df.columns]
    out = df[TIDY_COLUMNS + extra].copy()
    for col in extra:
        out[col] = out[col].astype("string").fillna(PRESENT_COLUMNS[col])
    for col in TIDY_COLUMNS:
        if col in ("excerpt", "disturbed"):
            out[col] = flag_column(out[col])
        elif col in ("value", "sweep_value"):
            out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
        elif col in ("streams", "repeat", "round_seq"):
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


def tidy_csv(parquet: str | Path, csv: str | Path) -> int:
    """Write the tidy table at ``parquet`` as CSV to ``csv`` (the same rows, columns and values as
    the table the parse stage combined); returns the number of rows."""
    t = pd.read_parquet(parquet)
    t.to_csv(csv, index=False)
    return len(t)
