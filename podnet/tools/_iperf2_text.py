"""iperf 2's human-readable text: the line scan, flow directions and the result built from the rows
(:mod:`podnet.tools.iperf2` owns the command line and decides between text and CSV).

The rules the text follows are in :mod:`podnet.tools.iperf2`'s docstring; the line shapes and the
scan state are :mod:`podnet.tools._iperf2_lines`, the per-stream cross-checks
:mod:`podnet.tools._iperf2_streams`.
"""

from __future__ import annotations

import re

from podnet.tools._iperf2_lines import (
    _LAT4,
    _PPS,
    _READS,
    _SHAPES,
    _TCP_SEND_E,
    _TRAIL_NUM,
    _UDP_RECV,
    _UDP_SEND_E,
    _UDP_SUM_RECV,
    _Row,
    _Scan,
    _State,
)
from podnet.tools._iperf2_streams import cross_check, summary_row
from podnet.tools.base import Incomplete, ParseError
from podnet.tools.result import IntervalPoint, Measurement, ParseResult
from podnet.tools.units import prefix_factor


def why_no_rows(text: str) -> str:
    for pat, why in (
        (r"connect failed|Connection refused", "the client could not connect (is the server running?)"),
        (r"WARNING: did not receive ack", "the server never acknowledged"),
    ):
        if re.search(pat, text):
            return why
    return "the run may have been cut off or this is not iperf 2 output"


def scan(lines: list[str]) -> _State:
    """Each line goes to the first line shape (:data:`_SHAPES`) whose regex matches it."""
    sc = _Scan(_State())
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        sc.order += 1
        for find, handle in _SHAPES:
            m = find(line)
            if m is not None and handle(sc, m) is not False:
                break
        else:
            if "WARNING" in line or "failed" in line.lower() or "error" in line.lower():
                sc.warnings.append(line)
    st = sc.st
    st.info["_pending_reports"] = sorted(sc.report_ids)
    if sc.warnings:
        st.info["warnings"] = list(dict.fromkeys(sc.warnings))  # repeated lines once
    if st.role is None:
        st.role = "server" if st.listen_ports and "target" not in st.info else "client"
    st.proto = st.proto or "tcp"
    return st


def _directions(st: _State) -> None:
    """Tag every row with the flow direction it measures (see the module docstring)."""
    first = min(st.conns.values(), key=lambda c: c.order) if st.conns else None
    orig_accepted = first.accepted if first else (st.role == "server")
    # a connect-back leg (-r/-d) that opens before the original flow's summary runs simultaneously
    summaries = [
        r.order
        for r in st.rows
        if r.sid.lstrip("*") == (first.sid.lstrip("*") if first else "") and r.t0 == 0
    ]
    first_summary = max(summaries) if summaries else 10**9
    simultaneous = any(c.accepted != orig_accepted and c.order < first_summary for c in st.conns.values())
    full_duplex = any("full-duplex" in c.flags for c in st.conns.values())
    bidir = simultaneous or full_duplex
    fwd, rev = ("bidir-forward", "bidir-reverse") if bidir else ("forward", "reverse")
    last_dir: str | None = None
    group: set[str] = set()
    for r in st.rows:
        if r.sid.startswith("SUM"):
            r.direction = last_dir if (last_dir and len(group) == 1) else "mixed"
            group = set()
            continue
        conn = st.conns.get(r.sid.lstrip("*"))
        if conn is None:
            d = rev if r.sid.startswith("*") else fwd
        elif conn.accepted != orig_accepted:
            d = rev  # connect-back leg of -r / -d
        elif "full-duplex" in conn.flags:
            d = rev if r.sid.startswith("*") else fwd
        elif "reverse" in conn.flags:
            d = rev
        else:
            d = fwd
        r.direction = d
        last_dir = d
        group.add(d)


