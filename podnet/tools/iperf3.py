"""iperf3: its ``-J`` JSON (preferred; the launcher always asks for it) and the plain text people paste.

Headline metric ``throughput`` is the receiver-side goodput (``sum_received``;
for ``-R`` the client is the receiver). Sender-side rate, retransmits, UDP
jitter/loss/packets per second and CPU use are kept as their own metrics.
``--bidir`` runs yield both directions, as ``bidir-forward`` and
``bidir-reverse``. The text parser reads the summary lines tagged
``sender``/``receiver`` (the ``[SUM]`` lines when ``-P N`` > 1) and the
interval lines above them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from podnet.tools._iperf3_text import _LINE, _SEPARATOR, TextParser
from podnet.tools.base import (
    Adapter,
    Invocation,
    MetricInfo,
    ParseError,
    Resolution,
    affinity_argv,
    check_duration_streams,
)
from podnet.tools.result import IntervalPoint, Measurement, ParseResult

_NONNEG = {"type": "number", "minimum": 0}
_COUNT = {"type": "integer", "minimum": 0}
_FLAG = {"type": ["integer", "boolean"]}
_SUM = {
    "type": "object",
    "required": ["start", "end", "seconds", "bytes", "bits_per_second"],
    "properties": {
        "start": _NONNEG,
        "end": _NONNEG,
        "seconds": _NONNEG,
        "bytes": _NONNEG,
        "bits_per_second": _NONNEG,
        "retransmits": _COUNT,
        "jitter_ms": _NONNEG,
        "lost_packets": _COUNT,
        "packets": _COUNT,
        "lost_percent": _NONNEG,
        "omitted": {"type": "boolean"},
        "sender": {"type": "boolean"},
    },
}
#: the parts of iperf3's -J document podnet reads, with the types iperf3 writes them in:
#: a value of another type is a corrupted or hand-edited file, never coerced into a number
IPERF3_JSON_SCHEMA = {
    "type": "object",
    "required": ["start", "end"],
    "properties": {
        "start": {
            "type": "object",
            "required": ["test_start"],
            "properties": {
                "test_start": {
                    "type": "object",
                    "required": ["protocol", "num_streams", "reverse"],
                    "properties": {
                        "protocol": {"enum": ["TCP", "UDP", "SCTP"]},
                        "num_streams": {"type": "integer", "minimum": 1},
                        "reverse": _FLAG,
                        "bidir": _FLAG,
                        "duration": _NONNEG,
                        "omit": _NONNEG,
                        "blksize": _NONNEG,
                    },
                },
                "version": {"type": "string"},
                "connected": {"type": "array"},
            },
        },
        "intervals": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["sum"],
                "properties": {"sum": _SUM, "sum_bidir_reverse": _SUM, "streams": {"type": "array"}},
            },
        },
        "end": {
            "type": "object",
            "anyOf": [{"required": ["sum_received"]}, {"required": ["sum"]}],
            "properties": {
                **{k: _SUM for k in ("sum_sent", "sum_received", "sum", "sum_sent_bidir_reverse")},
                "sum_received_bidir_reverse": _SUM,
                "sum_bidir_reverse": _SUM,
                "cpu_utilization_percent": {
                    "type": "object",
                    "additionalProperties": _NONNEG,
                },
                "streams": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "anyOf": [{"required": ["sender"]}, {"required": ["udp"]}],
                        "properties": {
                            "sender": {
                                "type": "object",
                                "properties": {"mean_rtt": _NONNEG, "sender": {"type": "boolean"}},
                            }
                        },
                    },
                },
            },
        },
    },
}


def _check_json(doc: Any) -> None:
    """``doc`` has iperf3's structure and types; :class:`ParseError` names the first place that has not."""
    import jsonschema

    err = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(IPERF3_JSON_SCHEMA).iter_errors(doc))
    if err is not None:
        where = "/".join(map(str, err.absolute_path)) or "(top level)"
        raise ParseError(f"iperf3 JSON at {where}: {err.message} (a corrupted or edited file?)")


def _is_json(text: str) -> bool:
    return text.lstrip().startswith("{")


