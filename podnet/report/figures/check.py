"""Layout checks a figure must pass before it is published (used by the tests).

``problems(fig)`` lists text boxes that overlap or leave the canvas, tick labels of one axis that
repeat or stand too close (side by side: closer than a quarter of their font size; stacked: their
boxes overlap), tick labels in scientific notation or
with an offset, legend entries that repeat a name, and intervals of positive quantities drawn
below zero.

``checklist(fig)`` is what a reviewer checks in a published figure: no two legend entries (or
series of one panel) share colour and marker, no text is cut at the image edge as saved, every log
axis says so in its label, the figure prints on a page at its size (:data:`style.PAGE` wide,
:data:`style.PAGE_HEIGHT` tall), no panel is mostly blank rows, and no value axis reaches far
beyond what is drawn on it (a note beside the points must not widen the data's range).
"""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
from matplotlib.container import ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.transforms import Bbox

SCIENTIFIC = re.compile(r"\de[+-]?\d|×\s*10|\\times|10\^|\\mathdefault\{10\^")


def _texts(fig: plt.Figure) -> list[tuple[str, Text]]:
    out: list[tuple[str, Text]] = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        xlim, ylim = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        for t in ax.get_xticklabels():
            if xlim[0] - 1e-12 <= t.get_position()[0] <= xlim[1] + 1e-12:
                out.append(("xtick", t))
        for t in ax.get_yticklabels():
            if ylim[0] - 1e-12 <= t.get_position()[1] <= ylim[1] + 1e-12:
                out.append(("ytick", t))
        out += [("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label), ("title", ax.title)]
        out += [("text", t) for t in ax.texts]
        if ax.get_legend():
            out += [("legend", t) for t in ax.get_legend().get_texts()]
    out += [("figtext", t) for t in fig.texts if t is not fig._suptitle]
    for leg in fig.legends:
        out += [("legend", t) for t in leg.get_texts()]
    if fig._suptitle is not None:
        out.append(("suptitle", fig._suptitle))
    return [(k, t) for k, t in out if t.get_visible() and t.get_text().strip()]


def problems(fig: plt.Figure) -> list[str]:
    """Everything wrong with ``fig``'s layout; empty when it may be published."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    canvas = Bbox.from_bounds(0, 0, *fig.canvas.get_width_height())
    found: list[str] = []
    boxes = []
    for kind, t in _texts(fig):
        bb = t.get_window_extent(r)
        label = f"{kind} {t.get_text()!r}"
        if bb.x0 < canvas.x0 - 1 or bb.y0 < canvas.y0 - 1 or bb.x1 > canvas.x1 + 1 or bb.y1 > canvas.y1 + 1:
            found.append(f"outside the canvas: {label}")
        if kind in ("xtick", "ytick") and SCIENTIFIC.search(t.get_text()):
            found.append(f"scientific notation: {label}")
        boxes.append((label, bb.shrunk(0.98, 0.9) if bb.width and bb.height else bb))
    for i, (la, a) in enumerate(boxes):
        for lb, b in boxes[i + 1 :]:
            if a.width and b.width and a.overlaps(b):
                found.append(f"overlap: {la} and {lb}")
    found += _tick_problems(fig, r)
    found += _legend_problems(fig)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_offset_text().get_text().strip():
                found.append(f"axis offset/multiplier text: {axis.get_offset_text().get_text()!r}")
    for positive, lo, _hi in getattr(fig, "podnet_intervals", []):
        if positive and lo < 0:
            found.append(f"interval of a positive quantity drawn below 0 (from {lo})")
    return found


def _tick_problems(fig: plt.Figure, renderer) -> list[str]:
    """Tick labels of one axis that say the same thing twice or stand too close to be read apart
    (closer than a quarter of their font size: "0.8x1x" reads as one label)."""
    found: list[str] = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        for kind, labels in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
            lim = sorted(ax.get_xlim() if kind == "x" else ax.get_ylim())
            shown = [
                t
                for t in labels
                if t.get_visible()
                and t.get_text().strip()
                and lim[0] - 1e-12 <= t.get_position()[0 if kind == "x" else 1] <= lim[1] + 1e-12
            ]
            texts = [t.get_text() for t in shown]
            for dup in sorted({x for x in texts if texts.count(x) > 1}):
                found.append(f"repeated {kind} tick label {dup!r} in {ax.get_title()!r}")
            boxes = [(t.get_window_extent(renderer), t) for t in shown]
            key = (lambda b: b[0].x0) if kind == "x" else (lambda b: b[0].y0)
            boxes.sort(key=key)
            for (a, ta), (b, tb) in zip(boxes, boxes[1:]):
                # side by side: a quarter of the font size apart; stacked rows: not overlapping
                gap_px = 0.25 * ta.get_fontsize() * fig.dpi / 72 if kind == "x" else 0.0
                gap = b.x0 - a.x1 if kind == "x" else b.y0 - a.y1
                if gap < gap_px:
                    found.append(
                        f"{kind} tick labels {ta.get_text()!r} and {tb.get_text()!r} collide in {ax.get_title()!r}"
                    )
    return found


def _legend_problems(fig: plt.Figure) -> list[str]:
    """A legend that lists one name twice (one figure, one meaning per name)."""
    found: list[str] = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    for leg in legends:
        names = [t.get_text() for t in leg.get_texts()]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            found.append(f"legend names {dup!r} twice")
    return found


# -- the reviewer's checklist (issue 45): what a reader sees wrong in a published figure -------------


def checklist(fig: plt.Figure) -> list[str]:
    """What a reviewer would send back in ``fig``, as the saved file shows it: two legend entries (or
    two series of one panel) a reader cannot tell apart by colour and marker, text cut at the image
    edge, a log axis that does not say so; empty when the figure passes."""
    return (
        _look_alike(fig)
        + _cut_text(fig)
        + _unnamed_log_axes(fig)
        + _off_page(fig)
        + _blank_panels(fig)
        + _stretched_axes(fig)
    )


#: the most of a value axis that may lie beyond what is drawn on it (points, repeats, intervals,
#: reference lines), at its high end (at either end of a log axis: a linear one starts at 0 on purpose)
MOST_BEYOND = 0.3


def _off_page(fig: plt.Figure) -> list[str]:
    """A figure wider or taller than a printed page's text (its size is its print size)."""
    from . import style

    w, h = fig.get_size_inches()
    if w > style.PAGE + 0.01 or h > style.PAGE_HEIGHT + 0.01:
        return [
            f"larger than a page at print size: {w:.1f} x {h:.1f} in (at most {style.PAGE} x {style.PAGE_HEIGHT})"
        ]
    return []


def _blank_panels(fig: plt.Figure) -> list[str]:
    """Point-range panels (named rows on the y axis) more than half of whose height is blank rows."""
    found = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        names = [t.get_text() for t in ax.get_yticklabels()]
        if not names or not all(names) or all(_number(x) for x in names):
            continue  # not rows named by path (a numeric y axis)
        n = len(ax.get_yticks())
        blank = abs(ax.get_ylim()[1] - ax.get_ylim()[0]) - n
        if blank >= 2 and blank > n:
            found.append(
                f"panel mostly blank: {ax.get_title()!r} draws {n} rows in the height of {n + blank:.0f}"
            )
    return found


def _number(text: str) -> bool:
    try:
        float(text.replace("−", "-").replace(",", ""))
    except ValueError:
        return False
    return True


def _stretched_axes(fig: plt.Figure) -> list[str]:
    """x axes that reach more than :data:`MOST_BEYOND` of their width beyond every line and point
    drawn in them (room made for notes, not for data); a ratio axis's least span is its own."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter

    from .style import ratio_label

    found = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        fmt = ax.xaxis.get_major_formatter()
        if isinstance(fmt, FuncFormatter) and fmt.func is ratio_label:
            continue  # a ratio axis spans 0.8x-1.25x at least, by design (style.ratio_axis)
        in_data = (ax.transData, ax.get_xaxis_transform())  # x in data (a vertical line too), not axhline's
        xs = [np.asarray(ln.get_xdata(), dtype=float) for ln in ax.lines if ln.get_transform() in in_data]
        xs += [np.asarray(c.get_offsets(), dtype=float)[:, 0] for c in ax.collections if len(c.get_offsets())]
        x = np.concatenate(xs) if xs else np.array([])
        log = ax.get_xscale() == "log"
        x = x[np.isfinite(x) & ((x > 0) if log else True)]
        if not len(x):
            continue
        to_axes = ax.transAxes.inverted()
        pts = ax.transData.transform(np.column_stack([[x.min(), x.max()], [0, 0]]))
        lo, hi = sorted(to_axes.transform(pts)[:, 0])
        beyond = max(1 - hi, lo if log else 0.0)
        if beyond > MOST_BEYOND:
            found.append(f"x axis {beyond:.0%} beyond its data: {ax.get_title()!r}")
    return found


def _colour(c: object, alpha: float | None = None) -> tuple[float, ...]:
    """An artist's colour as rounded RGBA (its own alpha applied), comparable across artists."""
    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(c)
    a = a if alpha is None else alpha
    return (round(r, 3), round(g, 3), round(b, 3), round(a, 3))


def _look(line: Line2D) -> tuple:
    """What tells a marked line apart at a glance: its colour, its marker and the marker's fill
    (open and filled circles read as two markers)."""
    fill = line.get_markerfacecolor()
    fill_key = "none" if isinstance(fill, str) and fill == "none" else _colour(fill, line.get_alpha())
    return (_colour(line.get_color(), line.get_alpha()), str(line.get_marker()), fill_key)


def _look_alike(fig: plt.Figure) -> list[str]:
    """Legend entries that share colour, marker and fill; series of one panel drawn alike under
    different names (the errorbar's name for its data line, else the line's own)."""
    found: list[str] = []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    for leg in legends:
        seen: dict[tuple, str] = {}
        for h, t in zip(leg.legend_handles, leg.get_texts()):
            if not isinstance(h, Line2D) or h.get_marker() in (None, "", "None", " "):
                continue
            key, name = _look(h), t.get_text()
            if key in seen and seen[key] != name:
                found.append(f"legend entries {seen[key]!r} and {name!r} share colour and marker")
            seen.setdefault(key, name)
    for ax in fig.axes:
        names = {id(c[0]): c.get_label() for c in ax.containers if isinstance(c, ErrorbarContainer) and c[0]}
        seen = {}
        for line in ax.lines:
            name = names.get(id(line), line.get_label())
            if name.startswith("_") or line.get_marker() in (None, "", "None", " "):
                continue
            key = _look(line)
            if key in seen and seen[key] != name:
                found.append(f"series {seen[key]!r} and {name!r} drawn alike in {ax.get_title()!r}")
            seen.setdefault(key, name)
    return sorted(set(found))


def _cut_text(fig: plt.Figure) -> list[str]:
    """Text (titles, labels, tick labels, notes, legend titles) that reaches beyond the image the
    saver writes: the figure's own size (``style.save`` writes no tight box), laid out as it is
    when saved (at the saver's resolution)."""
    from . import style

    dpi = fig.dpi
    fig.set_dpi(style.DPI)
    try:
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        canvas = fig.bbox
        texts = _texts(fig)
        for leg in list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
            if leg.get_title().get_visible() and leg.get_title().get_text().strip():
                texts.append(("legend title", leg.get_title()))
        found = []
        for kind, t in texts:
            bb = t.get_window_extent(r)
            if (
                bb.x0 < canvas.x0 - 1
                or bb.y0 < canvas.y0 - 1
                or bb.x1 > canvas.x1 + 1
                or bb.y1 > canvas.y1 + 1
            ):
                found.append(f"cut at the image edge: {kind} {t.get_text()!r}")
    finally:
        fig.set_dpi(dpi)
    return found


def _says_log(label: str) -> bool:
    return "log" in label.lower()


def _unnamed_log_axes(fig: plt.Figure) -> list[str]:
    """Log (or symlog) axes whose label does not say so; a panel whose x label is shown once below
    its column (shared labels) passes when that label says it."""
    found = []
    shown = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    for ax in shown:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if axis.get_scale() not in ("log", "symlog") or _says_log(axis.label.get_text()):
                continue
            if not axis.label.get_text().strip() and name == "x" and _column_says_log(ax, shown):
                continue
            found.append(f"log {name} axis without saying so: {ax.get_title()!r} ({axis.label.get_text()!r})")
    return found


def _column_says_log(ax: plt.Axes, axes: list[plt.Axes]) -> bool:
    """Whether another log-x panel of ``ax``'s column names its log scale in its x label."""
    spec = ax.get_subplotspec()
    if spec is None:
        return False
    return any(
        o is not ax
        and o.get_subplotspec() is not None
        and o.get_subplotspec().colspan == spec.colspan
        and o.get_xscale() == ax.get_xscale()
        and _says_log(o.xaxis.label.get_text())
        for o in axes
    )
