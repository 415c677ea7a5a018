"""sockperf client output: ``ping-pong``, ``under-load`` and ``throughput``.

Hand-written parser (sockperf prints text only; ``--full-log`` writes a CSV of
every message, not a summary). ANSI colour codes that sockperf 3.x puts
around some lines are stripped first. Works for 2.x (``avg-lat=``) and 3.x
(``avg-latency=``/``avg-rtt=``) summaries.

ping-pong / under-load: sockperf reports *latency* as half the round trip
unless ``--full-rtt`` is given. Half-RTT figures are ``latency_mean``,
``latency_stddev``, ``latency_min``, ``latency_max``, ``latency_p25`` ...
``latency_p99_999``; with ``--full-rtt`` the same figures are named ``rtt_*``.
Also ``dropped_messages``, ``duplicated_messages``, ``out_of_order``,
``sent_messages``/``received_messages`` and ``duration`` of the valid
(post-warm-up) period, and ``observations``. Only sockperf's usec unit exists.

throughput: sockperf measures the sender only, so the figures are
``sender_msg_rate`` (messages/s) and ``sender_throughput`` (bit/s; sockperf's
``MBps`` are 2**20 bytes/s and its ``Mbps`` are 8 * MBps). For UDP that is
not what arrived; over TCP it is (almost) the goodput, so there they are also
reported as ``throughput``/``msg_rate``.
"""

from __future__ import annotations

import re
from typing import Any

from podnet.tools.base import (
    Adapter,
    Incomplete,
    Invocation,
    MetricInfo,
    ParseError,
    Resolution,
    UnsupportedTest,
    percentile_name,
)
from podnet.tools.result import Measurement, ParseResult

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUM = r"\d+(?:\.\d+)?"


class SockperfAdapter(Adapter):
    """sockperf ping-pong / under-load latency and throughput clients."""

    name = "sockperf"
    binary = "sockperf"
    display_name = "sockperf"
    default_port = 15111
    server_kind = "process"
    headline = ("latency_mean", "throughput")
    #: sockperf prints latencies in usec with 3 decimals, message rates in whole messages/s
    resolution = {
        "latency": Resolution(step=1e-9),
        "rtt": Resolution(step=1e-9),
        "msg_rate": Resolution(step=1.0),
        "sender_msg_rate": Resolution(step=1.0),
    }
    metrics = {
        "latency": MetricInfo("Latency (half RTT)", "s", "lower"),
        "rtt": MetricInfo("RTT", "s", "lower"),
        "sender_msg_rate": MetricInfo("Sender message rate", "messages/s", "higher"),
        "sent_messages": MetricInfo("Messages sent", "count", "", "count"),
        "received_messages": MetricInfo("Messages received", "count", "", "count"),
        "dropped_messages": MetricInfo("Dropped messages", "count", "lower", "count"),
        "duplicated_messages": MetricInfo("Duplicated messages", "count", "lower", "count"),
        "observations": MetricInfo("Observations", "count", "", "count"),
    }
    defaults = {
        "mode": "ping-pong",
        "duration": 10,
        "port": 11111,
        "protocol": "udp",
        "msg_size": None,
        "full_rtt": False,
        "mps": None,
    }

    def sniff(self, text: str) -> float:
        if re.search(r"^sockperf[:\[]", text, re.M):
            return 0.95
        if "sockperf" in text:
            return 0.5
        return 0.0

    def parse(self, text: str) -> ParseResult:
        text = _ANSI.sub("", text)
        res = ParseResult(streams=1)
        proto = _header(text, res)
        if (
            re.search(r"Summary: (Message Rate|Latency|Round trip) is|====> avg-(lat|rtt)", text)
            and not proto
        ):
            raise Incomplete(
                "sockperf output is damaged: a summary but no '[ 0] IP = ... PORT = ... # UDP|TCP' line "
                "(the client prints it before every test; the protocol is unknown without it)"
            )
        tp = re.search(rf"Summary: Message Rate is ({_NUM}) \[msg/sec\]", text)
        if tp:
            _throughput(text, tp, res)
        else:
            _latency(text, res)
        return res

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """Server ``sockperf sr [--tcp] -i 0.0.0.0 -p PORT``; client ``sockperf <mode> -i target -p PORT -t D``."""
        p = {**self.defaults, **(params or {})}
        mode = str(p.get("mode") or p.get("test") or "ping-pong")
        if mode not in ("ping-pong", "under-load", "throughput"):
            raise UnsupportedTest(f"sockperf: mode {mode!r} is not ping-pong, under-load or throughput")
        proto = str(p.get("protocol", "udp")).lower()
        if proto not in ("udp", "tcp"):
            raise UnsupportedTest(f"sockperf: protocol {proto!r} is not udp or tcp")
        port = int(p["port"])
        duration = float(p["duration"])
        client = [
            "sockperf",
            mode,
            "-i",
            target,
            "-p",
            str(port),
            "-t",
            str(int(duration) if duration.is_integer() else duration),
        ]
        server = ["sockperf", "sr", "-i", "0.0.0.0", "-p", str(port)]
        if proto == "tcp":
            client.append("--tcp")
            server.append("--tcp")
        if p.get("msg_size"):
            client += ["-m", str(p["msg_size"])]
        if p.get("mps"):
            client += ["--mps", str(p["mps"])]
        if p.get("full_rtt") and mode != "throughput":
            client.append("--full-rtt")
        return Invocation(
            client=client,
            server=server,
            port=port if proto == "tcp" else None,
            duration=duration,
            test=mode,
            protocol=proto,
            direction="forward" if mode == "throughput" else "roundtrip",
            streams=1,
            version=["sockperf", "--version"],
        )


