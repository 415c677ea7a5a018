"""netready: time to a working pod network (issue 32), as a tool of its own.

Why a tool, not a block on another test (as ``load`` is): a run of it is one measurement with one raw
output, like any tool's; only its "client" is not one exec but K new pods. As a tool it gets, with
no further config language, what every test has: a ``name`` and ``params`` per test
(``launch.tools.netready.tests[]``), placement from the scenario (the new pods go to the client's
node, the server pod to its node: ``server: {kind: pod, other_node_than: client}``), repeats,
rounds, retries, sweeps (``sweep: {pods: [1, 5, 20]}``) and provenance. This adapter owns, as for
every tool, the command lines (the probe loop each new pod runs, and the one the launcher execs in
the server pod) and the parser of the run's raw output.

Parameters: ``pods`` (K new pods per run, 20), ``mode`` (``burst``: the K pods created at once;
``serial``: one at a time, the next created once the previous answered both probes), ``timeout``
(seconds a pod may take from its create call to both replies, 60) and ``interval`` (seconds
between probe packets, 0.1).

The launcher (:mod:`podnet.launch.rounds.netready`) writes one JSON document per run
(:data:`FORMAT` ``podnet_netready: 1``, one line per pod): the run's settings and, per pod, wall-clock
times in seconds since the epoch, all from one clock (the embedded cluster's nodes are network
namespaces of one machine):

- ``created``: the launcher's clock just before its create call (``create_returned`` after it,
  ``created_api`` the API's ``creationTimestamp``, whole seconds);
- ``scheduled``, ``sandbox``, ``ip_seen``, ``started_seen``: when the launcher's watch on the pods
  first received the pod bound to a node, its ``PodReadyToStartContainers`` condition True (the
  sandbox with its network is up), its IP, its probe container running (each with the API's own
  whole-second time where it has one: ``*_api``);
- ``out_start`` / ``out_reply`` / ``out_attempts``: the new pod's probe loop (``ping`` to the server
  pod) printed ``date +%s.%N`` when it started and after its first answered packet;
- ``in_start`` / ``in_reply`` / ``in_attempts``: the same for the loop the launcher execs in the
  server pod towards the new pod, once the watch showed the pod's IP;
- ``error``: why this pod did not become network-ready ("" when it did).

Tidy rows (one per pod and metric, tidy column ``pod`` = the pod's index in the run), seconds from
``created``: ``scheduled_s``, ``sandbox_s``, ``ip_s`` (watch receive times), ``started_s`` (the probe
process's own first time stamp), ``first_reply_out_s``, ``first_reply_in_s`` and ``net_ready_s`` (the
later of the two replies). A run in which any pod lacks one of them (other than ``sandbox``, which
clusters before 1.29 do not report) is a failed run with that pod's reason, never a number.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from podnet.tools.base import Adapter, Invocation, MetricInfo, ParseError, UnsupportedTest
from podnet.tools.result import Measurement, ParseResult

#: the raw document's format key and version
FORMAT = "podnet_netready"
VERSION = 1
MODES = ("burst", "serial")

#: the probe loop, run by each new pod (towards the server) and in the server pod (towards a new
#: pod): ``$1`` target, ``$2`` seconds between packets, ``$3`` seconds to give up after. One ping
#: per try sends a packet every ``$2`` s for up to 1 s and exits at the first reply (``-c 1 -w 1``);
#: a ping that cannot even send (no route yet) is retried after ``$2`` s.
PROBE_SCRIPT = (
    't=$1; i=$2; w=$3; echo "start $(date +%s.%N)"; n=0; end=$(( $(date +%s) + w ))\n'
    'until ping -n -q -c 1 -i "$i" -w 1 "$t" >/dev/null 2>&1; do\n'
    '  n=$((n+1)); if [ "$(date +%s)" -ge "$end" ]; then echo "timeout $(date +%s.%N) $n"; exit 1; fi\n'
    '  sleep "$i"\n'
    "done\n"
    'echo "reply $(date +%s.%N) $((n+1))"\n'
)
_LINE = re.compile(r"^(start|reply|timeout) (\d+(?:\.\d+)?)(?: (\d+))?\s*$", re.M)

#: the tidy metrics of a pod, in order; ``sandbox_s`` is optional (PodReadyToStartContainers)
METRICS = (
    "net_ready_s",
    "scheduled_s",
    "sandbox_s",
    "ip_s",
    "started_s",
    "first_reply_out_s",
    "first_reply_in_s",
)
#: the record time each metric is measured to (from ``created``)
METRIC_TIMES = {
    "scheduled_s": "scheduled",
    "sandbox_s": "sandbox",
    "ip_s": "ip_seen",
    "started_s": "out_start",
    "first_reply_out_s": "out_reply",
    "first_reply_in_s": "in_reply",
}
#: what a pod lacks, in the order a pod goes through them, and the reason it is a failed run
REQUIRED = (
    ("created", "never created"),
    ("scheduled", "never scheduled"),
    ("ip_seen", "IP never assigned"),
    ("out_start", "probe container never started"),
    ("out_reply", "probe from the pod never answered"),
    ("in_reply", "probe to the pod never answered"),
)


@dataclass(frozen=True)
class Settings:
    """A netready test's parameters, checked."""

    pods: int = 20
    mode: str = "burst"
    timeout: float = 60.0
    interval: float = 0.1

    @classmethod
    def of(cls, params: dict[str, Any]) -> Settings:
        """From a test's ``params`` (UnsupportedTest: what is wrong)."""
        p = {**NetReadyAdapter.defaults, **params}
        unknown = sorted(set(params) - set(NetReadyAdapter.defaults))
        if unknown:
            raise UnsupportedTest(f"netready: unknown parameter(s) {', '.join(unknown)}")
        mode = str(p["mode"])
        if mode not in MODES:
            raise UnsupportedTest(f"netready: mode {mode!r} is not one of {', '.join(MODES)}")
        try:
            pods, timeout, interval = int(p["pods"]), float(p["timeout"]), float(p["interval"])
        except (TypeError, ValueError):
            raise UnsupportedTest("netready: pods, timeout and interval must be numbers") from None
        if isinstance(p["pods"], bool) or pods < 1 or float(p["pods"]) != pods:
            raise UnsupportedTest(f"netready: pods must be a whole number >= 1 (got {p['pods']!r})")
        if not (timeout > 0 and 0.002 <= interval <= 1):
            raise UnsupportedTest("netready: timeout must be > 0 and interval in [0.002, 1] s")
        return cls(pods, mode, timeout, interval)

    @property
    def concurrency(self) -> int:
        """Pods created at once: K in a burst, 1 in serial (the tidy ``streams``)."""
        return self.pods if self.mode == "burst" else 1

    @property
    def run_limit(self) -> float:
        """Seconds a whole run may take before its pods' own deadlines have all passed."""
        return self.timeout * (1 if self.mode == "burst" else self.pods)


