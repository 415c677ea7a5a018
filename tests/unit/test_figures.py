"""Every figure of every example (and of experiments with repeats and at the main experiment's
scale) passes the layout checks: no overlapping or clipped text, no tick label repeated or
colliding, no legend name twice, no scientific notation, no interval of a positive quantity below
0; the ratio figure fits a page; files are byte-stable; a figure with nothing to show is not
published, and the plan says why; a panel shows only the paths that have data."""

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
    plan = figures.plan(t)
    for fig_name, make in figures.FIGURES.items():
        if "omitted" in plan[fig_name]:
            continue
        fig = make(t)
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


def test_a_figure_with_nothing_to_show_is_not_published_and_the_plan_says_why(experiments, tmp_path):
    """seed-raven has one variant, no sweep and no CPU record: no variants, sweeps or costs figure."""
    t = figures.load(experiments["seed-raven"])
    specs = {n: tmp_path / f"{n}.sha256" for n in figures.FIGURES}
    plan = figures.write_plan(t, tmp_path / "plan.json", specs)
    # published: planned and drawn (the files beside the plan); planned alone is not published
    assert figures.published(tmp_path / "plan.json") == []
    assert "**throughput**: planned, but its files are not there" in figures.omitted_markdown(
        tmp_path / "plan.json"
    )
    for name in ("throughput", "latency", "ratios"):
        for ext in ("png", "svg", "pdf"):
            (tmp_path / f"{name}.{ext}").write_bytes(b"drawn")
    assert figures.published(tmp_path / "plan.json") == ["throughput", "latency", "ratios"]
    assert plan["variants"]["omitted"] == "one variant (raven): nothing to compare"
    assert "no test was swept" in plan["sweeps"]["omitted"]
    why = figures.omitted_markdown(tmp_path / "plan.json")
    assert "**variants**: one variant (raven)" in why and "**sweeps**" in why and "**costs**" in why
    assert specs["latency"].read_text().strip() == figures.spec_digest("latency", t)
    written = figures.publish(experiments["seed-raven"], tmp_path / "out")
    assert sorted({p.stem for p in written}) == ["latency", "ratios", "throughput"]


def _xtick_texts(ax):
    ax.figure.canvas.draw()
    lo, hi = sorted(ax.get_xlim())
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text() and lo <= t.get_position()[0] <= hi]


def test_the_checks_find_repeated_and_colliding_tick_labels_and_a_repeated_legend_name():
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 1.5), layout="constrained")
    a.set_xticks([1, 1.2, 2], ["1", "1", "2"])  # one label twice
    b.set_xticks([1.0, 1.01, 2.0], ["0.8x", "1x", "2x"])  # two labels touching
    fig.legend(handles=[plt.Line2D([], [], label="calico"), plt.Line2D([], [], label="calico")])
    found = " | ".join(check.problems(fig))
    plt.close(fig)
    assert "repeated x tick label '1'" in found
    assert "x tick labels '0.8x' and '1x' collide" in found
    assert "legend names 'calico' twice" in found


def test_colliding_ratio_ticks_are_thinned_keeping_1x_and_decades():
    style.apply()
    fig, ax = plt.subplots(figsize=(1.2, 0.8), layout="constrained")
    style.ratio_axis(ax, 0.03, 30, narrow=False)
    style.thin_ticks(fig)
    labels = _xtick_texts(ax)
    found = check.problems(fig)
    plt.close(fig)
    assert "1x" in labels and not [f for f in found if "tick" in f], (labels, found)


def test_plain_tick_labels_keep_their_digits():
    assert style.plain(150.5) == "150" and style.plain(1000.5) == "1,000" and style.plain(12.5) == "12.5"


def test_a_panel_shows_only_the_paths_that_have_data():
    import pandas as pd

    from podnet.report.figures import grid

    def panel(paths):
        n = len(paths)
        rows = pd.DataFrame(
            {"y": paths, "hue": ["a"] * n, "centre": [1.0] * n, "lo": [0.9] * n, "hi": [1.1] * n}
        )
        return grid.Panel(title="t", xlabel="x", rows=rows)

    fig = grid.draw([panel(["p1", "p2", "p3"]), panel(["p2"])], ["p1", "p2", "p3"], ["a"], "T")
    shown = [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes if ax.axison]
    plt.close(fig)
    assert shown == [["p1", "p2", "p3"], ["p2"]]


def test_a_legend_never_repeats_a_path_when_colours_are_the_paths():
    """One variant: the xy figures colour by path; the paths are not listed a second time as line styles."""
    import pandas as pd

    from podnet.report.figures import curves, grid

    rows = pd.DataFrame(
        {
            "series": ["p1", "p2"], "hue": ["p1", "p2"], "path": ["p1", "p2"], "x": [1.0, 2.0],
            "xlo": [0.9, 1.9], "xhi": [1.1, 2.1], "centre": [3.0, 4.0], "lo": [2.9, 3.9], "hi": [3.1, 4.1],
            "label": ["", ""],
        }
    )  # fmt: skip
    fig = curves.draw_xy([grid.Panel("t", "x", rows)], ["p1", "p2"], "T")
    names = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    found = check.problems(fig)
    plt.close(fig)
    assert sorted(names) == ["p1", "p2"] and not found