def build(st: _State) -> ParseResult:
    cross_check(st)
    _directions(st)
    res = ParseResult(test=st.proto, protocol=st.proto)
    res.info.update({k: v for k, v in st.info.items() if not k.startswith("_")})
    res.info["role"] = st.role
    udp = st.proto == "udp"
    directions = []
    for r in st.rows:
        if r.direction != "mixed" and r.direction not in directions:
            directions.append(r.direction)
    single = len(directions) == 1
    if single:
        res.direction = directions[0]
    any_summary = False
    for d in directions:
        rows = [r for r in st.rows if r.direction == d]
        sender_rows = [r for r in rows if not r.report]
        report_rows = [r for r in rows if r.report]
        receiver_side = (st.role == "server") == d.endswith("forward")
        flows = sorted({r.sid for r in sender_rows if not r.sid.startswith("SUM")})
        streams = len(flows) or None
        if d in ("forward", "bidir-forward") or res.streams is None:
            res.streams = res.streams or streams
        main = summary_row(sender_rows, flows, need_sum=not udp or any(r.sid.startswith("SUM") for r in rows))
        ms = res.measurements
        dd = None if single else d

        def add(metric: str, value: float, unit: str) -> None:
            ms.append(Measurement(metric, value, unit, direction=dd))

        if main is not None:
            any_summary = True
        if udp:
            rep = summary_row(
                report_rows, sorted({r.sid for r in report_rows if not r.sid.startswith("SUM")})
            )
            receiver = rep if rep is not None else (main if receiver_side else None)
            sender = main if (rep is not None or not receiver_side) else None
            if receiver is not None:
                any_summary = True
                add("throughput", receiver.bps, "bit/s")
                add("bytes_transferred", receiver.nbytes, "bytes")
                add("duration", receiver.t1, "s")
                _udp_receiver(receiver, st, add)
            elif sender is not None:
                if st.role == "client" and not st.info.get("_no_ack"):
                    raise Incomplete(
                        "iperf2 UDP client output is incomplete (cut off?): no 'Server Report' after the "
                        "summary, and no 'did not receive ack of last datagram' warning saying why"
                    )
                res.info.setdefault("warnings", []).append(
                    "no server report: receiver-side throughput, loss and jitter are unknown"
                )
            if sender is not None:
                add("sender_throughput", sender.bps, "bit/s")
                add("sender_bytes_transferred", sender.nbytes, "bytes")
                if receiver is None:
                    add("duration", sender.t1, "s")
                sent = [st.sent[s] for s in flows if s in st.sent]
                if sent:
                    add("sent_datagrams", float(sum(sent)), "count")
                me = _UDP_SEND_E.match(sender.rest)
                if me:
                    add("writes", float(me["writes"]), "count")
                    add("write_errors", float(me["werr"]), "count")
                    add("sender_pps", float(me["pps"]), "packets/s")
        elif main is not None:
            add("throughput", main.bps, "bit/s")
            add("bytes_transferred", main.nbytes, "bytes")
            add("duration", main.t1, "s")
            _tcp_extra(main, sender_rows, flows, add)
        _intervals(rows, flows, res, dd, udp)
    if not any_summary:
        raise ParseError(
            "iperf 2 interval rows found but no summary row (the last '[ ID] 0.0-<end> sec' line "
            "of a flow): the run may have been cut off"
        )
    cts = [c.ct_ms for c in st.conns.values() if c.ct_ms is not None]
    if cts:
        res.measurements.append(Measurement("connect_time", sum(cts) / len(cts) * 1e-3, "s"))
    return res


