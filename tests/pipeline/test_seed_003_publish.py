"""The seed-003 campaign's publishing step end to end, without a cluster: a synthetic raw campaign
(real tools' output shapes, tests/vs_seed_fixture.py) published with the campaign's own publish
config (podnet.launch.campaign.run.publish_config), so parse, stats, the vs_seed rule, its figure and
the vs_seed and compare notebooks run as `make compare CAMPAIGN=config/campaigns/seed-003-unshaped.yaml`
runs them after its launches (that file derives from seed-003.yaml, `base:`, the same design at 10
Gbit/s under the same variant names, the fixture's); seed 003's numbers come from the real
raw/seed-cni-report."""

from __future__ import annotations

import pytest
import yaml

from podnet.launch.campaign import run as campaign
from podnet.report import ranking, vs_seed
from podnet.stats import ranking as stats_ranking
from tests import vs_seed_fixture as F
from tests.conftest import REPO
from tests.workflow_runs import snakemake

pytestmark = pytest.mark.pipeline


#: stats.ranking for seed 003: its headline measures on every path (iperf3 and the netperf latencies)
RANKING = {
    "measures": [
        "iperf3:tcp:throughput",
        "netperf:TCP_RR:latency_p50",
        "netperf:TCP_RR:latency_mean",
        "netperf:TCP_CRR:latency_p50",
        "netperf:TCP_CRR:latency_mean",
    ],
    "equivalence_margin": 0.05,
}


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed003")
    raw = F.write_raw(tmp / "raw")
    cfg = campaign.publish_config(campaign.load(REPO / "config" / "campaigns" / "seed-003-unshaped.yaml"))
    cfg.update(experiment="seed-003-fixture", raw_dir=str(raw), processed_dir=str(tmp / "out"))
    # the fixture has host-host (the campaign does not run it): vs_seed's ratios to it
    cfg["stats"]["comparisons"].insert(0, {"by": "scenario", "baseline": "host-host"})
    cfg["parse"] = {"shards": 1}
    cfg["report"]["notebooks"] = ["compare", "vs_seed"]
    # the campaign's stats.ranking as the lead adds it at merge (RANKING below)
    cfg["stats"]["ranking"] = RANKING
    path = tmp / "publish.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(path)
    return path, tmp / "out"


def test_publishes_the_table_figure_and_notebook(published):
    _, out = published
    for f in ("vs_seed.csv", "figures/vs_seed.png", "figures/vs_seed.svg", "figures/vs_seed.pdf"):
        assert (out / f).stat().st_size > 0, f
    t = vs_seed.read(out / "vs_seed.csv")
    assert list(t.columns) == vs_seed.COLUMNS
    # the seed's order of paths, seed 003's published value beside ours
    assert list(dict.fromkeys(t["path"]))[:2] == ["node-node", "pod-node-same-node"]
    r = t[
        (t["path"] == "pod-pod-cross-node")
        & (t["seed_cni"] == "macvlan-standalone")
        & (t["metric"] == "throughput")
    ]
    r = r[r["tool"] == "iperf3"].iloc[0]
    assert r["seed_value"] == pytest.approx(9.18e9) and r["status"] == "both"
    assert r["ratio_ci_low"] < r["ratio"] < r["ratio_ci_high"] and r["ratio"] == pytest.approx(
        8.5 / 9.0, rel=0.05
    )
    g = t[(t["path"] == "pod-pod-cross-node") & (t["tool"] == "iperf3")]
    assert set(g["ranking"]) == {"agrees"}
    g = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "latency_p50") & (t["test"] == "TCP_RR")]
    assert set(g["ranking"]) == {"contradicts"}
    o = vs_seed.read_orders(out / "vs_seed_orders.csv")
    assert list(o.columns) == vs_seed.ORDER_COLUMNS
    r = o[(o["path"] == "pod-pod-cross-node") & (o["tool"] == "iperf3")].iloc[0]
    assert (r["a"], r["b"], r["status"]) == ("macvlan.iptables", "calico-vxlan.iptables", "agrees")
    assert r["n_pairs"] == 3 and r["ratio"] == pytest.approx(8.5 / 4.0, rel=0.05)
    # the fixture has no cilium; seed paths the campaign does not run have no counterpart
    cil = t[t["seed_cni"] == "cilium-vxlan"]
    assert set(cil.loc[cil["path"] == "pod-pod-cross-node", "status"]) == {"not run here"}
    assert set(cil.loc[cil["path"] == "node-service-cross-node", "status"]) == {"no counterpart path"}
    sriov = t[t["seed_cni"] == "sriov-standalone"]
    assert set(sriov.loc[sriov["path"] == "pod-pod-cross-node", "status"]) == {"no counterpart"}
    text = (out / "notebooks" / "vs_seed.ipynb").read_text()
    assert "rankings with two CNIs or more in both seed 003 and podnet" in text
    assert (out / "notebooks" / "vs_seed.html").stat().st_size > 0


def test_publishes_the_ranking_and_its_figure(published):
    _, out = published
    for f in ("ranking.csv", "figures/ranking.png", "figures/ranking.svg", "figures/ranking.pdf"):
        assert (out / f).stat().st_size > 0, f
    t = ranking.read(out / "ranking.csv")
    assert list(t.columns) == stats_ranking.COLUMNS
    # the fixture's iperf3 throughput on pod-pod-cross-node: macvlan 8.5 > bridge 7.0 > calico-vxlan 4.0 Gbit/s
    v = t[(t["row"] == "variant") & (t["scenario"] == "pod-pod-cross-node") & (t["tool"] == "iperf3")]
    v = v.sort_values("position")
    assert list(v["variant"]) == ["macvlan.iptables", "bridge.iptables", "calico-vxlan.iptables"]
    assert list(v["group"]) == [1, 2, 3] and set(v["other"]) == {"macvlan.iptables"}
    p = t[(t["row"] == "pair") & (t["scenario"] == "pod-pod-cross-node") & (t["tool"] == "iperf3")]
    assert len(p) == 3 and set(p["relation"]) == {"ordered"} and set(p["n_pairs"]) == {3}
    # TCP_RR P50 (lower is better): calico-vxlan 55 < macvlan 70 < bridge 75 us
    v = t[(t["row"] == "variant") & (t["scenario"] == "pod-pod-cross-node") & (t["metric"] == "latency_p50")]
    assert list(v.sort_values("position")["variant"])[0] == "calico-vxlan.iptables"
    # host-host: the same 9 Gbit/s under every CNI: no order
    hh = t[(t["row"] == "pair") & (t["scenario"] == "host-host") & (t["tool"] == "iperf3")]
    assert "ordered" not in set(hh["relation"])
    assert t["p_holm"].notna().sum() == (t["row"] == "pair").sum()
    text = (out / "notebooks" / "vs_seed.ipynb").read_text()
    assert "**Ranking** (ranking.csv)" in text and "Of " in text and "orders between two CNIs" in text


def test_nothing_to_do_on_a_second_run(published):
    path, _ = published
    assert "Nothing to be done" in snakemake(path, "-n")
