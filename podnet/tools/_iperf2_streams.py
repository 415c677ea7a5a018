"""iperf 2 text output's streams: cross-checks between their lines and their summary rows.

A dropped line must not change a number: every stream's 'connected with' line, rows, summary row
and (UDP client) 'Sent N datagrams' line and server report must be there, or the output is damaged.
"""

from __future__ import annotations

from podnet.tools._iperf2_lines import _UDP_RECV, _Row, _State
from podnet.tools.base import Incomplete


def cross_check(st: _State) -> None:
    """A dropped line must not change a number: every stream's lines agree with each other.

    iperf 2 prints a 'connected with' line for every stream, each stream's rows, a summary row
    per stream (its last row, starting at 0), and for a UDP client a 'Sent N datagrams' line and a
    'Server Report' per stream. Anything missing on one side is a damaged output.
    """
    if st.info.get("_pending_reports"):
        raise Incomplete(
            "iperf2 output is damaged: a 'Server Report:' line is not followed by its report row "
            f"(stream {', '.join(st.info['_pending_reports'])})"
        )
    header = bool(st.listen_ports or st.connect_ports)
    if not st.conns:
        if header and st.rows:
            raise Incomplete(
                "iperf2 output is damaged: report rows after a 'Client connecting to' / 'Server listening "
                "on' header but no 'connected with' line (a line was lost?)"
            )
        return
    if not header:
        raise Incomplete(
            "iperf2 output is damaged: 'connected with' lines but no 'Client connecting to' / "
            "'Server listening on' header (a line was lost?)"
        )
    for c in st.conns.values():
        ours = c.lport in st.listen_ports or c.rport in st.connect_ports
        if not ours:
            raise Incomplete(
                f"iperf2 output is damaged: stream {c.sid} connects port {c.lport} with port {c.rport}, "
                "neither of which a 'Client connecting to' / 'Server listening on' header names"
            )
    row_ids = {r.sid for r in st.rows if not r.sid.startswith("SUM")}
    orphans = sorted(s for s in row_ids if s.lstrip("*") not in st.conns)
    if orphans:
        raise Incomplete(
            f"iperf2 output is damaged: stream {', '.join(orphans)} has rows but no 'connected with' line"
        )
    for key, conn in st.conns.items():
        sids = {r.sid for r in st.rows if r.sid.lstrip("*") == key} or {key}
        if "full-duplex" in conn.flags:
            sids |= {key, "*" + key}
        for sid in sorted(sids):
            own = [r for r in st.rows if r.sid == sid and not r.report]
            if not own or own[-1].t0 != 0:
                raise Incomplete(
                    f"iperf2 output is damaged: stream {sid} has a 'connected with' line but no summary row "
                    "(its last row starting at 0)"
                )
    if st.role == "client" and st.proto == "udp":
        flows = {r.sid for r in st.rows if not r.sid.startswith("SUM") and not r.report}
        reported = {r.sid for r in st.rows if r.report and not r.sid.startswith("SUM")}
        sent = {s for s in st.sent if not s.startswith("SUM")}
        for what, have in (("Server Report", reported), ("Sent N datagrams line", sent)):
            if have and have != flows:
                raise Incomplete(
                    f"iperf2 UDP client output is damaged: streams {', '.join(sorted(flows - have))} have no "
                    f"{what} while the others do"
                )


def summary_row(rows: list[_Row], flows: list[str], need_sum: bool = False) -> _Row | None:
    """The summary row: the SUM total when present, else the single flow's last 0-based row.

    Several flows without a SUM line (e.g. per-stream UDP server reports) are
    added up into a synthetic row.
    """

    def last_total(rs: list[_Row]) -> _Row | None:
        if not rs:
            return None
        last = rs[-1]
        if last.t0 != 0:
            return None
        if len(rs) > 1 and last.t1 < max(r.t1 for r in rs) - 1e-9:
            return None
        return last

    sums = [r for r in rows if r.sid.startswith("SUM")]
    if sums:
        s = last_total(sums)
        if s is not None and (
            len(flows) <= 1
            or s.t1 >= max((r.t1 for r in rows if not r.sid.startswith("SUM")), default=0) * 0.5
        ):
            return s
    if need_sum and len(flows) > 1:
        return None  # -P N > 1: iperf 2 prints a [SUM] total; without it the output was cut
    per = [last_total([r for r in rows if r.sid == f]) for f in flows]
    if None in per and len(flows) > 1:
        return None  # a stream without its summary row: cut before it
    per = [p for p in per if p is not None]
    if not per:
        return None
    if len(per) == 1:
        return per[0]
    rest = per[0].rest
    m = [_UDP_RECV.match(p.rest) for p in per]
    if all(m):
        lost = sum(int(x["lost"]) for x in m)
        total = sum(int(x["total"]) for x in m)
        jit = max(float(x["jitter"]) for x in m)
        rest = f" {jit} ms {lost}/{total} ({100.0 * lost / total if total else 0}%)"
    else:
        rest = ""
    return _Row(
        "SUM",
        0.0,
        max(p.t1 for p in per),
        sum(p.nbytes for p in per),
        sum(p.bps for p in per),
        rest,
        per[0].report,
    )
