"""The one plot every podnet figure is made of: point-ranges on a grid of panels.

A panel is one measure (e.g. iperf3 tcp throughput); its rows are paths (or variants), one
colour per variant. The centre the statistics chose is a point, its interval a line, every
repeat a small dot. Intervals of quantities that cannot be negative stop at 0 (linear axis) or
at the axis edge (log axis) and get an open-end mark when the statistics gave no finite bound.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from . import axis, masonry, style


@dataclass
class Panel:
    """One panel: ``rows`` has y, hue, centre, lo, hi (+ different and precise for ratios, the two
    words of METHODS.md: a filled point is different, a dashed interval not precise; + label: a
    short note drawn beside the point, e.g. a UDP rate's loss); ``dots`` has y, hue, value."""

    title: str
    xlabel: str
    rows: pd.DataFrame
    dots: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["y", "hue", "value"]))
    positive: bool = True
    ratio: bool = False
    #: what a point is, for the key ("mean, 95 % CI"; e.g. "percentile" for net_ready)
    centre: str = "mean"
    #: the panel's own row order (e.g. cheapest first), instead of the figure's
    order: list[str] | None = None


@dataclass
class Spec:
    """Everything a figure is drawn from (what :func:`draw` or ``plots.empty`` received): its
    :meth:`digest` changes exactly when the drawn data, orders or texts change."""

    kind: str  # "grid" | "empty"
    title: str
    note: str
    panels: list[Panel] = field(default_factory=list)
    y_order: list[str] = field(default_factory=list)
    hue_order: list[str] = field(default_factory=list)
    #: what the figure leaves out and why (a measure printed coarser than its spread, a loss-dominated
    #: UDP rate as a ratio): the figure's note and the plan (``figures/plan.json``) say it
    left_out: list[str] = field(default_factory=list)

    def digest(self, salt: str = "") -> str:
        h = hashlib.sha256(salt.encode())

        def text(*parts: object) -> None:
            for x in parts:
                h.update(repr(x).encode() + b"\x1f")

        def frame(df: pd.DataFrame) -> None:
            text(list(df.columns), len(df))
            if len(df):
                # the values as text, rows sorted: the same points drawn give the same digest whatever
                # the dtypes (a cached parse gives string where a fresh one gives object) or row order
                c = df.astype(str)
                c = c.sort_values(list(c.columns), kind="stable").reset_index(drop=True)
                h.update(pd.util.hash_pandas_object(c, index=False).to_numpy().tobytes())

        text(self.kind, self.title, self.note, list(self.y_order), list(self.hue_order), len(self.panels))
        if self.left_out:  # nothing left out adds nothing: the other figures' digests stay
            text(list(self.left_out))
        for p in self.panels:
            text(p.title, p.xlabel, p.positive, p.ratio)
            if p.centre != "mean":  # the default adds nothing: the other figures' digests stay
                text(p.centre)
            if p.order is not None:
                text(list(p.order))
            frame(p.rows)
            frame(p.dots)
        return h.hexdigest()


_SPECS_ONLY: ContextVar[bool] = ContextVar("podnet_figure_specs_only", default=False)


@contextmanager
def specs_only() -> Iterator[None]:
    """Within it, the figure functions return their :class:`Spec` instead of drawing."""
    token = _SPECS_ONLY.set(True)
    try:
        yield
    finally:
        _SPECS_ONLY.reset(token)


def capturing() -> bool:
    """Whether the figure functions are asked for their :class:`Spec` (see :func:`specs_only`)."""
    return _SPECS_ONLY.get()


#: the narrowest a panel's plotting area may be (inches): two or three tick labels and a point-range
MIN_AXES = 0.95


def label_width(labels: list[str]) -> float:
    """About how wide (inches) the longest row label is at the tick labels' 6.5 pt (DejaVu Sans: a
    path name's character is 0.52-0.56 em on average), with the tick's pad."""
    return max((len(x) for x in labels), default=0) * 6.5 * 0.56 / 72 + 0.08


def _row_h(n_hue: int) -> float:
    """A path's row height (inches) when the page leaves room: more when variants share a row."""
    return 0.16 * max(1.0, 0.55 * n_hue)


def _most(n: int, label_w: float, shared: bool) -> int:
    """The most columns that leave each panel :data:`MIN_AXES` beside its row labels (``label_w``
    inches, once a row when ``shared``), at most four and no more than ``n`` panels."""
    fit = (style.PAGE - label_w) / MIN_AXES if shared else style.PAGE / (label_w + MIN_AXES + 0.1)
    return max(1, min(4, n, int(fit)))