class Iperf3Adapter(TextParser, Adapter):
    name = "iperf3"
    binary = "iperf3"
    display_name = "iperf3"
    default_port = 15201
    server_kind = "process"
    tcp_control = True
    headline = ("throughput",)
    #: JSON (-J) gives rates in full; the text output prints 3 significant digits ("9.41 Gbits/sec"),
    #: and both give the TCP RTT in whole us
    resolution = {
        "throughput": Resolution(digits=3),
        "sender_throughput": Resolution(digits=3),
        "tcp_rtt_mean": Resolution(step=1e-6),
    }
    metrics = {
        "throughput": MetricInfo("Throughput (receiver)", "bit/s", "higher"),
        "tcp_rtt_mean": MetricInfo("TCP RTT (mean, sender)", "s", "lower"),
        "cpu_local": MetricInfo("CPU (local)", "fraction", "lower"),
        "cpu_remote": MetricInfo("CPU (remote)", "fraction", "lower"),
    }
    defaults: dict[str, Any] = {
        "duration": 10,
        "omit": 1,
        "streams": 1,
        "protocol": "tcp",
        "reverse": False,
        "bidir": False,
        "bandwidth": None,
        "length": None,
        "window": None,  # -w: the socket buffer size (e.g. 256K), fixed instead of autotuned
        "port": 5201,
        "interval": 1,
        "affinity": None,  # client CPU, or [client, server]: -A n,m (the client sets the server's)
    }

    # ---- detection -------------------------------------------------------------
    final_line = re.compile(r"iperf Done\.")

    def sniff(self, text: str) -> float:
        head = text[:4000]
        if _is_json(head) and ('"start"' in head or '"error"' in head):
            if re.search(r'"version"\s*:\s*"iperf 3', text[:20000]) or '"test_start"' in text[:20000]:
                return 1.0
            if '"error"' in head and '"intervals"' in head:
                return 0.9
        if re.search(r"^iperf3: ", head, re.M):
            return 0.9
        if _LINE.search(text) and re.search(r"\b(sender|receiver)\s*$", text, re.M):
            return 0.95
        if re.search(r"^[^\[\n]*\[ ID\](\[Role\])?\s+Interval\s+Transfer\s+Bitrate", text, re.M):
            return 0.9
        if _SEPARATOR.search(text) and _LINE.search(text):
            return 0.9  # iperf3's '- - -' rule above its summary (iperf 2 never prints it)
        return 0.0

    # ---- parsing ---------------------------------------------------------------
    def parse(self, text: str) -> ParseResult:
        if _is_json(text):
            return self._parse_json(text)
        return self._parse_text(text)

    def _parse_json(self, text: str) -> ParseResult:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(
                f"iperf3 JSON is not valid JSON ({exc.msg} at line {exc.lineno}): the run may have been cut off"
            ) from exc
        if not isinstance(doc, dict):
            raise ParseError("iperf3 JSON must be an object with 'start', 'intervals' and 'end'")
        if doc.get("error"):
            raise ParseError(f"iperf3 reported an error: {doc['error']}")
        start, end = doc.get("start") or {}, doc.get("end") or {}
        ts = start.get("test_start") or {} if isinstance(start, dict) else {}
        if not end or not ts:
            if isinstance(start, dict) and start.get("connected") == [] and not doc.get("intervals"):
                raise ParseError(
                    "iperf3 JSON with no connection (start.connected is empty), no intervals and no 'end' "
                    "summary: the client never connected to a server, nothing was measured"
                )
            raise ParseError("iperf3 JSON has no 'end' summary or 'start.test_start': the run did not finish")
        _check_json(doc)
        proto = str(ts.get("protocol", "TCP")).lower()
        streams = int(ts.get("num_streams") or 1)
        reverse = bool(ts.get("reverse"))
        bidir = bool(ts.get("bidir")) or "sum_sent_bidir_reverse" in end
        result = ParseResult(test=proto, protocol=proto, streams=streams)
        result.direction = "bidir-forward" if bidir else ("reverse" if reverse else "forward")
        result.info.update(
            version=start.get("version"),
            system_info=start.get("system_info"),
            blksize=ts.get("blksize"),
            omit=ts.get("omit"),
            duration=ts.get("duration"),
            target_bitrate=ts.get("target_bitrate"),
            connected=start.get("connected"),
            sender_tcp_congestion=end.get("sender_tcp_congestion"),
        )
        if proto == "tcp" and isinstance(ts.get("blksize"), int) and ts["blksize"] > 0:
            # the bytes per write call (-l; 128 KiB by default): what bounds a stream test's rate
            result.measurements.append(Measurement("send_size", float(ts["blksize"]), "bytes"))
        legs = [("", result.direction)]
        if bidir:
            legs.append(("_bidir_reverse", "bidir-reverse"))
        for suffix, direction in legs:
            self._json_leg(end, suffix, direction, proto, result)
        cpu = end.get("cpu_utilization_percent") or {}
        for key, metric in (("host_total", "cpu_local"), ("remote_total", "cpu_remote")):
            if key in cpu:
                result.measurements.append(Measurement(metric, float(cpu[key]) / 100.0, "fraction"))
        self._json_intervals(doc.get("intervals") or [], result, bidir)
        if not any(m.metric == "throughput" for m in result.measurements):
            raise ParseError("iperf3 JSON 'end' holds no sum_received/sum: no throughput was measured")
        return result

    def _json_leg(self, end: dict, suffix: str, direction: str, proto: str, result: ParseResult) -> None:
        add = result.measurements.append
        sent, recv = end.get(f"sum_sent{suffix}"), end.get(f"sum_received{suffix}")
        if proto == "udp" and not suffix and end.get("sum") and not recv:
            # iperf3 < 3.9 has only 'sum' for UDP: sender bytes, receiver loss/jitter
            total = end["sum"]
            recv_bytes = total["bytes"] * (1 - total.get("lost_percent", 0) / 100.0)
            recv = {"bits_per_second": recv_bytes * 8 / total["seconds"], "seconds": total["seconds"]}
            recv.update({k: total[k] for k in ("jitter_ms", "lost_packets", "packets") if k in total})
            sent = sent or total
        if recv:
            add(Measurement("throughput", float(recv["bits_per_second"]), "bit/s", direction=direction))
        if sent:
            add(
                Measurement("sender_throughput", float(sent["bits_per_second"]), "bit/s", direction=direction)
            )
            if "retransmits" in sent:
                add(Measurement("retransmits", float(sent["retransmits"]), "count", direction=direction))
        if proto == "udp":
            info = end.get(f"sum{suffix}") or recv or {}
            if "jitter_ms" in info:
                add(Measurement("jitter", float(info["jitter_ms"]) * 1e-3, "s", direction=direction))
            packets, lost = info.get("packets"), info.get("lost_packets")
            if sent and sent.get("packets") and sent.get("seconds"):
                add(
                    Measurement(
                        "sender_pps", sent["packets"] / sent["seconds"], "packets/s", direction=direction
                    )
                )
            if packets:
                add(Measurement("packets", float(packets), "count", direction=direction))
                if lost is not None:
                    add(Measurement("lost_packets", float(lost), "count", direction=direction))
                    add(Measurement("loss", float(lost) / float(packets), "fraction", direction=direction))
                    secs = (recv or info).get("seconds") or info.get("seconds")
                    if secs:
                        add(Measurement("pps", (packets - lost) / secs, "packets/s", direction=direction))
        # mean TCP RTT over the sending streams (tcp_info of the local sender only)
        rtts = [
            s["sender"]["mean_rtt"]
            for s in end.get("streams", [])
            if isinstance(s.get("sender"), dict) and s["sender"].get("mean_rtt") and s["sender"].get("sender")
        ]
        senders = [
            s
            for s in end.get("streams", [])
            if isinstance(s.get("sender"), dict) and s["sender"].get("sender")
        ]
        if rtts and len(rtts) != len(senders):
            raise ParseError(
                "iperf3 JSON: some sending streams lack 'mean_rtt' (a corrupted or edited file?)"
            )
        n = result.streams or 0
        if rtts and not suffix and direction == "forward" and len(senders) != n:
            raise ParseError(f"iperf3 JSON: {len(senders)} sending streams in 'end.streams' for -P {n}")
        if rtts and not suffix and direction in ("forward", "bidir-forward"):
            add(Measurement("tcp_rtt_mean", sum(rtts) / len(rtts) * 1e-6, "s", direction=direction))

    def _json_intervals(self, intervals: list, result: ParseResult, bidir: bool) -> None:
        for iv in intervals:
            for key, direction in (("sum", result.direction), ("sum_bidir_reverse", "bidir-reverse")):
                s = iv.get(key)
                if not s or (key == "sum_bidir_reverse" and not bidir):
                    continue
                result.intervals.append(
                    IntervalPoint(
                        t_start=float(s["start"]),
                        t_end=float(s["end"]),
                        metric="throughput",
                        value=float(s["bits_per_second"]),
                        unit="bit/s",
                        direction=direction,
                        omitted=bool(s.get("omitted", False)),
                    )
                )

    def complete_for(self, result: ParseResult, command: str) -> None:
        """With the sidecar's command: as many streams as ``-P`` asked for."""
        check_duration_streams(result, command, self.name)

    # ---- command line ----------------------------------------------------------
    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        p = {**self.defaults, **params}
        port = int(p["port"])
        duration = float(p["duration"])
        argv = ["iperf3", "-c", target, "-p", str(port), "-J", "-t", str(duration), "-i", str(p["interval"])]
        if p.get("omit"):
            argv += ["-O", str(int(p["omit"]))]
        streams = int(p["streams"])
        if streams > 1:
            argv += ["-P", str(streams)]
        proto = str(p["protocol"]).lower()
        if proto == "udp":
            argv += ["-u", "-b", str(p.get("bandwidth") or "1G")]
        elif p.get("bandwidth"):
            argv += ["-b", str(p["bandwidth"])]
        if p.get("length"):
            argv += ["-l", str(p["length"])]
        if p.get("window"):
            argv += ["-w", str(p["window"])]
        argv += affinity_argv("-A", p.get("affinity"), needs_client=True)  # -A client[,server]
        direction = "bidir-forward" if p.get("bidir") else "reverse" if p.get("reverse") else "forward"
        argv += {"bidir-forward": ["--bidir"], "reverse": ["-R"], "forward": []}[direction]
        return Invocation(
            client=argv,
            server=["iperf3", "-s", "-p", str(port)],
            port=port,
            duration=duration + float(p.get("omit") or 0),
            test=proto,
            protocol=proto,
            direction=direction,
            streams=streams,
            version=["iperf3", "--version"],
        )


ADAPTER = Iperf3Adapter()
