"""Seed imports: the raw figures the seeds pasted reach the tidy table in SI, and podnet.report.seed_reports lists
every place where seed 001's conclusion table (and the raw outputs themselves) disagree."""

import pytest

from podnet.parse import parse_files
from podnet.parse.raw import find_raw_files
from podnet.report import seed_reports as seeds
from tests.conftest import REPO


def processed(tmp_path, exp):
    raw = REPO / "raw" / exp
    p = parse_files(find_raw_files(raw), raw, exp)
    p.tidy.to_parquet(tmp_path / "tidy.parquet")
    p.failed.to_csv(tmp_path / "failed_runs.csv", index=False)
    return p


def value(t, **sel):
    rows = t
    for k, v in sel.items():
        rows = rows[rows[k] == v]
    return rows["value"].tolist()


def test_seed_cni_1gbe_raw_figures(tmp_path):
    t = processed(tmp_path, "seed-cni-1gbe").tidy
    assert value(t, variant="physical", tool="iperf2", test="tcp", metric="throughput") == [942e6]
    assert value(t, variant="calico", tool="ab", metric="requests_per_second") == [10031.23]
    assert value(t, variant="physical", tool="iperf2", test="udp", metric="loss", repeat=1) == pytest.approx(
        [7469 / 4139126]
    )
    assert value(t, variant="neutron", tool="iperf2", metric="sender_throughput") == [810e6]
    assert (
        value(t, variant="neutron", tool="iperf2", metric="throughput") == []
    )  # no server report: not invented
    assert set(t["scenario"]) == {"cross-node"}


def test_seed_qperf_raw_figures(tmp_path):
    t = processed(tmp_path, "seed-qperf").tidy
    same = t[t.scenario == "pod-pod-same-node"]
    assert value(same, test="tcp_bw", metric="throughput") == pytest.approx([3.24e9 * 8])
    assert value(same, test="tcp_lat", metric="latency") == pytest.approx([17.3e-6])
    assert value(t[t.scenario == "host-host"], test="tcp_bw", metric="send_cost") == pytest.approx([2.26e-9])
    assert set(t["scenario"]) == {
        "host-host",
        "pod-pod-same-node",
        "pod-pod-cross-node",
        "pod-host",
        "host-pod",
        "pod-other-host",
    }


def test_seed001_conclusion_table_discrepancies(tmp_path):
    processed(tmp_path, "seed-cni-1gbe")
    d = seeds.discrepancies(tmp_path, REPO / "raw/seed-cni-1gbe")
    claims = d[d.kind == "summary vs raw"]
    found = {(r.variant, r.metric, r.status) for r in claims.itertuples()}
    assert found == {
        ("neutron", "throughput", "no raw output"),  # 907Mb/s: only a UDP sender figure (810) was pasted
        ("flannel-vxlan", "rtt_avg", "disagrees"),  # 0.727158ms vs the pasted 0.379456ms
        ("flannel-vxlan", "requests_per_second", "disagrees"),  # calico's 10031.23
        ("flannel-vxlan", "time_per_request", "disagrees"),  # calico's 4.886
        ("calico", "requests_per_second", "disagrees"),  # flannel's 10804.44
        ("calico", "time_per_request", "disagrees"),  # 4.628 vs 4.886
    }
    swapped = claims[claims.detail.str.contains("raw value")]
    assert set(swapped.variant) == {"flannel-vxlan", "calico"}
    itself = d[d.kind == "raw vs itself"]
    assert {(r.variant, r.tool, r.metric) for r in itself.itertuples()} >= {
        ("calico", "ab", "requests_per_second"),  # 90000 / 8.330 s = 10804.3, printed 10031.23
        ("flannel-vxlan", "ab", "requests_per_second"),
        ("flannel-vxlan", "iperf2", "throughput"),  # 6.28 GBytes in 60 s is 899 Mbit/s, printed 910
        ("flannel-vxlan", "iperf2", "peer"),  # connected with calico's pod IP
        ("ovs-vxlan", "ab", "server"),  # Benchmarking 172.16.61.3, Server Hostname 172.16.80.2
    }
    assert not ((itself.variant == "physical") | (itself.variant == "neutron")).any()


def test_seed_qperf_conf_conflicts(tmp_path):
    processed(tmp_path, "seed-qperf")
    d = seeds.discrepancies(tmp_path, REPO / "raw/seed-qperf")
    assert set(d["metric"]) == {"conf os", "conf qperf"} and set(d["published"]) == {"k8s-node-3"}


def test_tolerance_is_the_printed_precision():
    assert seeds.half_ulp("4.886") == pytest.approx(0.0005)
    assert seeds.half_ulp("942") == 0.5
    assert seeds.scalar_lines("$ ping x | gawk '...'\n0.747789ms\n") == [(pytest.approx(0.747789e-3), "s")]
