"""What the point-range figures share: the figure that says why there is nothing to draw (never
published: :func:`podnet.report.figures.plan` leaves it out), the primary comparisons, the
significance level and the ratio panels (``ratios``, ``variants``)."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from podnet.config import schema

from . import data, grid, style


def empty(title: str, message: str) -> plt.Figure:
    """A column-wide figure that says why there is nothing to draw."""
    if grid.capturing():
        return grid.Spec("empty", title, message)
    style.apply()
    fig = plt.figure(figsize=(style.COLUMN, 1.0), layout="constrained")
    fig.suptitle(title)
    fig.text(0.5, 0.4, textwrap.fill(message, 60), ha="center", va="center", fontsize=7, color="0.3")
    fig.podnet_intervals = []
    return fig


def interval_note(panels: list[grid.Panel]) -> str:
    """The note of a ratio figure on its intervals: what a point without a line means, and the open
    ends, only when some point has an interval; else that none has one."""
    if grid.has_interval(panels):
        return "no line: too few runs for an interval; arrows: interval open at that end"
    return "no interval: too few runs for one at every point"


def primary_ratios(ratios: pd.DataFrame, settings: dict[str, Any] | None = None) -> pd.DataFrame:
    """The primary comparisons: rows with ``role == "primary"`` when the statistics mark roles,
    else each (tool, test)'s first headline metric."""
    if ratios.empty:
        return ratios
    if "role" in ratios.columns and (ratios["role"] == "primary").any():
        return ratios[ratios["role"] == "primary"].reset_index(drop=True)
    return data.headline_rows(ratios, None, settings)


def alpha(settings: dict[str, Any] | None) -> float:
    """The significance level the statistics used (1 - confidence)."""
    confidence = {**schema.defaults("stats"), **(settings or {})}["confidence"]
    return 1.0 - float(confidence)


def ratio_panels(
    r: pd.DataFrame, y: str, hue: str, a: float, bounds: dict[tuple[str, str], str] | None = None
) -> list[grid.Panel]:
    # the interval the findings state (paired when it can be), and its two words
    from podnet.stats.precision import as_judged, different, is_precise

    r = as_judged(r)
    panels = []
    for _, sub in r.groupby(data.MEASURE + ["baseline"], sort=True, dropna=False):
        first = sub.iloc[0]
        panels.append(
            grid.Panel(
                title=data.measure_label(first, with_metric=True, bounds=bounds),
                xlabel=f"Ratio to {first['baseline']} (log scale)",
                rows=pd.DataFrame(
                    {
                        "y": sub[y].astype(str),
                        "hue": sub[hue].astype(str),
                        "centre": sub["ratio"].astype(float),
                        "lo": sub["ci_low"].astype(float),
                        "hi": sub["ci_high"].astype(float),
                        "different": [different(x) for _, x in sub.iterrows()],
                        "precise": [is_precise(x) for _, x in sub.iterrows()],
                        "unbounded": sub.get("ci_note", pd.Series("", sub.index))
                        .astype(str)
                        .str.contains("unbounded"),
                    }
                ),
                positive=True,
                ratio=True,
            )
        )
    return panels