def _header(text: str, res: ParseResult) -> re.Match[str] | None:
    """Version, target, protocol and command line into ``res``; returns the protocol line's match."""
    info: dict[str, Any] = res.info
    ver = re.search(r"== version #(\S+)", text)
    if ver:
        info["version"] = ver.group(1)
    proto = re.search(r"^\[\s*\d+\] IP = (\S+)\s+PORT =\s*(\d+) # (TCP|UDP)", text, re.M)
    if proto:
        info["target"], info["port"] = proto.group(1), int(proto.group(2))
        res.protocol = proto.group(3).lower()
    cmd = re.search(
        r"(?:^|[#$>]\s*)(sockperf\s+(?:ping-pong|pp|under-load|ul|throughput|tp)\b.*)$", text, re.M
    )
    if cmd:
        info["command"] = cmd.group(1).strip()
    return proto


def _throughput(text: str, tp: re.Match[str], res: ParseResult) -> None:
    """A throughput test's summary (``Summary: Message Rate is ...``): rates and bandwidth."""
    info: dict[str, Any] = res.info
    add = lambda metric, value, unit: res.measurements.append(Measurement(metric, float(value), unit))  # noqa: E731
    res.test, res.direction = "throughput", "forward"
    total = re.search(rf"Total of (\d+) messages sent in ({_NUM}) sec", text)
    if total:
        add("sent_messages", total.group(1), "count")
        add("duration", total.group(2), "s")
    add("sender_msg_rate", tp.group(1), "messages/s")
    bw = re.search(rf"Summary: BandWidth is ({_NUM}) (MBps|GBps|KBps)", text)
    bits = None
    if bw:
        bits = float(bw.group(1)) * {"KBps": 2**10, "MBps": 2**20, "GBps": 2**30}[bw.group(2)] * 8
        add("sender_throughput", bits, "bit/s")
    if res.protocol == "tcp":
        add("msg_rate", tp.group(1), "messages/s")
        if bits is not None:
            add("throughput", bits, "bit/s")
    size = re.search(r"msg-size=(\d+)", text)
    if size:
        info["msg_size"] = int(size.group(1))


def _latency(text: str, res: ParseResult) -> None:
    """A ping-pong or under-load test's summary: latency statistics, percentiles and message counts."""
    info: dict[str, Any] = res.info
    add = lambda metric, value, unit: res.measurements.append(Measurement(metric, float(value), unit))  # noqa: E731
    avg = re.search(rf"avg-(lat|latency|rtt)\s*=\s*({_NUM})\s*\(std-dev\s*=\s*({_NUM})\)", text)
    if not avg:
        why = re.search(r"^sockperf: (No messages were received.*|ERROR.*|.*[Ee]rror.*)$", text, re.M)
        hint = f" sockperf said: {why.group(1).strip()!r}" if why else " the run may have been cut off"
        raise ParseError(
            "no sockperf summary ('====> avg-latency=5.962 (std-dev=49.755)' or "
            "'Summary: Message Rate is ... [msg/sec]') found." + hint
        )
    servers = re.findall(r"Printing statistics for Server No:\s*(\d+)", text)
    if len(servers) > 1:
        info["warnings"] = [f"{len(servers)} servers reported; only server No: {servers[0]} is parsed"]
        cut = [m.start() for m in re.finditer(r"Printing statistics for Server No:", text)]
        text = text[: cut[1]]
    rtt = avg.group(1) == "rtt" or "Round trip is" in text
    res.direction = "roundtrip"
    res.test = "ping-pong"
    valid = re.search(
        rf"\[Valid Duration\] RunTime=({_NUM}) sec; SentMessages=(\d+); ReceivedMessages=(\d+)", text
    )
    if valid is None:
        raise Incomplete(
            "sockperf output is damaged: a latency summary but no '[Valid Duration] RunTime=... "
            "SentMessages=... ReceivedMessages=...' line (sockperf prints it with every summary)"
        )
    if re.search(r"\b(under-load|ul)\b", info.get("command", "")):
        res.test = "under-load"
    elif (
        valid
        and int(valid.group(3)) * 10 < int(valid.group(2))
        and "ping-pong" not in info.get("command", "")
    ):
        # under-load: the server answers only a sample of the messages (one in ~100)
        res.test = "under-load"
    base = "rtt" if rtt else "latency"
    info["latency_is"] = "round trip" if rtt else "half of the round trip (sockperf default)"
    usec = 1e-6
    add(f"{base}_mean", float(avg.group(2)) * usec, "s")
    add(f"{base}_stddev", float(avg.group(3)) * usec, "s")
    mx = re.search(rf"<MAX> observation\s*=\s*({_NUM})", text)
    mn = re.search(rf"<MIN> observation\s*=\s*({_NUM})", text)
    if mn:
        add(f"{base}_min", float(mn.group(1)) * usec, "s")
    if mx:
        add(f"{base}_max", float(mx.group(1)) * usec, "s")
    for m in re.finditer(rf"percentile\s+({_NUM})\s*=\s*({_NUM})", text):
        add(f"{base}_{percentile_name(m.group(1))}", float(m.group(2)) * usec, "s")
    dm = re.search(
        r"# dropped messages = (\d+); # duplicated messages = (\d+); # out-of-order messages = (\d+)",
        text,
    )
    if dm:
        add("dropped_messages", dm.group(1), "count")
        add("duplicated_messages", dm.group(2), "count")
        add("out_of_order", dm.group(3), "count")
    if valid:
        add("duration", valid.group(1), "s")
        add("sent_messages", valid.group(2), "count")
        add("received_messages", valid.group(3), "count")
    obs = re.search(r"Total (\d+) observations", text)
    if obs:
        add("observations", obs.group(1), "count")


ADAPTER = SockperfAdapter()
