"""What every tool adapter provides.

An adapter owns both sides of one tool: the command line the launcher runs
(:meth:`Adapter.invocation`) and the parser that turns the tool's output into
tidy measurements (:meth:`Adapter.parse`). Adding a tool means adding one module
in this package that defines a module-level ``ADAPTER`` instance, plus fixtures
under ``tests/fixtures/<tool>/``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from podnet.tools.result import Measurement, ParseResult


class ParseError(ValueError):
    """The output cannot be parsed; the message says what was expected."""


class Incomplete(ParseError):
    """The output stops before the tool's complete report; the message names what is missing.

    ``partial`` holds what the part that is there says, for outputs pasted as an
    excerpt on purpose (a sidecar with ``excerpt: true``); it is never used otherwise.
    """

    def __init__(self, message: str, partial: ParseResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


def last_line_complete(line: str, final_line: re.Pattern[str] | None) -> bool:
    """Whether an output's last line, which has no newline, is whole (tools print each line whole).

    Pasted and captured outputs often lack only the final newline. A cut can leave a line that
    still reads as one (``116 MB/sec`` -> ``116 MB``, ``[ 3] 0.0-10.0 sec`` -> ``[ 3] 0.0-10.0 s``),
    so the last line counts as whole only when it is the line the tool's format ends with
    (the adapter's ``final_line``, matched whole: ping's ``rtt min/avg/max/mdev = ... ms``,
    iperf3's ``iperf Done.``, wrk's ``Transfer/sec: 2.38MB``), whose end no cut of it has. A last
    line of only blanks is a line the tool had begun and not finished: never whole.
    """
    end = line.rstrip(" \t\r")
    if not end.strip() or final_line is None:
        return False
    return final_line.fullmatch(end.strip()) is not None


def http_errors(result: Any, tool: str, errors: dict[str, float], attempts: float) -> None:
    """An HTTP benchmark's errors: the ``error_fraction`` metric, or a :class:`ParseError` when
    nothing but errors came back (the run measured no service, whatever rate it printed).

    ``errors`` names each kind counted (non-2xx responses, socket errors ...) with its count;
    ``attempts`` is what they are a fraction of (requests the tool completed or tried).
    """
    total = float(sum(errors.values()))
    if attempts <= 0 or total >= attempts:
        said = ", ".join(f"{int(v)} {k}" for k, v in errors.items() if v) or "no request completed"
        raise ParseError(
            f"{tool}: every request was an error ({said} of {int(attempts)}): the run measured no "
            "service, so its requests/s is no throughput"
        )
    result.measurements.append(Measurement("error_fraction", total / attempts, "fraction"))
    if total:
        result.info["errors"] = {k: int(v) for k, v in errors.items() if v}


class UnsupportedTest(ValueError):
    """The adapter cannot build a command for the requested test parameters."""


@dataclass
class Invocation:
    """How to run one test of a tool between a client and a server endpoint.

    ``client`` and ``server`` are argv lists (never shell strings), so config
    values never reach a shell. ``server`` is ``None`` when the server side is a
    service already running in the server pod (e.g. nginx for ab/wrk) or not
    needed (ping).
    """

    client: list[str]
    server: list[str] | None = None
    #: TCP port the server listens on; the launcher waits for it before the client starts
    port: int | None = None
    #: seconds the client is expected to run (the launcher adds a margin for its timeout)
    duration: float = 10.0
    #: the test name / protocol / direction / streams this invocation measures
    test: str = ""
    protocol: str = ""
    direction: str = "forward"
    streams: int = 1
    #: argv that prints the tool's version (recorded as provenance)
    version: list[str] = field(default_factory=list)
    #: metrics a launched run must report to count as ok: a UDP client without the server's report
    #: measured nothing about the path (only what it offered), so it is a failed run, not a number
    requires: tuple[str, ...] = ()
    #: seconds the server needs between the end of one test and the start of the next (the
    #: launcher waits that long since the last run against the same server container ended)
    server_gap: float = 0.0


Better = Literal["higher", "lower", ""]
#: what kind of quantity a metric is: decides which interval is honest for it
#: ("positive": ratio scale, never <= 0; "proportion": 0..1; "count": non-negative integer; "signed")
Kind = Literal["positive", "proportion", "count", "signed"]


@dataclass(frozen=True)
class MetricInfo:
    """What the statistics, figures and reports need to know about one metric.

    ``unit`` is the SI unit of the tidy value (``bit/s``, ``s``, ``fraction``...);
    ``label`` is the human name without unit ("Throughput", "RTT (mean)");
    ``better`` says which direction is an improvement ("" when neither).
    """

    label: str
    unit: str
    better: Better = ""
    kind: Kind = "positive"


@dataclass(frozen=True)
class Resolution:
    """How finely a tool prints a metric: the rounding every printed value carries.

    ``step``: a fixed quantum in the tidy unit (netperf prints latency percentiles in whole
    microseconds: ``1e-6`` s); ``digits``: significant digits (qperf's ``18.5 us``: 3). With both,
    the coarser applies. ``Resolution()`` (neither) means the value is exact enough to ignore.
    """

    step: float = 0.0
    digits: int = 0

    def quantum(self, x: float) -> float:
        """The printed quantum at magnitude ``x`` (0 when none is declared or ``x`` is not positive)."""
        q = float(self.step)
        if self.digits and x > 0 and x == x and x != float("inf"):
            q = max(q, 10.0 ** (math.floor(math.log10(x)) - self.digits + 1))
        return q


#: Metrics shared by several tools. An adapter's own ``metrics`` override or extend these.
COMMON_METRICS: dict[str, MetricInfo] = {
    "throughput": MetricInfo("Throughput", "bit/s", "higher"),
    "sender_throughput": MetricInfo("Sender throughput", "bit/s", "higher"),
    "transfer_rate": MetricInfo("Transfer rate", "bit/s", "higher"),
    "pps": MetricInfo("Packet rate", "packets/s", "higher"),
    "error_fraction": MetricInfo("Error fraction", "fraction", "lower", "proportion"),
    # the bytes a stream test hands the socket per call: netperf -m (else the send buffer), iperf3 -l
    # (128 KiB by default for TCP); small sends bound a stream test by per-call cost, not the path
    "send_size": MetricInfo("Send size", "bytes", "", "count"),
    # CPU-seconds per unit of work (podnet.parse.cost): the tool's own CPU figures, client and server
    # process side, and the measured machines' busy time (tool-independent, kernel datapath included)
    "cpu_per_bit_client": MetricInfo("CPU per bit (client, tool)", "s/bit", "lower"),
    "cpu_per_bit_server": MetricInfo("CPU per bit (server, tool)", "s/bit", "lower"),
    "machine_cpu_per_bit": MetricInfo("CPU per bit (machine)", "s/bit", "lower"),
    "cpu_per_transaction_client": MetricInfo("CPU per transaction (client, tool)", "s", "lower"),
    "cpu_per_transaction_server": MetricInfo("CPU per transaction (server, tool)", "s", "lower"),
    "machine_cpu_per_transaction": MetricInfo("CPU per transaction (machine)", "s", "lower"),
    "sender_pps": MetricInfo("Sender packet rate", "packets/s", "higher"),
    "msg_rate": MetricInfo("Message rate", "messages/s", "higher"),
    "requests_per_second": MetricInfo("Request rate", "requests/s", "higher"),
    "transaction_rate": MetricInfo("Transaction rate", "transactions/s", "higher"),
    "rtt_avg": MetricInfo("RTT (mean)", "s", "lower"),
    "rtt_min": MetricInfo("RTT (min)", "s", "lower"),
    "rtt_max": MetricInfo("RTT (max)", "s", "lower"),
    "rtt_mdev": MetricInfo("RTT (mdev)", "s", "lower"),
    "latency": MetricInfo("Latency", "s", "lower"),
    "latency_mean": MetricInfo("Latency (mean)", "s", "lower"),
    "latency_max": MetricInfo("Latency (max)", "s", "lower"),
    "latency_stddev": MetricInfo("Latency (sd)", "s", "lower"),
    "rt_latency": MetricInfo("Round-trip latency", "s", "lower"),
    "jitter": MetricInfo("Jitter", "s", "lower"),
    "loss": MetricInfo("Loss", "fraction", "lower", "proportion"),
    "retransmits": MetricInfo("Retransmits", "count", "lower", "count"),
    "latency_min": MetricInfo("Latency (min)", "s", "lower"),
    "duration": MetricInfo("Duration", "s"),
    "bytes_transferred": MetricInfo("Bytes transferred", "bytes", "", "count"),
    "packets": MetricInfo("Packets", "count", "", "count"),
    "lost_packets": MetricInfo("Lost packets", "count", "lower", "count"),
    "out_of_order": MetricInfo("Out-of-order", "count", "lower", "count"),
    "tcp_rtt_mean": MetricInfo("TCP RTT (mean)", "s", "lower"),
    "complete_requests": MetricInfo("Complete requests", "count", "", "count"),
    "msg_size": MetricInfo("Message size", "bytes", "", "count"),
    # reported by more than one tool with the same meaning (ab and iperf2; ab and wrk)
    "connect_time": MetricInfo("Connect time", "s", "lower"),
    "write_errors": MetricInfo("Write errors", "count", "lower", "count"),
    "total_transferred": MetricInfo("Bytes transferred", "bytes", "", "count"),
    "non_2xx_responses": MetricInfo("Non-2xx responses", "count", "lower", "count"),
}

#: a statistic of a metric family: ``latency_p99``, ``rtt_p99_9``, ``connect_time_mean`` ...
_STATISTIC = re.compile(r"^(?P<family>[a-z_]+?)_(?P<stat>mean|min|max|stddev|median|p\d+(?:_\d+)?)$")
_STAT_LABEL = {"mean": "mean", "min": "min", "max": "max", "stddev": "sd", "median": "median"}


def percentile_name(pct: str) -> str:
    """A printed percentile as a metric suffix: '50', '50.000' -> 'p50'; '99.900' -> 'p99_9'."""
    v = f"{float(pct):.4f}".rstrip("0").rstrip(".")
    return "p" + v.replace(".", "_")


def http_url(target: str, port: int, path: str | None) -> str:
    """The URL an HTTP client tool (ab, wrk) requests: an IPv6 target in brackets, port 80 implied."""
    host = f"[{target}]" if ":" in target else target
    return f"http://{host}{'' if port == 80 else f':{port}'}{path or '/'}"


def cpu_pair(value: Any) -> tuple[int | None, int | None]:
    """An ``affinity`` parameter as (client CPU, server CPU): ``3``, ``"3,1"``, ``[3, 1]``, ``[None, 1]``."""
    if value is None or value == "":
        return None, None
    if isinstance(value, bool):
        raise UnsupportedTest(f"affinity {value!r}: give CPU numbers, e.g. [0, 1]")
    if isinstance(value, int):
        items: list[Any] = [value]
    elif isinstance(value, str):
        items = [x.strip() or None for x in value.split(",")]
    else:
        items = list(value)
    if not 1 <= len(items) <= 2:
        raise UnsupportedTest(f"affinity {value!r}: one or two CPU numbers (client, server)")
    out: list[int | None] = []
    for x in items + [None] * (2 - len(items)):
        if x is None:
            out.append(None)
            continue
        try:
            n = int(x)
        except (TypeError, ValueError):
            raise UnsupportedTest(f"affinity {value!r}: {x!r} is not a CPU number") from None
        if n < 0 or isinstance(x, bool):
            raise UnsupportedTest(f"affinity {value!r}: {x!r} is not a CPU number")
        out.append(n)
    return out[0], out[1]


def affinity_argv(flag: str, value: Any, *, needs_client: bool = False) -> list[str]:
    """``[flag, "client,server"]`` for an ``affinity`` parameter (:func:`cpu_pair`; an absent side left
    empty), ``[]`` without one; ``needs_client``: the tool cannot set the server's CPU alone (iperf3 -A)."""
    c, s = cpu_pair(value)
    if c is None and s is None:
        return []
    if c is None and needs_client:
        raise UnsupportedTest(
            f"{flag} needs the client's CPU to set the server's (affinity: [client, server])"
        )
    return [flag, ("" if c is None else str(c)) + ("" if s is None else f",{s}")]


def command_option(command: str, *names: str) -> str | None:
    """The value of the first of ``names`` (``-t``, ``--time``...) in a command line, or None."""
    args = str(command).split()
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if n.startswith("--") and a.startswith(n + "="):
                return a.split("=", 1)[1]
            if not n.startswith("--") and a.startswith(n) and len(a) > len(n) and a[len(n)].isdigit():
                return a[len(n) :]
    return None


def check_duration_streams(result: ParseResult, command: str, tool: str) -> None:
    """For iperf-like commands: the summary spans ``-t`` seconds and counts ``-P`` streams.

    A cut output whose last line is an interval row looks like a shorter run; with the
    command at hand it is not one. A summary longer than ``-t`` is the run's (it overran).
    """
    t = command_option(command, "-t", "--time")
    bytes_mode = command_option(command, "-n", "--num", "-k", "--blockcount", "--bytes", "--blocks")
    if t and not bytes_mode:
        try:
            want = float(t)
        except ValueError:
            want = 0.0
        spans = [m.value for m in result.measurements if m.metric == "duration"]
        # short of -t: an interval row taken for the summary (a cut); longer is a real run that
        # overran (iperf 2 waits for its last write to drain: a stall at the end stretches it)
        if want > 0 and spans and any(want - v > max(0.5, 0.05 * want) for v in spans):
            raise Incomplete(
                f"{tool} output is incomplete (cut off?): the command ran -t {t} but the summary spans "
                f"{', '.join(f'{v:g}' for v in spans)} s (an interval row, not the run's summary)"
            )
    p = command_option(command, "-P", "--parallel")
    if p and p.isdigit() and result.streams is not None and int(p) != result.streams:
        raise Incomplete(
            f"{tool} output is incomplete (cut off?): the command ran -P {p} but the output summarises "
            f"{result.streams} stream(s)"
        )


class Adapter:
    """Base class of tool adapters. Subclasses set ``name`` and implement the methods.

    Everything the rest of podnet needs to know about a tool lives here, so
    adding a tool is one module: the launcher asks for ports, server kind and
    control protocol; the statistics ask for headline metrics and which
    direction is better; figures and reports ask for labels and units.
    """

    #: tool name as used in configs, sidecars and the tidy table
    name: ClassVar[str] = ""
    #: the binary the image must contain for this tool to run
    binary: ClassVar[str] = ""
    #: default test parameters (merged under the config's per-tool settings)
    defaults: ClassVar[dict[str, Any]] = {}
    #: human name of the tool in figures and reports (defaults to ``name``)
    display_name: ClassVar[str] = ""
    #: the server's default port (hostNetwork-safe: away from 6443, 10250 and NodePorts)
    default_port: ClassVar[int | None] = None
    #: "process": the adapter's ``Invocation.server`` runs in the server pod;
    #: "http": nginx in the server pod serves the client (ab, wrk); "none": no server (ping)
    server_kind: ClassVar[Literal["process", "http", "none"]] = "process"
    #: the server also listens on TCP for control when the test itself is UDP (iperf3, qperf, netperf)
    tcp_control: ClassVar[bool] = False
    #: the tool's headline metrics, most important first: they decide adaptive repeats,
    #: default primary comparisons, figures and the launcher's progress line
    headline: ClassVar[tuple[str, ...]] = ()
    #: this tool's metrics beyond (or overriding) :data:`COMMON_METRICS`
    metrics: ClassVar[Mapping[str, MetricInfo]] = {}
    #: what to tell a user whose image lacks this tool's binaries (where to get them)
    install_hint: ClassVar[str] = ""
    #: the whole line the tool's output ends with, when its format has one (no cut of it matches):
    #: a last line without its newline is whole only if it matches (last_line_complete)
    final_line: ClassVar[re.Pattern[str] | None] = None
    #: how finely the tool prints each metric (by metric name, or by the family of ``<family>_<stat>``
    #: names such as ``latency`` for ``latency_p50``): the statistics widen intervals by it
    resolution: ClassVar[Mapping[str, Resolution]] = {}

    def metric_info(self, metric: str) -> MetricInfo:
        """Label, unit, better direction and kind of ``metric`` as this tool reports it."""
        info = self.metrics.get(metric) or COMMON_METRICS.get(metric)
        if info is not None:
            return info
        m = _STATISTIC.match(metric)
        if m:
            family = m["family"]
            base = self.metrics.get(family) or COMMON_METRICS.get(family)
            if base is not None:
                stat = _STAT_LABEL.get(m["stat"]) or m["stat"].replace("_", ".")
                return MetricInfo(f"{base.label} ({stat})", base.unit, base.better, base.kind)
        return MetricInfo(metric.replace("_", " ").capitalize(), "", "", "signed")

    def resolution_of(self, metric: str) -> Resolution:
        """How finely this tool prints ``metric`` (:attr:`resolution`; by name, else by its family)."""
        r = self.resolution.get(metric)
        if r is None:
            m = _STATISTIC.match(metric)
            r = self.resolution.get(m["family"]) if m else None
        return r or Resolution()

    def sniff(self, text: str) -> float:
        """How sure we are (0..1) that ``text`` is this tool's output."""
        raise NotImplementedError

    def parse(self, text: str) -> ParseResult:
        """Parse one raw output. Raises :class:`ParseError` naming what was expected."""
        raise NotImplementedError

    def complete_for(self, result: ParseResult, command: str) -> None:
        """Raise :class:`Incomplete` when ``result`` lacks what ``command`` (the sidecar's) asked for."""

    def tidy_tests(self, configured: str | None, result: ParseResult) -> Callable[[str | None], str | None]:
        """How one parsed file's measurements name their tidy ``test`` (asked once per file, with the
        sidecar's configured test ``configured``): a function of the name the output gives a
        measurement (``Measurement.test``) to its tidy test; None leaves it to the sidecar."""
        return _own

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """The command lines for one test with ``params`` against address ``target``."""
        raise UnsupportedTest(f"{self.name}: launching is not implemented")

    def __repr__(self) -> str:
        return f"<adapter {self.name}>"


def _own(test: str | None) -> str | None:
    """A measurement's own test name as its tidy test (:meth:`Adapter.tidy_tests`)."""
    return test