def _udp_receiver(rep: _Row, st: _State, add) -> None:
    m = _UDP_RECV.match(rep.rest)
    jitter = None
    if m:
        jitter = float(m["jitter"]) * 1e-3
        lost, total, pct, rest = int(m["lost"]), int(m["total"]), float(m["pct"]), m["rest"]
    else:
        m = _UDP_SUM_RECV.match(rep.rest)
        if not m:
            return
        lost, total, pct, rest = int(m["lost"]), int(m["total"]), float(m["pct"]), m["rest"]
    if jitter is not None:
        add("jitter", jitter, "s")
    add("lost_packets", float(lost), "count")
    add("total_packets", float(total), "count")
    add("loss", lost / total if total > 0 else pct / 100.0, "fraction")
    ooo = st.ooo.get(rep.sid)
    if ooo is None and rep.sid.startswith("SUM"):
        ooo = sum(st.ooo.values()) if st.ooo else None
    add("out_of_order", float(ooo or 0), "count")
    lat = _LAT4.search(rest)
    if lat:
        for key, metric in (
            ("avg", "latency_mean"),
            ("min", "latency_min"),
            ("max", "latency_max"),
            ("std", "latency_stddev"),
        ):
            add(metric, float(lat[key]) * 1e-3, "s")
    pps = _PPS.search(rest)
    if pps:
        add("pps", float(pps["pps"]), "packets/s")
    if lat:
        np_ = _TRAIL_NUM.search(rest)
        if np_ and not rest.rstrip().endswith("pps"):
            add("netpwr", float(np_[1]) * 8e6, "bit/s/s")


def _tcp_extra(main: _Row, rows: list[_Row], flows: list[str], add) -> None:
    me = _TCP_SEND_E.match(main.rest)
    if me:
        add("writes", float(me["writes"]), "count")
        add("write_errors", float(me["werr"]), "count")
        add("retransmits", float(me["retry"]), "count")
        if me["cwnd"]:
            add("cwnd", float(me["cwnd"]) * prefix_factor(me["cu"] or "K", binary=True), "bytes")
            add("tcp_rtt_mean", float(me["rtt"]) * 1e-6, "s")
            if me["rttvar"]:
                add("tcp_rtt_var", float(me["rttvar"]) * 1e-6, "s")
            if me["netpwr"]:
                add("netpwr", float(me["netpwr"]) * 8e6, "bit/s/s")
        elif main.sid.startswith("SUM") and flows:
            # -P: per-flow RTTs live on the flows' own summary rows
            rtts = []
            for sid in flows:
                s = summary_row([r for r in rows if r.sid == sid], [sid])
                mm = _TCP_SEND_E.match(s.rest) if s else None
                if mm and mm["rtt"]:
                    rtts.append(float(mm["rtt"]) * 1e-6)
            if rtts:
                add("tcp_rtt_mean", sum(rtts) / len(rtts), "s")
        return
    mr = _READS.match(main.rest)
    if mr:
        add("reads", float(mr["reads"]), "count")


def _intervals(
    rows: list[_Row], flows: list[str], res: ParseResult, direction: str | None, udp: bool
) -> None:
    """The ``-i`` rows of each flow (all but its summary row) as interval points."""
    multi = len(flows) > 1
    by_sid: dict[str, list[_Row]] = {}
    for r in rows:
        if r.report:
            continue
        by_sid.setdefault(r.sid, []).append(r)
    for sid, rs in by_sid.items():
        if sid.startswith("SUM"):
            stream = "sum"
        else:
            stream = sid.lstrip("*") if multi else "sum"
        body = rs[:-1] if len(rs) > 1 and rs[-1].t0 == 0 else ([] if len(rs) == 1 else rs)
        for r in body:
            points = [("throughput", r.bps, "bit/s"), ("bytes_transferred", r.nbytes, "bytes")]
            m = _UDP_RECV.match(r.rest) if udp else None
            if m:
                points.append(("jitter", float(m["jitter"]) * 1e-3, "s"))
                total = int(m["total"])
                if total > 0:
                    points.append(("loss", int(m["lost"]) / total, "fraction"))
            me = _TCP_SEND_E.match(r.rest) if not udp else None
            if me:
                points.append(("retransmits", float(me["retry"]), "count"))
                if me["rtt"]:
                    cwnd = float(me["cwnd"]) * prefix_factor(me["cu"] or "K", binary=True)
                    points += [("tcp_rtt_mean", float(me["rtt"]) * 1e-6, "s"), ("cwnd", cwnd, "bytes")]
            res.intervals += [
                IntervalPoint(r.t0, r.t1, metric, value, unit, stream=stream, direction=direction)
                for metric, value, unit in points
            ]
