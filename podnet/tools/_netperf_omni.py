"""netperf's values and omni output selectors (``-k`` KEY=value, ``-o`` CSV, ``-O`` columns).

:func:`from_csv` and :func:`from_columns` read the two tabular forms into selectors (KEY -> value,
through :data:`HEADERS`); :func:`selectors` turns selectors into measurements. The value helpers
(:func:`rate_to_bps`, :func:`positive`, :func:`direction`) serve the classic output too.
"""

from __future__ import annotations

import csv
import re

from podnet.tools._netperf_fields import COUNTS, HEADERS, LATENCY
from podnet.tools.base import ParseError
from podnet.tools.result import Measurement, ParseResult


def rate_to_bps(value: float, unit: str) -> float | None:
    """netperf throughput units in bit/s; None for transaction rates."""
    u = unit.strip().rstrip(".")
    m = re.fullmatch(r"10\^(\d+)bits/s(?:ec)?", u)
    if m:
        return value * 10 ** int(m.group(1))
    m = re.fullmatch(r"([KMG]?)Bytes/s(?:ec)?", u)
    if m:
        return value * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(1)] * 8
    if re.fullmatch(r"Trans(?:actions)?/s(?:ec)?|Tran/s", u):
        return None
    raise ParseError(f"netperf throughput unit {unit!r}: expected 10^6bits/s, MBytes/s or Trans/s")


def direction(test: str, omni_direction: str | None = None) -> str:
    """The tidy direction of a netperf test (or of an omni DIRECTION selector)."""
    if omni_direction:
        d = omni_direction.lower()
        if "send" in d and "recv" in d:
            return "roundtrip"
        return "reverse" if d.strip() == "recv" else "forward"
    if test.endswith("MAERTS"):
        return "reverse"
    if test.endswith(("_RR", "_CRR", "_CC")):
        return "roundtrip"
    return "forward"


def positive(text: str | None) -> float | None:
    """A measured netperf figure, or None for its 'not measured' markers (-1, nan)."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    if v != v or v < 0:
        return None
    return v


def selectors(sel: dict[str, str], test: str, proto: str | None, res: ParseResult) -> None:
    """Omni selectors (KEY -> printed value) as ``res``'s test, direction, measurements and info."""
    info = res.info
    sel = {k: v.strip().strip('"') for k, v in sel.items()}
    if sel.get("PROTOCOL"):
        proto = sel["PROTOCOL"].lower()
    omni_dir = sel.get("DIRECTION")
    if test == "OMNI" and omni_dir:
        d = omni_dir.lower()
        kind = "RR" if ("send" in d and "recv" in d) else ("STREAM" if "send" in d else "MAERTS")
        if "connect" in d:
            kind = "CRR"
        info["omni_as"] = f"{(proto or 'tcp').upper()}_{kind}"
    res.test, res.protocol = test, proto
    res.direction = direction(test, omni_dir if test == "OMNI" else None)
    rr = res.direction == "roundtrip"
    stream_like = not rr
    add = lambda metric, value, unit: res.measurements.append(Measurement(metric, float(value), unit))  # noqa: E731
    units = sel.get("THROUGHPUT_UNITS", "")
    used = set()
    thr = positive(sel.get("THROUGHPUT"))
    if thr is not None and units:
        bps = rate_to_bps(thr, units)
        used |= {"THROUGHPUT", "THROUGHPUT_UNITS"}
        if bps is None:
            if "TRANSACTION_RATE" not in sel:
                add("transaction_rate", thr, "transactions/s")
        else:
            add("throughput", bps, "bit/s")
    elif thr is not None:
        info["throughput_without_units"] = thr
    if rr:
        tr = positive(sel.get("TRANSACTION_RATE"))
        if tr is not None:
            add("transaction_rate", tr, "transactions/s")
    used.add("TRANSACTION_RATE")
    if stream_like and units and rate_to_bps(1.0, units) is not None:
        for key in ("LOCAL_SEND_THROUGHPUT", "REMOTE_SEND_THROUGHPUT"):
            v = positive(sel.get(key))
            if v:
                add("sender_throughput", rate_to_bps(v, units), "bit/s")
                break
    used |= {
        "LOCAL_SEND_THROUGHPUT",
        "REMOTE_SEND_THROUGHPUT",
        "LOCAL_RECV_THROUGHPUT",
        "REMOTE_RECV_THROUGHPUT",
    }
    rt = positive(sel.get("RT_LATENCY"))
    if rt is not None and rr:
        add("rt_latency", rt * 1e-6, "s")
    used.add("RT_LATENCY")
    prefix = "latency" if rr else "send_call_latency"
    for key, suffix in LATENCY.items():
        v = positive(sel.get(key))
        if v is not None:
            add(f"{prefix}_{suffix}", v * 1e-6, "s")
        used.add(key)
    if stream_like:
        size = positive(sel.get("LOCAL_SEND_SIZE"))
        if size:
            add("send_size", size, "bytes")  # what bounds a stream test: -m, else the socket buffer
        used.add("LOCAL_SEND_SIZE")
    el = positive(sel.get("ELAPSED_TIME"))
    if el is not None:
        add("duration", el, "s")
    used.add("ELAPSED_TIME")
    for side in ("LOCAL", "REMOTE"):
        util = positive(sel.get(f"{side}_CPU_UTIL"))
        low = side.lower()
        if util is not None:
            add(f"cpu_util_{low}", util / 100.0, "fraction")
            count = positive(sel.get(f"{side}_CPU_COUNT"))
            if count:
                add(f"cpu_{low}", util / 100.0 * count, "fraction")
        sd = positive(sel.get(f"{side}_SD"))
        sd_units = sel.get("SD_UNITS", "")
        if sd is not None and util is not None:
            if "KB" in sd_units:
                add(f"service_demand_{low}", sd * 1e-6 / 1024, "s/byte")
            elif "Tran" in sd_units:
                add(f"service_demand_{low}", sd * 1e-6, "s")
        used |= {f"{side}_CPU_UTIL", f"{side}_CPU_COUNT", f"{side}_SD"}
    for key, (metric, unit) in COUNTS.items():
        v = positive(sel.get(key))
        if v is not None:
            add(metric, v, unit)
        used.add(key)
    if proto == "udp" and stream_like:
        sent = positive(sel.get("LOCAL_SEND_CALLS"))
        got = positive(sel.get("REMOTE_RECV_CALLS"))
        if sent and got is not None:
            add("loss", max(0.0, 1 - got / sent), "fraction")
    rest = {k: v for k, v in sel.items() if k not in used}
    if rest:
        info["selectors"] = rest


