"""A tool is one module: an adapter defined here, and nothing else edited, goes through
plan -> launch (fake cluster) -> parse -> stats (-> figures when that stage exists).

The adapter below is the whole of the "new tool": its port, server kind, control
protocol, headline metric and metric facts are class attributes; the launcher,
the parse stage and the statistics learn them only by asking it.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any

import pytest

from podnet import tools as adapters
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.provenance import to_nodes
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.plan import build_plan
from podnet.parse import parse_experiment
from podnet.parse.tidy import Measurement, ParseResult
from podnet.tools.base import Adapter, Invocation, MetricInfo, ParseError
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import launch_config, pod_pod


class EchoRateAdapter(Adapter):
    """A made-up TCP tool: ``echorate -c HOST -p PORT -t SECONDS`` prints ``rate_bps=<n> rtt_us=<n>``."""

    name = "echorate"
    binary = "echorate"
    defaults = {"duration": 5, "port": 7000}
    display_name = "EchoRate"
    default_port = 15999
    server_kind = "process"
    tcp_control = False
    headline = ("throughput",)
    metrics = {"echo_rtt": MetricInfo("Echo RTT", "s", "lower")}

    def sniff(self, text: str) -> float:
        return 0.99 if text.startswith("echorate ") else 0.0

    def parse(self, text: str) -> ParseResult:
        m = re.search(r"rate_bps=([\d.]+) rtt_us=([\d.]+)\n-- done", text)
        if not m:
            raise ParseError("echorate: no complete result line (rate_bps=... rtt_us=... then '-- done')")
        res = ParseResult(test="tcp", protocol="tcp", direction="forward")
        res.measurements.append(Measurement("throughput", float(m.group(1)), "bit/s"))
        res.measurements.append(Measurement("echo_rtt", float(m.group(2)) * 1e-6, "s"))
        return res

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        port = int(params["port"])
        return Invocation(
            client=["echorate", "-c", target, "-p", str(port), "-t", str(params["duration"])],
            server=["echorate", "-s", "-p", str(port)],
            port=port,
            duration=float(params["duration"]),
            test="tcp",
            protocol="tcp",
            version=["echorate", "--version"],
        )


@pytest.fixture
def with_echorate():
    """Register the adapter the way discovery does: in the (cached) registry every module reads."""
    registry = adapters.all_adapters()
    registry["echorate"] = EchoRateAdapter()
    yield registry["echorate"]
    registry.pop("echorate")


def _config(tmp_path):
    return launch_config(
        [pod_pod()],
        {"echorate": {"tests": [{"name": "tcp", "params": {"duration": 2}}]}},
        name="newtool",
        raw_dir=tmp_path / "raw",
        variant="bridge",
        repeats=3,
        warmup=0,  # the warm-up tests are in test_launch_harness.py
    )


def test_a_new_tool_is_one_module(tmp_path, with_echorate):
    cfg = _config(tmp_path)
    nodes = [make_node("n1", ip="10.1.0.1"), make_node("n2", ip="10.1.0.2")]
    # plan: the launcher's port and server come from the adapter's facts
    assert cfg.ports["echorate"] == 15999
    plan = build_plan(cfg, to_nodes(nodes))
    (cp,) = plan.cases
    assert cp.params["port"] == 15999 and cp.server is not None
    assert cp.server.argv == ["echorate", "-s", "-p", "15999"] and cp.server.tcp

    rates = iter([9.1e9, 9.3e9, 8.9e9])

    def responder(pod: str, argv: list[str]) -> ExecResult:
        assert argv[:2] == ["echorate", "-c"]
        return ExecResult(
            rc=0, stdout=f"echorate 1.0\nrate_bps={next(rates)} rtt_us=42\n-- done\n", stderr=""
        )

    kube = FakeKube(nodes, responder)
    res = launch(cfg, kube=kube)
    assert (res.launched, res.ok, res.failed, res.error) == (3, 3, 0, "")
    containers = [
        c for (_, kind, _), body in kube.created_log if kind == "Pod" for c in body["spec"]["containers"]
    ]
    (server,) = [c for c in containers if c["command"][0] == "echorate"]
    assert server["command"] == ["echorate", "-s", "-p", "15999"]
    assert server["startupProbe"]["tcpSocket"]["port"] == 15999

    # parse: the adapter is detected from the output
    parsed = parse_experiment(cfg.raw_dir, "newtool")
    assert len(parsed.failed) == 0
    tidy = parsed.tidy
    thr = tidy[tidy["metric"] == "throughput"]
    assert set(tidy["tool"]) == {"echorate"} and len(thr) == 3
    assert sorted(thr["value"]) == [8.9e9, 9.1e9, 9.3e9]

    # stats: summary and the planning table's headline come from the adapter
    from podnet import stats

    summary = stats.summarize(tidy)
    row = summary[summary["metric"] == "throughput"].iloc[0]
    assert row["n"] == 3 and row["mean"] == pytest.approx(9.1e9)
    assert adapters.headline_metrics("echorate") == ["throughput"]
    assert adapters.metric_info("echo_rtt", "echorate").better == "lower"

    # figures, when the figures stage exists as a library module
    if importlib.util.find_spec("podnet.report.figures") is not None:
        from podnet.parse import write_parsed
        from podnet.report import figures

        out = tmp_path / "processed"
        write_parsed(parsed, out / "tidy.parquet", out / "intervals.parquet", out / "failed_runs.csv")
        stats.run(out / "tidy.parquet", out)
        written = figures.publish(out)
        assert any(p.stem == "throughput" for p in written), written
