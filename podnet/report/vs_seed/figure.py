"""The seed's ratios beside ours: one panel per measure, paths as rows, one colour per CNI.

Per path and CNI both sources have, the seed's ratio to its own baseline path (open diamond, no
interval: the seed published none) and ours to our baseline (filled point with its 95 % interval),
on a logarithmic ratio axis with a line at 1x. House style of :mod:`podnet.report.figures.style`.
Reads only ``vs_seed.csv`` (:func:`podnet.report.vs_seed.table.vs_seed_table`); a seed without a
ranking here gets its claims drawn instead (:func:`published_figure`, :mod:`.claims_figure`).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator

from podnet.report.figures import style
from podnet.tools import metric_info


def _panels(vs: pd.DataFrame) -> list[pd.DataFrame]:
    """The rows each panel draws: per seed measure its first counterpart of ours, paths other than
    the baseline, CNIs both sources have with a finite ratio in each."""
    v = vs[(vs["status"] == "both") & (vs["interval"] != "baseline")]
    v = v[np.isfinite(v["seed_ratio"].astype(float)) & np.isfinite(v["ratio"].astype(float))]
    out = []
    for _, g in v.groupby(["seed_tool", "seed_test", "seed_metric"], sort=False):
        first = g.iloc[0][["tool", "test", "metric"]].tolist()
        out.append(g[(g["tool"] == first[0]) & (g["test"] == first[1]) & (g["metric"] == first[2])])
    return out


def published_figure(
    vs: pd.DataFrame,
    claims: pd.DataFrame,
    seed: str | None = None,
    baseline: str = "host-host",
    variants: list[str] | None = None,
) -> plt.Figure:
    """The ``vs_seed`` figure: the CNI ranking's ratios (:func:`figure`) where the seed has CNIs and
    paths in both, else its claims judged here (:func:`.claims_figure.claims_figure`: a seed of
    claims only, seeds 000-002 and 004)."""
    if len(vs) and _panels(vs):
        return figure(vs, seed, baseline, variants)
    from .claims_figure import claims_figure

    return claims_figure(claims, seed)


def figure(
    vs: pd.DataFrame, seed: str | None = None, baseline: str = "host-host", variants: list[str] | None = None
) -> plt.Figure:
    """The figure (not saved; :func:`podnet.report.figures.style.save` writes it). ``variants``: the
    experiment's order of variants (:func:`podnet.report.figures.data.variant_order`), so each CNI
    keeps the colour it has in the other figures."""
    style.apply()
    seed = seed or (str(vs["seed"].iloc[0]) if len(vs) else "seed")
    panels = _panels(vs) if len(vs) else []
    if not panels:
        fig, ax = plt.subplots(figsize=(style.COLUMN, 1.2), layout="constrained")
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"No path and CNI in both {seed} and podnet", ha="center", va="center")
        return fig
    drawn = set(x for p in panels for x in p["variant"])
    order = [v for v in (variants or []) if v in drawn]
    cnis = order + sorted(drawn - set(order))
    colors = style.variant_colors(list(variants or []) + [c for c in cnis if c not in (variants or [])])
    paths = list(dict.fromkeys(x for p in panels for x in p["scenario"]))
    ncols = min(len(panels), 3)
    nrows = int(np.ceil(len(panels) / ncols))
    height = 0.55 + 0.16 * max(1.0, 0.8 * len(cnis)) * len(paths)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(style.PAGE, nrows * height + 1.0),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    step = min(0.7 / max(len(cnis), 1), 0.3)
    offsets = {c: (i - (len(cnis) - 1) / 2) * step for i, c in enumerate(cnis)}
    fig.podnet_intervals = []
    for ax, p in zip(axes.flat, panels):
        vals = p[["seed_ratio", "ratio", "ratio_ci_low", "ratio_ci_high"]].to_numpy(dtype=float).ravel()
        vals = vals[np.isfinite(vals) & (vals > 0)]
        lo, hi = float(vals.min()) / 1.3, float(vals.max()) * 1.3
        style.ratio_axis(ax, lo, hi, narrow=style.PAGE / ncols < 2.0)
        lo, hi = ax.get_xlim()
        for r in p.itertuples():
            y = paths.index(r.scenario) + offsets[r.variant]
            c = colors[r.variant]
            a, b = float(r.ratio_ci_low), float(r.ratio_ci_high)
            if np.isfinite(a) and np.isfinite(b):
                a_d, b_d = max(a, lo), min(b, hi)
                ax.plot([a_d, b_d], [y, y], color=c, lw=1.1, solid_capstyle="butt", zorder=2)
                fig.podnet_intervals.append((True, a_d, b_d))
            ax.plot([r.ratio], [y], marker="o", ms=4, color=c, mec="0.15", mew=0.6, zorder=4)
            ax.plot([r.seed_ratio], [y], marker="D", ms=4, color=c, mfc="white", mew=1.0, zorder=5)
        r0 = p.iloc[0]
        label = metric_info(str(r0["metric"]), str(r0["tool"])).label
        title = f"{r0['tool']} {r0['test']}: {label}"
        if r0["seed_metric"] != r0["metric"]:
            seed_label = metric_info(str(r0["seed_metric"]), str(r0["seed_tool"])).label
            title += f" ({seed}: {seed_label})"
        ax.set_title(textwrap.fill(title, max(12, int(15 * style.PAGE / ncols))))
        ax.set_xlabel(f"Ratio to {baseline} (log scale)")
        ax.grid(axis="x", lw=0.4, alpha=0.4)
        ax.tick_params(axis="y", length=0)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    for ax in axes.flat:
        ax.set_yticks(range(len(paths)), paths)
        ax.set_ylim(len(paths) - 0.5, -0.5)
    seed_of = {r.variant: r.seed_cni for p in panels for r in p.itertuples()}
    handles = [
        Line2D([], [], color=colors[c], marker="o", ls="-", ms=4, label=f"{c} ({seed_of[c]})") for c in cnis
    ]
    handles += [
        Line2D([], [], color="0.2", marker="o", ls="-", ms=4, label="podnet: ratio, 95 % CI"),
        Line2D([], [], color="0.2", marker="D", mfc="white", ls="", ms=4, label=f"{seed}: published ratio"),
    ]
    # the house legend's place and look; two columns, as the CNI labels name both sources' CNIs
    fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False)
    fig.suptitle(f"{seed} and podnet: each CNI's ratio to {baseline}, per path")
    for ax in list(axes.flat)[: len(panels)]:
        thin_ticks(fig, ax)
    return fig


def _priority(t: float) -> tuple[int, float]:
    """Which ratio ticks to keep first: 1x, then whole decades, then 1-2-5, then 0.8x and 1.25x."""
    lg = np.log10(t)
    if np.isclose(t, 1.0):
        return (0, 0.0)
    if np.isclose(lg, round(lg)):
        return (1, abs(lg))
    return (2, abs(lg)) if not (np.isclose(t, 0.8) or np.isclose(t, 1.25)) else (3, abs(lg))


def thin_ticks(fig: plt.Figure, ax: plt.Axes, pad: float = 4.0) -> None:
    """Drop x tick labels that would touch a neighbour (at the panel's real width, after layout):
    ticks are kept by :func:`_priority`, each only when its label keeps ``pad`` points from those kept."""
    pad = pad * fig.dpi / 72.0
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    lo, hi = sorted(ax.get_xlim())
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    labels = {
        float(t.get_position()[0]): t.get_window_extent(r)
        for t in ax.get_xticklabels()
        if lo <= t.get_position()[0] <= hi and t.get_text()
    }
    kept: list[float] = []
    for t in sorted(ticks, key=_priority):
        bb = labels.get(float(t))
        if bb is None:
            continue
        if all(bb.x1 + pad < labels[k].x0 or labels[k].x1 + pad < bb.x0 for k in kept):
            kept.append(float(t))
    ax.xaxis.set_major_locator(FixedLocator(sorted(kept)))
