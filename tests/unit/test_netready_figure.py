"""Time to network in the report: the net_ready figure (P50, P90 and P99 per variant ranked by P50,
each variant over the baseline variant with what resolves, the P50 of each step) passes the layout
checks and draws what net_ready.csv and net_ready_ratios.csv say; it is left out, with the reason,
without netready runs; the notebooks' tables and the findings' sentences. Synthetic per-pod rows
(tests/netready_data.py) through the stats stage."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from podnet import stats
from podnet.report import figures, findings, netready
from podnet.report.figures import check, grid, style
from podnet.report.figures.netready import NO_RUNS, step_label
from tests import figures_data
from tests.netready_data import STEP_SHARES, pod_tidy

BASE = "macvlan.iptables"
LEVELS = {BASE: 1.0, "calico-vxlan.iptables": 1.6, "cilium-vxlan.iptables": 1.3}
RANKED = [BASE, "cilium-vxlan.iptables", "calico-vxlan.iptables"]
SETTINGS = {"comparisons": [{"by": "variant", "baseline": BASE}], "bootstrap": {"resamples": 1000}}


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    root = tmp_path_factory.mktemp("netready")
    pod_tidy(LEVELS, runs=6, pods=20, steps=True).to_parquet(root / "tidy.parquet")
    stats.run(root / "tidy.parquet", root, SETTINGS, cache=False)
    return root


def test_the_figure_is_planned_drawn_and_passes_the_layout_checks(processed):
    t = figures.load(processed)
    plan = figures.plan(t)
    assert "digest" in plan["net_ready"], plan["net_ready"]
    fig = figures.FIGURES["net_ready"](t)
    found = check.problems(fig)
    w = fig.get_size_inches()[0]
    plt.close(fig)
    assert not found, found[:5]
    assert w in (style.COLUMN, style.PAGE)


def test_the_figure_ranks_the_variants_by_p50_and_marks_what_is_different(processed):
    t = figures.load(processed)
    with grid.specs_only():
        spec = figures.FIGURES["net_ready"](t)
    assert [p.title for p in spec.panels] == [
        "P50 time to network",
        "P90 time to network",
        "P99 time to network",
        f"P90, ratio to {BASE}",
        f"P90 datapath (first reply from the pod), ratio to {BASE}",
        "P50 of each step",
    ]
    assert spec.title == "Time to network · pod-pod-cross-node · burst: 20 pods at once"
    assert spec.y_order[:3] == RANKED and set(LEVELS) <= set(spec.hue_order)
    u = t.net_ready
    want = u[(u["metric"] == "net_ready_s") & (u["estimand"] == "p50")].set_index("variant")
    p50 = spec.panels[0].rows.set_index("y")
    assert np.allclose(p50.loc[want.index, "centre"], want["value"])  # seconds: shown as they are
    assert (p50["lo"] <= p50["centre"]).all() and (p50["centre"] <= p50["hi"]).all()
    assert len(spec.panels[0].dots) == len(LEVELS) * 6  # each run's own P50
    assert {p.centre for p in spec.panels if not p.ratio} == {"percentile of the pooled pods"}
    ratio = spec.panels[3].rows.set_index("y")
    assert set(ratio.index) == set(RANKED[1:]) and spec.panels[3].ratio
    assert bool(ratio.loc["calico-vxlan.iptables", "different"])
    # drawn filled: the grid reads a row's different as `is True`
    assert [r["different"] is True for _, r in spec.panels[3].rows.iterrows() if r["y"] == RANKED[2]] == [
        True
    ]
    assert ratio.loc["calico-vxlan.iptables", "lo"] > 1
    steps = spec.panels[5].rows
    assert set(steps["y"]) == {step_label(m) for m in [*STEP_SHARES, "net_ready_s"]}
    assert len(steps) == len(LEVELS) * (len(STEP_SHARES) + 1)


def test_no_netready_runs_leave_the_figure_out_with_the_reason(tmp_path):
    t = figures.load(figures_data.example("seed-raven", tmp_path))
    assert t.net_ready.empty
    assert figures.plan(t)["net_ready"] == {"omitted": NO_RUNS}


@pytest.mark.parametrize(
    "runs, key",
    [
        (4, "percentile of the pooled pods, 95 % CI"),  # a P50 interval from 4 runs
        (3, "percentile of the pooled pods (too few runs for an interval)"),
    ],
)
def test_one_variant_has_no_ratio_panels_and_its_key_says_what_a_point_is(tmp_path, runs, key):
    pod_tidy({"bridge": 1.0}, runs=runs, pods=5).to_parquet(tmp_path / "tidy.parquet")
    stats.run(tmp_path / "tidy.parquet", tmp_path, {"bootstrap": {"resamples": 200}}, cache=False)
    t = figures.load(tmp_path)
    assert t.net_ready_ratios.empty
    fig = figures.FIGURES["net_ready"](t)
    labels = [x.get_text() for leg in fig.legends for x in leg.get_texts()]
    found = check.problems(fig)
    plt.close(fig)
    assert not found, found[:5]
    assert key in labels
    assert not any("resolved" in x for x in labels)


def test_the_tables_and_the_sentences(processed):
    t = figures.load(processed)
    tab = netready.table(t)
    assert list(tab.columns) == netready.COLUMNS and list(tab["variant"]) == [
        v for v in RANKED for _ in (0, 1)
    ]
    assert list(tab["time"][:2]) == list(netready.TIMES.values())  # the API-visible time, then the datapath's
    assert set(tab["runs"]) == {6} and set(tab["pods"]) == {120}
    assert tab["P50"].str.endswith(" s").all() and (tab["P50 95 % CI"] != "–").all()
    assert (tab["P90 95 % CI"] == "–").all() and (tab["P99 95 % CI"] == "–").all()
    assert tab["note"].str.contains("P90: a point").all() and tab["note"].str.contains("P99: a point").all()
    rt = netready.ratio_table(t)
    assert list(rt.columns) == netready.RATIO_COLUMNS and len(rt) == 2 * 2 * 3
    assert list(rt["variant"][:6]) == [RANKED[1]] * 3 + [RANKED[2]] * 3
    calico = rt[(rt["variant"] == "calico-vxlan.iptables") & (rt["percentile"] == "P90")]
    assert list(calico["different"]) == ["yes", "yes"] and set(calico["runs"]) == {"6 / 6, 6 rounds"}
    assert set(rt.loc[rt["percentile"] != "P90", "different"]) == {"(exploratory)"}
    steps = netready.steps_table(t)
    assert list(steps["variant"]) == RANKED and "IP" in steps.columns
    text = netready.markdown(t)
    assert "fastest P50 first" in text and "of 4 family rows" in text and "(a point)" in text
    assert text.index(f"{BASE}: P50") < text.index("calico-vxlan.iptables: P50")
    assert "calico-vxlan.iptables P90 (API-visible (net_ready_s)) is" in text and "): different" in text
    assert "resolve" not in text
    assert text in findings.markdown(t)
    assert netready.markdown(figures.data.Tables(*(pd.DataFrame(),) * 4)) == ""
    assert netready.table(figures.data.Tables(*(pd.DataFrame(),) * 4)).empty
