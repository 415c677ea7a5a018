"""iperf3's plain text output (what people paste; the launcher always asks for ``-J``).

The summary lines tagged ``sender``/``receiver`` (the ``[SUM]`` lines when ``-P N`` > 1), the
interval lines above them, and iperf 3.0/3.1's unlabelled UDP summary. A mixin of
:class:`podnet.tools.iperf3.Iperf3Adapter`.
"""

from __future__ import annotations

import re

from podnet.tools.base import Incomplete, ParseError
from podnet.tools.result import IntervalPoint, Measurement, ParseResult
from podnet.tools.units import rate_to_bps

# [  5]   0.00-100.00 sec  42.8 GBytes  3.67 Gbits/sec  12742   sender
# [SUM][TX-C]   0.00-2.00   sec  2.42 GBytes  10.4 Gbits/sec    3   sender
# [  5]   0.00-2.00   sec  2.41 MBytes  10.1 Mbits/sec  0.009 ms  0/77 (0%)  receiver
# an optional prefix without '[' is what `--timestamps[=FORMAT]` puts before every line
_LINE = re.compile(
    r"^[^\[\n]*\[\s*(?P<id>\d+|SUM)\s*\](?:\[(?P<role>[TR]X-[CS])\])?\s+"
    r"(?P<start>[\d.]+)\s*-\s*(?P<end>[\d.]+)\s+sec\s+"
    r"(?P<xfer>[\d.]+)\s*(?P<xunit>[KMGT]?Bytes)\s+"
    r"(?P<rate>[\d.]+)\s*(?P<runit>[KMGT]?bits/sec)"
    r"(?P<rest>.*)$",
    re.M,
)
_UDP_TAIL = re.compile(
    r"^\s*(?P<jitter>[\d.]+)\s*ms\s+(?P<lost>-?\d+)\s*/\s*(?P<total>\d+)\s*\((?P<pct>-?nan|[-\d.e+]+)%\)"
)
_RETR_TAIL = re.compile(r"^\s*(?P<retr>\d+)\b")
# iperf 3.0/3.1 UDP clients end with '[  4] Sent 216481 datagrams' after one unlabelled summary line
_UDP_SENT = re.compile(r"^[^\[\n]*\[\s*(?P<id>\d+|SUM)\s*\]\s+Sent (?P<sent>\d+) datagrams\s*$", re.M)
_SEPARATOR = re.compile(r"^(?:- ){10,}-?\s*$", re.M)


