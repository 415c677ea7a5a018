"""ApacheBench (``ab``) text output.

Hand-written parser: ab prints only text (``-e``/``-g`` write extra files,
not stdout) and no maintained Python parser exists. Lines are ``Label: value``
pairs, matched by label, whatever the padding (seed texts collapse it:
``Requests per second:11457.32``).

Metrics: ``requests_per_second`` (requests/s), ``time_per_request`` and
``time_per_request_all`` (mean, and mean across all concurrent requests; s),
``transfer_rate`` (bit/s; ab's ``Kbytes/sec`` are 1024 bytes), ``sent_rate`` /
``total_rate`` (POST/PUT ``kb/s sent``/``total``), ``complete_requests``,
``failed_requests`` (+ ``failed_connect``/``_receive``/``_length``/``_exceptions``),
``non_2xx_responses``, ``write_errors``, ``keep_alive_requests``,
``total_transferred``/``html_transferred``/``body_sent`` (bytes), ``duration``;
the Connection Times table as ``connect_time_*``, ``processing_time_*``,
``waiting_time_*`` (min, mean, stddev, median, max) and its Total row as
``latency_min``/``latency_mean``/``latency_stddev``/``latency_max``; the
percentile table as ``latency_p50`` ... ``latency_p99`` (100 % is
``latency_max``). ab prints ``Non-2xx responses`` and ``Write errors`` only
when non-zero, so their absence in a complete report means 0.
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
)
from podnet.tools.result import Measurement, ParseResult

_NUM = r"-?\d+(?:\.\d+)?"


def _field(text: str, label: str, pattern: str = _NUM) -> str | None:
    m = re.search(rf"^\s*{label}:\s*({pattern})", text, re.M)
    return m.group(1) if m else None


class AbAdapter(Adapter):
    """ab against an HTTP server (nginx in the server pod)."""

    name = "ab"
    binary = "ab"
    display_name = "ab"
    default_port = 15280
    server_kind = "http"
    headline = ("requests_per_second", "latency_mean")
    #: ab prints Time per request to 0.001 ms, its percentiles and connection times in whole ms,
    #: Requests per second to 0.01
    resolution = {
        "time_per_request": Resolution(step=1e-6),
        "time_per_request_all": Resolution(step=1e-6),
        "latency": Resolution(step=1e-3),
        "connect_time": Resolution(step=1e-3),
        "processing_time": Resolution(step=1e-3),
        "waiting_time": Resolution(step=1e-3),
        "requests_per_second": Resolution(step=0.01),
    }
    metrics = {
        "processing_time": MetricInfo("Processing time", "s", "lower"),
        "waiting_time": MetricInfo("Waiting time", "s", "lower"),
        "failed_requests": MetricInfo("Failed requests", "count", "lower", "count"),
        "keep_alive_requests": MetricInfo("Keep-alive requests", "count", "", "count"),
        "time_per_request": MetricInfo("Time per request", "s", "lower"),
        "html_transferred": MetricInfo("HTML bytes transferred", "bytes", "", "count"),
        "body_sent": MetricInfo("Body bytes sent", "bytes", "", "count"),
        "failed_connect": MetricInfo("Failed requests (connect)", "count", "lower", "count"),
        "failed_receive": MetricInfo("Failed requests (receive)", "count", "lower", "count"),
        "failed_length": MetricInfo("Failed requests (length)", "count", "lower", "count"),
        "failed_exceptions": MetricInfo("Failed requests (exceptions)", "count", "lower", "count"),
        "time_per_request_all": MetricInfo("Time per request (all concurrent)", "s", "lower"),
        "sent_rate": MetricInfo("Sent rate", "bit/s", "higher"),
        "total_rate": MetricInfo("Total rate", "bit/s", "higher"),
    }
    defaults = {
        "requests": 10000,
        "concurrency": 50,
        "port": 80,
        "path": "/",
        "keepalive": False,
        "timelimit": None,
    }

    def sniff(self, text: str) -> float:
        if "This is ApacheBench" in text:
            return 0.95
        if re.search(r"^Requests per second:\s*[\d.]+ \[#/sec\]", text, re.M):
            return 0.9
        if re.search(r"^Benchmarking \S+ \(be patient\)", text, re.M):
            return 0.8
        return 0.0

    def parse(self, text: str) -> ParseResult:
        rps = _field(text, r"Requests per second")
        if rps is None:
            err = re.findall(
                r"^(apr_\w+: .*|ab: .*|Total of \d+ requests completed.*|.*timeout.*)$", text, re.M | re.I
            )
            hint = f" ab said: {err[-1].strip()!r}" if err else " the run may have been cut off"
            raise ParseError(
                "no 'Requests per second:    12439.61 [#/sec] (mean)' line found: ab did not finish its report."
                + hint
            )
        res = ParseResult(test="http", protocol="http", direction="roundtrip")
        add = lambda metric, value, unit: res.measurements.append(Measurement(metric, float(value), unit))  # noqa: E731
        info: dict[str, Any] = res.info
        ver = re.search(r"This is ApacheBench, Version (\S+)(?: <\$Revision: (\d+) \$>)?", text)
        if ver:
            info["version"] = ver.group(1) + (f" r{ver.group(2)}" if ver.group(2) else "")
        for label, key in (
            ("Server Software", "server_software"),
            ("Server Hostname", "server_hostname"),
            ("Server Port", "server_port"),
            ("SSL/TLS Protocol", "tls_protocol"),
            ("Document Path", "document_path"),
            ("Document Length", "document_length"),
        ):
            v = _field(text, re.escape(label), r".*\S")
            if v is not None:
                info[key] = v
        if "tls_protocol" in info:
            res.protocol = "https"
        bench = re.search(r"^Benchmarking (\S+)", text, re.M)
        if bench:
            info["benchmarking"] = bench.group(1)
        cmd = re.search(r"(?:^|[#$>]\s*)(ab\s+-.*)$", text, re.M)
        if cmd:
            info["command"] = cmd.group(1).strip()
        conc = _field(text, "Concurrency Level", r"\d+")
        if conc is not None:
            res.streams = int(conc)
        add("requests_per_second", rps, "requests/s")
        tpr = re.findall(
            rf"^\s*Time per request:\s*({_NUM})\s*\[ms\]\s*\(mean(, across all concurrent requests)?\)",
            text,
            re.M,
        )
        for value, across in tpr:
            add("time_per_request_all" if across else "time_per_request", float(value) * 1e-3, "s")
        tr = re.search(rf"^\s*Transfer rate:\s*({_NUM})\s*\[Kbytes/sec\] received", text, re.M)
        if tr:
            add("transfer_rate", float(tr.group(1)) * 1024 * 8, "bit/s")
            after = text[tr.end() :].splitlines()[1:3]
            for line in after:
                m = re.match(rf"^\s+({_NUM})\s*kb/s (sent|total)", line)
                if m:
                    add(
                        "sent_rate" if m.group(2) == "sent" else "total_rate",
                        float(m.group(1)) * 1024 * 8,
                        "bit/s",
                    )
        taken = _field(text, "Time taken for tests")
        if taken is not None:
            add("duration", taken, "s")
        complete = _field(text, "Complete requests", r"\d+")
        if complete is not None:
            add("complete_requests", complete, "count")
        failed = _field(text, "Failed requests", r"\d+")
        if failed is not None:
            add("failed_requests", failed, "count")
            br = re.search(
                r"\(Connect:\s*(\d+),\s*Receive:\s*(\d+),\s*Length:\s*(\d+),\s*Exceptions:\s*(\d+)\)", text
            )
            if br:
                for name, v in zip(("connect", "receive", "length", "exceptions"), br.groups()):
                    add(f"failed_{name}", v, "count")
        complete_report = complete is not None and failed is not None
        for label, metric in (("Non-2xx responses", "non_2xx_responses"), ("Write errors", "write_errors")):
            v = _field(text, label, r"\d+")
            if v is not None:
                add(metric, v, "count")
            elif complete_report:
                add(metric, 0, "count")  # ab prints these lines only when non-zero
        ka = _field(text, "Keep-Alive requests", r"\d+")
        if ka is not None:
            add("keep_alive_requests", ka, "count")
        for label, metric in (
            ("Total transferred", "total_transferred"),
            ("HTML transferred", "html_transferred"),
            ("Total body sent", "body_sent"),
        ):
            v = _field(text, label, r"\d+")
            if v is not None:
                add(metric, v, "bytes")
        self._connection_times(text, add)
        self._percentiles(text, add, has_total=bool(re.search(r"^\s*Total:\s", text, re.M)))
        self._complete(text, info)
        if complete_report:
            self._errors(res)
        return res

    @staticmethod
    def _errors(res: ParseResult) -> None:
        """error_fraction of the completed requests, or a ParseError when all were errors.

        Errors are non-2xx responses, write errors and the failures ab counts as connect,
        receive and exception failures. Length failures are not: ab counts a response whose
        length differs from the first one's, which dynamic pages always do.
        """
        got = {m.metric: m.value for m in res.measurements}
        errors = {
            "non-2xx responses": got.get("non_2xx_responses", 0.0),
            "write errors": got.get("write_errors", 0.0),
            "connect failures": got.get("failed_connect", 0.0),
            "receive failures": got.get("failed_receive", 0.0),
            "exceptions": got.get("failed_exceptions", 0.0),
        }
        if "failed_connect" not in got and got.get("failed_requests", 0.0) > 0:
            # ab prints '(Connect: 0, Receive: 0, Length: N, Exceptions: 0)' under any failure
            raise Incomplete(
                "ab output is damaged: it counts failed requests but lacks their breakdown line "
                "'(Connect: 0, Receive: 0, Length: N, Exceptions: 0)', so errors and length "
                "differences cannot be told apart"
            )
        http_errors(res, "ab", errors, got.get("complete_requests", 0.0))

    @staticmethod
    def _complete(text: str, info: dict[str, Any]) -> None:
        """ab's report ends with its percentile table (unless ``-d``): a cut output lacks its end."""
        missing = []
        for label in ("Concurrency Level", "Complete requests", "Failed requests", "Time taken for tests"):
            if _field(text, label) is None:
                missing.append(f"'{label}:'")
        if not re.search(r"^\s*Total:\s+\d", text, re.M):
            missing.append("the 'Total:' row of 'Connection Times'")
        no_table = re.search(r"(?:^|\s)-\w*d\b", str(info.get("command", "")))
        if not no_table and not re.search(r"^\s*100%\s+\d+\s*\(longest request\)\s*$", text, re.M):
            missing.append("the percentile table's last line '100%  N (longest request)'")
        if missing:
            raise Incomplete("ab output is incomplete (cut off?): it lacks " + ", ".join(missing))

    @staticmethod
    def _connection_times(text: str, add) -> None:
        head = re.search(r"^Connection Times \((ms|us)\)", text, re.M)
        if not head:
            return
        scale = 1e-3 if head.group(1) == "ms" else 1e-6
        rows = {
            "Connect": "connect_time",
            "Processing": "processing_time",
            "Waiting": "waiting_time",
            "Total": "latency",
        }
        for label, prefix in rows.items():
            m = re.search(
                rf"^\s*{label}:\s*({_NUM})\s+({_NUM})\s+({_NUM})\s+({_NUM})\s+({_NUM})",
                text[head.end() :],
                re.M,
            )
            if not m:
                continue
            mn, mean, sd, median, mx = (float(x) * scale for x in m.groups())
            add(f"{prefix}_min", mn, "s")
            add(f"{prefix}_mean", mean, "s")
            add(f"{prefix}_stddev", sd, "s")
            if prefix != "latency":  # the Total median is the 50 % row of the percentile table
                add(f"{prefix}_median", median, "s")
            add(f"{prefix}_max", mx, "s")

    @staticmethod
    def _percentiles(text: str, add, has_total: bool) -> None:
        head = re.search(r"^Percentage of the requests served within a certain time \((ms|us)\)", text, re.M)
        if not head:
            return
        scale = 1e-3 if head.group(1) == "ms" else 1e-6
        for m in re.finditer(rf"^\s*(\d+(?:\.\d+)?)%\s+({_NUM})", text[head.end() :], re.M):
            pct, value = m.group(1), float(m.group(2)) * scale
            if float(pct) >= 100:
                if not has_total:
                    add("latency_max", value, "s")
                continue
            add(f"latency_p{pct.replace('.', '_')}", value, "s")

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """``ab -n N -c C [-k] [-t T] http://target[:port]/path`` against nginx in the server pod."""
        p = {**self.defaults, **(params or {})}
        n, c = int(p["requests"]), int(p.get("concurrency", p.get("streams", 50)))
        if c > n:
            raise UnsupportedTest(f"ab: concurrency {c} exceeds the number of requests {n}")
        port = int(p["port"])
        url = http_url(target, port, p.get("path"))
        client = ["ab", "-n", str(n), "-c", str(c)]
        if p.get("keepalive"):
            client.append("-k")
        if p.get("timelimit"):
            client += ["-t", str(p["timelimit"])]
        client.append(url)
        return Invocation(
            client=client,
            server=None,
            port=port,
            duration=float(p.get("timelimit") or p.get("duration") or 60),
            test="http",
            protocol="http",
            direction="roundtrip",
            streams=c,
            version=["ab", "-V"],
        )


ADAPTER = AbAdapter()
