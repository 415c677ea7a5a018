"""The noise floor: real tools between two real network namespaces (root), and its CV comparison."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from podnet.launch.noise import netns_floor as floor
from podnet.parse import parse_files
from tests.conftest import REPO

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
CONFIG = {
    "experiment": "floor-test",
    "launch": {
        "defaults": {"duration": 1, "omit": 0},
        "tools": {
            "iperf3": {"tests": [{"name": "tcp"}]},
            "ping": {"tests": [{"name": "plain", "params": {"count": 3, "interval": 0.2}}]},
        },
    },
}


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


@needs_root
@pytest.mark.skipif(not shutil.which("iperf3"), reason="iperf3 is installed by `make floor-tools`")
def test_floor_runs_parse_and_leave_nothing(tmp_path: Path):
    tests = floor.tests_from_config(CONFIG)
    assert [(t.tool, t.name) for t in tests] == [("iperf3", "tcp"), ("ping", "plain")]
    paths = list(floor.run_floor(tests, tmp_path, "floor-test", repeats=2, log=lambda *_: None))
    assert len(paths) == 4
    assert floor.NS_CLIENT not in _namespaces() and floor.NS_SERVER not in _namespaces()
    for p in paths:
        meta = yaml.safe_load(Path(str(p) + ".meta.yaml").read_text())
        assert meta["variant"] == "floor" and meta["scenario"] == "netns-veth" and meta["status"] == "ok"
        assert meta["floor"]["mtu"] == 1500
        # the launched runs' sidecar format: command as a list, Z times, interference of the machine
        assert meta["command"][0] in ("iperf3", "ping") and isinstance(meta["command_line"], str)
        assert meta["started"].endswith("Z") and meta["elapsed_s"] > 0
        (machine,) = meta["interference"]["nodes"].values()
        assert 0 <= machine["busy"] <= 1 and machine["cpus"] >= 1 and meta["interference"]["machines"] == 1
    parsed = parse_files(paths, tmp_path, "floor-test")
    assert parsed.failed.empty
    rows = parsed.tidy
    tput = rows[(rows["tool"] == "iperf3") & (rows["metric"] == "throughput")]["value"]
    assert len(tput) == 2 and (tput > 1e8).all()
    assert (rows[(rows["tool"] == "ping") & (rows["metric"] == "rtt_avg")]["value"] > 0).all()
    # a second call finds every repeat on disk and runs nothing
    assert list(floor.run_floor(tests, tmp_path, "floor-test", repeats=2, log=lambda *_: None)) == []


@needs_root
def test_floor_removes_a_stale_floor():
    subprocess.run(["ip", "netns", "add", floor.NS_CLIENT], check=True)
    with floor.Floor():
        assert floor.NS_CLIENT in _namespaces()
    assert floor.NS_CLIENT not in _namespaces()


@needs_root
def test_a_live_floor_is_never_taken_for_a_stale_one():
    """A second floor with the same names (another launch, a test run beside a launch) is refused,
    and the first floor's namespaces stay; once the first is down, the names are free again."""
    names = floor.Names(
        ns_client="podnet-ftest-c",
        ns_server="podnet-ftest-s",
        link_client="pnftest-c",
        link_server="pnftest-s",
    )
    with floor.Floor(names=names):
        with pytest.raises(floor.FloorBusy, match="in use by another"):
            # a second process: flock is per open file, so a child process stands in for it
            import multiprocessing

            ctx = multiprocessing.get_context("fork")
            q = ctx.Queue()

            def other():
                try:
                    floor.Floor(names=names).__enter__()
                    q.put("entered")
                except floor.FloorBusy as exc:
                    q.put(str(exc))

            p = ctx.Process(target=other)
            p.start()
            p.join(30)
            msg = q.get(timeout=5)
            assert names.ns_client in _namespaces(), "the live floor's namespace was deleted"
            raise floor.FloorBusy(msg) if "in use" in msg else AssertionError(msg)
    assert names.ns_client not in _namespaces()
    with floor.Floor(names=names):
        pass


