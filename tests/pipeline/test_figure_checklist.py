"""Figures a reviewer accepts without edits (issue 45): the checklist over every figure the seed
examples publish and over the main experiment's figures drawn from its tables.

``podnet.report.figures.check.checklist`` looks at the matplotlib figure as the saver writes it: no
two legend entries (or series of one panel) alike in colour and marker, no text cut at the image
edge, every log axis named as one. The examples' tables are built as the pipeline builds them
(``build_tables``: parse shards, combine, stats); the published set is the figure plan's. The main
experiment's shape (19 paths in the costs figure, 15 panels of long path names) is rebuilt in memory
so the checks run without a cluster; a finished main experiment at ``PODNET_MAIN_PROCESSED`` (default
``/tmp/old/processed-cluster-paths``) is checked too when it is there.

Beside the checklist, the rules issue 45 adds to the figures: a point without an interval offers no
interval in the key; two figures that would draw the same comparisons are published once, the plan
saying why; a loss-dominated UDP rate is shown with its loss and never as a ratio; a measure printed
coarser than its spread is left out of the headline figures, the plan saying why.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from podnet.report import figures
from podnet.report.figures import check, data
from tests.conftest import REPO
from tests.pipeline.test_examples_golden import EXAMPLES, build_tables

pytestmark = pytest.mark.pipeline

MAIN = Path(os.environ.get("PODNET_MAIN_PROCESSED", "/tmp/old/processed-cluster-paths"))


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request, tmp_path_factory) -> tuple[str, data.Tables]:
    """A seed example's processed tables, built as the pipeline builds them."""
    out = tmp_path_factory.mktemp(request.param)
    cwd = os.getcwd()
    os.chdir(REPO)  # raw paths relative to the repository, as Snakemake runs
    try:
        build_tables(request.param, out)
    finally:
        os.chdir(cwd)
    return request.param, figures.load(out)


def published_problems(t: data.Tables) -> dict[str, list[str]]:
    """The checklist's findings for each figure the plan publishes (none when all pass)."""
    found = {}
    for name, entry in figures.plan(t).items():
        if "omitted" in entry:
            continue
        fig = figures.FIGURES[name](t)
        found[name] = check.checklist(fig)
        plt.close(fig)
    return {k: v for k, v in found.items() if v}


def test_every_figure_a_seed_example_publishes_passes_the_checklist(example):
    name, t = example
    found = published_problems(t)
    assert not found, f"{name}: {json.dumps(found, indent=1)[:3000]}"


def test_the_main_experiments_figures_pass_the_checklist(tmp_path):
    if not (MAIN / "summary.csv").is_file():
        pytest.skip(f"no finished main experiment at {MAIN}")
    for f in data.FILES.values():  # a copy: the finished run is read, never written
        if (MAIN / f).is_file():
            shutil.copyfile(MAIN / f, tmp_path / f)
    found = published_problems(figures.load(tmp_path))
    assert not found, json.dumps(found, indent=1)[:3000]


# ---- the main experiment's shape, in memory ------------------------------------------------------

