"""qperf: plain and verbose (``-v``, ``-vv``, ``-vu``/``-vs``/``-vt``, ``-ub``, ``-uu``) text output.

Hand-written parser (qperf has no machine-readable mode and no maintained
Python parser). The format (qperf.c ``place_show``) is a ``<test>:`` line
followed by indented ``name = value unit`` lines; the ``conf:`` block holds
the nodes' names, CPUs, OS and qperf versions and goes into ``info``.

Units, as qperf prints them (all prefixes decimal: qperf divides by 1000):

* bandwidth ``bytes/sec``, ``KB/sec`` ... ``TB/sec`` or, with ``-ub``,
  ``bits/sec``, ``Kb/sec`` ... -> bit/s (``MB/sec`` = 8e6 bit/s)
* time ``ns``, ``us``, ``ms``, ``sec`` -> s
* cost ``ns/GB`` ... ``sec/GB`` -> s/byte with GB = 1e9 bytes (qperf's own
  ``gB = 1000*1000*1000``): 2.26 sec/GB = 2.26e-9 s/byte
* rates ``/sec``, ``K/sec``, ``M/sec`` ... -> messages/s
* ``% cpus`` -> fraction of one CPU (176 % cpus = 1.76)
* sizes ``bytes``, ``KB``, ``MB`` ... (decimal) or ``KiB (1,024)`` -> bytes;
  plain counts may read ``62,969`` or ``1.5 million``.

Metric names: ``bw``/``recv_bw`` -> ``throughput`` (what arrived),
``send_bw`` -> ``sender_throughput``, ``latency`` -> ``latency`` (qperf's
one-way figure: half the round trip), ``msg_rate``, ``send_cost``/``recv_cost``,
``send_cpus_used`` -> ``cpu_send``, ``recv_cpus_used`` -> ``cpu_recv``,
``loc_cpus_used`` -> ``cpu_local``, ``rem_cpus_used`` -> ``cpu_remote``,
``time`` -> ``duration``; ``-vv`` figures keep qperf's names (``send_bytes``,
``loc_cpus_user``, ...). Each measurement carries its own ``test``; a test
run several times in one output (``-oo msg_size:...`` loops) is named
``<test>[msg_size=<bytes>]``; in the tidy table a launched run's test is its configured name
(:meth:`QperfAdapter.tidy_tests`). Used parameters (``msg_size``, ``port``,
``timeout``...) go into ``info['tests']``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from podnet.tools._qperf_lat import stalled
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
from podnet.tools.result import Measurement, ParseResult

_HEADER = re.compile(r"^([a-z][a-z0-9_]*):\s*$")
_ITEM = re.compile(r"^\s+([a-z][a-z0-9_]*)\s*=\s*(.*?)\s*$")
_VALUE = re.compile(r"^(?P<num>-?[\d,]*\.?\d+(?:[eE][-+]?\d+)?)\s*(?P<unit>.*?)\s*(?:\((?P<alt>[\d,]+)\))?$")

_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "sec": 1.0}
_WORDS = {"": 1.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_BIN = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}

#: qperf's bandwidth tests; protocol from the prefix
_PROTO = {"tcp": "tcp", "udp": "udp", "sctp": "sctp", "sdp": "sdp", "rds": "rds"}

_NAMES = {
    "bw": "throughput",
    "recv_bw": "throughput",
    "send_bw": "sender_throughput",
    "latency": "latency",
    "msg_rate": "msg_rate",
    "send_cost": "send_cost",
    "recv_cost": "recv_cost",
    "send_cpus_used": "cpu_send",
    "recv_cpus_used": "cpu_recv",
    "loc_cpus_used": "cpu_local",
    "rem_cpus_used": "cpu_remote",
    "time": "duration",
}
#: parameters shown by -vu / -vv: kept in info, not measured
_PARAMS = {
    "msg_size",
    "port",
    "timeout",
    "id",
    "affinity",
    "flip",
    "poll_mode",
    "sock_buf_size",
    "mtu_size",
    "no_msgs",
    "access_recv",
    "use_cm",
    "rd_atomic",
    "sl",
    "static_rate",
    "src_path_bits",
    "alt_port",
    "cq_poll",
    "loc_id",
    "rem_id",
}


def convert(name: str, text: str) -> tuple[float, str]:
    """One qperf value (``'3.24 GB/sec'``, ``'542 ms/GB'``, ``'17.3 us'``...) in SI, with its tidy unit."""
    m = _VALUE.match(text.strip())
    if not m:
        raise ParseError(f"qperf value {name} = {text!r}: expected '<number> <unit>'")
    num = float(m["num"].replace(",", ""))
    unit = m["unit"].strip()
    if m["alt"] is not None:  # "64 KiB (65,536)": the exact byte count
        return float(m["alt"].replace(",", "")), "bytes"
    b = re.fullmatch(r"([KMGT]?)(bytes|B|bits|b)/sec", unit)
    if b:
        return num * _SI[b[1]] * (1 if b[2] in ("bits", "b") else 8), "bit/s"
    c = re.fullmatch(r"(ns|us|ms|sec)/GB", unit)
    if c:
        return num * _TIME[c[1]] / 1e9, "s/byte"
    if unit in _TIME:
        return num * _TIME[unit], "s"
    r = re.fullmatch(r"([KMGT]?)/sec", unit)
    if r:
        return num * _SI[r[1]], "messages/s"
    if unit == "% cpus":
        return num / 100.0, "fraction"
    s = re.fullmatch(r"([KMGT]?)(bytes|B)", unit)
    if s:
        return num * _SI[s[1]], "bytes"
    if unit in _BIN:
        return num * _BIN[unit], "bytes"
    if unit in _WORDS:
        return num * _WORDS[unit], "count"
    raise ParseError(f"qperf value {name} = {text!r}: unknown unit {unit!r}")


def _block_complete(test: str, keys: list[str]) -> bool:
    """Whether a result block ends where qperf ends one (qperf.c prints its items in a fixed order).

    Plain output is the headline alone (``bw``; ``send_bw``+``recv_bw``; ``latency``); ``-vt``
    adds ``time``; ``-v`` ends with the remote/receiver CPU line, ``-vv`` with the message counts.
    """
    if not keys:
        return False
    last = keys[-1]
    lat = test.endswith("_lat")
    if keys in (["latency"], ["bw"], ["send_bw", "recv_bw"]):
        return True
    if "loc_cpus_user" in keys or "send_cpus_user" in keys:  # -vv
        return last == ("rem_recv_msgs" if lat else "recv_msgs")
    if last == ("rem_cpus_used" if lat else "recv_cpus_used"):  # -v
        return True
    if (
        last in ("recv_msgs", "rem_recv_msgs")
        and "send_cpus_used" not in keys
        and "loc_cpus_used" not in keys
    ):
        return True  # -vs: statistics without CPU use
    # -vt (time only): the block is the headline then `time`
    return last == "time" and "msg_rate" not in keys


#: qperf test names a command line may ask for (the ones podnet parses)
_TEST_ARG = re.compile(r"^(?:tcp|udp|sctp|sdp|rds)_(?:bw|lat)$|^conf$")


def requested_tests(command: str) -> list[str]:
    """The tests a qperf command line asks for, in order (``qperf -t 30 HOST -v tcp_bw tcp_lat conf``)."""
    return [a for a in str(command).split() if _TEST_ARG.match(a)]


def _loop_count(command: str) -> int | None:
    """How many values a ``-oo name:init:last:incr`` loop runs (``*k`` multiplies, ``+k``/``k`` adds)."""
    args = str(command).split()
    spec = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-oo", "--loop")), None)
    m = re.fullmatch(r"[\w]+:(\w+):(\w+):([*+]?)(\w+)", spec or "")
    if m is None:
        return None

    def num(x: str) -> float | None:
        mm = re.fullmatch(r"(\d+)([KkMmGg]?)", x)
        return (
            None if mm is None else int(mm[1]) * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[mm[2].lower()]
        )

    v, last, step = num(m[1]), num(m[2]), num(m[4])
    if v is None or last is None or not step or (m[3] == "*" and step < 2):
        return None
    n = 0
    while v <= last and n < 10_000:
        n += 1
        v = v * step if m[3] == "*" else v + step
    return n


class QperfAdapter(Adapter):
    """qperf client output: several tests per file, each measurement tagged with its test."""

    name = "qperf"
    binary = "qperf"
    display_name = "qperf"
    default_port = 15765
    server_kind = "process"
    tcp_control = True
    headline = ("throughput", "latency")
    #: qperf prints every figure with 3 significant digits ("18.5 us", "1.17 GB/sec")
    resolution = {m: Resolution(digits=3) for m in ("throughput", "sender_throughput", "latency", "msg_rate")}
    metrics = {
        "latency": MetricInfo("Latency (one-way, qperf)", "s", "lower"),
        "send_cost": MetricInfo("Send cost", "s/byte", "lower"),
        "recv_cost": MetricInfo("Receive cost", "s/byte", "lower"),
        "cpu_send": MetricInfo("CPU (sender)", "fraction", "lower"),
        "cpu_recv": MetricInfo("CPU (receiver)", "fraction", "lower"),
        "cpu_local": MetricInfo("CPU (local)", "fraction", "lower"),
        "cpu_remote": MetricInfo("CPU (remote)", "fraction", "lower"),
        "send_bytes": MetricInfo("Bytes sent", "bytes", "", "count"),
        "recv_bytes": MetricInfo("Bytes received", "bytes", "", "count"),
        "send_msgs": MetricInfo("Messages sent", "count", "", "count"),
        "recv_msgs": MetricInfo("Messages received", "count", "", "count"),
        # -vv/-vvs details per side: loc(al), rem(ote), send(er), recv (receiver)
        **{
            f"{side}_{key}": MetricInfo(f"{label} ({side})", unit, "", kind)
            for side in ("loc", "rem", "send", "recv")
            for key, (label, unit, kind) in {
                "cpu_time": ("CPU time", "s", "positive"),
                "real_time": ("Real time", "s", "positive"),
                "cpus_user": ("CPUs user", "fraction", "positive"),
                "cpus_kernel": ("CPUs kernel", "fraction", "positive"),
                "cpus_intr": ("CPUs interrupt", "fraction", "positive"),
                "send_bytes": ("Bytes sent", "bytes", "count"),
                "recv_bytes": ("Bytes received", "bytes", "count"),
                "send_msgs": ("Messages sent", "count", "count"),
                "recv_msgs": ("Messages received", "count", "count"),
            }.items()
        },
    }
    defaults = {
        "duration": 10,
        "tests": ["tcp_bw", "udp_bw", "tcp_lat", "udp_lat"],
        "port": 19765,
        "data_port": 19766,
        "msg_size": None,
        "affinity": None,  # [client CPU, server CPU]: -lca / -rca (launch.affinity)
    }

    def sniff(self, text: str) -> float:
        heads = re.findall(r"^((?:tcp|udp|sctp|sdp|rds|rc|uc|ud|xrc|ver|quit|conf)[a-z_]*):\s*$", text, re.M)
        items = re.search(r"^\s+(bw|send_bw|recv_bw|latency|msg_rate|loc_qperf|loc_node)\s+=\s", text, re.M)
        if heads and items:
            return 0.95
        if re.search(r"^qperf: ", text, re.M) or (heads and "qperf" in text):
            return 0.5
        if heads and re.search(r"^(tcp|udp|sctp|sdp|rds)_(bw|lat):\s*$", text, re.M):
            return 0.4  # a test header without results (e.g. '<host>: failed to connect')
        return 0.0

    def parse(self, text: str) -> ParseResult:
        blocks: list[tuple[str, list[tuple[str, str]]]] = []
        errors: list[str] = []
        res_info: dict[str, Any] = {}
        for raw in text.splitlines():
            line = raw.rstrip()
            h = _HEADER.match(line)
            if h:
                if blocks and blocks[-1] == (h[1], []):
                    raise ParseError(
                        f"qperf output repeats the header '{h[1]}:' with no result between: corrupted"
                    )
                blocks.append((h[1], []))
                continue
            it = _ITEM.match(line)
            if it and blocks:
                blocks[-1][1].append((it[1], it[2]))
                continue
            cmd = re.search(r"(?:^|[#$>]\s*)(qperf\s+\S.*)$", line)
            if cmd and "command" not in res_info:
                res_info["command"] = cmd[1].strip()
                continue
            if re.match(
                r"^(qperf|server|client)?:?\s*.*(error|failed|unable|refused|timed out|cannot)", line, re.I
            ):
                errors.append(line.strip())
        if blocks and not blocks[-1][1] and not errors:
            raise Incomplete(
                f"qperf output ends with the header '{blocks[-1][0]}:' and no result under it: cut off "
                "while that test ran (tests without results)"
            )
        self._complete(blocks, res_info.get("command"))
        self._consistent(blocks)
        res = ParseResult(streams=1, info=res_info)
        conf: dict[str, str] = {}
        tests_info: dict[str, Any] = {}
        seen: dict[str, int] = {}
        runs = [(t, items) for t, items in blocks if t != "conf"]
        counts: dict[str, int] = {}
        for t, _ in runs:
            counts[t] = counts.get(t, 0) + 1
        empty: list[str] = []
        for test, items in blocks:
            if test == "conf":
                conf.update({k: v for k, v in items})
                continue
            if not items:
                empty.append(test)
                continue
            d = dict(items)
            if why := stalled(
                test, *(convert(k, d[k])[0] if k in d else None for k in ("latency", "time", "msg_rate"))
            ):
                raise ParseError(why)
            params = {k: v for k, v in items if k in _PARAMS or k.endswith(tuple("_" + p for p in _PARAMS))}
            label = test
            if counts[test] > 1:
                size = dict(items).get("msg_size")
                if size:
                    label = f"{test}[msg_size={int(convert('msg_size', size)[0])}]"
                else:
                    seen[test] = seen.get(test, 0) + 1
                    label = f"{test}[{seen[test]}]"
            proto = _PROTO.get(test.split("_")[0])
            direction = "roundtrip" if test.endswith("_lat") else "forward"
            for key, value in items:
                if key in params:
                    continue
                num, unit = convert(key, value)
                metric = _NAMES.get(key, key)
                res.measurements.append(
                    Measurement(metric, num, unit, test=label, protocol=proto, direction=direction)
                )
            if params:
                tests_info[label] = params
        res.info["blocks"] = [t for t, _ in blocks]
        if conf:
            res.info["conf"] = conf
            if "loc_qperf" in conf:
                res.info["version"] = conf["loc_qperf"]
        if tests_info:
            res.info["tests"] = tests_info
        if empty:
            res.info["tests_without_results"] = empty
        if errors:
            res.info["errors"] = errors
        if not res.measurements:
            what = f"tests without results: {', '.join(empty)}; " if empty else ""
            err = f" qperf said: {errors[0]!r}" if errors else ""
            raise ParseError(
                "no qperf result block ('tcp_bw:' followed by '    bw  =  3.24 GB/sec') found: "
                f"{what}the run may have failed or been cut off.{err}"
            )
        headline = {"throughput", "latency", "msg_rate"}
        if not any(m.metric in headline for m in res.measurements):
            raise ParseError("qperf output has result blocks but no bw, latency or msg_rate line")
        tests = [t for t, items in runs if items]
        if len(set(tests)) == 1:
            res.test = tests[0]
            res.protocol = _PROTO.get(tests[0].split("_")[0])
        lat = [t for t in tests if t.endswith("_lat")]
        if lat and len(lat) == len(tests):
            res.direction = "roundtrip"
        return res

    @staticmethod
    def _complete(blocks: list[tuple[str, list[tuple[str, str]]]], command: str | None) -> None:
        """A cut output ends inside its last block, or lacks tests its command asked for."""
        runs = [(t, [k for k, _ in items]) for t, items in blocks if t != "conf" and items]
        if runs:
            test, keys = runs[-1]
            earlier = [k for t, k in runs[:-1] if t.endswith("_lat") == test.endswith("_lat")]
            if keys not in earlier and not _block_complete(test, keys):
                raise Incomplete(
                    f"qperf output is incomplete (cut off?): its last block '{test}:' stops after "
                    f"'{keys[-1]}', before the items qperf prints after it"
                )
        if blocks and blocks[-1][0] == "conf":
            keys = [k for k, _ in blocks[-1][1]]
            if not keys or keys[-1] != "rem_qperf":
                raise Incomplete(
                    "qperf output is incomplete (cut off?): its 'conf:' block stops before 'rem_qperf'"
                )
        if command:
            QperfAdapter.check_requested(blocks, command)

    @staticmethod
    def _consistent(blocks: list[tuple[str, list[tuple[str, str]]]]) -> None:
        """A lost line must not merge two blocks or mislabel a loop: qperf prints each item once per
        block, and the blocks of one test in a ``-oo`` loop all name the looped parameter."""
        for test, items in blocks:
            keys = [k for k, _ in items]
            dup = sorted({k for k in keys if keys.count(k) > 1})
            if dup:
                raise Incomplete(
                    f"qperf output is damaged: block '{test}:' has {', '.join(dup)} twice (a test's header "
                    "line was lost?)"
                )
        for test in {t for t, _ in blocks if t != "conf"}:
            mine = [dict(items) for t, items in blocks if t == test and items]
            for param in _PARAMS:
                has = [param in d for d in mine]
                if len(mine) > 1 and any(has) and not all(has):
                    raise Incomplete(
                        f"qperf output is damaged: some '{test}:' blocks of a loop name {param}, others not "
                        "(a line was lost?)"
                    )

    @staticmethod
    def check_requested(blocks: list[tuple[str, list]], command: str) -> None:
        """Every test the command asked for has its block (in the order asked; ``-oo`` loops repeat one)."""
        want = requested_tests(command)
        got: list[str] = []
        for t, _ in blocks:
            if not got or got[-1] != t:
                got.append(t)
        if want and got != want:
            missing = [t for t in want if t not in got]
            what = f"no block for {', '.join(missing)}" if missing else f"blocks {got}"
            raise Incomplete(f"qperf output is incomplete (cut off?): the command asked for {want}; {what}")
        loop = _loop_count(command)
        if loop:
            for t in want:
                n = sum(1 for b, _ in blocks if b == t)
                if t != "conf" and n != loop:
                    raise Incomplete(
                        f"qperf output is incomplete (cut off?): the -oo loop runs {loop} values but '{t}:' "
                        f"has {n} blocks"
                    )

    def complete_for(self, result: ParseResult, command: str) -> None:
        """With the sidecar's command: every requested test has its block."""
        blocks = result.info.get("blocks")
        if isinstance(blocks, list):
            self.check_requested([(t, []) for t in blocks], command)

    def tidy_tests(self, configured: str | None, result: ParseResult) -> Callable[[str | None], str | None]:
        """A launched run's tidy ``test`` is its configured test's name, as for the other tools: two
        configured tests that run the same qperf test (``tcp_lat`` with another ``msg_size`` or
        affinity) stay two tests. A configured test that ran several qperf tests names each
        ``<configured>:<qperf test>``, unless its name is theirs joined by ``+`` (``tcp_bw+udp_lat``);
        then, as in a file without a sidecar ``test``, each keeps qperf's block name. The file's
        distinct qperf tests are counted once, not per measurement."""
        if not configured:
            return lambda own: own
        labels = list(dict.fromkeys(m.test for m in result.measurements if m.test))
        if len(labels) <= 1:
            return lambda own: str(configured) if own else own
        if str(configured) == "+".join(dict.fromkeys(t.split("[")[0] for t in labels)):
            return lambda own: own
        return lambda own: f"{configured}:{own}" if own else own

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """Client ``qperf -v <target> -lp PORT -ip DATAPORT -t D [-lca C -rca S] <tests...> conf``; server
        ``qperf -lp PORT``.

        ``-ip`` pins the data connection's port (the server listens on it too), so a
        network policy or the launcher can know both ports.
        """
        p = {**self.defaults, **(params or {})}
        tests = p.get("tests") or p.get("test")
        if isinstance(tests, str):
            tests = [tests]
        bad = [t for t in tests if not re.fullmatch(r"(tcp|udp|sctp|sdp|rds)_(bw|lat)", t)]
        if bad:
            raise UnsupportedTest(
                f"qperf: unsupported tests {bad} (socket tests tcp_bw, udp_bw, tcp_lat, udp_lat)"
            )
        port, data_port = int(p["port"]), int(p["data_port"])
        duration = float(p["duration"])
        dur = str(int(duration)) if duration.is_integer() else str(duration)
        client = ["qperf", "-v", target, "-lp", str(port), "-ip", str(data_port), "-t", dur]
        if p.get("msg_size"):
            client += ["-m", str(p["msg_size"])]
        # qperf numbers CPUs from 1 (0 is "any"), whatever its --help says ("numbered sequentially from
        # 0"): `-lca 1 -rca 1` left both processes on CPU 0 (taskset -p, qperf 0.4.11, 2026-11-29), and
        # `-lca 0 -rca 0` pinned nothing (the placement study's cgroup readings, benchmarks/placement.yaml)
        cpu_c, cpu_s = cpu_pair(p.get("affinity"))
        if cpu_c is not None:
            client += ["-lca", str(cpu_c + 1)]
        if cpu_s is not None:
            client += ["-rca", str(cpu_s + 1)]  # the server pins itself for the test (qperf's rem_affinity)
        client += list(tests) + ["conf"]
        protos = {t.split("_")[0] for t in tests}
        return Invocation(
            client=client,
            server=["qperf", "-lp", str(port)],
            port=port,
            duration=duration * len(tests) + 2,
            test=tests[0] if len(tests) == 1 else "+".join(tests),
            protocol=protos.pop() if len(protos) == 1 else "",
            direction="roundtrip" if all(t.endswith("_lat") for t in tests) else "forward",
            streams=1,
            version=["qperf", "--version"],
        )


ADAPTER = QperfAdapter()
