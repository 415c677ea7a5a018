"""netperf: classic test output (TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM, UDP_RR, with and
without ``-c``/``-C``), omni output selectors in all three forms (``-O`` columns, ``-o`` CSV, ``-k``
key=value) and ``-D`` interim results.

Hand-written parser (netperf prints text only; no maintained Python parser exists). Omni columns and
CSV headers are mapped back to selector names through netperf's own header texts (``nettest_omni.c``
``set_output_elt``): e.g. ``Minimum Latency Microseconds`` is ``MIN_LATENCY``. ``-O`` columns are cut
at the starts of the left-aligned values in the result row, so column widths do not matter.
This module reads the banner, the classic blocks and ``-D`` interims; the omni forms and the value
helpers are in :mod:`podnet.tools._netperf_omni`, the header table in ``_netperf_fields``.

Units: ``THROUGHPUT_UNITS`` ``10^Nbits/s`` are decimal, ``KBytes``/``MBytes``/``GBytes`` binary
(netperf divides by 1024), ``Trans/s`` are transactions. Latency selectors are microseconds. netperf
writes ``-1`` for figures it did not measure (CPU without ``-c``/``-C``, retransmissions on systems
without the counter, RT_LATENCY of a stream test): those are skipped, never reported.

Metrics: ``throughput`` (bit/s; THROUGHPUT of stream tests, for UDP_STREAM what the receiver got),
``sender_throughput`` (LOCAL_SEND_THROUGHPUT, the UDP_STREAM sender row), ``transaction_rate``
(transactions/s, RR/CRR), ``latency_min``/``_max``/``_mean``/``_stddev``/``_p50``/``_p90``/``_p99``
(s; for stream tests netperf times each send call, so there they are ``send_call_latency_*``),
``rt_latency`` (RT_LATENCY, 1/transaction rate), ``duration``, ``cpu_util_local``/``cpu_util_remote``
(fraction of the whole host, as netperf reports it) and ``cpu_local``/``cpu_remote`` (fraction of one
CPU) when the CPU count is known, ``service_demand_local``/``_remote`` (s/byte for streams, s per
transaction for RR), ``retransmits_local``/``_remote``, ``bytes_sent``/``bytes_received``,
``send_calls``/``recv_calls`` (and ``remote_*``), and for UDP_STREAM ``messages_sent``,
``messages_received``, ``send_errors`` and ``loss``. Other selectors go into ``info['selectors']``.

TCP_CRR (any connection-per-transaction test) runs ``-l D`` seconds but takes D + 4 s: netserver
(``nettest_omni.c`` ``recv_omni``) times its side with ``test_length + PAD_TIME`` (``netlib.h``:
4 s) and, blocked in ``accept()`` for the next connection, learns of the end only from that timer
(an RR test's server sees the client's close); it then subtracts the 4 s from ELAPSED_TIME and
sends its results, which the client waits for. Not podnet's port, ``-P``, TIME_WAIT or ``-c -C``:
seed 003's 60 cross-node TCP_CRR runs (-l 3, 3434-10086 connections/s) took 7.07-7.16 s and its 60
TCP_RR 3.07-3.17 s; on loopback (netperf 2.7.0, CPU-capped) CRR -l 1/3/6 took 5.1/7.1/10.1-10.2 s
with or without ``-P ,port`` and ``-c -C``, RR -l 3 3.0-3.1 s, CRR ``-l -5000`` (a transaction
count: no server timer) ELAPSED_TIME + 0.1-0.2 s. Two figures carry the pad: REMOTE_CPU_UTIL is
netserver's /proc/stat over D + 4 s scaled by (D + 4)/D (``netcpu_procstat.c`` correction factor),
so whatever ran in the pad counts 4/D-fold (seed 003: REMOTE 1.41-1.67x LOCAL_CPU_UTIL, over 100 %
of the host in all 60, where TCP_RR's are equal: one machine); and the launcher's machine busy
(``interference``) is over the 7-s window (seed 003: 0.49 against TCP_RR's 0.77), diluting
``machine_cpu_per_transaction``. So a CRR run gives no server-side CPU figure (``cpu_util_remote``,
``cpu_remote``, ``service_demand_remote``) and no machine cost (``info['server_pad_s']`` tells
:mod:`podnet.parse.cost`); its client-side CPU is over the client's D seconds and stays. Not changed
(it changes what is measured): ``-l -N`` ends CRR by a transaction count, without the pad.
"""

from __future__ import annotations

import re
from typing import Any

from podnet.tools._netperf_classic import _INTERIM, classic_table, interims
from podnet.tools._netperf_omni import direction, from_columns, from_csv, selectors
from podnet.tools.base import (
    Adapter,
    Incomplete,
    Invocation,
    MetricInfo,
    ParseError,
    Resolution,
    UnsupportedTest,
    cpu_pair,
)
from podnet.tools.result import ParseResult

