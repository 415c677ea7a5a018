"""A launched UDP run without the server's report is a failed run (it measured nothing about the
path), and a server that needs a rest between tests (iperf 2.1.8's UDP server) gets it."""

from __future__ import annotations

import time
from pathlib import Path

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds.execute import judge
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse.raw import find_raw_files, read_sidecar
from podnet.tools import iperf2
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import HOST_HOST, experiment

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "iperf2"
REPORT = (FIX / "udp-e.txt").read_text()
#: a real client output recorded on the embedded cluster after its server had segfaulted
CRASHED = (FIX / "udp-e-crashed-server.txt").read_text()


def test_a_udp_client_without_the_server_report_is_a_failed_run_with_its_reason():
    inv = iperf2.ADAPTER.invocation({"protocol": "udp", "bandwidth": "100M"}, "10.0.0.1")
    assert inv.requires == ("throughput",) and inv.server_gap == iperf2.UDP_SERVER_GAP > 0
    v = judge(iperf2.ADAPTER, ExecResult(rc=0, stdout=CRASHED, stderr=""), inv.requires)
    assert v.status == "failed"
    assert "measured no throughput" in v.error and "no server report" in v.error
    assert judge(iperf2.ADAPTER, ExecResult(rc=0, stdout=REPORT, stderr=""), inv.requires).status == "ok"
    # what an import of the same text keeps: the sender side, said to be only that
    assert judge(iperf2.ADAPTER, ExecResult(rc=0, stdout=CRASHED, stderr="")).status == "ok"
    tcp = iperf2.ADAPTER.invocation({"protocol": "tcp"}, "10.0.0.1")
    assert tcp.requires == () and tcp.server_gap == 0


def test_runs_against_a_server_that_needs_rest_wait_for_it_and_a_crash_is_retried(tmp_path, monkeypatch):
    monkeypatch.setattr(iperf2, "UDP_SERVER_GAP", 0.3)
    cfg = from_mapping(
        experiment(
            [HOST_HOST],
            {"iperf2": {"tests": [{"name": "udp", "params": {"protocol": "udp", "duration": 1}}]}},
            raw_dir=tmp_path / "raw",
            variant="bridge",
            repeats=3,
            warmup=0,
        )
    )
    ends: list[float] = []
    starts: list[float] = []
    calls = {"n": 0}

    def server_like_iperf_2_1_8(pod, argv):
        """Segfaults (no report from then on) when a test starts < 0.2 s after the last one ended."""
        now = time.monotonic()
        calls["n"] += 1
        crashed = bool(ends) and now - ends[-1] < 0.2
        starts.append(now)
        ends.append(time.monotonic())
        if calls["n"] == 2:  # one crash anyway: the launcher must fail the run, restart the server, retry
            crashed = True
        return ExecResult(rc=0, stdout=CRASHED if crashed else REPORT, stderr="")

    k = FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], server_like_iperf_2_1_8)
    res = launch(cfg, kube=k)
    assert res.ok == 3 and res.failed == 1
    gaps = [b - a for a, b in zip(ends, starts[1:])]
    assert gaps and min(gaps) >= 0.3 - 0.01, gaps
    side = {f.name: read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}
    failed = [s for s in side.values() if s["status"] == "failed"]
    assert len(failed) == 1 and "no server report" in failed[0]["error"]
    assert any(a[:1] == ["kill"] for _, a in k.execs)  # the server was restarted after the failed run


def test_a_udp_server_is_waited_for_until_its_container_runs_again(tmp_path):
    """After a crash the kubelet restarts the container (with back-off): the next run waits for it."""
    cfg = from_mapping(
        experiment(
            [HOST_HOST],
            {"iperf2": {"tests": [{"name": "u", "params": {"protocol": "udp", "duration": 1}}]}},
            raw_dir=tmp_path / "raw",
            variant="bridge",
            repeats=1,
            warmup=0,
        )
    )
    seen: list[str] = []

    class BackingOff(FakeKube):
        not_ready = 3

        def container_ready(self, namespace, pod, container):
            ready, count = super().container_ready(namespace, pod, container)
            if container != "main" and self.not_ready > 0:
                self.not_ready -= 1
                seen.append("down")
                return False, count
            return ready, count

    def run(pod, argv):
        seen.append("client")
        return ExecResult(rc=0, stdout=REPORT, stderr="")

    k = BackingOff([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], run)
    assert launch(cfg, kube=k).ok == 1
    assert seen == ["down"] * 3 + ["client"]