#: the main experiment's paths (19, more than the palette's 10 colours) and its throughput measures:
#: (tool, test, protocol, direction, streams, metric, unit, how many paths, value)
PATHS = [
    "host-host",
    "floor-netns-veth",
    "host-pod-cross-node",
    "host-pod-same-node",
    "host-svc-cross-node",
    "host-svc-same-node",
    "pod-host-cross-node",
    "pod-host-same-node",
    "pod-pod-cross-node",
    "pod-pod-same-node",
    "pod-svc-cross-node",
    "pod-svc-same-node",
    "pool-a-to-pool-b",
    "pool-b-to-pool-a",
    "same-pool",
    "host-host-cross-zone",
    "host-pod-cross-zone",
    "pod-host-cross-zone",
    "pod-pod-cross-zone",
]
MEASURES = [
    ("ab", "http", "http", "roundtrip", 10, "requests_per_second", "requests/s", 7, 8e3),
    ("iperf2", "tcp", "tcp", "forward", 1, "throughput", "bit/s", 3, 12e9),
    ("iperf2", "udp", "udp", "forward", 1, "throughput", "bit/s", 3, 105e6),
    ("iperf3", "tcp", "tcp", "forward", 1, "throughput", "bit/s", 15, 11e9),
    ("iperf3", "tcp-bidir", "tcp", "bidir-forward", 1, "throughput", "bit/s", 3, 6e9),
    ("iperf3", "tcp-bidir", "tcp", "bidir-reverse", 1, "throughput", "bit/s", 3, 5e9),
    ("iperf3", "tcp-p4", "tcp", "forward", 4, "throughput", "bit/s", -7, 11e9),
    ("iperf3", "tcp-reverse", "tcp", "reverse", 1, "throughput", "bit/s", 6, 11e9),
    ("iperf3", "udp-pps", "udp", "forward", 1, "throughput", "bit/s", -7, 6.5e6),
    ("netperf", "TCP_CRR", "tcp", "roundtrip", 1, "transaction_rate", "transactions/s", 11, 9e3),
    ("netperf", "TCP_RR", "tcp", "roundtrip", 1, "transaction_rate", "transactions/s", 11, 35e3),
    ("netperf", "TCP_STREAM", "tcp", "forward", 1, "throughput", "bit/s", 11, 900e6),
    ("qperf", "tcp_bw", "tcp", "forward", 1, "throughput", "bit/s", 3, 9e9),
    ("qperf", "udp_bw", "udp", "forward", 1, "throughput", "bit/s", 3, 3e9),
    ("wrk", "http", "http", "roundtrip", 10, "requests_per_second", "requests/s", 7, 25e3),
]
COSTS = {
    "bit/s": ("machine_cpu_per_bit", "s/bit", 1e-10),
    "transactions/s": ("machine_cpu_per_transaction", "s", 3e-5),
}


def main_shape() -> data.Tables:
    """The main experiment's throughput and costs as summary rows: 15 measures over up to 15 of 19
    paths (a negative count: the last paths, the cross-zone ones among them), 3 runs each, every
    rate with its machine CPU cost where the main experiment recorded one."""
    rows = []
    for tool, test, proto, direction, streams, metric, unit, k, value in MEASURES:
        paths = PATHS[:k] if k > 0 else PATHS[:3] + PATHS[k + 3 :]
        for i, path in enumerate(paths):
            v = value * (1 + 0.04 * ((i * 7) % 5))
            base = dict(
                experiment="main-shape", variant="bridge", scenario=path, tool=tool, test=test,
                protocol=proto, direction=direction, streams=streams, source="measured", n=3,
                quantised=False, ci_note="",
            )  # fmt: skip
            rows.append({**base, "metric": metric, "unit": unit, "mean": v, "centre": v})
            rows[-1].update(ci_low=0.8 * v, ci_high=1.25 * v)
            if unit in COSTS and tool in ("iperf3", "netperf", "qperf", "iperf2"):
                cost, cunit, c = COSTS[unit]
                c *= 1 + 0.1 * ((i * 3) % 7)
                rows.append({**base, "metric": cost, "unit": cunit, "mean": c, "centre": c})
                rows[-1].update(ci_low=0.7 * c, ci_high=1.4 * c)
    summary = pd.DataFrame(rows)
    empty = pd.DataFrame()
    return data.Tables(tidy=empty, summary=summary, ratios=empty, failed=empty)


def test_the_costs_figure_gives_each_of_19_paths_a_row_cheapest_first():
    """The costs figure of the main experiment: once 19 paths' rate-cost crosses in one panel (a
    knot of bars, one colour per path from a 10-colour palette); now a row per path, sorted."""
    fig = figures.FIGURES["costs"](main_shape())
    found = check.checklist(fig)
    panel = next(ax for ax in fig.axes if ax.get_title().startswith("iperf3 tcp"))
    rows = [t.get_text() for t in panel.get_yticklabels()]
    series = {ln.get_label() for ln in panel.lines if ln.get_marker() == "o"}
    notes = [t.get_text() for t in panel.texts]
    plt.close(fig)
    assert not found, found[:5]
    assert sorted(rows) == sorted(PATHS[:15])
    assert len(notes) == 15 and all(n.endswith("Gbit/s") for n in notes), notes  # each beside its rate
    assert series == {"bridge"}  # one variant: one colour, the paths are rows