def _layout(
    n: int, n_rows: int, n_hue: int, label_w: float = 0.55, shared: bool = False
) -> tuple[int, float, float, float]:
    """Columns, figure width, per-panel height and the height around the panels (titles,
    legend) that keep the grid within a page; never more columns than leave each panel
    :data:`MIN_AXES` beside its row labels (``label_w`` inches, once a row when ``shared``)."""
    extra = 0.8 + (0.15 if n_hue > 1 else 0.0)
    row_h = _row_h(n_hue)
    most = _most(n, label_w, shared)
    start = min(most, 2 if n >= 2 and n_rows * max(1, n_hue // 2) <= 10 else 1)
    for ncols in range(start, most + 1):
        if n == 1 and n_rows <= 12:
            ncols = 1
        nrow = int(np.ceil(n / ncols))
        h = 0.55 + row_h * n_rows
        if nrow * h + extra <= style.PAGE_HEIGHT or ncols >= min(n, most):
            break
    if nrow * h + extra > style.PAGE_HEIGHT:  # still too tall: tighter rows
        # no tighter than a row label is tall (6.5 pt text: 0.105 in), or the labels overlap
        row_h = max(0.106, (style.PAGE_HEIGHT - extra - 0.55 * nrow) / (nrow * n_rows))
        h = 0.55 + row_h * n_rows
    width = style.COLUMN if ncols == 1 and n == 1 and n_hue <= 3 else style.PAGE
    return ncols, width, h, extra


def draw(
    panels: list[Panel],
    y_order: list[str],
    hue_order: list[str],
    title: str,
    note: str = "",
    left_out: list[str] | None = None,
) -> plt.Figure:
    """Draw ``panels`` in the row order ``y_order`` and the colours and markers of ``hue_order``
    (within :func:`specs_only`: return their :class:`Spec`, draw nothing). A panel shows only the
    rows (paths) it has data for, and in each row only the variants that have data there;
    ``left_out`` (what the figure does not draw and why) ends the note.

    A hue no panel draws (the reference variant of a variants figure) keeps its colour slot, so
    colours agree across figures, but gets no place in the rows and no legend entry.
    """
    if capturing():
        return Spec("grid", title, note, list(panels), list(y_order), list(hue_order), list(left_out or []))
    style.apply()
    looks = style.series_styles(hue_order)
    colors = {h: c for h, (c, _m) in looks.items()}
    drawn = set().union(*(set(p.rows["hue"].astype(str)) for p in panels)) if panels else set()
    hue_order = [h for h in hue_order if h in drawn] or hue_order
    n_hue = len(hue_order)
    # each panel's rows are the paths it has data for (in the shared order): no empty row; panels
    # share their row labels (left column only) when every panel has the same paths
    own = [[y for y in (p.order or y_order) if y in set(p.rows["y"].astype(str))] for p in panels]
    shared = all(o == own[0] for o in own)
    n_rows = max((len(o) for o in own), default=len(y_order)) or 1
    label_w = label_width([y for o in own for y in o])
    ncols, width, ph, extra = _layout(len(panels), n_rows, n_hue, label_w, shared)
    if shared:
        fig, axes, n_of, ncols, xlabels, titles = _grid(panels, own, width, ncols, ph, extra, label_w)
    else:  # panels of different paths: each as tall as its own rows, in columns (masonry.py)
        fig, axes, n_of, ncols, xlabels, titles = _masonry(panels, own, width, ncols, n_hue, extra, label_w)
    fig.podnet_intervals = []  # (positive, lo drawn, hi drawn): the test reads these
    step = min(0.7 / max(n_hue, 1), 0.3)
    for k, (ax, p, xlabel, ptitle) in enumerate(zip(axes, panels, xlabels, titles)):
        rows = own[k]
        ypos = {y: i for i, y in enumerate(rows)}
        # within a row, the variants it has, centred on it (no gap for a variant without data there)
        present = set(zip(p.rows["y"].astype(str), p.rows["hue"].astype(str)))
        offsets = {}
        for y in rows:
            hues = [h for h in hue_order if (y, h) in present]
            offsets.update({(y, h): (i - (len(hues) - 1) / 2) * step for i, h in enumerate(hues)})
        _panel(fig, ax, p, ypos, offsets, looks, narrow=width / ncols < 2.0)
        ax.set_title(ptitle)
        ax.set_xlabel(xlabel)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_ylim(n_of[k] - 0.5, -0.5)
    handles = [
        Line2D([], [], color=colors[h], marker=looks[h][1], ls="-", ms=4, label=h)
        for h in hue_order
        if n_hue > 1
    ]
    handles += _key(panels)
    if left_out:
        note = "\n".join([*([note] if note else []), *(f"not drawn: {x}" for x in left_out)])
    style.legend(fig, handles, note, wrap=62 if width < style.PAGE else 125)
    fig.suptitle(title)
    style.thin_ticks(fig)
    return fig


def _wrap(panels: list[Panel], width: float, ncols: int, label_w: float) -> tuple[list[str], list[str]]:
    """Each panel's x label and title wrapped to its width (the axes' width: the panel's less its
    row labels, on which the text is centred: about 17.5 characters per inch at 7 pt, 16.5 at 7.5
    pt); a long baseline name in "Ratio to <variant> (log scale)" once overran its panel."""
    axes_w = max(width / ncols - label_w - 0.1, 0.6)
    xlabels = [textwrap.fill(_xlabel(p), max(12, int(17.5 * axes_w))) for p in panels]
    titles = [textwrap.fill(p.title, max(10, int(16.5 * axes_w))) for p in panels]
    return xlabels, titles


def _masonry(panels, own, width, ncols, n_hue, extra, label_w):
    """The figure, its axes in panel order and each panel's row count, its columns, x labels and
    titles: each panel as tall as its own paths (each extra line of its title or x label its own
    height), in columns of :mod:`masonry`, rows tighter when the page is too short."""
    n_of = [len(o) or 1 for o in own]

    def fixed_of(c: int) -> list[float]:
        xlabels, titles = _wrap(panels, width, c, label_w)
        return [0.55 + 0.14 * (x.count("\n") + t.count("\n")) for x, t in zip(xlabels, titles)]

    most = _most(len(panels), label_w, False)
    ncols, row_h, fixed = masonry.layout(n_of, fixed_of, min(ncols, most), most, _row_h(n_hue), extra)
    inner = [row_h * k for k in n_of]
    cols = masonry.columns([f + i for f, i in zip(fixed, inner)], ncols)
    if len(cols) < ncols:  # fewer columns make it no shorter: the panels take the whole width
        ncols, fixed = len(cols), fixed_of(len(cols))
        cols = masonry.columns([f + i for f, i in zip(fixed, inner)], ncols)
    xlabels, titles = _wrap(panels, width, ncols, label_w)
    if masonry.tallest([f + i for f, i in zip(fixed, inner)], ncols) + extra > style.PAGE_HEIGHT and (
        len({p.xlabel for p in panels}) == 1
    ):  # too tall for a page: one x label shared by all, shown under each column's last panel only
        last = {col[-1] for col in cols}
        xlabels = [x if k in last else "" for k, x in enumerate(xlabels)]
        fixed = [f if k in last else 0.42 + 0.14 * titles[k].count("\n") for k, f in enumerate(fixed)]
        row_h = masonry.tighter(cols, n_of, fixed, row_h, extra)
        inner = [row_h * k for k in n_of]
    tall = max(sum(fixed[k] + inner[k] for k in col) for col in cols)
    fig = plt.figure(figsize=(width, tall + extra), layout="constrained")
    return fig, masonry.axes(fig, cols, inner, fixed), n_of, len(cols), xlabels, titles


def _grid(panels, own, width, ncols, ph, extra, label_w):
    """The figure of panels that share their paths (row labels on the left column only), as
    :func:`_masonry` returns it: a grid, a row of panels as tall as its panel with the most paths,
    an x label shared by every panel shown on the last row only when the page is too short."""
    n_rows = max(len(o) for o in own) or 1
    nrows = int(np.ceil(len(panels) / ncols))
    row_h = (ph - 0.55) / n_rows
    in_row = [max((len(o) for o in own[r * ncols : (r + 1) * ncols]), default=1) or 1 for r in range(nrows)]
    xlabels, titles = _wrap(panels, width, ncols, label_w)

    def labelled(k: int, shared: bool) -> bool:
        """Panel k shows its x label: always, or (shared) when no panel lies below it."""
        return not shared or k + ncols >= len(panels)

    def fixed_of(shared: bool) -> list[float]:
        """Each row's height beyond its paths: ticks, title lines and, where a panel of the row
        shows it, the x label's lines."""
        return [
            (
                0.55 + 0.14 * extra_lines
                if any(labelled(k, shared) for k in range(r * ncols, min((r + 1) * ncols, len(panels))))
                else 0.42
            )
            + 0.14 * t
            for r, t in enumerate(title_lines)
        ]

    extra_lines = max((x.count("\n") for x in xlabels), default=0)
    title_lines = [
        max((t.count("\n") for t in titles[r * ncols : (r + 1) * ncols]), default=0) for r in range(nrows)
    ]
    fixed = fixed_of(False)
    # too tall for a page: panels sharing one x label show it on the last row only
    shared_x = (
        nrows > 1
        and len({p.xlabel for p in panels}) == 1
        and sum(fixed) + row_h * sum(in_row) + extra > style.PAGE_HEIGHT
    )
    if shared_x:
        fixed = fixed_of(True)
        xlabels = [x if labelled(k, True) else "" for k, x in enumerate(xlabels)]
    if sum(fixed) + row_h * sum(in_row) + extra > style.PAGE_HEIGHT:  # wrapped text: tighter rows
        row_h = max(0.106, (style.PAGE_HEIGHT - extra - sum(fixed)) / sum(in_row))
    heights = [f + row_h * k for f, k in zip(fixed, in_row)]
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width, sum(heights) + extra),
        squeeze=False,
        sharey=True,
        gridspec_kw={"height_ratios": heights},
        layout="constrained",
    )
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    return (
        fig,
        list(axes.flat[: len(panels)]),
        [in_row[k // ncols] for k in range(len(panels))],
        ncols,
        xlabels,
        titles,
    )


def _key(panels: list[Panel]) -> list[Line2D]:
    """The key of the points: different or not and precise or not (ratio panels: METHODS.md, "Two
    words"), what a point is and the dots (the others); a figure with both kinds of panel gets both."""
    key: list[Line2D] = []
    ratio = [p for p in panels if p.ratio]
    if ratio:
        key = [
            Line2D([], [], color="0.2", marker="o", ls="-", ms=4, label="different (Holm p < α)"),
            Line2D([], [], color="0.2", marker="o", mfc="white", ls="-", ms=4, label="not shown different"),
        ]
        if any("precise" in p.rows.columns for p in ratio):
            key.append(Line2D([], [], color="0.2", ls=(0, (2, 1.2)), label="not precise"))
    plain = [p for p in panels if not p.ratio]
    if key and not plain:
        return key
    has_dots = any(len(p.dots) for p in plain)
    centre = " / ".join(dict.fromkeys(p.centre for p in plain)) or "mean"
    # an interval is offered only where a point has one (one run per point: none)
    shown = f"{centre}, 95 % CI" if has_interval(plain) else f"{centre} (too few runs for an interval)"
    key.append(
        Line2D([], [], color="0.2", marker="o", ls="-" if has_interval(plain) else "", ms=4, label=shown)
    )
    if has_dots:
        key.append(Line2D([], [], color="0.2", marker="o", ls="", ms=2, alpha=0.5, label="each repeat"))
    return key


def has_interval(panels: list[Panel]) -> bool:
    """Whether any point of ``panels`` is drawn with an interval (an end finite on either axis, or
    the statistics' open interval)."""
    for p in panels:
        r = p.rows
        ends = [c for c in ("lo", "hi", "xlo", "xhi") if c in r.columns]
        if len(r) and np.isfinite(r[ends].to_numpy(dtype=float)).any():
            return True
        if "unbounded" in r.columns and r["unbounded"].astype(bool).any():
            return True
    return False


def _is_log(p: Panel) -> bool:
    """Whether panel ``p``'s value axis is logarithmic: a ratio, or a positive quantity whose values
    span more than 30x."""
    if p.ratio:
        return True
    vals = p.rows[["centre", "lo", "hi"]].to_numpy(dtype=float).ravel()
    if len(p.dots):
        vals = np.concatenate([vals, p.dots["value"].to_numpy(dtype=float)])
    pos = vals[np.isfinite(vals) & (vals > 0)]
    return bool(p.positive and len(pos) > 1 and pos.max() / pos.min() > 30)


def _xlabel(p: Panel) -> str:
    """The panel's x label, saying "(log scale)" when its axis is."""
    return p.xlabel if not _is_log(p) or "log" in p.xlabel.lower() else f"{p.xlabel} (log scale)"


def _panel(fig, ax, p: Panel, ypos, offsets, looks, narrow: bool = False) -> None:
    rows = p.rows
    colors = {h: c for h, (c, _m) in looks.items()}
    vals = np.concatenate(
        [
            rows[["centre", "lo", "hi"]].to_numpy(dtype=float).ravel(),
            p.dots["value"].to_numpy(dtype=float) if len(p.dots) else np.array([]),
        ]
    )
    data = np.concatenate(
        [
            rows["centre"].to_numpy(dtype=float),
            p.dots["value"].to_numpy(dtype=float) if len(p.dots) else np.array([]),
        ]
    )
    if p.ratio:
        lo, hi = axis.limits(vals, True, True, data, axis.STRETCH_RATIO)
        style.ratio_axis(ax, lo, hi, narrow=narrow)
        lo, hi = ax.get_xlim()
        log = True
    else:
        log = _is_log(p)
        lo, hi = axis.limits(vals, log, p.positive, data)
        if log:
            ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        style.plain_axis(ax, "x")
    floor = lo if (log or p.positive) else -np.inf
    for _, r in rows.iterrows():
        if (r["y"], r["hue"]) not in offsets:
            continue
        y = ypos[r["y"]] + offsets[(r["y"], r["hue"])]
        c = colors[r["hue"]]
        a, b = float(r["lo"]), float(r["hi"])
        if bool(r.get("unbounded", False)) and not (np.isfinite(a) and np.isfinite(b)):
            a, b = -np.inf, np.inf  # the statistics say the interval has no finite bound
        if np.isfinite(a) or np.isfinite(b) or (a == -np.inf and b == np.inf):
            open_lo = not np.isfinite(a) or a < floor or (log and a <= 0)
            open_hi = not np.isfinite(b) or b > hi
            a_d = floor if open_lo else a
            b_d = hi if open_hi else b
            if p.positive or p.ratio:
                a_d = max(a_d, 0.0)
            dashed = p.ratio and r.get("precise") is False  # the interval misses its width target
            ax.plot(
                [a_d, b_d],
                [y, y],
                color=c,
                lw=1.1,
                ls=(0, (2, 1.2)) if dashed else "-",
                solid_capstyle="butt",
                zorder=2,
            )
            fig.podnet_intervals.append((p.positive or p.ratio, a_d, b_d))
            if open_lo:
                ax.plot([a_d], [y], marker="<", color=c, ms=3.5, zorder=3, clip_on=False)
            if open_hi:
                ax.plot([b_d], [y], marker=">", color=c, ms=3.5, zorder=3, clip_on=False)
        filled = not p.ratio or bool(r.get("different") is True)
        ax.plot(
            [r["centre"]],
            [y],
            marker=looks[r["hue"]][1],
            ms=4,
            color=c,
            mfc=c if filled else "white",
            mec=c if p.ratio else "0.15",
            mew=0.6 if not p.ratio else 1.0,
            zorder=4,
            label=str(r["hue"]),  # the series it belongs to (the checklist tells series apart)
        )
        _at_edge(ax, y, str(r.get("label", "") or ""))
    if len(p.dots):
        for (yv, hv), d in p.dots.groupby(["y", "hue"], sort=False):
            if (yv, hv) not in offsets:
                continue
            k = len(d)
            jitter = np.linspace(-0.12, 0.12, k) if k > 1 else np.zeros(1)
            ax.scatter(
                d["value"],
                ypos[yv] + offsets[(yv, hv)] + jitter,
                s=4,
                color=colors[hv],
                alpha=0.55,
                linewidths=0,
                zorder=3,
            )
    ax.grid(axis="x", lw=0.4, alpha=0.4)
    ax.tick_params(axis="y", length=0)


def _at_edge(ax: plt.Axes, y: float, text: str) -> None:
    """A short note on a row (e.g. "99.9 % lost") beside the panel, right of its axes, as a column
    of a table: never inside the value axis, whose range stays the data's (the layout makes room)."""
    if not text.strip() or text == "nan":
        return
    ax.annotate(
        text,
        (1.0, y),
        xycoords=("axes fraction", "data"),
        xytext=(3, 0),
        textcoords="offset points",
        ha="left",
        va="center",
        fontsize=5.5,
        color="0.25",
        annotation_clip=False,
        zorder=5,
    )