def probe_argv(target: str, s: Settings) -> list[str]:
    """The probe loop's argv towards ``target`` (no shell string: the values are arguments)."""
    deadline = str(math.ceil(s.timeout))  # the loop counts whole seconds (sh arithmetic)
    return ["sh", "-c", PROBE_SCRIPT, "podnet-netready", str(target), f"{s.interval:g}", deadline]


@dataclass(frozen=True)
class ProbeTimes:
    """What one probe loop printed: its start, its first reply (None: none), tries, and whether it gave up."""

    start: float | None
    reply: float | None
    attempts: int | None
    gave_up: bool = False


def probe_times(text: str) -> ProbeTimes:
    """The times one probe loop printed (:data:`PROBE_SCRIPT`)."""
    start = reply = None
    attempts = None
    gave_up = False
    for kind, t, n in _LINE.findall(text or ""):
        if kind == "start" and start is None:
            start = float(t)
        elif kind == "reply":
            reply, attempts = float(t), int(n) if n else None
        elif kind == "timeout":
            gave_up, attempts = True, int(n) if n else None
    return ProbeTimes(start, reply, attempts, gave_up)


#: every time a record may hold, each a number (seconds since the epoch) or null
TIME_KEYS = (
    "created",
    "create_returned",
    "created_api",
    "scheduled",
    "scheduled_api",
    "sandbox",
    "sandbox_api",
    "ip_seen",
    "started_seen",
    "started_api",
    "out_start",
    "out_reply",
    "in_start",
    "in_reply",
)


def _num(v: Any) -> float | None:
    """A JSON number as a float; None for null and anything else (text is no time)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def check_shape(doc: Any) -> list[dict[str, Any]]:
    """The records of a netready document whose every field has its type (ParseError: which not)."""
    if not isinstance(doc, dict) or doc.get(FORMAT) != VERSION:
        raise ParseError(f"not a netready output ({FORMAT}: {VERSION} missing)")
    if doc.get("mode") not in MODES:
        raise ParseError(f"netready output: mode {doc.get('mode')!r} is not one of {', '.join(MODES)}")
    pods = doc.get("pods")
    if isinstance(pods, bool) or not isinstance(pods, int) or pods < 1:
        raise ParseError(f"netready output: pods {pods!r} is not a whole number >= 1")
    records = doc.get("records")
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ParseError("netready output: `records` is not a list of pod records")
    for n, r in enumerate(records, start=1):
        if r.get("index") != n or isinstance(r.get("index"), bool):
            raise ParseError(f"netready output: record {n} has index {r.get('index')!r}, not {n}")
        bad = [k for k in TIME_KEYS if r.get(k) is not None and _num(r.get(k)) is None]
        if bad:
            raise ParseError(f"netready output: pod {n}: {', '.join(bad)} not a time (a number or null)")
        if not isinstance(r.get("error", ""), str):
            raise ParseError(f"netready output: pod {n}: error {r.get('error')!r} is not text")
    return records


def record_problem(rec: dict[str, Any]) -> str:
    """Why a pod's record is no network-ready pod ("" when it is one)."""
    if rec.get("error"):
        return str(rec["error"])
    for key, why in REQUIRED:
        if _num(rec.get(key)) is None:
            return why
    created = float(rec["created"])
    late = [k for k in ("scheduled", "ip_seen", "out_reply", "in_reply") if float(rec[k]) < created - 0.5]
    if late:
        return f"times before the create call ({', '.join(late)}): clocks disagree"
    return ""


