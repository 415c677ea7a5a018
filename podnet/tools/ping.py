"""ping (iputils and the other formats pingparsing knows).

iputils' statistics block is read here by its format rules: the maintained
``pingparsing`` library misses iputils' ``+N errors`` field (it then returns
nothing for a 100 %-loss run with unreachable errors), ``pipe N`` and
``ipg/ewma``, and outputs cut before the statistics block (people often pipe
ping through ``head``). Other ping dialects (BusyBox/Alpine, macOS, Windows)
go to ``pingparsing``, always with a fresh instance: a ``PingParsing``
instance returns its previous result when a later parse finds nothing.
A run with 100 % loss is a loss measurement with no RTT, not a failure.

``rtt_median`` is the median of the per-packet times ping printed, given only when every reply
counted in the statistics block has its line (not for ``-q``/flood output, nor when a reply's time
is only a bound such as ``time<1 ms``). It is ping's headline metric: one stray packet of 2.4 ms
among ten of 0.07 ms makes ``rtt_avg`` 4x its neighbours' and moves the median by one rank
(METHODS.md, "Per-run summaries").
"""

from __future__ import annotations

import math
import re
import statistics
from collections import deque
from collections.abc import Iterable
from typing import Any

from podnet.tools.base import (
    Adapter,
    Incomplete,
    Invocation,
    MetricInfo,
    ParseError,
    Resolution,
    last_line_complete,
)
from podnet.tools.result import Measurement, ParseResult

_REPLY = re.compile(
    r"^\d+ bytes from .*?icmp_[rs]eq=(?P<seq>\d+).*?time[=<](?P<time>[\d.]+) ?(?P<unit>ms|us|s)\b",
    re.M,
)
_STATS_HEADER = re.compile(r"^---? .* ping6? statistics ---?", re.M)
_IPUTILS = re.compile(
    r"^(?P<tx>\d+) packets transmitted, (?P<rx>\d+) (?:packets )?received,"
    r"(?: \+(?P<dup>\d+) duplicates,)?(?: \+(?P<corrupt>\d+) corrupted,)?(?: \+(?P<err>\d+) errors,)?"
    r" (?P<loss>[\d.]+)% packet loss",
    re.M,
)
# iputils (mdev), FreeBSD/macOS (stddev, std-dev) and BusyBox (min/avg/max only)
_RTT = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(?P<has_dev>/(?:mdev|stddev|std-dev))? = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?(has_dev)/(?P<mdev>[\d.]+)) ?(?P<unit>ms|us|s)\b",
    re.M,
)
# the one figure left when people pipe ping through an averaging script
# (seed 001: `ping X | head -n 20 | gawk '/time/ {...} END {print sum/count "ms"}'` prints `0.747789ms`)
_AVERAGE_ONLY = re.compile(r"^\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|us|s)\s*$", re.M)
# a reply line with its time (iputils, BusyBox `seq=`, -D's `[timestamp]` prefix), for rtt_median
_REPLY_TIME = re.compile(
    r"^(?:\[[\d.]+\] )?\d+ bytes from .*?\b(?:icmp_[rs]eq|seq)=(?P<seq>\d+).*?time(?P<op>[=<])(?P<time>[\d.]+) ?"
    r"(?P<unit>ms|us|s)\b(?P<rest>.*)$",
    re.M,
)
_PIPE = re.compile(r"\bpipe (\d+)")
_IPG = re.compile(r"ipg/ewma ([\d.]+)/([\d.]+) ms")
_TIME = re.compile(r"packet loss, time (\d+)ms")
_SCALE = {"ms": 1e-3, "us": 1e-6, "s": 1.0}


