"""After `make compare-ci`: the CI-sized CNI campaign published one comparison of its variants.

Reads raw/cni-ci/ and processed/cni-ci/ (no cluster needed: the campaign took it down). Skipped
when the campaign has not run, unless PODNET_REQUIRE_CLUSTER=1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from podnet.launch.campaign import run as campaign

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "config" / "campaigns" / "cni-ci.yaml"


@pytest.fixture(scope="module")
def published():
    if Path.cwd().resolve() != REPO:
        pytest.skip("run from the repository root (the campaign's paths are relative to it)")
    c = campaign.load(CONFIG)
    out = REPO / "processed" / c.name
    if not (out / "ratios.csv").exists():
        if os.environ.get("PODNET_REQUIRE_CLUSTER") == "1":
            pytest.fail(f"{out}/ratios.csv missing: make compare-ci did not publish")
        pytest.skip("the CI campaign has not run (make compare-ci)")
    import pandas as pd

    return c, pd.read_csv(out / "summary.csv"), pd.read_csv(out / "ratios.csv")


def test_every_variant_ran_every_case(published):
    c, summary, _ = published
    for v in c.variants:
        assert campaign.missing_runs(c, v) == 0, v.name
        sidecars = list((REPO / "raw" / c.name / v.name).rglob("*.meta.yaml"))
        assert sidecars, v.name
    assert set(summary["variant"]) == {v.name for v in c.variants}


def test_sidecars_record_the_cluster_variant(published):
    """Every run's sidecar names the variant, the CNI and the datapath it ran on (pod MTU 1450 and
    the VXLAN encapsulation under flannel-vxlan), and kube-proxy's mode."""
    import yaml

    c, _, _ = published
    for v in c.variants:
        for side in (REPO / "raw" / c.name / v.name / "pod-pod-cross-node").rglob("*.meta.yaml"):
            doc = yaml.safe_load(side.read_text())
            assert doc["variant"] == v.name, side
            cluster = doc["cluster"]
            assert cluster["cni"] == v.cni
            emb = cluster["embedded"]
            assert emb["kube_proxy_mode"] == v.proxy
            vxlan = v.cni == "flannel-vxlan"
            assert emb["pod_mtu"] == (1450 if vxlan else 1500)
            assert ("vxlan backend (flannel.1, VNI 1, UDP 8472)" in emb["cni_datapath"]) == vxlan
            assert json.dumps(doc).count('"mtu": 1450') == (2 if vxlan else 0), side  # client and server pods


def test_variant_ratios_against_the_baseline(published):
    c, _, ratios = published
    by_variant = ratios[ratios["by"] == "variant"]
    assert set(by_variant["baseline"]) == {c.baseline}
    assert set(by_variant["treatment"]) == {v.name for v in c.variants[1:]}
    # every treatment has a throughput ratio for pod-pod across nodes, with an interval
    tput = by_variant[
        (by_variant["scenario"] == "pod-pod-cross-node")
        & (by_variant["tool"] == "iperf3")
        & (by_variant["metric"] == "throughput")
    ]
    assert set(tput["treatment"]) == {v.name for v in c.variants[1:]}
    assert tput["ratio"].gt(0).all()
    assert tput["ci_low"].notna().all() and tput["ci_high"].notna().all()
    assert (tput["ci_low"] <= tput["ratio"]).all() and (tput["ratio"] <= tput["ci_high"]).all()


def test_netperf_latency_percentiles_in_summary(published):
    _, summary, _ = published
    rr = summary[(summary["tool"] == "netperf") & (summary["test"] == "TCP_RR")]
    assert not rr.empty
    for m in ("latency_p50", "latency_p90", "latency_p99"):
        assert m in set(rr["metric"]), sorted(set(rr["metric"]))
    # through the ClusterIP Service too
    assert "pod-svc-cross-node" in set(rr["scenario"])