def record_metrics(rec: dict[str, Any]) -> dict[str, float]:
    """A complete record's metrics in seconds since ``created`` (:data:`METRICS`)."""
    created = float(rec["created"])
    out: dict[str, float] = {}
    for metric, key in METRIC_TIMES.items():
        t = _num(rec.get(key))
        if t is not None:
            out[metric] = t - created
    out["net_ready_s"] = max(out["first_reply_out_s"], out["first_reply_in_s"])
    return {m: out[m] for m in METRICS if m in out}


def run_problem(doc: dict[str, Any]) -> str:
    """Why a run's document measured no time to network ("" when every pod has its times);
    ParseError when it is no netready document (:func:`check_shape`)."""
    records = check_shape(doc)
    if len(records) != doc["pods"]:
        return f"{len(records)} of {doc['pods']} pods recorded"
    bad = [(r["index"], p) for r in records if (p := record_problem(r))]
    if not bad:
        return ""
    first = f"pod {bad[0][0]}: {bad[0][1]}"
    return first if len(bad) == 1 else f"{len(bad)} of {len(records)} pods not network-ready; {first}"


def render(doc: dict[str, Any]) -> str:
    """A run's document as the raw file holds it: its settings, then one line per pod."""
    head = {k: v for k, v in doc.items() if k != "records"}
    lines = [json.dumps(r, sort_keys=True) for r in doc.get("records", [])]
    body = json.dumps(head, sort_keys=False)[:-1]
    return body + ', "records": [\n' + ",\n".join(lines) + "\n]}\n"


_S = "s"


class NetReadyAdapter(Adapter):
    name = "netready"
    binary = "ping"
    display_name = "time to network"
    server_kind = "none"
    #: the launcher pings from the server pod too: it keeps NET_RAW (podnet.launch.spec.plan)
    probes_from_server = True
    defaults = {"pods": 20, "mode": "burst", "timeout": 60, "interval": 0.1}
    headline = ("net_ready_s",)
    metrics = {
        "net_ready_s": MetricInfo("Time to network", _S, "lower"),
        "scheduled_s": MetricInfo("Time to scheduled", _S, "lower"),
        "sandbox_s": MetricInfo("Time to sandbox ready", _S, "lower"),
        "ip_s": MetricInfo("Time to IP", _S, "lower"),
        "started_s": MetricInfo("Time to container start", _S, "lower"),
        "first_reply_out_s": MetricInfo("Time to first reply from the pod", _S, "lower"),
        "first_reply_in_s": MetricInfo("Time to first reply to the pod", _S, "lower"),
    }

    def sniff(self, text: str) -> float:
        return 1.0 if f'"{FORMAT}"' in text[:200] else 0.0

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """The probe loop each new pod runs towards the server (``target``); ``duration``: the run's limit."""
        s = Settings.of(params)
        return Invocation(
            client=probe_argv(target, s),
            server=None,
            duration=s.run_limit,
            test=s.mode,
            protocol="icmp",
            direction="roundtrip",
            streams=s.concurrency,
            version=["ping", "-V"],
        )

    def parse(self, text: str) -> ParseResult:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"netready output is not whole JSON ({exc.msg}): cut off?") from None
        problem = run_problem(doc)
        if problem:
            raise ParseError(f"no time to network: {problem}")
        mode = str(doc["mode"])
        res = ParseResult(protocol="icmp", direction="roundtrip", test=mode)
        res.streams = int(doc["pods"]) if mode == "burst" else 1
        for rec in doc["records"]:
            pod = str(rec["index"])
            for metric, value in record_metrics(rec).items():
                res.measurements.append(Measurement(metric, value, _S, pod=pod))
        res.info.update(mode=mode, pods=doc.get("pods"), node=doc.get("node"))
        return res


ADAPTER = NetReadyAdapter()
