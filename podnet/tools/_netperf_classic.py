"""netperf's classic (non-omni) output: the result table of each test and its ``-D`` interim lines
(:mod:`podnet.tools.netperf` owns the command line, detection and the omni formats).
"""

from __future__ import annotations

import re

from podnet.tools._netperf_omni import direction, positive, rate_to_bps
from podnet.tools.base import Incomplete, ParseError
from podnet.tools.result import IntervalPoint, Measurement, ParseResult

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_INTERIM = re.compile(
    rf"^Interim result:\s*({_NUM})\s+(\S+)\s+over\s+({_NUM})\s+seconds ending at\s+({_NUM})"
)


def classic_table(body: list[str], test: str, proto: str | None, res: ParseResult) -> None:
    res.test, res.protocol, res.direction = test, proto, direction(test)
    add = lambda metric, value, unit: res.measurements.append(Measurement(metric, float(value), unit))  # noqa: E731
    header = "\n".join(ln for ln in body if ln.strip() and not re.match(rf"^\s*{_NUM}(\s+{_NUM})*\s*$", ln))
    numeric = [ln.split() for ln in body if re.match(rf"^\s*{_NUM}(\s+{_NUM})+\s*$", ln)]
    if not numeric:
        raise ParseError(
            f"netperf {test}: column headers but no result row of numbers under them: the run may have been cut off"
        )
    cpu = re.search(r"% \w", header) is not None
    sd_unit = re.search(r"(us|usec)/(KB|Tr)", header)

    def cpu_cols(vals: list[str], i: int) -> None:
        if not cpu or len(vals) < i + 4:
            return
        for side, k in (("local", i), ("remote", i + 1)):
            v = positive(vals[k])
            if v is not None:
                add(f"cpu_util_{side}", v / 100.0, "fraction")
        for side, k in (("local", i + 2), ("remote", i + 3)):
            v = positive(vals[k])
            if v is not None and sd_unit:
                if sd_unit.group(2) == "KB":
                    add(f"service_demand_{side}", v * 1e-6 / 1024, "s/byte")
                else:
                    add(f"service_demand_{side}", v * 1e-6, "s")

    if "Elapsed" not in header:
        raise ParseError(
            f"netperf {test}: the column headers lack 'Elapsed Time': not a classic result block"
        )
    if test.endswith(("_RR", "_CRR", "_CC")):
        if not re.search(r"Trans\.?\s", header):
            raise ParseError(f"netperf {test}: the column headers lack 'Trans. Rate': not a classic RR block")
        row = numeric[0]
        if len(row) < 6:
            raise ParseError(f"netperf {test}: result row {' '.join(row)!r} has fewer than 6 columns")
        add("duration", row[4], "s")
        add("transaction_rate", row[5], "transactions/s")
        res.info.update({"request_size": int(float(row[2])), "response_size": int(float(row[3]))})
        cpu_cols(row, 6)
        return
    unit = re.search(r"(10\^\d+bits/s(?:ec)?|[KMG]?Bytes/s(?:ec)?)", header)
    if not unit:
        raise ParseError(
            f"netperf {test}: no throughput unit (10^6bits/sec, MBytes/sec) in the column headers"
        )
    if test == "UDP_STREAM" or (len(numeric) >= 2 and "Okay" in header):
        if len(numeric) < 2:
            raise Incomplete(
                f"netperf {test} output is incomplete (cut off?): the sender's row without the "
                "receiver's row under it"
            )
        send = numeric[0]
        add("duration", send[2], "s")
        add("messages_sent", send[3], "count")
        add("send_errors", send[4], "count")
        add("sender_throughput", rate_to_bps(float(send[5]), unit.group(1)), "bit/s")
        res.info["message_size"] = int(float(send[1]))
        if len(numeric) >= 2:
            recv = numeric[1]
            add("messages_received", recv[2], "count")
            add("throughput", rate_to_bps(float(recv[3]), unit.group(1)), "bit/s")
            sent = float(send[3])
            if sent > 0:
                add("loss", max(0.0, 1 - float(recv[2]) / sent), "fraction")
        cpu_cols(send, 6)
        return
    row = numeric[0]
    if len(row) < 5:
        raise ParseError(f"netperf {test}: result row {' '.join(row)!r} has fewer than 5 columns")
    add("duration", row[3], "s")
    add("throughput", rate_to_bps(float(row[4]), unit.group(1)), "bit/s")
    res.info["message_size"] = int(float(row[2]))
    if float(row[2]) > 0 and test.endswith("STREAM"):
        add("send_size", row[2], "bytes")  # 'Send Message Size bytes': what bounds the rate
    cpu_cols(row, 5)


def interims(body: list[str], res: ParseResult) -> None:
    t = 0.0
    for ln in body:
        m = _INTERIM.match(ln.strip())
        if not m:
            continue
        value, unit, span = float(m.group(1)), m.group(2), float(m.group(3))
        bps = rate_to_bps(value, unit)
        if bps is None:
            res.intervals.append(IntervalPoint(t, t + span, "transaction_rate", value, "transactions/s"))
        else:
            res.intervals.append(IntervalPoint(t, t + span, "throughput", bps, "bit/s"))
        t += span
