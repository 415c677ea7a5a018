"""The explore notebook's per-interval series and distributions never pool two tests or two
directions (issue 45: no two series share a colour and marker in one legend; a bimodal group is
explained, never averaged). Before, ``intervals.series`` drew per path the median over every run of
the path whatever its test (tcp at 15 Gbit/s, udp-pps at 9 Mbit/s, the two directions of --bidir), a
median that dropped to 0 between them, and ``explore.distributions`` drew one box over both
directions of a --bidir test."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.report import explore, intervals
from podnet.report.figures import check, data
from tests.unit.test_explore import _experiment

#: (test, direction, bit/s): three iperf3 tests on one path, a --bidir one in both directions
LEVELS = [
    ("tcp", "forward", 15e9),
    ("udp-pps", "forward", 9e6),
    ("tcp-bidir", "bidir-forward", 12e9),
    ("tcp-bidir", "bidir-reverse", 2e9),
]


def _tables(paths: list[str], runs: int = 10, partial: bool = False) -> data.Tables:
    """iperf3 runs with a 1-s -O warm-up then three 1-s intervals (times off by milliseconds, as
    measured), on ``paths``; ``partial``: each run ends with a 0.4-ms interval of 0 bit/s."""
    rng = np.random.default_rng(1)
    tidy, iv = [], []
    for p, path in enumerate(paths):
        for test, direction, level in LEVELS:
            for r in range(1, runs + 1):
                rid = f"bridge/{path}/iperf3-{test}/r{r:03d}"
                tidy.append(dict(run_id=rid, variant="bridge", scenario=path, tool="iperf3", test=test,
                                 direction=direction, repeat=r, metric="throughput", value=level))  # fmt: skip
                edges = [0.0, *(k + rng.uniform(0, 0.004) for k in (1, 2, 3))]
                spans = [(0.0, 1.0 + rng.uniform(0, 0.004), True)] + [
                    (a + 4e-5 * (i == 0), b, False) for i, (a, b) in enumerate(zip(edges, edges[1:]))
                ]
                if partial:
                    spans.append((edges[-1], edges[-1] + 4e-4, False))
                for a, b, omitted in spans:
                    value = 0.0 if b - a < 0.01 else level * (1 + 0.01 * p) * rng.uniform(0.97, 1.03)
                    iv.append(dict(run_id=rid, stream="sum", direction=direction, t_start=a, t_end=b,
                                   omitted=omitted, metric="throughput", value=value))  # fmt: skip
    tidy = pd.DataFrame(tidy).drop_duplicates(["run_id", "direction"])
    return data.Tables(
        tidy=tidy,
        summary=pd.DataFrame(),
        ratios=pd.DataFrame(),
        failed=pd.DataFrame(),
        intervals=pd.DataFrame(iv),
    )


def _panels(fig: plt.Figure) -> dict[str, plt.Axes]:
    return {ax.get_title().split("\n")[0]: ax for ax in fig.axes if ax.axison}


def test_a_median_is_over_runs_of_one_test_and_one_direction_never_two():
    fig = intervals.series(_tables(["host-host"]))
    panels = _panels(fig)
    assert set(panels) == {
        "iperf3 tcp",
        "iperf3 udp-pps",
        "iperf3 tcp-bidir · bidir-forward",
        "iperf3 tcp-bidir · bidir-reverse",
    }, set(panels)
    for test, direction, level in LEVELS:
        title = f"iperf3 {test}" + (f" · {direction}" if test == "tcp-bidir" else "")
        ax = panels[title]
        (median,) = [ln for ln in ax.lines if not ln.get_label().startswith("_")]
        factor, _unit = data.display_unit([level], "bit/s")
        y = np.asarray(median.get_ydata(), dtype=float) * factor
        # every interval's median is the test's own level: none drops to another test's, none to 0
        assert np.allclose(y, level, rtol=0.05), (title, y / level)
        assert "10 runs, median per path" in ax.get_title()
    plt.close(fig)


def test_runs_line_up_by_interval_and_the_warm_up_lies_before_zero():
    """Ten runs' intervals end milliseconds apart: a median point per interval (the -O warm-up one
    before 0, where it was), not one per run's own time."""
    fig = intervals.series(_tables(["host-host"]))
    ax = _panels(fig)["iperf3 tcp"]
    (median,) = [ln for ln in ax.lines if not ln.get_label().startswith("_")]
    x = np.asarray(median.get_xdata(), dtype=float)
    assert len(x) == 4 and x[0] < 0 < x[1] and np.all(np.diff(x) > 0.9), x
    assert "-O warm-up" in fig.get_suptitle()
    plt.close(fig)


def test_a_partial_last_interval_is_left_out_not_drawn_as_a_drop_to_zero():
    t = _tables(["host-host"], runs=2, partial=True)
    assert intervals.rows(t)["partial"].sum() == 2 * len(LEVELS)
    fig = intervals.series(t)
    for ax in _panels(fig).values():
        assert ax.lines and all(np.min(ln.get_ydata()) > 0 for ln in ax.lines), ax.get_title()
        assert "2 runs, a line each" in ax.get_title()
    assert "8 partial intervals (a run's short last) left out" in fig.get_suptitle(), fig.get_suptitle()
    plt.close(fig)


def test_each_legend_names_a_series_once_in_a_look_of_its_own():
    """Fifteen paths, more than the palette's ten colours: entries that share a colour differ in
    marker and line style, a path keeps its look in every panel, and the checklist passes."""
    paths = ["host-host", *(f"path-{i:02d}" for i in range(1, 15))]
    fig = intervals.series(_tables(paths, runs=3))
    looks: dict[str, tuple] = {}
    for title, ax in _panels(fig).items():
        leg = ax.get_legend()
        names = [t.get_text().split(" (")[0] for t in leg.get_texts()]
        assert len(names) == len(set(names)) == 15, title
        seen = set()
        for name, h in zip(names, leg.legend_handles):
            look = (tuple(np.round(h.get_color(), 3)), h.get_marker(), h.get_linestyle())
            assert look[:2] not in {s[:2] for s in seen}, (title, name)
            assert look not in seen, (title, name)
            seen.add(look)
            assert looks.setdefault(name, look) == look, (title, name)  # the same in every panel
    dashed = [n for n, (_c, _m, ls) in looks.items() if ls != "-"]
    assert len(dashed) == 5  # the second round of the palette
    assert not check.problems(fig) and not check.checklist(fig)
    plt.close(fig)


def test_a_bidir_test_gives_a_box_per_direction(tmp_path):
    """pod-pod runs iperf3 --bidir (a value per direction), host-host one direction: three boxes,
    named "path · direction", not one box over both directions of pod-pod."""
    t = data.load(_experiment(tmp_path))
    fig = explore.distributions(t)
    (ax,) = [a for a in fig.axes if a.axison and a.get_title().startswith("iperf3 tcp · Throughput")]
    rows = [x.get_text() for x in ax.get_yticklabels()]
    assert rows == ["host-host · forward", "pod-pod · bidir-forward", "pod-pod · bidir-reverse"], rows
    assert ax.get_ylabel() == "path · direction"
    assert len(ax.patches) == 3  # a box per row
    plt.close(fig)
