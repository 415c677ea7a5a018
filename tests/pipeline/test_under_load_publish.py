"""The under-load campaign's publishing step end to end, without a cluster: a synthetic raw campaign
of the five CNIs (real netperf TCP_RR and iperf3 outputs with values set: tests/underload_fixture.py)
published with the campaign's own publish config (podnet.launch.campaign.run.publish_config), as
`make compare CAMPAIGN=config/campaigns/under-load.yaml` publishes after its launch: the per-CNI
table of TCP_RR P50 and P99 at 0, 1, 4 and 8 streams with intervals and ratios to idle, the CNI
comparisons per load point, the under_load figure, and the report and compare notebooks with them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from podnet.launch.campaign import run as campaign
from tests import underload_fixture as F
from tests.conftest import REPO
from tests.workflow_runs import snakemake

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("underload")
    raw = F.write_raw_campaign(tmp / "raw", repeats=4)
    cfg = campaign.publish_config(campaign.load(REPO / "config" / "campaigns" / "under-load.yaml"))
    cfg.update(experiment="under-load-fixture", raw_dir=str(raw), processed_dir=str(tmp / "out"))
    cfg["parse"] = {"shards": 2}
    cfg["report"]["notebooks"] = ["report", "compare"]
    path = tmp / "publish.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake(path)
    return path, tmp / "out"


def test_the_table_has_every_cni_at_every_load_point_with_intervals(published):
    _, out = published
    u = pd.read_csv(out / "latency_under_load.csv")
    for metric in ("latency_p50", "latency_p99"):
        m = u[u["metric"] == metric]
        assert set(zip(m["variant"], m["load_streams"])) == {(v, n) for v in F.VARIANTS for n in F.FACTOR}
        assert (m["ci_low"] < m["centre"]).all() and (m["centre"] < m["ci_high"]).all()
        loaded = m[m["load_streams"] > 0]
        assert loaded[["ratio_to_idle", "ratio_low", "ratio_high"]].notna().all().all()
        assert (loaded["n_pairs"] == 4).all() and (loaded["load_throughput"] > 0).all()
        at8 = loaded[loaded["load_streams"] == 8]
        assert np.allclose(at8["ratio_to_idle"], F.FACTOR[8], rtol=0.15)
    assert (u.loc[u["load_streams"] == 0, "ratio_to_idle"] == 1).all()


def test_each_cni_is_compared_with_macvlan_at_each_load_point(published):
    _, out = published
    v = pd.read_csv(out / "variants.csv")
    v = v[(v["design"] == "side-by-side") & (v["tool"] == "netperf") & (v["metric"] == "latency_p99")]
    assert set(v["test"]) == {f"tcp_rr-load_streams-{n}" for n in F.FACTOR}
    assert set(v["variant"]) == set(F.VARIANTS) - {"macvlan.iptables"}
    primary = v[v["role"] == "primary"]
    # the declared family: one P99 row per CNI under 8 streams, everything else exploratory
    assert set(primary["test"]) == {"tcp_rr-load_streams-8"} and len(primary) == 4
    assert (primary["n_pairs"] == 4).all()
    assert set(primary["p_test"]) == {"t"}  # 4 pairs cannot pass Holm's first step by the exact p
    allv = pd.read_csv(out / "variants.csv")
    assert allv["p_adjusted"].notna().sum() == 4  # Holm over these 4 rows only


def test_the_figure_is_published_and_the_notebooks_show_it_with_the_table(published):
    _, out = published
    plan = json.loads((out / "figures" / "plan.json").read_text())
    assert plan["under_load"] == {"planned": True}
    for ext in ("png", "svg", "pdf"):
        assert (out / "figures" / f"under_load.{ext}").stat().st_size > 0
    report = (out / "notebooks" / "report.ipynb").read_text()
    assert "**under_load**" in report
    compare = (out / "notebooks" / "compare.ipynb").read_text()
    assert "## Latency under load" in compare and "ratio to idle" in compare and "image/png" in compare
    assert "beside 8 load streams" in compare
    for nb in ("report", "compare"):
        assert (out / "notebooks" / f"{nb}.html").stat().st_size > 0


def test_nothing_to_do_on_a_second_run(published):
    path, _ = published
    assert "Nothing to be done" in snakemake(path, "-n")