def test_unknown_selector_is_an_error():
    with pytest.raises(ValueError, match="iperf3:nope"):
        floor.tests_from_config(CONFIG, ["iperf3:nope"])


def test_noise_vs_floor_divides_cvs():
    summary = pd.DataFrame(
        [
            ("floor", "netns-veth", "iperf3", "tcp", "throughput", 10, 0.05),
            ("bridge", "pod-pod-cross-node", "iperf3", "tcp", "throughput", 10, 0.08),
            ("bridge", "pod-pod-cross-node", "iperf3", "tcp", "elapsed", 10, 0.5),
            ("bridge", "host-host", "ping", "plain", "rtt_avg", 10, 0.2),
        ],
        columns=["variant", "scenario", "tool", "test", "metric", "n", "cv"],
    )
    out = floor.noise_vs_floor(summary, metrics=["throughput", "rtt_avg"])
    assert list(out["scenario"]) == ["pod-pod-cross-node"]  # no floor for ping; elapsed not asked for
    assert out["cv_ratio"].iloc[0] == pytest.approx(1.6)


def test_cpu_share_is_a_fraction():
    a = floor.cpu_times()
    sum(i * i for i in range(200000))
    share = floor.cpu_share(a, floor.cpu_times())
    assert 0 <= share["busy"] <= 1 and 0 <= share["steal"] <= 1


def test_the_floor_and_the_cluster_share_one_shaper():
    # envs/cluster/net.sh sources the script the floor runs: one tbf for both
    net = (floor.SHAPE_SH.parent / "net.sh").read_text(encoding="utf-8")
    assert 'source "$(dirname "${BASH_SOURCE[0]}")/shape.sh"' in net and "\nshape() {" not in net
    assert _rate_bytes(["1gbit", "10gbit"]) == ["125000000", "1250000000"]
    # a rate it cannot read is an error naming it, before any link is touched
    with pytest.raises(ValueError, match="'fast'.*not understood"):
        floor.shape("podnet-no-such-ns", "pnx", "fast")


def _rate_bytes(rates: list[str]) -> list[str]:
    """What envs/cluster/shape.sh's link_rate_bytes prints for each rate (bytes per second)."""
    loop = f"source {floor.SHAPE_SH}; for r in {' '.join(rates)}; do link_rate_bytes $r; done"
    return subprocess.run(["bash", "-c", loop], capture_output=True, text=True, check=True).stdout.split()


def test_the_shaped_link_benchmark_reads_rates_with_the_shaper():
    # benchmarks/shaped_link.py's line rate is shape.sh's link_rate_bytes x 8: one reader of a rate
    spec = importlib.util.spec_from_file_location("shaped_link", REPO / "benchmarks" / "shaped_link.py")
    shaped_link = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shaped_link)
    rates = ["1gbit", "10gbit", "500mbit", "800kbit", "2.5Gbit", "125mbps"]
    assert [shaped_link.bits(r) for r in rates] == [8.0 * int(b) for b in _rate_bytes(rates)]
    assert [shaped_link.bits(r) for r in rates] == [1e9, 1e10, 5e8, 8e5, 2.5e9, 1e9]  # 125 MB/s: bytes
    assert shaped_link.bits("none") is None
    with pytest.raises(ValueError, match="'fast'"):
        shaped_link.bits("fast")


@needs_root
@pytest.mark.skipif(not shutil.which("tc"), reason="tc (iproute2) shapes the link")
def test_a_shaped_floor_has_the_clusters_token_bucket_on_both_ends():
    names = floor.Names(
        "podnet-shapet-c", "podnet-shapet-s", "pnshapet-c", "pnshapet-s", "10.211.252.1", "10.211.252.2"
    )
    with floor.Floor(names=names, link_rate="1gbit"):
        for ns, dev in ((names.ns_client, names.link_client), (names.ns_server, names.link_server)):
            q = subprocess.run(
                ["tc", "-n", ns, "qdisc", "show", "dev", dev], capture_output=True, text=True
            ).stdout
            assert "tbf" in q and "rate 1Gbit" in q, q
    assert names.ns_client not in _namespaces()
