"""Panels of different heights in columns, each panel as tall as its own rows (``grid.draw``).

A grid of equal rows makes a panel of three paths as tall as the panel of fifteen beside it: mostly
blank, and the figure too tall to print. Here the panels, in their reading order, fill the columns
top to bottom (column after column), split where the tallest column is lowest; a column shorter than
the tallest ends with blank space below its last panel, not inside a panel.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

import matplotlib.pyplot as plt

from . import style


def columns(heights: list[float], ncols: int) -> list[list[int]]:
    """The panels (indices into ``heights``, in order) of each of at most ``ncols`` columns: the
    sequence split into consecutive runs whose tallest is as low as can be (read column after
    column), or, when that is lower, each panel in turn put into the column that is shortest then
    (read across, as a grid of rows)."""
    split = _runs(heights, ncols)
    across: list[list[int]] = [[] for _ in range(max(1, min(ncols, len(heights))))]
    for k in range(len(heights)):
        min(across, key=lambda col: sum(heights[i] for i in col)).append(k)
    across = [col for col in across if col]

    def top(cols: list[list[int]]) -> float:
        return max(sum(heights[k] for k in col) for col in cols)

    return across if top(across) < top(split) - 1e-9 else split


def _runs(heights: list[float], ncols: int) -> list[list[int]]:
    """The split of ``heights`` into at most ``ncols`` consecutive runs whose tallest is lowest."""
    n = len(heights)
    ncols = max(1, min(ncols, n))
    at = [0.0, *accumulate(heights)]
    # best[c][i]: the lowest tallest column when the first i panels fill c columns
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(ncols + 1)]
    cut = [[0] * (n + 1) for _ in range(ncols + 1)]
    best[0][0] = 0.0
    for c in range(1, ncols + 1):
        for i in range(1, n + 1):
            for j in range(c - 1, i):
                v = max(best[c - 1][j], at[i] - at[j])
                if v < best[c][i] - 1e-9:
                    best[c][i], cut[c][i] = v, j
    c = min(range(1, ncols + 1), key=lambda k: (best[k][n], k))  # no more columns than help
    out: list[list[int]] = []
    i = n
    while c:
        j = cut[c][i]
        out.insert(0, list(range(j, i)))
        i, c = j, c - 1
    return out


def tallest(heights: list[float], ncols: int) -> float:
    """The height of the tallest column :func:`columns` makes."""
    return max(sum(heights[k] for k in col) for col in columns(heights, ncols))


def axes(fig: plt.Figure, cols: list[list[int]], inner: list[float], fixed: list[float]) -> list[plt.Axes]:
    """One axes per panel, in panel order: column ``c`` holds the panels ``cols[c]``,
    each axes ``inner[k]`` tall (inches; ``fixed[k]``: its titles and labels around it, which the
    layout places), the rest of a column below its last panel left blank."""
    whole = max(sum(inner[k] + fixed[k] for k in col) for col in cols)
    outer = fig.add_gridspec(1, len(cols))
    out: dict[int, plt.Axes] = {}
    for c, col in enumerate(cols):
        spare = whole - sum(inner[k] + fixed[k] for k in col)
        # the layout keeps the axes' heights (not their labels') in these ratios; a blank cell of
        # the spare height ends a shorter column
        ratios = [inner[k] for k in col] + [max(spare, 1e-3)]
        sub = outer[c].subgridspec(len(col) + 1, 1, height_ratios=ratios)
        for i, k in enumerate(col):
            out[k] = fig.add_subplot(sub[i])
    return [out[k] for k in sorted(out)]


#: no tighter than a row label is tall (6.5 pt text: 0.105 in), or the labels overlap
TIGHTEST_ROW = 0.106


def layout(
    n_rows: list[int],
    fixed_of: Callable[[int], list[float]],
    first: int,
    most: int,
    row_h: float,
    extra: float,
    page: float | None = None,
) -> tuple[int, float, list[float]]:
    """(columns, row height, each panel's height beyond its rows) for panels of ``n_rows`` rows:
    the fewest columns from ``first`` to ``most`` whose tallest column (each panel ``fixed_of(c)``
    plus ``row_h`` a row) and ``extra`` fit ``page`` (the printable height), else ``most`` columns
    with rows as tight as the page needs (never under :data:`TIGHTEST_ROW`)."""
    page = style.PAGE_HEIGHT if page is None else page
    ncols, fixed = first, fixed_of(first)
    for ncols in range(first, max(first, most) + 1):
        fixed = fixed_of(ncols)
        if tallest([f + row_h * k for f, k in zip(fixed, n_rows)], ncols) + extra <= page:
            return ncols, row_h, fixed
    for _ in range(3):  # the split moves as the rows tighten: settle it
        row_h = tighter(
            columns([f + row_h * k for f, k in zip(fixed, n_rows)], ncols), n_rows, fixed, row_h, extra, page
        )
    return ncols, row_h, fixed


def tighter(
    cols: list[list[int]],
    n_rows: list[int],
    fixed: list[float],
    row_h: float,
    extra: float,
    page: float | None = None,
) -> float:
    """The row height (at most ``row_h``, at least :data:`TIGHTEST_ROW`) at which the tallest of
    ``cols`` and ``extra`` fit ``page``."""
    page = style.PAGE_HEIGHT if page is None else page
    worst = max(cols, key=lambda col: sum(fixed[k] + row_h * n_rows[k] for k in col))
    room = page - extra - sum(fixed[k] for k in worst)
    return max(TIGHTEST_ROW, min(row_h, room / max(1, sum(n_rows[k] for k in worst))))