def from_csv(body: list[str]) -> dict[str, str] | None:
    """-o output: a header row of omni column names, then the values row.

    netperf prints the header on one line; a capture pasted through an 80-column
    terminal or editor may have it hard-wrapped over several lines (a space turned into a
    line break). Such a header is joined back when every joined name is an omni column and
    the values row under it has as many fields; the result says so (``__unwrapped__``).
    """
    rows = [ln.strip() for ln in body if ln.strip()]
    for i in range(len(rows) - 1):
        for j in range(i, min(i + 8, len(rows) - 1)):
            joined = _unwrap(rows[i : j + 1])
            head = [h.strip() for h in joined.split(",")]
            if not (head and all(h in HEADERS for h in head) and ("," in joined or len(rows) == 2)):
                continue
            vals = _split_csv(rows[j + 1])
            if len(vals) != len(head):
                raise ParseError(
                    f"netperf -o CSV: {len(head)} column names but {len(vals)} values in {rows[j + 1]!r}"
                )
            out = {HEADERS[h]: v for h, v in zip(head, vals)}
            out["__format__"] = "csv"
            if j > i:
                out["__unwrapped__"] = str(j - i + 1)
            return out
    return None


def _unwrap(lines: list[str]) -> str:
    """Header lines hard-wrapped at spaces, joined back: after a comma directly, else with a space."""
    out = lines[0]
    for ln in lines[1:]:
        out += ln if out.endswith(",") else " " + ln
    return out


def from_columns(body: list[str]) -> dict[str, str] | None:
    """-O output: header lines of omni columns above one values row, columns left-aligned."""
    rows = [ln for ln in body if ln.strip()]
    if len(rows) < 2:
        return None
    values = rows[-1]
    starts = [m.start() for m in re.finditer(r"\S+", values)]
    tokens = values.split()
    heads = rows[:-1]
    if not starts or len(heads) > 4:
        heads = heads[-4:]
    names = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else None
        parts = [h[s:e].strip() for h in heads]
        names.append(" ".join(p for p in parts if p))
    if not all(n in HEADERS for n in names):
        return None
    out = {HEADERS[n]: v for n, v in zip(names, tokens)}
    out["__format__"] = "columns"
    return out


def _split_csv(line: str) -> list[str]:
    return next(csv.reader([line]))
