"""iperf 2's CSV output (``-y C``): one comma-separated row per report, no header.

Columns: timestamp, local address, local port, remote address, remote port, stream id (``-1`` for
the ``-P`` sum), ``t0-t1``, bytes, bit/s, and for UDP jitter (ms), lost, total, loss %, out of order.
A flow's totals are its rows starting at 0 that reach its end; a UDP client prints its own total
and then the server report (receiver side); the other rows are the ``-i`` intervals.
"""

from __future__ import annotations

from podnet.tools.base import Incomplete, ParseError
from podnet.tools.result import IntervalPoint, Measurement, ParseResult


def parse_csv(lines: list[str]) -> ParseResult:
    """The ``-y C`` rows of one run (``lines`` already matched :data:`_CSV`) as one result."""
    recs = []
    for ln in lines:
        f = ln.split(",")
        t0, t1 = (float(x) for x in f[6].split("-"))
        rec = {
            "id": f[5],
            "t0": t0,
            "t1": t1,
            "bytes": float(f[7]),
            "bps": float(f[8]),
            "local": f[1],
            "remote": f[3],
        }
        if len(f) >= 14:
            rec.update(
                jitter=float(f[9]) * 1e-3,
                lost=int(f[10]),
                total=int(f[11]),
                pct=float(f[12]),
                ooo=int(f[13]),
            )
        recs.append(rec)
    udp = all("total" in r for r in recs)
    res = ParseResult(test="udp" if udp else "tcp", protocol="udp" if udp else "tcp", direction="forward")
    res.info.update({"format": "csv", "local": recs[0]["local"], "remote": recs[0]["remote"]})
    ids = []
    for r in recs:
        if r["id"] not in ids:
            ids.append(r["id"])
    sums = [i for i in ids if i == "-1"]
    flows = [i for i in ids if i != "-1"]
    res.streams = len(flows) or 1

    def final_rows(i: str) -> list[dict]:
        """The flow's totals: rows starting at 0 that reach the flow's end."""
        rows = [r for r in recs if r["id"] == i]
        end = max(r["t1"] for r in rows)
        return [r for r in rows if r["t0"] == 0 and r["t1"] >= end - 1e-9]

    keys = sums if sums else flows
    sender: list[dict] = []
    receiver: list[dict] = []
    for i in keys:
        fr = final_rows(i)
        if not fr:
            raise Incomplete(
                f"iperf 2 CSV (-y C) output is damaged: stream {i} has no final row starting at 0.0"
            )
        if not udp:
            sender.append(fr[-1])
            continue
        if fr[-1]["total"] < 0:  # 2.1 client: own total only, no server report
            sender.append(fr[-1])
        elif len(fr) >= 2:  # client: own total, then the server report
            sender.append(fr[-2])
            receiver.append(fr[-1])
        else:  # server side
            receiver.append(fr[-1])
    if not sender and not receiver:
        raise ParseError(
            "iperf 2 CSV (-y C) rows found but no final row starting at 0.0: the run may have been cut off"
        )
    add = res.measurements.append
    if not udp:
        add(Measurement("throughput", sum(r["bps"] for r in sender), "bit/s"))
        add(Measurement("bytes_transferred", sum(r["bytes"] for r in sender), "bytes"))
        add(Measurement("duration", max(r["t1"] for r in sender), "s"))
    else:
        if receiver:
            lost = sum(r["lost"] for r in receiver)
            total = sum(r["total"] for r in receiver)
            add(Measurement("throughput", sum(r["bps"] for r in receiver), "bit/s"))
            add(Measurement("bytes_transferred", sum(r["bytes"] for r in receiver), "bytes"))
            add(Measurement("duration", max(r["t1"] for r in receiver), "s"))
            add(Measurement("jitter", max(r["jitter"] for r in receiver), "s"))
            add(Measurement("lost_packets", float(lost), "count"))
            add(Measurement("total_packets", float(total), "count"))
            if total > 0:
                add(Measurement("loss", lost / total, "fraction"))
            add(Measurement("out_of_order", float(sum(r["ooo"] for r in receiver)), "count"))
        else:
            res.info["warnings"] = ["no server report: receiver-side throughput, loss and jitter are unknown"]
            add(Measurement("duration", max(r["t1"] for r in sender), "s"))
        if sender:
            add(Measurement("sender_throughput", sum(r["bps"] for r in sender), "bit/s"))
            add(Measurement("sender_bytes_transferred", sum(r["bytes"] for r in sender), "bytes"))
    multi = len(flows) > 1
    finals = {id(r) for i in ids for r in final_rows(i)[-2:]}
    for r in recs:
        if id(r) in finals:
            continue
        stream = "sum" if (r["id"] == "-1" or not multi) else r["id"]
        res.intervals.append(IntervalPoint(r["t0"], r["t1"], "throughput", r["bps"], "bit/s", stream=stream))
        res.intervals.append(
            IntervalPoint(r["t0"], r["t1"], "bytes_transferred", r["bytes"], "bytes", stream=stream)
        )
    return res
