"""Every figure of every example (and of experiments with repeats and at the main experiment's
scale) passes the layout checks: no overlapping or clipped text, no scientific notation, no
interval of a positive quantity below 0; the ratio figure fits a page; files are byte-stable."""

import re

import matplotlib
import matplotlib.pyplot as plt
import pytest

from podnet.report import figures
from podnet.report.figures import check, style
from tests import figures_data


@pytest.fixture(scope="module")
def experiments(tmp_path_factory):
    root = tmp_path_factory.mktemp("figures")
    dirs = {name: figures_data.example(name, root) for name in figures_data.EXAMPLES}
    dirs["repeats"] = figures_data.with_repeats(root)
    dirs["scale"] = figures_data.at_scale(root)
    dirs["variants"] = figures_data.variants_at_scale(root)
    return dirs


CASES = figures_data.EXAMPLES + ["repeats", "scale", "variants"]


@pytest.mark.parametrize("name", CASES)
def test_every_figure_passes_the_layout_checks(experiments, name):
    t = figures.load(experiments[name])
    for fig_name, fig in figures.render(t).items():
        found = check.problems(fig)
        w, h = fig.get_size_inches()
        plt.close(fig)
        assert not found, f"{name}/{fig_name}: {found[:5]}"
        assert w in (style.COLUMN, style.PAGE), (name, fig_name, w)
        if fig_name == "ratios":
            assert h <= style.PAGE_HEIGHT, (name, h)


def test_intervals_and_repeats_are_drawn(experiments):
    t = figures.load(experiments["repeats"])
    fig = figures.FIGURES["latency"](t)
    drawn = fig.podnet_intervals
    assert drawn and all(lo >= 0 for _, lo, _ in drawn)
    # the t-interval of a 3-run ping group reaches below 0 in summary.csv: it is stopped at 0 with a mark
    s = t.summary[(t.summary.metric == "rtt_avg") & (t.summary.source == "measured")]
    assert (s.ci_low < 0).any() or (s.ci_low > 0).all()
    dots = [c for ax in fig.axes for c in ax.collections if len(c.get_offsets())]
    assert sum(len(c.get_offsets()) for c in dots) == int(s["n"].sum())
    plt.close(fig)


def test_a_deliberately_bad_figure_fails_the_checks():
    with plt.rc_context(matplotlib.rcParamsDefault):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([1, 2], [1, 1e9])
        ax.set_yscale("log")
    ax.set_title("a title far too long for a one-inch figure to hold")
    ax.text(0.5, 0.5, "overlap", transform=ax.transAxes)
    ax.text(0.5, 0.5, "overlap", transform=ax.transAxes)
    found = " | ".join(check.problems(fig))
    plt.close(fig)
    assert "outside the canvas" in found and "overlap" in found and re.search("scientific|offset", found)


def test_ratio_ticks_are_plain():
    fig, ax = plt.subplots()
    style.ratio_axis(ax, 0.45, 2.2)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert labels == ["0.5x", "0.8x", "1x", "1.25x", "2x"]


def test_files_are_written_and_byte_stable(experiments, tmp_path):
    first = figures.publish(experiments["repeats"], tmp_path / "a")
    again = figures.publish(experiments["repeats"], tmp_path / "b")
    assert {p.suffix for p in first} == {".png", ".svg", ".pdf"}
    for a, b in zip(first, again):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_variants_legend_lists_only_the_variants_drawn(experiments):
    """The reference variant is every ratio's denominator, never a row of the variants figure: it gets
    no legend entry (it had one, with no mark drawn in its colour); the others keep their colours."""
    t = figures.load(experiments["variants"])
    names = figures.data.variant_order(t)
    fig = figures.FIGURES["variants"](t)
    labels = [h.get_label() for lg in fig.legends for h in lg.legend_handles]
    colors = style.variant_colors(names)
    handles = {h.get_label(): h.get_color() for lg in fig.legends for h in lg.legend_handles}
    plt.close(fig)
    assert names[0] not in labels and all(n in labels for n in names[1:])
    assert all(matplotlib.colors.to_rgb(handles[n]) == colors[n] for n in names[1:])