_BANNER = re.compile(r"^(?P<migrated>MIGRATED )?(?P<what>[A-Za-z][\w/|]*(?: [\w/|]+)*?) TEST\b(?P<rest>.*)$")
_KEYVAL = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")
#: netserver's pad on a connection test's timer (``netlib.h`` PAD_TIME), and the figures it taints
_PAD_TIME_S = 4.0
_PADDED = frozenset({"cpu_util_remote", "cpu_remote", "service_demand_remote"})

#: selectors netperf writes in launcher runs (-k); see ADAPTER.invocation
LAUNCH_SELECTORS = (
    "THROUGHPUT,THROUGHPUT_UNITS,TRANSACTION_RATE,RT_LATENCY,MIN_LATENCY,MEAN_LATENCY,MAX_LATENCY,"
    "STDDEV_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,ELAPSED_TIME,PROTOCOL,DIRECTION,REQUEST_SIZE,"
    "RESPONSE_SIZE,LOCAL_SEND_SIZE,REMOTE_RECV_SIZE,LOCAL_SEND_THROUGHPUT,REMOTE_RECV_THROUGHPUT,"
    "LOCAL_SEND_CALLS,REMOTE_RECV_CALLS,LOCAL_CPU_UTIL,REMOTE_CPU_UTIL,LOCAL_CPU_COUNT,REMOTE_CPU_COUNT,"
    "LOCAL_SD,REMOTE_SD,SD_UNITS,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS,TRANSPORT_MSS,"
    "CONFIDENCE_LEVEL,THROUGHPUT_CONFID,COMMAND_LINE"
)


def _test_name(what: str) -> tuple[str, str | None]:
    """Banner words ('TCP REQUEST/RESPONSE', 'OMNI Send|Recv') -> (test name, protocol)."""
    words = what.split()
    proto = words[0].upper()
    kind = " ".join(words[1:]).upper()
    if proto == "OMNI":
        return "OMNI", None
    table = {
        "STREAM": "STREAM",
        "MAERTS": "MAERTS",
        "SENDFILE": "SENDFILE",
        "REQUEST/RESPONSE": "RR",
        "CONNECT/REQUEST/RESPONSE": "CRR",
        "CONNECT/CLOSE": "CC",
    }
    return f"{proto}_{table.get(kind, kind.replace(' ', '_'))}", proto.lower()