def test_the_checklist_finds_a_title_cut_at_the_image_edge():
    """The throughput figure of the main experiment: 15 panels, path names of 20 characters, 3 to
    15 paths a panel: each panel as tall as its paths (no row of panels as tall as its tallest), the
    whole on one page."""
    fig = figures.FIGURES["throughput"](main_shape())
    found = check.checklist(fig)
    heights = {ax.get_title().replace("\n", " "): ax.get_position().height for ax in fig.axes if ax.axison}
    w, h = fig.get_size_inches()
    plt.close(fig)
    assert not found, found[:5]
    assert w <= 7.0 and h <= 9.0, (w, h)
    small, large = heights["iperf2 tcp"], max(heights.values())  # 3 paths; iperf3 tcp's 15
    assert small < 0.4 * large, heights  # 3 paths against 15


def test_the_checklist_fails_a_figure_a_reviewer_would_send_back():
    """The checks themselves: shared colour and marker, a title beyond the edge, an unnamed log axis."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(3, 1.5), layout="constrained")
    a.plot([1, 2], [1, 2], marker="o", color="C0", label="host-host")
    a.plot([1, 2], [2, 3], marker="o", color="C0", label="pod-svc-cross-node")
    b.set_xscale("log")
    b.set_xlim(1, 1000)
    b.set_xlabel("Transaction rate (k/s)")
    b.set_title("netperf TCP_STREAM (1 KiB sends) · Throughput (receiver, Mbit/s)")
    fig.legend(handles=a.lines, loc="outside lower center")
    found = " | ".join(check.checklist(fig))
    plt.close(fig)
    assert "legend entries 'host-host' and 'pod-svc-cross-node' share colour and marker" in found
    assert "drawn alike" in found
    assert "cut at the image edge: title 'netperf TCP_STREAM" in found
    assert "log x axis without saying so" in found


def test_the_checklist_fails_a_tall_figure_a_blank_panel_and_an_axis_widened_for_notes():
    fig, (a, b) = plt.subplots(2, 1, figsize=(7, 10), layout="constrained")
    a.plot([1, 2, 3], [0, 1, 2], marker="o", ls="")
    a.set_yticks(range(3), ["host-host", "pod-pod", "pod-svc"])
    a.set_ylim(14.5, -0.5)  # 3 paths in the height of 15
    a.set_title("iperf2 tcp")
    b.set_xscale("log")
    b.plot([0.001, 20], [0, 1], marker="o", ls="")
    b.set_xlim(0.0008, 10000)  # widened for "99.9 % lost" at the right edge
    b.set_xlabel("Throughput (Gbit/s) (log scale)")
    b.set_title("qperf udp_bw")
    found = " | ".join(check.checklist(fig))
    plt.close(fig)
    assert "larger than a page at print size: 7.0 x 10.0 in" in found
    assert "panel mostly blank: 'iperf2 tcp' draws 3 rows in the height of 15" in found
    assert "beyond its data: 'qperf udp_bw'" in found


# ---- the other rules ------------------------------------------------------------------------------


def _key_texts(fig: plt.Figure) -> list[str]:
    return [t.get_text() for lg in fig.legends for t in lg.get_texts()] + [
        lg.get_title().get_text() for lg in fig.legends
    ]


def test_points_of_one_run_offer_no_interval_in_the_key(example):
    """The seed examples are one run per point: no key or note speaks of a 95 % interval."""
    name, t = example
    for fig_name, entry in figures.plan(t).items():
        if "omitted" in entry or fig_name not in ("throughput", "latency", "ratios", "variants"):
            continue
        fig = figures.FIGURES[fig_name](t)
        texts = " ".join(_key_texts(fig))
        plt.close(fig)
        if not fig.podnet_intervals:  # no interval drawn in the figure
            assert "95 %" not in texts and "no line:" not in texts, (name, fig_name, texts)


def test_two_figures_that_draw_the_same_comparisons_are_published_once(example, tmp_path):
    """seed-cni-1gbe compares variants only: the ratios figure would repeat the variants figure."""
    name, t = example
    plan = figures.plan(t)
    if "digest" in plan["ratios"] and "digest" in plan["variants"]:
        with figures.grid.specs_only():
            a, b = figures.FIGURES["ratios"](t), figures.FIGURES["variants"](t)
        assert [p.rows.to_dict() for p in a.panels] != [p.rows.to_dict() for p in b.panels], name
    if name == "seed-cni-1gbe":
        assert "digest" in plan["variants"] and "variants figure" in plan["ratios"]["omitted"]
        figures.write_plan(t, tmp_path / "plan.json", {})
        assert "**ratios**: every comparison is between variants" in figures.omitted_markdown(
            tmp_path / "plan.json"
        )


def test_a_loss_dominated_udp_rate_is_shown_with_its_loss_and_is_no_ratio(example, tmp_path):
    """seed-qperf's udp_bw: 1.1 Mbit/s received of 944 Mbit/s sent at host-host (99.9 % lost)."""
    name, t = example
    if name != "seed-qperf":
        pytest.skip("the loss-dominated UDP rate is seed-qperf's")
    fig = figures.FIGURES["throughput"](t)
    panel = next(ax for ax in fig.axes if ax.get_title().startswith("qperf udp_bw"))
    notes = [x.get_text() for x in panel.texts]
    lo, hi = panel.get_xlim()
    found = check.checklist(fig)
    plt.close(fig)
    assert any(n.startswith("99.9 % lost") for n in notes), notes
    assert hi < 1000, (lo, hi)  # the loss notes beside the panel, not in a widened value axis
    assert not found, found
    with figures.grid.specs_only():
        spec = figures.FIGURES["ratios"](t)
    assert not [p for p in spec.panels if p.title.startswith("qperf udp_bw")]
    assert any("qperf udp_bw" in x and "lost" in x for x in spec.left_out), spec.left_out
    figures.write_plan(t, tmp_path / "plan.json", {})
    assert "qperf udp_bw" in " ".join(json.loads((tmp_path / "plan.json").read_text())["ratios"]["left_out"])


