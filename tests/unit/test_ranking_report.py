"""The ranking in words and as a figure (podnet.report.ranking), and the vs_seed figure's ratio
ticks at a narrow panel's real width."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.report import ranking as RR
from podnet.report.figures import check, style
from podnet.report.vs_seed.figure import thin_ticks
from podnet.stats import ranking as R
from tests.stats_tables import rows, tidy

VARIANTS = ["macvlan", "calico-bgp", "cilium-vxlan", "calico-vxlan"]
CENTRES = {"macvlan": 1.0, "calico-bgp": 0.76, "cilium-vxlan": 0.67, "calico-vxlan": 0.60}
PATHS = ["host-host", "pod-host-cross-node", "pod-pod-same-node", "pod-pod-cross-node", "pod-svc-cross-node"]
STATS = {
    "comparisons": [{"by": "variant", "baseline": "macvlan"}],
    "ranking": {"measures": ["iperf3:tcp:throughput", "netperf:TCP_RR:latency_p50"]},
}


def _tidy() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    parts = []
    n = 14  # the exact Wilcoxon p of n pairs is at least 2 / 2**n: Holm over 54 pairs would need n >= 12
    for s in PATHS:
        common = np.exp(rng.normal(0, 0.1, n))
        for v, c in CENTRES.items():
            f = 1.0 if s == "host-host" else c
            noise = np.exp(rng.normal(0, 0.03, n))
            parts.append(rows(17e9 * f * common * noise, variant=v, scenario=s, launch_id="L1"))
            if s != "pod-svc-cross-node":  # latency on four paths only: the panel shows those four
                lat = 60e-6 / f * common * np.exp(rng.normal(0, 0.03, n))
                parts.append(
                    rows(
                        lat,
                        variant=v,
                        scenario=s,
                        launch_id="L1",
                        tool="netperf",
                        test="TCP_RR",
                        metric="latency_p50",
                        unit="s",
                        direction="roundtrip",
                    )
                )
    return tidy(*parts)


def _table(tmp_path) -> pd.DataFrame:
    t = R.ranking_table(_tidy(), STATS)
    return RR.read(R.write(t, tmp_path / "ranking.csv"))


def test_sentences_state_order_first_last_and_equivalence(tmp_path):
    t = _table(tmp_path)
    words = RR.sentences(t)
    assert len(words) == len(PATHS) + len(PATHS) - 1  # iperf3 on 5 paths, TCP_RR on 4
    s = next(w for w in words if w.startswith("On pod-pod-cross-node, iperf3 tcp throughput"))
    assert "macvlan > calico-bgp > cilium-vxlan > calico-vxlan." in s
    assert "macvlan is fastest, 1.3" in s and "calico-vxlan is slowest, 0.6" in s and "x macvlan [0.5" in s
    hh = next(w for w in words if w.startswith("On host-host, iperf3"))
    assert "are equivalent within ±5 %" in hh and ">" not in hh.split(":")[1].split(".")[0]
    md = RR.markdown(t)
    assert md.startswith("**Ranking** (ranking.csv): 9 path x measure rankings, 54 pairs")
    # the family each p_holm was adjusted over, read from holm_family (stats.ranking.family)
    assert "Holm within each ranking (families of 6 pairs)" in md
    wide = R.ranking_table(_tidy(), {**STATS, "ranking": {**STATS["ranking"], "family": "campaign"}})
    assert "Holm over all 54:" in RR.markdown(RR.read(R.write(wide, tmp_path / "wide.csv")))
    assert RR.markdown(pd.DataFrame()) == ""


def test_figure_panels_bars_letters_and_no_layout_problems(tmp_path):
    t = _table(tmp_path)
    fig = RR.figure(t, VARIANTS)
    assert check.problems(fig) == []
    axes = [a for a in fig.axes if a.has_data()]
    assert len(axes) == 2  # one panel per measure
    # only paths with data: TCP_RR has no pod-svc-cross-node
    labels = [tk.get_text().replace("\n", "") for tk in axes[1].get_xticklabels()]
    assert "pod-svc-cross-node" not in labels and len(labels) == 4
    # one bar per variant and path, each variant in its colour of every figure
    colors = style.variant_colors(VARIANTS)
    bars = [p for p in axes[0].patches]
    assert len(bars) == len(PATHS) * len(VARIANTS)
    assert {tuple(np.round(b.get_facecolor()[:3], 4)) for b in bars} == {
        tuple(np.round(c, 4)) for c in colors.values()
    }
    letters = [x.get_text() for x in axes[0].texts]
    assert letters.count("a") >= len(PATHS) and "d" in letters
    # a single legend entry per variant
    assert [x.get_text() for x in fig.legends[0].get_texts()] == VARIANTS
    caption = fig.legends[0].get_title().get_text().replace("\n", " ")
    assert "(Holm within each ranking (families of 6 pairs);" in caption
    plt.close(fig)


def test_nothing_ranked_figure_says_why():
    t = R.ranking_table(tidy(rows([1e9, 1.1e9], variant="a", launch_id="L")), STATS)
    fig = RR.figure(t)
    assert "Nothing ranked" in fig.axes[0].texts[0].get_text()
    plt.close(fig)


def _gaps(fig, ax) -> list[float]:
    """Points between neighbouring x tick labels of ``ax`` as drawn."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(r) for t in ax.get_xticklabels() if t.get_text()), key=lambda b: b.x0)
    return [(b.x0 - a.x1) * 72.0 / fig.dpi for a, b in zip(boxes, boxes[1:])]


def test_vs_seed_ratio_ticks_never_touch():
    # three panels of a page, 0.3x-2.5x: 0.8x, 1x and 1.25x sit 0.1 decade apart (vs_seed.png's case)
    style.apply()
    fig, axes = plt.subplots(1, 3, figsize=(style.PAGE, 1.6), layout="constrained", sharey=True)
    for ax in axes:
        style.ratio_axis(ax, 0.3, 2.5, narrow=False)
        ax.plot([0.9, 1.1], [0, 0])
        ax.set_yticks([0], ["pod-pod-cross-node"])
    assert min(_gaps(fig, axes[1])) < 4.0  # as drawn before: labels (nearly) touch
    for ax in axes:
        thin_ticks(fig, ax)
    for ax in axes:
        assert min(_gaps(fig, ax)) >= 4.0
        assert 1.0 in list(ax.get_xticks())
    assert check.problems(fig) == []
    plt.close(fig)
