"""Latency under load in the report: the under_load figure (P50 and P99 against the load streams per
variant, their ratio to idle, the load carried) passes the layout checks and draws what
latency_under_load.csv says; it is left out, with the reason, where no test ran under load; the
notebooks' table has a row per variant, metric and point. Built from real outputs
(tests/underload_fixture.py: netperf TCP_RR as the probe, iperf3 -P 2 as the load). Also: the load's
per-second rates reach intervals.parquet and within_run.csv under the load's tool, and the parse
cache gives the same tables for such runs as a fresh parse."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from podnet.parse import parse_files
from podnet.parse.cache import parse_files_cached
from podnet.parse.raw import scan_raw_dir
from podnet.report import figures
from podnet.report import underload as table
from podnet.report.figures import check, grid, style
from podnet.report.figures.underload import streams_label
from tests import figures_data
from tests import underload_fixture as F

VARIANTS = {k: F.VARIANTS[k] for k in ("macvlan.iptables", "calico-vxlan.iptables", "cilium-vxlan.iptables")}
SETTINGS = {"comparisons": [{"by": "variant", "baseline": "macvlan.iptables"}]}


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    root = tmp_path_factory.mktemp("underload")
    raw = F.write_raw_campaign(root / "raw", repeats=5, variants=VARIANTS)
    return raw, figures_data.process(raw, root / "out", "ul", SETTINGS)


def test_the_figure_is_planned_drawn_and_passes_the_layout_checks(processed):
    _, out = processed
    t = figures.load(out)
    plan = figures.plan(t)
    assert "digest" in plan["under_load"], plan["under_load"]
    for name in figures.FIGURES:  # every figure of an under-load experiment, this one among them
        if "omitted" in plan[name]:
            continue
        fig = figures.FIGURES[name](t)
        found = check.problems(fig)
        w = fig.get_size_inches()[0]
        plt.close(fig)
        assert not found, f"{name}: {found[:5]}"
        assert w in (style.COLUMN, style.PAGE)


def test_the_figure_draws_latency_ratio_to_idle_and_load_carried_per_variant(processed):
    _, out = processed
    t = figures.load(out)
    with grid.specs_only():
        spec = figures.FIGURES["under_load"](t)
    titles = [p.title for p in spec.panels]
    assert len(titles) == 5, titles  # P50, P99, their ratios to idle, the load carried
    assert "Latency (p50" in titles[0] and "Latency (p99" in titles[1]
    assert titles[2].endswith("ratio to idle") and titles[3].endswith("ratio to idle")
    assert "load carried" in titles[4]
    assert spec.hue_order == list(VARIANTS)  # one colour per CNI, the baseline first
    assert {p.xlabel for p in spec.panels} == {"Load streams (client to server)"}
    p50 = spec.panels[0].rows
    assert sorted(set(p50["x"])) == [0, 1, 4, 8] and len(p50) == 3 * 4
    assert (p50["lo"] < p50["centre"]).all() and (p50["centre"] < p50["hi"]).all()
    ratio = spec.panels[2].rows
    assert (ratio.loc[ratio["x"] == 0, "centre"] == 1).all()
    at8 = ratio[ratio["x"] == 8]
    assert np.allclose(at8["centre"], F.FACTOR[8], rtol=0.1)
    assert (at8["lo"] <= at8["centre"]).all() and (at8["centre"] <= at8["hi"]).all()
    carried = spec.panels[4].rows
    assert sorted(set(carried["x"])) == [1, 4, 8] and (carried["centre"] > 0).all()
    u = t.under_load
    assert set(u["variant"]) == set(VARIANTS) and set(u["load_streams"]) == {0, 1, 4, 8}


def test_no_test_under_load_leaves_the_figure_out_with_the_reason(tmp_path):
    t = figures.load(figures_data.example("seed-raven", tmp_path))
    assert t.under_load.empty
    assert figures.plan(t)["under_load"] == {
        "omitted": "no test ran under load in this experiment (launch.tools.<tool>.tests[].load)"
    }


def test_the_direction_words_of_the_x_axis():
    assert streams_label(pd.Series(["", "forward"])) == "Load streams (client to server)"
    assert streams_label(pd.Series(["bidir-forward+bidir-reverse"])) == "Load streams (both ways)"
    assert streams_label(pd.Series(["reverse"])) == "Load streams (server to client)"
    assert streams_label(pd.Series([""], dtype=object)) == "Load streams"


def test_the_table_has_a_row_per_variant_metric_and_point(processed):
    _, out = processed
    t = figures.load(out)
    tab = table.table(t)
    assert list(tab.columns) == table.COLUMNS
    assert len(tab) == len(VARIANTS) * 2 * 4
    assert list(dict.fromkeys(tab["variant"])) == list(VARIANTS)
    idle = tab[tab["load streams"] == 0]
    assert set(idle["ratio to idle"]) == {"1 (idle)"} and set(idle["load carried"]) == {""}
    loaded = tab[tab["load streams"] > 0]
    assert (loaded["ratio CI"] != "–").all() and loaded["load carried"].str.endswith("bit/s").all()
    assert set(tab["pairs"]) == {5}
    text = table.markdown(t)
    assert text.count("\n") + 1 == len(VARIANTS) * 2 and "beside 8 load streams" in text
    assert table.table(figures.data.Tables(*(pd.DataFrame(),) * 4)).empty


def test_the_loads_rates_are_interval_rows_of_the_run_under_the_loads_tool(processed):
    _, out = processed
    iv = pd.read_parquet(out / "intervals.parquet")
    load = iv[iv["raw_path"].str.endswith(".load.json")]
    assert len(load) and set(load["metric"]) >= {"throughput"}
    tidy = pd.read_parquet(out / "tidy.parquet")
    assert set(load["run_id"]) <= set(tidy.loc[tidy["role"] == "load", "run_id"])
    wr = pd.read_csv(out / "within_run.csv")
    mine = wr[wr["raw_path"].str.endswith(".load.json")]
    assert len(mine) and set(mine["tool"]) == {"iperf3"}


def test_the_parse_cache_gives_a_fresh_parses_tables_for_load_runs(processed, tmp_path):
    raw, _ = processed
    good, bad = scan_raw_dir(raw)
    fresh = parse_files([*good, *bad], raw, "ul")
    for _ in range(2):  # filling the cache, then reading from it
        cached = parse_files_cached([*good, *bad], raw, "ul", tmp_path / "cache" / "shard-0")
        for part in ("tidy", "intervals", "failed"):
            a, b = getattr(fresh, part), getattr(cached, part)
            pd.testing.assert_frame_equal(
                a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False
            )
    assert (fresh.tidy["role"] == "load").any() and fresh.failed.empty
