"""Latency under load: the probe's and the load's outputs of one run, paired and checked.

A latency-under-load run (config ``load`` on a test; :mod:`podnet.launch.spec.load`) leaves two raw
files and ONE sidecar: the probe's output (``r001.txt``, the test's own tool) with the sidecar
beside it, and the load's iperf3 JSON (``r001.load.json``, :data:`LOAD_SUFFIX`), which the sidecar's
``load`` mapping describes (its file name, command line, start and end times, sha256, status). Both
become tidy rows of the same run (same ``run_id``), told apart by ``role`` (``probe`` / ``load``).

The run is a failed run, never a latency figure, when (:func:`load_rows` raises
:class:`~podnet.tools.base.ParseError` with the reason):

- the load failed when it was launched (sidecar ``load.status: failed``);
- the load's output is missing, changed since it was recorded (sha256), or incomplete / unparsable
  (iperf3 without its ``end`` summary, cut JSON, an error);
- the load's steady part does not cover the probe's window: the probe's ``started``/``ended`` (the
  sidecar, the launcher's clock) must lie inside [t0 + 1 s + omit, t0 + omit + measured seconds],
  with t0 iperf3's own start stamp (``start.timestamp.timesecs``, whole seconds, so 1 s is allowed
  for its rounding), omit its ``-O`` warm-up and the measured seconds its last interval's end;
  without that stamp, the sidecar's ``load.started`` stands in for t0.

A load output whose probe output is missing (no raw file with a sidecar beside it) is listed as a
bad entry by :func:`podnet.parse.raw.scan_raw_dir` (:func:`orphan_problem`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnet.tools.base import ParseError

#: the suffix of a load's output beside its probe's (``r001.txt`` -> ``r001.load.json``)
LOAD_SUFFIX = ".load.json"
#: tidy ``role`` of a latency-under-load run's rows ("" for every other run)
PROBE, LOAD = "probe", "load"
#: seconds allowed for iperf3's start stamp, which it writes in whole seconds
STAMP_RESOLUTION = 1.0


def load_name(probe: Path | str) -> str:
    """The load output's file name beside probe output ``probe`` (``r001.a2.txt`` -> ``r001.a2.load.json``)."""
    return Path(probe).with_suffix("").name + LOAD_SUFFIX


def orphan_problem(load: Path, siblings: set[str]) -> str | None:
    """Why load output ``load`` has no run (no probe output of its stem among ``siblings``), or None."""
    stem = load.name[: -len(LOAD_SUFFIX)]
    if any(n.startswith(stem + ".") and n.count(".") == stem.count(".") + 1 for n in siblings):
        return None
    return (
        f"a load output without its probe: no {stem}.<ext> raw file (with its sidecar) beside it, so the "
        "latency-under-load run has no latency: a failed run"
    )


@dataclass(frozen=True)
class Window:
    """A span of wall-clock time, seconds since the epoch."""

    start: float
    end: float

    def text(self) -> str:
        def iso(t: float) -> str:
            return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%H:%M:%S.%f")[:-3]

        return f"{iso(self.start)}-{iso(self.end)}"


def epoch(value: Any) -> float:
    """Seconds since the epoch of a sidecar time (ISO 8601 text or a YAML timestamp)."""
    if isinstance(value, dt.datetime):
        t = value
    else:
        t = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.timestamp()


def probe_window(meta: dict[str, Any]) -> Window:
    """The probe's window from its sidecar (``started``, ``ended``); ParseError when it lacks them."""
    try:
        return Window(epoch(meta["started"]), epoch(meta["ended"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ParseError(f"the sidecar gives no probe window (started/ended): {exc}") from None


def steady_window(doc: dict[str, Any], started: float | None) -> Window:
    """The part of the load that surely ran past its warm-up: [t0 + 1 + omit, t0 + omit + measured]
    (t0 iperf3's start stamp, else ``started``: the launcher's time before the load's exec)."""
    start = doc.get("start") or {}
    stamp = (start.get("timestamp") or {}).get("timesecs")
    omit = float((start.get("test_start") or {}).get("omit") or 0)
    ends = [
        float(i["sum"]["end"])
        for i in doc.get("intervals") or []
        if isinstance(i, dict) and not i.get("sum", {}).get("omitted")
    ]
    if not ends:
        raise ParseError("load output has no measured interval (only its warm-up, or none): it did not run")
    if stamp is not None:
        t0, slack = float(stamp), STAMP_RESOLUTION
    elif started is not None:
        t0, slack = started, 0.0
    else:
        raise ParseError(
            "neither iperf3's start stamp nor the sidecar's load.started: the load's time is unknown"
        )
    return Window(t0 + slack + omit, t0 + omit + max(ends))


def coverage_problem(probe: Window, steady: Window) -> str | None:
    """Why the load's steady part does not cover the probe's window, or None."""
    why = []
    if probe.start < steady.start:
        why.append(f"the probe started {steady.start - probe.start:.2f} s before the load's steady part")
    if probe.end > steady.end:
        why.append(f"the probe ended {probe.end - steady.end:.2f} s after the load's last measured second")
    if not why:
        return None
    return (
        f"the load did not cover the probe (probe {probe.text()}, load steady {steady.text()} UTC): "
        + "; ".join(why)
    )


def check_load(
    raw: Path, meta: dict[str, Any], data: bytes | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """The load output of probe ``raw`` and its sidecar record, checked before it is parsed: its
    launch status, presence, sha256, and that its steady part covers the probe (ParseError: why);
    None for the idle point (``load.streams: 0``: the probe ran alone). ``data``: the output's bytes
    already in hand (the launcher, which has just written and hashed them): not read again."""
    rec = meta["load"]
    if rec.get("streams") == 0:
        return None
    if str(rec.get("status", "ok")) != "ok":
        raise ParseError(f"the load failed when it was launched: {rec.get('error') or 'no reason recorded'}")
    name = str(rec.get("file") or load_name(raw))
    path = raw.with_name(name)
    if "/" in name or (data is None and not path.is_file()):
        raise ParseError(f"the load output {name} is missing: a latency under load without its load")
    if data is None:
        data = path.read_bytes()  # read once: hashed and decoded from these bytes
        if "sha256" in rec and rec["sha256"] != hashlib.sha256(data).hexdigest():
            raise ParseError(f"the load output {name} changed after it was recorded (sha256 differs)")
    text = data.decode("utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"the load output {name} is incomplete: not whole JSON ({exc.msg}): cut off?"
        ) from None
    if not isinstance(doc, dict) or doc.get("error") or not doc.get("end"):
        what = doc.get("error") if isinstance(doc, dict) and doc.get("error") else "no 'end' summary"
        raise ParseError(f"the load output {name} is incomplete: {what}")
    started = epoch(rec["started"]) if rec.get("started") else None
    problem = coverage_problem(probe_window(meta), steady_window(doc, started))
    if problem:
        raise ParseError(problem)
    return path, rec
