"""Panels with a numeric x axis (the ``sweeps`` and ``costs`` figures): (x, y) points with intervals
on both axes, a line through each series, one colour per variant (or per path)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import data, grid, style

#: an xy panel's rows: series (legend label), hue (colour key), x and its interval, y and its;
#: an optional "path" column gives each path its own line style when colours are variants
XY_COLUMNS = ["series", "hue", "x", "xlo", "xhi", "centre", "lo", "hi", "label"]
#: line style and marker of the n-th path (when colours are the variants): a marker of its own for
#: each of the first twelve paths
PATH_STYLES = [(("-", "--", ":", "-.")[i % 4], m) for i, m in enumerate(style.MARKERS)]
#: a loss panel's y axis ends at this many times its largest centre (at least 1 %), so the points
#: stay readable; an interval reaching beyond is drawn to the edge with an arrow head
LOSS_VIEW = 3.0


def draw_xy(panels: list[grid.Panel], hue_order: list[str], title: str, note: str = "") -> plt.Figure:
    """Draw panels of (x, y) points with intervals on both axes, a line through each series
    (within :func:`grid.specs_only`: return their :class:`grid.Spec`, draw nothing)."""
    if grid.capturing():
        return grid.Spec("xy", title, note, list(panels), [], list(hue_order))
    style.apply()
    looks = style.series_styles(hue_order)
    colors = {h: c for h, (c, _m) in looks.items()}
    n = len(panels)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3
    nrows = int(np.ceil(n / ncols))
    width = style.COLUMN if n == 1 else style.PAGE
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width, min(style.PAGE_HEIGHT, 0.6 + 2.1 * nrows)),
        squeeze=False,
        layout="constrained",
    )
    fig.podnet_intervals = []
    paths = list(dict.fromkeys(str(x) for p in panels if "path" in p.rows for x in p.rows["path"]))
    # line styles tell paths apart when colours are variants; when colours are the paths, no style
    by_path = all(
        (p.rows["hue"].astype(str) == p.rows["path"].astype(str)).all() for p in panels if "path" in p.rows
    )
    styles = {} if by_path else {path: PATH_STYLES[i % len(PATH_STYLES)] for i, path in enumerate(paths)}
    for ax, p in zip(axes.flat, panels):
        _xy_panel(fig, ax, p, looks, styles)
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    drawn = [h for h in hue_order if any((p.rows["hue"] == h).any() for p in panels)]
    # colours are the paths: each its own colour and marker; colours are the variants: the marker is the path's
    handles = [
        plt.Line2D(
            [], [], color=colors[h], marker=looks[h][1] if not styles else "o", ls="-", ms=3.5, label=h
        )
        for h in drawn
    ]
    if len(styles) > 1:
        handles += [
            plt.Line2D([], [], color="0.35", marker=m, ls=ls, ms=3.5, label=path)
            for path, (ls, m) in styles.items()
            if path not in drawn  # a legend names each thing once
        ]
    style.legend(fig, handles, note, wrap=62 if width < style.PAGE else 125)
    fig.suptitle(title)
    style.thin_ticks(fig)
    return fig


def _xy_panel(fig: plt.Figure, ax: plt.Axes, p: grid.Panel, looks: dict, styles: dict | None = None) -> None:
    rows = p.rows
    top = _loss_view(rows) if p.title.split(" · ")[-1].startswith("Loss") else None
    for name, g in rows.groupby("series", sort=False):
        g = g.sort_values("x")
        c, own = looks[str(g["hue"].iloc[0])]
        ls, marker = (styles or {}).get(str(g["path"].iloc[0]) if "path" in g else "", ("-", own))
        x, y = g["x"].to_numpy(float), g["centre"].to_numpy(float)
        hi = g["hi"].to_numpy(float)
        clipped = np.isfinite(hi) & (hi > top) if top is not None else np.zeros(len(hi), bool)
        xerr = _err(x, g["xlo"].to_numpy(float), g["xhi"].to_numpy(float))
        yerr = _err(y, g["lo"].to_numpy(float), hi if top is None else np.where(clipped, top, hi))
        ax.errorbar(
            x,
            y,
            xerr=xerr,
            yerr=yerr,
            color=c,
            marker=marker,
            ls=ls,
            ms=3.2,
            lw=0.9,
            elinewidth=0.8,
            capsize=1.5,
            label=str(name),  # the series (the checklist tells series apart by colour and marker)
        )
        if clipped.any():  # the interval goes on above the view: an arrow head at the edge
            ax.plot(
                x[clipped], np.full(clipped.sum(), top), ls="", marker="^", ms=3.5, color=c, clip_on=False
            )
        for lo, hi in zip(g["lo"].to_numpy(float), g["hi"].to_numpy(float)):
            if np.isfinite(lo) and np.isfinite(hi):
                fig.podnet_intervals.append((p.positive, lo, hi))
        for xi, yi, text in zip(x, y, g["label"].astype(str)):
            if text and text != "nan":
                ax.annotate(
                    text, (xi, yi), xytext=(3, 2), textcoords="offset points", fontsize=5.5, color="0.25"
                )
    xs = rows["x"].to_numpy(float)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if p.ratio and len(xs):  # ``ratio`` marks a load curve's received panel: the diagonal
        lim = [float(xs.min()), float(xs.max())]
        ax.plot(lim, lim, ls="--", lw=0.6, color="0.6", zorder=0)
    xlabel = p.xlabel
    if len(xs) > 1 and xs.max() / xs.min() > 30:
        if (rows["x"].to_numpy(float) == 0).any():  # a point at 0 (e.g. no objects) stays on the axis
            ax.set_xscale("symlog", linthresh=float(xs.min()), linscale=0.5)
            ax.xaxis.set_major_formatter(style.PlainFormatter())
        else:
            ax.set_xscale("log")
        xlabel = xlabel if "log" in xlabel.lower() else f"{xlabel} (log scale)"
    if p.positive:
        ax.set_ylim(bottom=0)
    if top is not None:
        ax.set_ylim(0, top)
    style.plain_axis(ax, "y")
    ax.set_title(textwrap.fill(p.title, 48 if len(fig.axes) <= 2 else 34))
    ax.set_xlabel(xlabel)
    ax.grid(lw=0.4, alpha=0.4)


def _loss_view(rows: pd.DataFrame) -> float | None:
    """The top of a loss panel's view: LOSS_VIEW x its largest centre, at least 1 (%), at most what
    the intervals need; None when every interval fits under that anyway."""
    c = rows["centre"].to_numpy(float)
    hi = rows["hi"].to_numpy(float)
    if not np.isfinite(c).any():
        return None
    top = max(LOSS_VIEW * float(np.nanmax(c)), 1.0)
    need = float(np.nanmax(hi)) if np.isfinite(hi).any() else 0.0
    return top if need > top else None


def _err(centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """matplotlib's asymmetric error bars; no bar where the interval is not finite."""
    if not (np.isfinite(lo).any() or np.isfinite(hi).any()):
        return None
    below = np.where(np.isfinite(lo), np.clip(centre - lo, 0, None), 0.0)
    above = np.where(np.isfinite(hi), np.clip(hi - centre, 0, None), 0.0)
    return np.vstack([below, above])


def hue_order(t: data.Tables, panels: list[grid.Panel]) -> list[str]:
    """The colour keys of ``panels`` in the experiment's whole order (variants, else paths), so a
    path or variant has the same colour and marker in every figure; keys outside it go last."""
    hues = list(dict.fromkeys(h for p in panels for h in p.rows["hue"].astype(str)))
    variants = data.variant_order(t)
    whole = variants if set(hues) <= set(variants) else data.path_order(t)
    return whole + [h for h in hues if h not in whole]


def series(df: pd.DataFrame, t: data.Tables) -> tuple[pd.Series, pd.Series, list[str]]:
    """(series label, colour key, colour order): one colour per variant when several, else per path."""
    variants = sorted(set(df["variant"].astype(str)))
    if len(variants) > 1:
        order = [v for v in data.variant_order(t) if v in variants]
        many_paths = df["scenario"].nunique() > 1
        label = df["variant"].astype(str) + ((" · " + df["scenario"].astype(str)) if many_paths else "")
        return label, df["variant"].astype(str), order
    order = [p for p in data.path_order(t) if p in set(df["scenario"].astype(str))]
    return df["scenario"].astype(str), df["scenario"].astype(str), order
