"""Experiments for the figure and findings tests, built from real tool outputs (tests/fixtures/):
the seed examples as they are, one with repeats and two variants (intervals, dots, a
different and a not-different comparison), and one at the main experiment's scale."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from podnet import stats
from podnet.parse import parse_experiment
from podnet.parse.raw import write_raw
from tests.conftest import FIXTURES, REPO

EXAMPLES = ["seed-raven", "seed-cni-1gbe", "seed-qperf", "seed-cni-report"]

# real outputs: iperf3 TCP forward throughput (bit/s) and ping RTTs, reused as repeats
TCP = ["tcp-forward.txt", "tcp-omit.txt", "tcp-timestamps.txt", "tcp-forward.json"]
PING = ["loopback-flood.txt", "loopback-plain.txt", "seed000-flood.txt", "seed001-replies-only.txt"]


def process(raw: Path, out: Path, experiment: str, stats_settings: dict | None = None) -> Path:
    """parse + stats of ``raw`` into ``out`` (what the pipeline writes, without Snakemake)."""
    out.mkdir(parents=True, exist_ok=True)
    parsed = parse_experiment(raw, experiment, ignore=["published"])
    parsed.tidy.to_parquet(out / "tidy.parquet")
    parsed.intervals.to_parquet(out / "intervals.parquet")
    parsed.failed.to_csv(out / "failed_runs.csv", index=False)
    stats.run(out / "tidy.parquet", out, stats_settings or {}, intervals_path=out / "intervals.parquet")
    return out


def example(name: str, root: Path) -> Path:
    cfg = yaml.safe_load((REPO / f"config/examples/{name}.yaml").read_text())
    return process(REPO / cfg.get("raw_dir", f"raw/{name}"), root / name, name, cfg.get("stats"))


def _write(raw: Path, variant: str, scenario: str, tool: str, test: str, repeat: int, fixture: str) -> None:
    src = FIXTURES / tool / fixture
    meta = {"tool": tool, "variant": variant, "scenario": scenario, "test": test, "repeat": repeat}
    write_raw(
        raw / variant / scenario / f"{tool}-{test}" / f"r{repeat:03d}{src.suffix}", src.read_bytes(), meta
    )


def _write_ping(raw: Path, variant: str, scenario: str, repeat: int, us: float) -> None:
    """An iputils ping output of 3 replies around ``us`` microseconds (median ``us``): ping's headline,
    ``rtt_median``, needs the per-packet lines that the flood and excerpt fixtures lack."""
    times = [us * 0.9, us, us * 1.1]
    lines = ["PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data."]
    lines += [
        f"64 bytes from 10.0.0.2: icmp_seq={i + 1} ttl=64 time={t / 1000:.3f} ms" for i, t in enumerate(times)
    ]
    ms = [round(t / 1000, 3) for t in times]
    mean = sum(ms) / 3
    mdev = (sum((x - mean) ** 2 for x in ms) / 3) ** 0.5
    lines += [
        "",
        "--- 10.0.0.2 ping statistics ---",
        "3 packets transmitted, 3 received, 0% packet loss, time 2003ms",
        f"rtt min/avg/max/mdev = {min(ms):.3f}/{mean:.3f}/{max(ms):.3f}/{mdev:.3f} ms",
    ]
    meta = {"tool": "ping", "variant": variant, "scenario": scenario, "test": "plain", "repeat": repeat}
    write_raw(raw / variant / scenario / "ping-plain" / f"r{repeat:03d}.txt", "\n".join(lines) + "\n", meta)


def with_repeats(root: Path) -> Path:
    """Two paths x two variants, 3-4 repeats each: intervals, dots, one clear difference
    (iperf3 throughput) and one the data cannot resolve (ping RTT)."""
    raw = root / "raw-repeats"
    hh_tcp = {"bridge": [0, 1, 2, 0], "vxlan": [1, 2, 0, 1]}  # 27, 24.5, 22 Gbit/s
    pp_tcp = {"bridge": [3, 3, 3], "vxlan": [3, 3, 3]}  # 14.7 Gbit/s
    for variant in ("bridge", "vxlan"):
        for k, i in enumerate(hh_tcp[variant]):
            _write(raw, variant, "host-host", "iperf3", "tcp", k + 1, TCP[i])
            _write_ping(raw, variant, "host-host", k + 1, (37, 65)[k % 2])
        for k, i in enumerate(pp_tcp[variant]):
            _write(raw, variant, "pod-pod", "iperf3", "tcp", k + 1, TCP[i])
            _write_ping(raw, variant, "pod-pod", k + 1, (222, 65, 2)[k])
    settings = {
        "comparisons": [{"by": "scenario", "baseline": "host-host"}],
        "multiple_comparisons": {"family": ["experiment", "metric"]},
        "primary": [{"by": "scenario", "baseline": "host-host", "tests": ["iperf3:tcp", "ping:plain"]}],
    }
    return process(raw, root / "repeats", "repeats", settings)


def at_scale(root: Path, paths: int = 20, tests: int = 12) -> Path:
    """The main experiment's shape (about 20 paths x 12 tests), 3 repeats, ratios against host-host."""
    raw = root / "raw-scale"
    names = ["host-host"] + [f"path-{i:02d}" for i in range(1, paths)]
    for i, scen in enumerate(names):
        for j in range(tests):
            tool, files = ("iperf3", TCP) if j % 2 == 0 else ("ping", PING)
            for k in range(3):
                _write(raw, "bridge", scen, tool, f"t{j}", k + 1, files[(i + j + k) % 4])
    settings = {"comparisons": [{"by": "scenario", "baseline": "host-host"}]}
    return process(raw, root / "scale", "scale", settings)


def variants_at_scale(root: Path, paths: int = 19, tests: int = 15) -> Path:
    """A CNI campaign's shape (make compare): four variants with long names x about 20 paths x 15
    tests, ratios against host-host and against the first variant (the variants figure's x labels
    name it)."""
    raw = root / "raw-variants"
    variants = [
        "bridge.iptables",
        "flannel-vxlan.iptables",
        "flannel-host-gw.iptables",
        "flannel-vxlan.nftables",
    ]
    names = ["host-host"] + [f"path-{i:02d}" for i in range(1, paths)]
    for v, variant in enumerate(variants):
        for i, scen in enumerate(names):
            for j in range(tests):
                tool, files = ("iperf3", TCP) if j % 2 == 0 else ("ping", PING)
                for k in range(3):
                    _write(raw, variant, scen, tool, f"t{j}", k + 1, files[(i + j + k + v) % 4])
    settings = {
        "comparisons": [
            {"by": "scenario", "baseline": "host-host"},
            {"by": "variant", "baseline": variants[0]},
        ],
        # like the main experiment: a declared primary family of three tests
        "primary": [
            {"by": "scenario", "baseline": "host-host", "tests": ["iperf3:t0", "ping:t1", "iperf3:t2"]}
        ],
    }
    return process(raw, root / "variants", "variants", settings)


def clean(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