def test_a_measure_printed_coarser_than_its_spread_is_left_out_with_the_reason(tmp_path):
    """ab's latency printed in whole ms: equal printed values at most paths (the statistics' ``quantised``);
    the latency figure leaves it out and its plan entry says why, the other measures stay."""
    rows = []
    for i, path in enumerate(PATHS[:7]):
        base = dict(
            experiment="x", variant="bridge", scenario=path, protocol="http", direction="roundtrip",
            streams=10, source="measured", n=3, ci_note="",
        )  # fmt: skip
        q = i < 5  # five of seven paths: interval of the printed resolution alone
        rows.append(
            {**base, "tool": "ab", "test": "http", "metric": "latency_mean", "unit": "s", "mean": 0.001}
        )
        rows[-1].update(centre=0.001, ci_low=0.0005, ci_high=0.002, quantised=q)
        v = 2e-5 * (1 + 0.1 * i)
        rows.append({**base, "tool": "wrk", "test": "http", "metric": "latency_mean", "unit": "s", "mean": v})
        rows[-1].update(centre=v, ci_low=0.9 * v, ci_high=1.1 * v, quantised=False)
    empty = pd.DataFrame()
    t = data.Tables(tidy=empty, summary=pd.DataFrame(rows), ratios=empty, failed=empty)
    with figures.grid.specs_only():
        spec = figures.FIGURES["latency"](t)
    assert [p.title for p in spec.panels] == ["wrk http c10"]
    assert len(spec.left_out) == 1 and spec.left_out[0].startswith("ab http c10")
    assert "printed resolution" in spec.left_out[0] and "5 of its 7" in spec.left_out[0]
    fig = figures.FIGURES["latency"](t)
    note = " ".join(lg.get_title().get_text() for lg in fig.legends)
    plt.close(fig)
    assert "ab http c10" in note
    figures.write_plan(t, tmp_path / "plan.json", {})
    assert "ab http c10" in figures.omitted_markdown(tmp_path / "plan.json")
