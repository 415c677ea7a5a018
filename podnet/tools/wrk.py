"""wrk (and wrk2's compatible summary) text output.

Hand-written parser: wrk has no machine-readable output unless a Lua ``done()``
script writes one, and no maintained Python parser exists. Units follow wrk's
own formatters: times ``us``/``ms``/``s``/``m``/``h``; byte sizes ``B``/``KB``/
``MB``/``GB``/``TB`` with binary prefixes (wrk's ``units_binary``); counts such as
``13.94k`` with decimal ones (``units_metric``).

Metrics: ``requests_per_second``, ``transfer_rate`` (bit/s), ``latency_mean``/
``latency_stddev``/``latency_max`` and ``latency_within_stddev`` (the
``+/- Stdev`` column, a fraction), the per-thread ``Req/Sec`` row as
``thread_requests_per_second_mean``/``_stddev``/``_max``/``_within_stddev``,
the ``--latency`` distribution (and wrk2's HdrHistogram percentiles) as
``latency_p50``, ``latency_p99``, ``latency_p99_9`` ..., ``complete_requests``,
``total_transferred`` (bytes), ``duration``, ``socket_errors_connect``/``_read``/
``_write``/``_timeout`` and ``non_2xx_responses`` (wrk counts non-2xx/3xx).
wrk prints the socket-error and non-2xx lines only when they are non-zero, so
their absence in a complete report means 0.
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
    http_errors,
    http_url,
    percentile_name,
)
from podnet.tools.result import Measurement, ParseResult

# a number, also with the thousands separators a locale-aware formatter or a report adds (12,345.67)
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"


_SOCKET = ("connect errors", "read errors", "write errors", "timeouts")


def _f(text: str) -> float:
    """A number of the output as a float (thousands separators dropped)."""
    return float(str(text).replace(",", ""))


_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_BIN = {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "PB": 2**50}
_METRIC = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def _scaled(text: str, units: dict[str, float], what: str, expected: str) -> float:
    """A number with one of ``units``' suffixes, in base units (s, bytes, count)."""
    m = re.fullmatch(rf"({_NUM})({'|'.join(map(re.escape, units))})", text.strip())
    if not m:
        raise ParseError(f"wrk {what} {text!r}: expected {expected!r}")
    return _f(m.group(1)) * units[m.group(2)]


def _time(text: str) -> float:
    return _scaled(text, _TIME, "time", "<number>us|ms|s|m|h")


def _size(text: str) -> float:
    return _scaled(text, _BIN, "size", "<number>B|KB|MB|GB")


def _count(text: str) -> float:
    return _scaled(text, _METRIC, "count", "<number>[k|M|G]")


