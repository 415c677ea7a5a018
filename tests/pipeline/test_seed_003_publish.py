"""The seed-003 campaign's publishing step end to end, without a cluster: a synthetic raw campaign
(real tools' output shapes, tests/vs_seed_fixture.py) published with the campaign's own publish
config (podnet.launch.campaign.publish_config), so parse, stats, the vs_seed rule, its figure and
the vs_seed and compare notebooks run as `make compare CAMPAIGN=config/campaigns/seed-003.yaml`
runs them after its launches; seed 003's numbers come from the real raw/seed-cni-report."""

from __future__ import annotations

import pytest
import yaml

from podnet.launch import campaign
from podnet.report import vs_seed
from tests import vs_seed_fixture as F
from tests.conftest import REPO
from tests.workflow_runs import snakemake

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed003")
    raw = F.write_raw(tmp / "raw")
    cfg = campaign.publish_config(campaign.load(REPO / "config" / "campaigns" / "seed-003.yaml"))
    cfg.update(experiment="seed-003-fixture", raw_dir=str(raw), processed_dir=str(tmp / "out"))
    # the fixture has host-host (the campaign does not run it): vs_seed's ratios to it
    cfg["stats"]["comparisons"].insert(0, {"by": "scenario", "baseline": "host-host"})
    cfg["parse"] = {"shards": 1}
    cfg["report"]["notebooks"] = ["compare", "vs_seed"]
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
    assert set(g["ranking"]) == {"disagrees"}
    # the fixture has no cilium; seed paths the campaign does not run have no counterpart
    cil = t[t["seed_cni"] == "cilium-vxlan"]
    assert set(cil.loc[cil["path"] == "pod-pod-cross-node", "status"]) == {"not run here"}
    assert set(cil.loc[cil["path"] == "node-service-cross-node", "status"]) == {"no counterpart path"}
    sriov = t[t["seed_cni"] == "sriov-standalone"]
    assert set(sriov.loc[sriov["path"] == "pod-pod-cross-node", "status"]) == {"no counterpart"}
    text = (out / "notebooks" / "vs_seed.ipynb").read_text()
    assert "rankings with two CNIs or more in both seed 003 and podnet" in text
    assert (out / "notebooks" / "vs_seed.html").stat().st_size > 0


def test_nothing_to_do_on_a_second_run(published):
    path, _ = published
    assert "Nothing to be done" in snakemake(path, "-n")
