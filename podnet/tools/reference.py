"""Published reference values: a CSV transcribed from a report's result tables.

Not a tool's output: a table someone published (e.g. seed 003's netperf/iperf3
tables) so a figure can put a measured run next to it. One CSV row is one
published figure; the parse stage marks the rows ``source=reference`` (the
sidecar says ``kind: reference``). Columns (header row required, ``#`` lines
are comments):

``variant, scenario, tool, test, metric, value, unit`` (required) and
``protocol, direction, streams, note`` (optional).

``unit`` is the unit the report printed; it is converted to the tidy SI unit:
``Gbits/sec``, ``Gbit/s``, ``Mb/s``, ``10^6bits/s`` -> bit/s (decimal);
``GB/s``, ``MB/sec`` -> bit/s (decimal bytes, as iperf3/qperf rates);
``us``/``Microseconds``/``ms``/``s`` -> s; ``%`` -> fraction; ``Kbytes/sec``
(ab) -> bit/s with 1024; tidy units (``bit/s``, ``s``, ``requests/s``...) pass
through. An empty value (a cell the report left blank) is skipped, never 0.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from podnet.tools.base import Adapter, ParseError
from podnet.tools.result import UNITS, Measurement, ParseResult
from podnet.tools.units import TIME_UNITS

REQUIRED = ("variant", "scenario", "tool", "test", "metric", "value", "unit")

_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_ALIASES = {
    "qps": "requests/s",
    "req/s": "requests/s",
    "requests/sec": "requests/s",
    "#/sec": "requests/s",
    "trans/s": "transactions/s",
    "tran/s": "transactions/s",
    "transactions/sec": "transactions/s",
    "msg/s": "messages/s",
    "msg/sec": "messages/s",
    "pps": "packets/s",
}


def to_si(value: float, unit: str) -> tuple[float, str]:
    """A published figure in the tidy SI unit: ``(9.16, 'Gbits/sec')`` -> ``(9.16e9, 'bit/s')``."""
    u = unit.strip()
    if u in UNITS:
        return value, u
    low = u.lower()
    if low in _ALIASES:
        return value, _ALIASES[low]
    if low in TIME_UNITS:
        return value * TIME_UNITS[low], "s"
    if u == "%":
        return value / 100.0, "fraction"
    m = re.fullmatch(r"10\^(\d+)\s*bits?/s(?:ec)?", u)
    if m:
        return value * 10 ** int(m.group(1)), "bit/s"
    if low in ("kbytes/sec", "[kbytes/sec]"):  # ab's transfer rate: 1024 bytes
        return value * 1024 * 8, "bit/s"
    m = re.fullmatch(r"([kKMGT]?)(bits?|b|bytes?|B)(?:/s(?:ec)?|ps)", u)
    if m:
        bits = 1 if m.group(2) in ("bit", "bits", "b") else 8
        return value * _SI[m.group(1)] * bits, "bit/s"
    m = re.fullmatch(r"([kKMGT]?)(bytes?|B)", u)
    if m:
        return value * _SI[m.group(1)], "bytes"
    raise ParseError(
        f"unknown unit {unit!r} in the reference table (expected e.g. Gbits/sec, us, %, requests/s)"
    )


class ReferenceAdapter(Adapter):
    """CSV of published values; each row names its own variant, scenario and tool."""

    name = "reference"
    binary = ""
    display_name = "published"
    server_kind = "none"
    #: published tables carry any tool's metrics: the headline ones of the measuring tools
    headline = ("throughput", "rtt_avg", "latency_mean", "requests_per_second", "transaction_rate", "latency")
    defaults: dict[str, Any] = {}

    def sniff(self, text: str) -> float:
        head = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
        cols = {c.strip().lower() for c in head.split(",")}
        return 0.9 if set(REQUIRED) <= cols else 0.0

    def parse(self, text: str) -> ParseResult:
        body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
        reader = csv.DictReader(io.StringIO(body))
        if reader.fieldnames is None:
            raise ParseError("empty reference table: expected a CSV header " + ",".join(REQUIRED))
        fields = [f.strip().lower() for f in reader.fieldnames]
        missing = [c for c in REQUIRED if c not in fields]
        if missing:
            raise ParseError(
                f"reference table lacks columns {', '.join(missing)} (expected {','.join(REQUIRED)})"
            )
        reader.fieldnames = fields
        res = ParseResult()
        notes = []
        for i, row in enumerate(reader, start=2):
            row = {k: (v or "").strip() for k, v in row.items() if k}
            if not row.get("value"):
                continue
            try:
                value = float(row["value"].replace(",", ""))
            except ValueError:
                raise ParseError(f"reference table row {i}: value {row['value']!r} is not a number") from None
            si, unit = to_si(value, row["unit"])
            res.measurements.append(
                Measurement(
                    metric=row["metric"],
                    value=si,
                    unit=unit,
                    variant=row["variant"],
                    scenario=row["scenario"],
                    tool=row["tool"],
                    test=row["test"] or None,
                    protocol=row.get("protocol") or None,
                    direction=row.get("direction") or None,
                    streams=int(row["streams"]) if row.get("streams") else None,
                )
            )
            if row.get("note"):
                notes.append({"row": i, "note": row["note"]})
        if not res.measurements:
            raise ParseError("reference table has a header but no row with a value")
        if notes:
            res.info["notes"] = notes
        return res


ADAPTER = ReferenceAdapter()
