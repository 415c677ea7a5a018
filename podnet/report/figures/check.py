"""Layout checks a figure must pass before it is published (used by the tests).

``problems(fig)`` lists text boxes that overlap or leave the canvas, tick labels in scientific
notation or with an offset, and intervals of positive quantities drawn below zero.
"""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
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
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_offset_text().get_text().strip():
                found.append(f"axis offset/multiplier text: {axis.get_offset_text().get_text()!r}")
    for positive, lo, _hi in getattr(fig, "podnet_intervals", []):
        if positive and lo < 0:
            found.append(f"interval of a positive quantity drawn below 0 (from {lo})")
    return found