class PingAdapter(Adapter):
    name = "ping"
    binary = "ping"
    display_name = "ping"
    server_kind = "none"
    headline = ("rtt_median",)
    #: what figures show where an output has no per-packet times (flood -q, pasted statistics blocks)
    headline_fallback = ("rtt_avg",)
    #: the summary line prints min/avg/max/mdev to 0.001 ms; a packet's time=... has 3 significant
    #: digits and at least 0.001 ms (statistics of the packets' times, such as their median)
    resolution = {
        **{f"rtt_{s}": Resolution(step=1e-6) for s in ("min", "avg", "max", "mdev")},
        "rtt": Resolution(step=1e-6, digits=3),
        "rtt_median": Resolution(step=1e-6, digits=3),
    }
    metrics = {
        "rtt_median": MetricInfo("RTT (median)", "s", "lower"),
        "packets_transmitted": MetricInfo("Packets transmitted", "count", "", "count"),
        "packets_received": MetricInfo("Packets received", "count", "", "count"),
        "duplicates": MetricInfo("Duplicates", "count", "lower", "count"),
        "pipe": MetricInfo("Pipe", "count", "", "count"),
        "ipg": MetricInfo("Inter-packet gap", "s"),
        "ewma": MetricInfo("RTT (EWMA)", "s", "lower"),
        "elapsed": MetricInfo("Elapsed", "s"),
        "errors": MetricInfo("Errors", "count", "lower", "count"),
    }
    defaults: dict[str, Any] = {"count": 10, "flood": False, "interval": None, "size": None}
    final_line = re.compile(
        r"(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev|std-dev))? = [\d.]+/[\d.]+/[\d.]+(?:/[\d.]+)? (?:ms|us|s)"
        r"(?:, (?:pipe \d+|ipg/ewma [\d.]+/[\d.]+ ms)(?:, ipg/ewma [\d.]+/[\d.]+ ms)?)?"
    )

    def sniff(self, text: str) -> float:
        if _STATS_HEADER.search(text) and "packets transmitted" in text:
            return 0.9
        if _REPLY.search(text) and re.search(r"^PING ", text, re.M):
            return 0.8
        if _REPLY.search(text):
            return 0.5
        return 0.0

    def parse(self, text: str) -> ParseResult:
        result = ParseResult(protocol="icmp", direction="roundtrip")
        if _STATS_HEADER.search(text):
            self._parse_summary(text, result)
            add_median(result, *reply_times(text))
        else:
            self._parse_replies(text, result)
        for m in _PIPE.finditer(text):
            result.measurements.append(Measurement("pipe", float(m.group(1)), "count"))
        m = _IPG.search(text)
        if m:
            result.measurements.append(Measurement("ipg", float(m.group(1)) * 1e-3, "s"))
            result.measurements.append(Measurement("ewma", float(m.group(2)) * 1e-3, "s"))
        m = _TIME.search(text)
        if m:
            result.measurements.append(Measurement("elapsed", float(m.group(1)) * 1e-3, "s"))
        return result

    def parse_lines(self, lines: Iterable[str], keep: int = 2000) -> ParseResult:
        """:meth:`parse` for a huge output, line by line in bounded memory (same result).

        Reply lines are only counted (the statistics block is what a complete output is
        read from); the first and last ``keep`` other lines are kept and parsed as text.
        """
        _one = re.compile(_REPLY.pattern)
        head: list[str] = []
        tail: deque[str] = deque(maxlen=keep)
        rtts_n, total, total2, lo, hi = 0, 0.0, 0.0, math.inf, 0.0
        times: list[float] = []  # every reply's time (not DUPs): the median
        seen: set[str] = set()
        bounded = False
        prev = None
        cut = ""
        for line in lines:
            if not line.endswith("\n"):
                if not last_line_complete(line, self.final_line):
                    cut = line  # the last line, without its newline, stopped inside a figure: cut off
                    break
                line += "\n"  # whole, only its newline missing
            if line == prev and any(c.isdigit() for c in line):
                raise ParseError(
                    f"a line repeats the line before it ({line.strip()[:60]!r}): corrupted or spliced"
                )
            prev = line
            m = _one.match(line)
            if m:
                x = float(m["time"]) * _SCALE[m["unit"]]
                rtts_n, total, total2 = rtts_n + 1, total + x, total2 + x * x
                t = _REPLY_TIME.match(line)
                if t is not None and "(DUP!)" not in t["rest"] and t["seq"] not in seen:
                    seen.add(t["seq"])
                    times.append(x)
                    bounded = bounded or t["op"] == "<"
                lo, hi = min(lo, x), max(hi, x)
                if len(head) < keep:
                    head.append(line)  # a few replies: what dialect detection needs
                continue
            (head if len(head) < keep else tail).append(line)
        text = "".join(head) + "".join(tail)
        if _STATS_HEADER.search(text):
            try:
                res = self.parse(text)
            except ParseError as exc:
                raise ParseError(
                    f"{exc}{' (the output ends inside a line: cut off?)' if cut else ''}"
                ) from None
            if not any(m.metric == "rtt_median" for m in res.measurements):
                add_median(res, times, bounded)  # the kept text holds only the first replies
            return res
        if not rtts_n:
            return self.parse(text)  # raises with the reason
        result = ParseResult(protocol="icmp", direction="roundtrip")
        mean = total / rtts_n
        result.info["summary"] = "computed from reply lines (no statistics block in the output)"
        result.info["excerpt_lines"] = rtts_n  # checked against the sidecar's excerpt_lines
        add = result.measurements.append
        add(Measurement("packets_received", float(rtts_n), "count"))
        add(Measurement("rtt_min", lo, "s"))
        add(Measurement("rtt_avg", mean, "s"))
        add(Measurement("rtt_max", hi, "s"))
        add(Measurement("rtt_mdev", math.sqrt(max(total2 / rtts_n - mean * mean, 0.0)), "s"))
        raise Incomplete(
            f"ping output has {rtts_n} reply lines but no '--- ... ping statistics ---' block: cut off "
            "(allowed with `excerpt: true` in the sidecar)",
            result,
        )

    def _parse_summary(self, text: str, result: ParseResult) -> None:
        m = _IPUTILS.search(text)
        if m is None:
            self._parse_other_dialects(text, result)
            return
        add = result.measurements.append
        tx, rx = int(m["tx"]), int(m["rx"])
        add(Measurement("packets_transmitted", float(tx), "count"))
        add(Measurement("packets_received", float(rx), "count"))
        if tx > 0:
            add(Measurement("loss", max(tx - rx, 0) / tx, "fraction"))
        for key, metric in (("dup", "duplicates"), ("err", "errors"), ("corrupt", "corrupted")):
            if m[key]:
                add(Measurement(metric, float(m[key]), "count"))
        rtt = _RTT.search(text)
        if rtt:
            scale = _SCALE[rtt["unit"]]
            for field in ("min", "avg", "max", "mdev"):
                if rtt[field] is not None:  # BusyBox prints no deviation
                    add(Measurement(f"rtt_{field}", float(rtt[field]) * scale, "s"))
        elif rx:
            raise ParseError(
                "replies were received but no 'rtt min/avg/max[/mdev]' (or 'round-trip ...') line was found"
            )

    def _parse_other_dialects(self, text: str, result: ParseResult) -> None:
        # imported here: 0.4 s (typepy) in every process that only asks adapters for metric facts
        import pingparsing

        # a fresh parser each time: PingParsing instances keep the previous result
        parser = pingparsing.PingParsing()
        try:
            stats = parser.parse(text)
        except Exception as exc:  # pingparsing raises several types
            raise ParseError(f"ping statistics block could not be read: {exc}") from exc
        if stats is None or stats.packet_transmit is None:
            raise ParseError(
                "expected 'N packets transmitted, M received, X% packet loss' after '--- ... ping statistics ---'"
            )
        result.info["destination"] = stats.destination
        result.info["parser"] = parser.parser_name
        add = result.measurements.append
        add(Measurement("packets_transmitted", float(stats.packet_transmit), "count"))
        add(Measurement("packets_received", float(stats.packet_receive), "count"))
        if stats.packet_transmit > 0:
            lost = stats.packet_transmit - stats.packet_receive
            add(Measurement("loss", max(lost, 0) / stats.packet_transmit, "fraction"))
        if stats.packet_duplicate_count:
            add(Measurement("duplicates", float(stats.packet_duplicate_count), "count"))
        for field in ("min", "avg", "max", "mdev"):
            value = getattr(stats, f"rtt_{field}")
            if value is not None:
                add(Measurement(f"rtt_{field}", float(value) * 1e-3, "s"))
        if stats.packet_receive and stats.rtt_avg is None:
            raise ParseError(
                "replies were received but no 'rtt min/avg/max[/mdev]' (or 'round-trip ...') line was found"
            )

    def _parse_replies(self, text: str, result: ParseResult) -> None:
        """No statistics block: the output was cut (or piped through head/gawk). Never a run's
        figures, except as an excerpt the sidecar declares (``excerpt: true``).
        """
        rtts = [float(m["time"]) * _SCALE[m["unit"]] for m in _REPLY.finditer(text)]
        averages = list(_AVERAGE_ONLY.finditer(text))
        if not rtts and len(averages) == 1 and re.search(r"\bping\b.*\|", text):
            m = averages[0]
            result.info["summary"] = (
                "only a mean RTT printed by a pipeline after ping (e.g. ping | head | gawk); "
                "number of replies, loss and spread unknown"
            )
            result.measurements.append(Measurement("rtt_avg", float(m["value"]) * _SCALE[m["unit"]], "s"))
            raise Incomplete(
                "ping output is only a mean RTT printed by a pipeline (ping | head | gawk): not the run's "
                "statistics (allowed with `excerpt: true` in the sidecar)",
                result,
            )
        if not rtts:
            raise ParseError(
                "expected ping reply lines ('64 bytes from ...: icmp_seq=1 ttl=64 time=0.2 ms') "
                "or a '--- ... ping statistics ---' block"
            )
        seqs = [int(m["seq"]) for m in _REPLY.finditer(text)]
        first = 1 if re.search(r"^PING \S+", text, re.M) else seqs[0]
        if seqs != list(range(first, first + len(seqs))):
            raise ParseError(
                "ping reply lines without a statistics block skip or repeat an icmp_seq (expected "
                f"{first}..{first + len(seqs) - 1}): lost replies and lost lines cannot be told apart "
                "without the '--- ... ping statistics ---' block"
            )
        self._from_replies(rtts, result)
        result.info["excerpt_lines"] = len(rtts)  # checked against the sidecar's excerpt_lines
        raise Incomplete(
            f"ping output has {len(rtts)} reply lines but no '--- ... ping statistics ---' block: cut off "
            "(statistics over the replies that happen to be there are not the run's; "
            "allowed with `excerpt: true` in the sidecar)",
            result,
        )

    @staticmethod
    def _from_replies(rtts: list[float], result: ParseResult) -> None:
        result.info["summary"] = "computed from reply lines (no statistics block in the output)"
        mean = statistics.fmean(rtts)
        mdev = math.sqrt(max(statistics.fmean(x * x for x in rtts) - mean * mean, 0.0))
        add = result.measurements.append
        add(Measurement("packets_received", float(len(rtts)), "count"))
        add(Measurement("rtt_min", min(rtts), "s"))
        add(Measurement("rtt_avg", mean, "s"))
        add(Measurement("rtt_max", max(rtts), "s"))
        add(Measurement("rtt_mdev", mdev, "s"))

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        p = {**self.defaults, **params}
        count = int(p["count"])
        argv = ["ping", "-n", "-c", str(count)]
        if p.get("flood"):
            argv += ["-A", "-q"]
        elif p.get("interval") is not None:
            argv += ["-i", str(float(p["interval"]))]
        if p.get("size") is not None:
            argv += ["-s", str(int(p["size"]))]
        argv += ["-w", str(int(p.get("deadline") or max(10, count * 2)))]
        argv.append(target)
        interval = 0.0 if p.get("flood") else float(p.get("interval") or 1.0)
        return Invocation(
            client=argv,
            duration=count * interval + 2,
            test="flood" if p.get("flood") else "plain",
            protocol="icmp",
            direction="roundtrip",
            version=["ping", "-V"],
        )


def reply_times(text: str) -> tuple[list[float], bool]:
    """Each reply's time (seconds; duplicates left out: marked ``(DUP!)`` or a sequence number seen
    before, the first reply counts) and whether any was only a bound (``time<1``)."""
    times, bounded = [], False
    seen: set[str] = set()
    for m in _REPLY_TIME.finditer(text):
        if "(DUP!)" in m["rest"] or m["seq"] in seen:
            continue
        seen.add(m["seq"])
        times.append(float(m["time"]) * _SCALE[m["unit"]])
        bounded = bounded or m["op"] == "<"
    return times, bounded


def add_median(result: ParseResult, times: list[float], bounded: bool) -> None:
    """``rtt_median`` into ``result`` when ``times`` holds every reply the statistics count."""
    received = next((m.value for m in result.measurements if m.metric == "packets_received"), None)
    if bounded or not times or received is None or len(times) != int(received):
        return
    result.measurements.append(Measurement("rtt_median", statistics.median(times), "s"))


ADAPTER = PingAdapter()