class WrkAdapter(Adapter):
    """wrk against an HTTP server (nginx in the server pod)."""

    name = "wrk"
    binary = "wrk"
    display_name = "wrk"
    default_port = 15280
    server_kind = "http"
    headline = ("requests_per_second", "latency_mean")
    #: wrk prints latencies with 3 significant digits ("1.38ms"), Requests/sec to 0.01
    resolution = {"latency": Resolution(digits=3), "requests_per_second": Resolution(step=0.01)}
    metrics = {
        "latency_within_stddev": MetricInfo("Latency within 1 sd", "fraction", "", "proportion"),
        "thread_requests_per_second_mean": MetricInfo("Requests/s per thread (mean)", "requests/s", "higher"),
        "thread_requests_per_second_stddev": MetricInfo("Requests/s per thread (sd)", "requests/s"),
        "thread_requests_per_second_max": MetricInfo("Requests/s per thread (max)", "requests/s"),
        "thread_requests_per_second_within_stddev": MetricInfo(
            "Thread rate within 1 sd", "fraction", "", "proportion"
        ),
        **{
            f"socket_errors_{kind}": MetricInfo(f"Socket errors ({kind})", "count", "lower", "count")
            for kind in ("connect", "read", "write", "timeout")
        },
    }
    defaults = {
        "threads": 2,
        "connections": 50,
        "duration": 10,
        "port": 80,
        "path": "/",
        "latency": True,
        "timeout": None,
    }

    final_line = re.compile(rf"Transfer/sec:\s*{_NUM}[KMGTP]?B")

    def sniff(self, text: str) -> float:
        if re.search(r"^Running \S+ test @ \S+", text, re.M) and "Thread Stats" in text:
            return 0.95
        if re.search(r"^Requests/sec:\s*[\d.]+", text, re.M) and re.search(r"^Transfer/sec:", text, re.M):
            return 0.9
        if re.search(r"^Running \S+ test @ ", text, re.M) or re.search(
            r"^unable to connect to \S+:\d+", text, re.M
        ):
            return 0.6
        return 0.0

    def parse(self, text: str) -> ParseResult:
        rps = re.search(rf"^Requests/sec:\s*({_NUM})", text, re.M)
        if not rps:
            err = re.search(r"^(unable to connect.*|.*[Ee]rror.*)$", text, re.M)
            hint = f" wrk said: {err.group(1).strip()!r}" if err else " the run may have been cut off"
            raise ParseError("no 'Requests/sec:  27685.76' line found: wrk did not finish its report." + hint)
        # wrk's report ends with Transfer/sec, after the totals line: a cut output lacks them
        if not re.search(rf"^Transfer/sec:\s*{_NUM}[KMGTP]?B\s*$", text, re.M):
            raise Incomplete(
                "wrk output is incomplete (cut off?): it lacks its last line 'Transfer/sec:  21.81MB'"
            )
        if not re.search(rf"^\s*{_NUM} requests in \S+, \S+ read\s*$", text, re.M):
            raise Incomplete(
                "wrk output is incomplete: it lacks the totals line '83932 requests in 3.03s, 66.12MB read'"
            )
        if not re.search(r"^Running \S+ test @ \S+", text, re.M):
            raise Incomplete("wrk output lacks its first line 'Running 10s test @ URL' (every report has it)")
        if not re.search(r"^\s*\d+ threads and \d+ connections", text, re.M):
            raise Incomplete("wrk output lacks its '2 threads and 20 connections' line (every report has it)")
        res = ParseResult(test="http", protocol="http", direction="roundtrip")
        info: dict[str, Any] = res.info
        add = lambda metric, value, unit: res.measurements.append(Measurement(metric, _f(value), unit))  # noqa: E731
        run = re.search(r"^Running (\S+) test @ (\S+)", text, re.M)
        if run:
            info["planned_duration"] = run.group(1)
            info["url"] = run.group(2)
            if run.group(2).startswith("https"):
                res.protocol = "https"
        tc = re.search(r"^\s*(\d+) threads and (\d+) connections", text, re.M)
        if tc:
            info["threads"] = int(tc.group(1))
            res.streams = int(tc.group(2))
        cmd = re.search(r"(?:^|[#$>]\s*)(wrk2?\s+-.*)$", text, re.M)
        if cmd:
            info["command"] = cmd.group(1).strip()
        add("requests_per_second", rps.group(1), "requests/s")
        tr = re.search(r"^Transfer/sec:\s*(\S+)", text, re.M)
        if tr:
            add("transfer_rate", _size(tr.group(1)) * 8, "bit/s")
        lat = re.search(rf"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+({_NUM})%", text, re.M)
        if lat:
            add("latency_mean", _time(lat.group(1)), "s")
            add("latency_stddev", _time(lat.group(2)), "s")
            add("latency_max", _time(lat.group(3)), "s")
            add("latency_within_stddev", _f(lat.group(4)) / 100, "fraction")
        rq = re.search(rf"^\s*Req/Sec\s+(\S+)\s+(\S+)\s+(\S+)\s+({_NUM})%", text, re.M)
        if rq:
            add("thread_requests_per_second_mean", _count(rq.group(1)), "requests/s")
            add("thread_requests_per_second_stddev", _count(rq.group(2)), "requests/s")
            add("thread_requests_per_second_max", _count(rq.group(3)), "requests/s")
            add("thread_requests_per_second_within_stddev", _f(rq.group(4)) / 100, "fraction")
        dist = re.search(r"^\s*Latency Distribution.*$", text, re.M)
        if dist:
            seen = set()
            for m in re.finditer(
                rf"^\s*({_NUM})%\s+({_NUM}(?:ns|us|ms|s|m|h))\s*$", text[dist.end() :], re.M
            ):
                name = "latency_" + percentile_name(m.group(1))
                if name in seen or float(m.group(1)) >= 100:
                    continue
                seen.add(name)
                add(name, _time(m.group(2)), "s")
        total = re.search(rf"^\s*({_NUM}) requests in ({_NUM}(?:ns|us|ms|s|m|h)), (\S+) read", text, re.M)
        if total:
            add("complete_requests", total.group(1), "count")
            add("duration", _time(total.group(2)), "s")
            add("total_transferred", _size(total.group(3)), "bytes")
        se = re.search(
            rf"^\s*Socket errors: connect ({_NUM}), read ({_NUM}), write ({_NUM}), timeout ({_NUM})",
            text,
            re.M,
        )
        complete = total is not None
        for i, kind in enumerate(("connect", "read", "write", "timeout"), start=1):
            if se:
                add(f"socket_errors_{kind}", se.group(i), "count")
            elif complete:
                add(f"socket_errors_{kind}", 0, "count")  # wrk prints the line only when non-zero
        nx = re.search(rf"^\s*Non-2xx or 3xx responses: ({_NUM})", text, re.M)
        if nx:
            add("non_2xx_responses", nx.group(1), "count")
        elif complete:
            add("non_2xx_responses", 0, "count")
        if complete:
            # wrk counts non-2xx/3xx among its completed requests; socket errors are requests that
            # did not complete (a read error closes the connection)
            sock = {k: _f(se.group(i)) if se else 0.0 for i, k in enumerate(_SOCKET, start=1)}
            errors = {"non-2xx/3xx responses": _f(nx.group(1)) if nx else 0.0, **sock}
            http_errors(res, "wrk", errors, _f(total.group(1)) + sum(sock.values()))  # type: ignore[union-attr]
        return res

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """``wrk -t T -c C -d Ds --latency http://target[:port]/path`` against nginx in the server pod."""
        p = {**self.defaults, **(params or {})}
        threads = int(p["threads"])
        conns = int(p.get("connections", p.get("streams", 50)))
        if conns < threads:
            raise UnsupportedTest(f"wrk: {conns} connections for {threads} threads (need at least one each)")
        duration = float(p["duration"])
        port = int(p["port"])
        url = http_url(target, port, p.get("path"))
        client = [
            "wrk",
            "-t",
            str(threads),
            "-c",
            str(conns),
            "-d",
            f"{int(duration) if duration.is_integer() else duration}s",
        ]
        if p.get("latency", True):
            client.append("--latency")
        if p.get("timeout"):
            client += ["--timeout", str(p["timeout"])]
        client.append(url)
        return Invocation(
            client=client,
            server=None,
            port=port,
            duration=duration,
            test="http",
            protocol="http",
            direction="roundtrip",
            streams=conns,
            version=["wrk", "-v"],
        )


ADAPTER = WrkAdapter()