class TextParser:
    """iperf3 text parsing (mixed into the adapter)."""

    def _parse_text(self, text: str) -> ParseResult:
        m = re.search(r"^iperf3: error - (.*)$", text, re.M)
        lines = [m_ for m_ in _LINE.finditer(text)]
        summaries = [x for x in lines if re.search(r"\b(sender|receiver)\s*$", x["rest"])]
        if not summaries and _UDP_SENT.search(text):
            return self._parse_udp_legacy(text, lines)
        if not summaries:
            if m:
                raise ParseError(f"iperf3 reported an error: {m.group(1).strip()}")
            raise ParseError(
                "expected iperf3 summary lines ('[ ID] 0.00-10.00 sec ... sender' / '... receiver'): "
                "none found, the run may have been cut off"
            )
        proto = (
            "udp"
            if re.search(r"Jitter\s+Lost/Total", text) or any(_UDP_TAIL.match(x["rest"]) for x in summaries)
            else "tcp"
        )
        bidir = any(x["role"] for x in summaries)
        reverse = bool(re.search(r"^Reverse mode", text, re.M))
        headers = re.findall(r"^\[ ID\] Interval.*$", text, re.M)
        if (
            proto == "tcp"
            and not bidir
            and not reverse
            and re.search(r"^Connecting to host", text, re.M)
            and len(headers) >= 2
            and "Retr" not in headers[0]
            and "Retr" in headers[-1]
        ):
            raise Incomplete(
                "iperf3 client output is damaged: its interval rows have no Retr column (the client was "
                "receiving) but there is no 'Reverse mode, remote host ... is sending' line"
            )
        ids = {x["id"] for x in summaries if x["id"] != "SUM"}
        result = ParseResult(test=proto, protocol=proto, streams=max(len(ids) // (2 if bidir else 1), 1))
        if bidir:
            result.direction = "bidir-forward"
        elif reverse:
            result.direction = "reverse"
        v = re.search(r"^iperf (3[\w.+-]*)", text, re.M)
        if v:
            result.info["version"] = f"iperf {v.group(1)}"
        use_sum = any(x["id"] == "SUM" for x in summaries)
        self._text_complete(summaries, result.direction)
        legs: dict[str, dict[str, list]] = {}
        for x in summaries:
            if use_sum and x["id"] != "SUM":
                continue
            direction = self._text_direction(x["role"], result.direction)
            tag = "sender" if x["rest"].rstrip().endswith("sender") else "receiver"
            legs.setdefault(direction, {}).setdefault(tag, []).append(x)
        add = result.measurements.append
        for direction, tags in legs.items():
            for tag, rows in tags.items():
                rate = sum(rate_to_bps(float(r["rate"]), r["runit"]) for r in rows)
                add(
                    Measurement(
                        "throughput" if tag == "receiver" else "sender_throughput",
                        rate,
                        "bit/s",
                        direction=direction,
                    )
                )
                if proto == "tcp" and tag == "sender":
                    retr = [_RETR_TAIL.match(r["rest"]) for r in rows]
                    if all(retr):
                        add(
                            Measurement(
                                "retransmits",
                                float(sum(int(r["retr"]) for r in retr)),
                                "count",
                                direction=direction,
                            )
                        )
                if proto == "udp" and tag == "receiver":
                    tails = [_UDP_TAIL.match(r["rest"]) for r in rows]
                    if all(tails):
                        lost = sum(int(t["lost"]) for t in tails)
                        total = sum(int(t["total"]) for t in tails)
                        jit = sum(float(t["jitter"]) for t in tails) / len(tails)
                        secs = max(float(r["end"]) - float(r["start"]) for r in rows)
                        add(Measurement("jitter", jit * 1e-3, "s", direction=direction))
                        add(Measurement("packets", float(total), "count", direction=direction))
                        add(Measurement("lost_packets", float(lost), "count", direction=direction))
                        if total:
                            add(Measurement("loss", lost / total, "fraction", direction=direction))
                        if secs > 0:
                            add(Measurement("pps", (total - lost) / secs, "packets/s", direction=direction))
        if not any(mm.metric == "throughput" for mm in result.measurements):
            raise ParseError(
                "iperf3 text has sender lines but no 'receiver' summary line: receiver goodput unknown"
            )
        self._text_intervals(lines, summaries, use_sum, result)
        return result

    def _parse_udp_legacy(self, text: str, lines: list) -> ParseResult:
        """iperf 3.0/3.1 UDP client text: after the '- - -' rule, one unlabelled line per stream
        (the client's send rate, the server's jitter and loss) and 'Sent N datagrams'.

        Those versions print no receiver rate, so none is made up: the rate is
        ``sender_throughput``, loss and jitter are the server's. A run whose server received
        no datagram at all (``0/0 (-nan%)``) measured no path and is an error.
        """
        rules = list(_SEPARATOR.finditer(text))
        if not rules:
            raise Incomplete("iperf3 UDP text has 'Sent N datagrams' but no '- - -' rule before its summary")
        after = rules[-1].end()
        summary = [x for x in lines if x.start() > after and _UDP_TAIL.match(x["rest"])]
        sent = {m["id"] for m in _UDP_SENT.finditer(text) if m.start() > after}
        ids = {x["id"] for x in summary if x["id"] != "SUM"}
        if not summary or not ids or ids != sent:
            raise Incomplete(
                "iperf3 UDP text: every stream needs its summary line and its 'Sent N datagrams' line "
                f"(streams with a summary: {sorted(ids)}, with 'Sent': {sorted(sent)}): cut off?"
            )
        shown = {x["id"] for x in lines if x.start() < rules[-1].start() and x["id"] != "SUM"}
        if shown and shown != ids:
            raise Incomplete(
                f"iperf3 UDP text: streams {sorted(shown)} in the interval rows, summaries for "
                f"{sorted(ids)}: cut off?"
            )
        use = [x for x in summary if x["id"] == "SUM"] if len(ids) > 1 else summary
        if not use:
            raise Incomplete(f"iperf3 UDP text with {len(ids)} streams but no [SUM] summary line: cut off?")
        x = use[-1]
        tail = _UDP_TAIL.match(x["rest"])
        lost, total = int(tail["lost"]), int(tail["total"])
        if total == 0:
            raise ParseError(
                "iperf3 UDP: the server received no datagram (Lost/Total 0/0): the run measured no path"
            )
        result = ParseResult(test="udp", protocol="udp", streams=len(ids))
        result.info["summary"] = (
            "iperf 3.0/3.1 UDP client: the client's send rate with the server's jitter and loss; "
            "these versions print no receiver rate"
        )
        secs = float(x["end"]) - float(x["start"])
        add = result.measurements.append
        add(Measurement("sender_throughput", rate_to_bps(float(x["rate"]), x["runit"]), "bit/s"))
        add(Measurement("jitter", float(tail["jitter"]) * 1e-3, "s"))
        add(Measurement("packets", float(total), "count"))
        add(Measurement("lost_packets", float(lost), "count"))
        add(Measurement("loss", lost / total, "fraction"))
        if secs > 0:
            add(Measurement("pps", (total - lost) / secs, "packets/s"))
        self._text_intervals(lines, summary, len(ids) > 1, result)
        return result

    def _text_complete(self, summaries: list, default: str | None) -> None:
        """Every stream has its sender and receiver line; with several streams, so has [SUM]."""
        seen: dict[str, dict[str, set[str]]] = {}
        for x in summaries:
            tag = "sender" if x["rest"].rstrip().endswith("sender") else "receiver"
            d = str(self._text_direction(x["role"], default))
            seen.setdefault(d, {}).setdefault(x["id"], set()).add(tag)
        for ids in seen.values():
            for sid, tags in ids.items():
                if tags != {"sender", "receiver"}:
                    lack = ({"sender", "receiver"} - tags).pop()
                    raise Incomplete(
                        f"iperf3 output is incomplete (cut off?): stream [{sid}] has no '{lack}' summary line"
                    )
            if len([i for i in ids if i != "SUM"]) > 1 and "SUM" not in ids:
                raise Incomplete(
                    "iperf3 output is incomplete (cut off?): several streams (-P) but no [SUM] summary lines"
                )

    @staticmethod
    def _text_direction(role: str | None, default: str | None) -> str | None:
        if role is None:
            return default
        # client view: TX-C = client sends = forward leg; RX-C = reverse leg
        return "bidir-forward" if role.startswith("TX") else "bidir-reverse"

    def _text_intervals(self, lines: list, summaries: list, use_sum: bool, result: ParseResult) -> None:
        summary_spans = {x.span() for x in summaries}
        for x in lines:
            if x.span() in summary_spans:
                continue
            if use_sum and x["id"] != "SUM":
                continue
            result.intervals.append(
                IntervalPoint(
                    t_start=float(x["start"]),
                    t_end=float(x["end"]),
                    metric="throughput",
                    value=rate_to_bps(float(x["rate"]), x["runit"]),
                    unit="bit/s",
                    direction=self._text_direction(x["role"], result.direction),
                    omitted="(omitted)" in x["rest"],
                )
            )
