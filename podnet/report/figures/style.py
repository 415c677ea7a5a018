"""House style of every podnet figure: sizes, fonts, colours, plain tick labels, saving.

Widths are a journal column (3.5 in) or a page (7 in); fonts are 7-8 pt so a figure printed at
100 % is readable. Files are written without dates (PNG 300 dpi, SVG with a fixed hash salt, PDF
without creation date), so a regenerated figure is byte-stable.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

# no backend is chosen here: a notebook keeps its inline backend (figures shown in the .ipynb and
# its HTML), a script that writes files chooses Agg itself (workflow/scripts/figure.py), and a
# headless process without one gets matplotlib's own fallback (Agg)
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FixedLocator, Formatter, FuncFormatter, NullFormatter, NullLocator

COLUMN = 3.5  # inches
PAGE = 7.0
PAGE_HEIGHT = 9.0  # the printable height of a page, inches
DPI = 300
FORMATS = ("png", "svg", "pdf")

RC = {
    "font.size": 7,
    "axes.titlesize": 7.5,
    "axes.labelsize": 7,
    "xtick.labelsize": 6.5,
    "ytick.labelsize": 6.5,
    "legend.fontsize": 6.5,
    "legend.title_fontsize": 7,
    "figure.titlesize": 8.5,
    "axes.linewidth": 0.6,
    "lines.linewidth": 0.9,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "axes.formatter.useoffset": False,
    "axes.formatter.limits": (-99, 99),
    "svg.hashsalt": "podnet",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "font.family": "DejaVu Sans",
}


def apply() -> None:
    """Set the house style (seaborn ticks theme + podnet sizes)."""
    import seaborn as sns  # here, not at import: seaborn loads scipy.stats (a second), which a
    # process that only reads tables or computes what a figure would draw does not need

    sns.set_theme(style="ticks", context="paper", rc=RC)
    plt.rcParams.update(RC)


def legend(fig: plt.Figure, handles: list, note: str = "", wrap: int | None = None) -> None:
    """The house legend below the panels (at most 4 columns), ``note`` as its title (each line
    wrapped at ``wrap`` characters when given); nothing without handles."""
    if not handles:
        return
    if wrap:
        note = "\n".join(textwrap.fill(line, wrap) for line in note.split("\n"))
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(len(handles), 4),
        frameon=False,
        title=note or None,
        title_fontsize=6,
    )


#: the markers of a figure's series, one per round of the palette: the first ten series are
#: circles in the palette's ten colours, the next ten squares in the same colours, and so on
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
#: how many colours the palette has (seaborn's colour-blind palette)
PALETTE_SIZE = 10


def series_styles(names: list[str]) -> dict[str, tuple[tuple[float, float, float], str]]:
    """One (colour, marker) per series name (variant or path), distinct for up to 120 names and the
    same in every figure when ``names`` is the experiment's whole order (``data.path_order`` or
    ``data.variant_order``): a name keeps its place when a figure draws only some of them. The
    colour-blind palette's colours with circles, then the same colours with squares, and so on."""
    import seaborn as sns

    pal = sns.color_palette("colorblind", PALETTE_SIZE)
    return {
        v: (tuple(pal[i % PALETTE_SIZE]), MARKERS[(i // PALETTE_SIZE) % len(MARKERS)])
        for i, v in enumerate(names)
    }


#: the line style of each round of the palette (with :data:`MARKERS`): solid, then dashed, ...
LINESTYLES = ("-", "--", ":", "-.")


def line_styles(names: list[str]) -> dict[str, tuple[tuple[float, float, float], str, str]]:
    """:func:`series_styles` with a line style per round of the palette: two series of one colour
    differ in marker and in line (solid, dashed...), which a thin line shows better than a marker."""
    return {
        v: (c, m, LINESTYLES[(i // PALETTE_SIZE) % len(LINESTYLES)])
        for i, (v, (c, m)) in enumerate(series_styles(names).items())
    }


def variant_colors(variants: list[str]) -> dict[str, tuple[float, float, float]]:
    """One colour per variant, the same in every figure (colour-blind safe palette; past ten
    names the colours repeat and :func:`series_styles` tells them apart by marker)."""
    return {v: c for v, (c, _m) in series_styles(variants).items()}


def plain(x: float, _pos: int | None = None) -> str:
    """A tick label in plain notation: 0.001, 0.5, 12, 1,500 (never 1e3 or 10^3)."""
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1:
        if float(x).is_integer():
            return f"{x:,.0f}"
        text = f"{x:,.{max(0, 2 - int(np.log10(a)))}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text  # 150.5 -> "150", never "15"
    decimals = int(np.ceil(-np.log10(a))) + 1
    return f"{x:.{decimals}f}".rstrip("0").rstrip(".")


def plain_axis(ax: plt.Axes, axis: str = "x") -> None:
    """Plain tick labels on a linear or log axis; on a log axis, ticks at 1-2-5 of each decade
    when the range is narrow, at each decade (or every other, or every third) when it is wide."""
    a = ax.xaxis if axis == "x" else ax.yaxis
    lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    if a.get_scale() == "log":
        decades = np.log10(hi) - np.log10(lo)
        mult = [1, 2, 5] if decades < 2.5 else [1] if decades < 6 else None
        exps = range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1)
        if mult is None:
            step = 2 if decades < 10 else 3
            ticks = [10.0**e for e in exps if e % step == 0]
        else:
            ticks = [m * 10.0**e for e in exps for m in mult]
        a.set_major_locator(FixedLocator([t for t in ticks if lo <= t <= hi]))
        a.set_minor_locator(NullLocator())
        a.set_minor_formatter(NullFormatter())
    a.set_major_formatter(PlainFormatter())


class PlainFormatter(Formatter):
    """:func:`plain` tick labels, with as many decimals as the ticks need to read apart (810,
    810.25, 810.5: never "810" twice)."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return plain(x, pos)

    def format_ticks(self, values) -> list[str]:
        labels = [plain(v) for v in values]
        if len(set(labels)) == len(labels) or len(values) < 2:
            return labels
        step = float(np.min(np.diff(np.sort(np.asarray(values, dtype=float)))))
        decimals = max(0, int(np.ceil(-np.log10(step))) + 1) if step > 0 else 2
        return [f"{v:,.{decimals}f}".rstrip("0").rstrip(".") if decimals else f"{v:,.0f}" for v in values]


RATIO_TICKS = [
    0.0001,
    0.0002,
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    0.8,
    1,
    1.25,
    2,
    5,
    10,
    20,
    50,
    100,
    200,
    500,
    1000,
    2000,
    5000,
    10000,
]


def ratio_label(x: float, _pos: int | None = None) -> str:
    """A ratio tick: 0.5x, 1x, 1.25x."""
    return f"{plain(x)}x"


def ratio_axis(ax: plt.Axes, lo: float, hi: float, narrow: bool = False) -> None:
    """A logarithmic ratio axis from ``lo`` to ``hi`` with plain ticks (0.5x, 0.8x, 1x, 1.25x, 2x);
    ``narrow`` (a panel under 2 in): 0.8x and 1.25x only on a very short range."""
    lo, hi = min(lo, 0.8), max(hi, 1.25)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    decades = np.log10(hi / lo)
    cand = [t for t in RATIO_TICKS if lo <= t <= hi]
    if decades > (0.35 if narrow else 1.2):
        cand = [t for t in cand if t not in (0.8, 1.25)]
    if decades > (1.2 if narrow else 3):
        cand = [t for t in cand if np.isclose(np.log10(t) % 1, 0) or np.isclose(np.log10(t) % 1, 1)]
    if decades > 6:
        cand = [t for t in cand if round(np.log10(t)) % 2 == 0]
    ax.xaxis.set_major_locator(FixedLocator(cand))
    ax.xaxis.set_major_formatter(FuncFormatter(ratio_label))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.axvline(1.0, color="0.35", lw=0.7, ls="--", zorder=0)


def _priority(x: float, log: bool) -> tuple[int, float]:
    """Which tick to keep first when labels collide: 0 and 1 (1x), then decades, then 2 and 5 of a
    decade, then the rest (0.8x, 1.25x)."""
    if x == 0 or np.isclose(x, 1.0):
        return (0, 0.0)
    if x > 0:
        frac = np.log10(abs(x)) % 1
        if np.isclose(frac, 0) or np.isclose(frac, 1):
            return (1, 0.0)
        if log and (np.isclose(frac, np.log10(2)) or np.isclose(frac, np.log10(5))):
            return (2, 0.0)
    return (3, 0.0)


def thin_ticks(fig: plt.Figure) -> None:
    """Drop numeric x tick labels that would collide (closer than a quarter of their font size)
    once the figure is laid out, keeping 0 / 1x, decades and 2-5 before the rest, and otherwise
    every other tick from the left."""
    fig.draw_without_rendering()
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        lo, hi = sorted(ax.get_xlim())
        ticks = [t for t in ax.get_xticks() if lo - 1e-12 <= t <= hi + 1e-12]
        labels = {t.get_position()[0]: t for t in ax.get_xticklabels() if t.get_text().strip()}
        boxes = {x: labels[x].get_window_extent(r) for x in ticks if x in labels}
        if len(boxes) < 2:
            continue
        size = next(iter(labels.values())).get_fontsize() * fig.dpi / 72 * 0.25
        xs = sorted(boxes)
        if all(boxes[b].x0 - boxes[a].x1 >= size for a, b in zip(xs, xs[1:])):
            continue
        if ax.get_xscale() == "log":
            kept: list[float] = []
            for x in sorted(xs, key=lambda v: (_priority(v, True), xs.index(v))):
                if all(boxes[x].x0 - boxes[k].x1 >= size or boxes[k].x0 - boxes[x].x1 >= size for k in kept):
                    kept.append(x)
        else:  # a linear axis keeps evenly spaced ticks: every other (or third ...) from its first
            every = next((n for n in (2, 3, 4, 5, 10) if _fits(xs[::n], boxes, size)), len(xs))
            kept = xs[::every]
        ax.xaxis.set_major_locator(FixedLocator(sorted(kept)))
        ax.xaxis.set_minor_locator(NullLocator())


def _fits(xs: list[float], boxes: dict, size: float) -> bool:
    return all(boxes[b].x0 - boxes[a].x1 >= size for a, b in zip(xs, xs[1:]))


def save(fig: plt.Figure, name: str, figures_dir: str | Path) -> list[Path]:
    """Write ``name``.png (300 dpi), .svg and .pdf at the figure's own size; returns the paths."""
    out = Path(figures_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    meta = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
    }
    for ext in FORMATS:
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=DPI, metadata=meta[ext])
        paths.append(p)
    return paths


def warm_up() -> None:
    """Draw one small figure in the house style and write it as PNG, SVG and PDF to memory.

    For a process that forks figure jobs (``podnet.config.warm``): the fonts, text layout and the
    three writers are loaded once, so a job starts drawing at once (about 0.4 s of CPU each). Without
    pyplot (no backend is chosen, a forked notebook kernel still gets its own) and with matplotlib's
    settings restored: what a figure draws is unchanged.
    """
    import io

    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context():
        apply()
        fig = Figure(figsize=(COLUMN, 1.5), layout="constrained")
        ax = fig.add_subplot()
        ax.plot([1, 10, 100], [1.0, 2.5, 2.0], marker="o", label="a")
        ax.set_xscale("log")
        ax.set_title("title")
        ax.set_xlabel("x · unit")
        ax.legend(title="legend")
        plain_axis(ax, "y")
        for ext in FORMATS:
            fig.savefig(io.BytesIO(), format=ext, dpi=DPI)