class NetperfAdapter(Adapter):
    """netperf client output."""

    name = "netperf"
    binary = "netperf"
    display_name = "netperf"
    default_port = 15865
    server_kind = "process"
    tcp_control = True
    headline = ("throughput", "transaction_rate", "latency_mean")
    install_hint = "netperf is not in Debian main; build envs/images/netperf for a cluster that can pull it"
    #: netperf prints latency percentiles, min and max in whole us, MEAN_LATENCY to 0.01 us,
    #: RT_LATENCY to 0.001 us, rates to 0.01 (throughput in 10^6 bit/s)
    resolution = {
        "latency": Resolution(step=1e-6),
        "latency_mean": Resolution(step=1e-8),
        "latency_stddev": Resolution(step=1e-8),
        "rt_latency": Resolution(step=1e-9),
        "transaction_rate": Resolution(step=0.01),
        "throughput": Resolution(step=1e4),
    }
    metrics = {
        "messages_sent": MetricInfo("Messages sent", "count", "", "count"),
        "messages_received": MetricInfo("Messages received", "count", "", "count"),
        "send_errors": MetricInfo("Send errors", "count", "lower", "count"),
        "send_call_latency": MetricInfo("Send call latency", "s", "lower"),
        "cpu_util_local": MetricInfo("CPU utilisation (local)", "fraction", "lower", "proportion"),
        "cpu_util_remote": MetricInfo("CPU utilisation (remote)", "fraction", "lower", "proportion"),
        "cpu_local": MetricInfo("CPUs used (local)", "fraction", "lower"),
        "cpu_remote": MetricInfo("CPUs used (remote)", "fraction", "lower"),
        # unit "" = per row: s/byte for stream tests, s (per transaction) for RR tests
        "service_demand_local": MetricInfo("Service demand (local)", "", "lower"),
        "service_demand_remote": MetricInfo("Service demand (remote)", "", "lower"),
        "bytes_sent": MetricInfo("Bytes sent", "bytes", "", "count"),
        "bytes_received": MetricInfo("Bytes received", "bytes", "", "count"),
        "retransmits_local": MetricInfo("Retransmits (local)", "count", "lower", "count"),
        "retransmits_remote": MetricInfo("Retransmits (remote)", "count", "lower", "count"),
        "send_calls": MetricInfo("Send calls", "count", "", "count"),
        "recv_calls": MetricInfo("Receive calls", "count", "", "count"),
        "remote_send_calls": MetricInfo("Send calls (remote)", "count", "", "count"),
        "remote_recv_calls": MetricInfo("Receive calls (remote)", "count", "", "count"),
        "remote_bytes_sent": MetricInfo("Bytes sent (remote)", "bytes", "", "count"),
        "remote_bytes_received": MetricInfo("Bytes received (remote)", "bytes", "", "count"),
    }
    defaults = {
        "test": "TCP_RR",
        "duration": 10,
        "port": 12865,
        "request_size": 1,
        "response_size": 1,
        "message_size": None,
        # -j (per-call timing for latency percentiles): None = for RR/CRR only; true/false forces it
        "histogram": None,
        "cpu": False,
        "data_port": None,
        # CPU affinity: client CPU, or [client, server] (-T n,m; either may be None)
        "affinity": None,
    }

    def sniff(self, text: str) -> float:
        if re.search(
            r"^(MIGRATED )?(TCP|UDP|SCTP|SDP|OMNI|DLCO|DLCL|STREAM|DG)\b[^\n]* TEST\b", text, re.M
        ) and (" from " in text or " to " in text):
            return 0.95
        if re.search(r"^THROUGHPUT_UNITS=", text, re.M):
            return 0.9
        if re.search(r"establish control|netserver|^netperf: ", text, re.M):
            return 0.6
        return 0.0

    def parse(self, text: str) -> ParseResult:
        lines = [ln.rstrip("\r") for ln in text.splitlines()]
        banner = None
        start = 0
        for i, ln in enumerate(lines):
            m = _BANNER.match(ln.strip())
            if m and (" from " in m["rest"] or " to " in m["rest"]):
                banner, start = m, i + 1
                break
        res = ParseResult(streams=1)
        info: dict[str, Any] = res.info
        test, proto = ("OMNI", None)
        if banner:
            test, proto = _test_name(banner["what"])
            info["banner"] = lines[start - 1].strip()
            info["migrated"] = bool(banner["migrated"])
            conf = re.search(r"\+/-([\d.]+)% @ (\d+)% conf", banner["rest"])
            if conf:
                info["confidence"] = {"interval_pct": float(conf.group(1)), "level_pct": int(conf.group(2))}
        body = lines[start:]
        warnings = [ln.strip("! ").strip() for ln in body if ln.startswith("!!!")]
        if warnings:
            info["warnings"] = warnings
        cmd = next(
            (
                re.search(r"(?:^|[#$>]\s*)(netperf\s+.*)$", ln)
                for ln in lines[: max(start, 1)]
                if "netperf" in ln
            ),
            None,
        )
        if cmd:
            info["command"] = cmd.group(1).strip()
        body = [ln for ln in body if not ln.startswith("!!!")]
        interims(body, res)
        body = [ln for ln in body if not _INTERIM.match(ln)]

        keyval = {m.group(1): m.group(2) for m in (_KEYVAL.match(ln.strip()) for ln in body) if m}
        if keyval and "THROUGHPUT" in keyval or len(keyval) >= 2:
            info["format"] = "keyval"
            info["keys"] = list(keyval)
            if not banner:
                t = re.search(r"\s-t\s+(\S+)", keyval.get("COMMAND_LINE", ""))
                if t is None or t[1].upper() == "OMNI":
                    raise Incomplete(
                        "netperf KEY=value output without its test banner ('MIGRATED TCP STREAM TEST from "
                        "...'): netperf prints it unless -P 0, and without it (or a COMMAND_LINE naming -t) "
                        "the test is unknown"
                    )
                test = t[1].upper()
            selectors(keyval, test, proto, res)
            if "COMMAND_LINE" in keyval:  # the output names its own command: check it against that
                self.complete_for(res, keyval["COMMAND_LINE"].strip('"'))
        else:
            sel = from_csv(body) or from_columns(body)
            if sel is not None:
                info["format"] = sel.pop("__format__")
                wrapped = sel.pop("__unwrapped__", None)
                if wrapped:
                    info["unwrapped_header"] = (
                        f"the -o CSV header was hard-wrapped over {wrapped} lines (an edited capture: "
                        "netperf prints it on one line); joined back, its names match the values row"
                    )
                selectors(sel, test, proto, res)
            elif banner:
                info["format"] = "classic"
                classic_table(body, test, proto, res)
            else:
                err = next(
                    (
                        ln.strip()
                        for ln in lines
                        if re.search(r"establish|error|refused|unable|could not", ln, re.I)
                    ),
                    None,
                )
                raise ParseError(
                    "no netperf test banner ('MIGRATED TCP STREAM TEST from ...') or omni output "
                    "(-k KEY=value, -o CSV with header, -O columns) found"
                    + (f"; netperf said: {err!r}" if err else "; the run may have failed")
                )
        if test.endswith("_CRR"):
            # netserver's own timer pads a connection test by PAD_TIME (see the module docstring):
            # its CPU figures and the run's machine window hold 4 s of whatever ran then
            res.info["server_pad_s"] = _PAD_TIME_S
            res.measurements = [m for m in res.measurements if m.metric not in _PADDED]
        headline = {"throughput", "transaction_rate", "latency_mean", "sender_throughput", "rt_latency"}
        if not any(m.metric in headline for m in res.measurements):
            raise ParseError(
                f"netperf {test} output without a result: expected a throughput or transaction rate "
                "(the result row under the column headers, or THROUGHPUT=/MEAN_LATENCY= selectors); "
                "the run may have been cut off"
            )
        return res

    def complete_for(self, result: ParseResult, command: str) -> None:
        """With the sidecar's command: every ``-k`` selector asked for was printed (``-k all`` ends
        with COMMAND_LINE), so an output cut between two KEY=value lines is not taken as complete.
        """
        keys = result.info.get("keys")
        args = command.split()
        if not isinstance(keys, list) or "-k" not in args or args.index("-k") + 1 >= len(args):
            return
        asked = args[args.index("-k") + 1]
        # -k all prints every output selector; these are in every omni test's list
        core = ["PROTOCOL", "DIRECTION", "THROUGHPUT", "THROUGHPUT_UNITS", "ELAPSED_TIME", "TRANSACTION_RATE"]
        want = core + ["COMMAND_LINE"] if asked.lower() == "all" else [k for k in asked.split(",") if k]
        missing = [k for k in want if k not in keys]
        if missing:
            raise Incomplete(
                f"netperf output is incomplete (cut off?): -k asked for {', '.join(missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''}, which it lacks"
            )

    # -------------------------------------------------------------- classic output
    # -------------------------------------------------------------- launching
    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """Client ``netperf -H target -p PORT -t TEST -l D -- [-r req,rsp | -m size] -k <selectors>``.

        One output form for launched runs: ``-k`` key=value with explicit selectors (every line
        names its figure, so nothing depends on column layout). Server: ``netserver -D -p PORT``.
        """
        p = {**self.defaults, **(params or {})}
        test = str(p.get("test", "TCP_RR")).upper()
        if test not in ("TCP_STREAM", "TCP_MAERTS", "TCP_RR", "TCP_CRR", "UDP_STREAM", "UDP_RR"):
            raise UnsupportedTest(
                f"netperf: test {test!r} is not TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM or UDP_RR"
            )
        port = int(p["port"])
        duration = float(p["duration"])
        client = [
            "netperf",
            "-H",
            target,
            "-p",
            str(port),
            "-t",
            test,
            "-l",
            str(int(duration) if duration.is_integer() else duration),
        ]
        # -j: keep the per-transaction timings the *_LATENCY percentile selectors report: for the
        # RR/CRR tests, whose latency percentiles the config asks for; a stream test's figure is its
        # throughput, so it gets -j only when `histogram: true` asks (benchmarks/netperf_send_size.py
        # measures what -j does to it)
        histogram = p.get("histogram")
        if histogram or (histogram is None and test.endswith(("_RR", "_CRR"))):
            client.append("-j")
        if p.get("cpu"):
            client += ["-c", "-C"]
        cpu_c, cpu_s = cpu_pair(p.get("affinity"))
        if cpu_c is not None or cpu_s is not None:
            client += ["-T", f"{'' if cpu_c is None else cpu_c},{'' if cpu_s is None else cpu_s}"]
        client.append("--")
        if p.get("data_port"):
            # a fixed remote data port (netperf picks a random one), for firewalls and port-mapped paths
            client += ["-P", f",{int(p['data_port'])}"]
        if test.endswith(("_RR", "_CRR")):
            client += ["-r", f"{int(p['request_size'])},{int(p['response_size'])}"]
        elif p.get("message_size"):
            client += ["-m", str(int(p["message_size"]))]
        client += ["-k", LAUNCH_SELECTORS]
        proto = test.split("_")[0].lower()
        return Invocation(
            client=client,
            server=["netserver", "-D", "-p", str(port)],
            port=port,
            duration=duration,
            test=test,
            protocol=proto,
            direction=direction(test),
            streams=1,
            version=["netperf", "-V"],
        )


ADAPTER = NetperfAdapter()
