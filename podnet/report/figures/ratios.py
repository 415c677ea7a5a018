"""The ratios figure: each primary comparison as treatment / baseline on a log axis, significance
after adjustment marked."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import data, grid
from .plots import alpha, empty, primary_ratios, ratio_panels


def make(t: data.Tables) -> plt.Figure:
    """Each primary comparison as treatment / baseline with its interval; log axis, 1x marked."""
    title = "Ratio to the baseline"
    r = primary_ratios(t.ratios, t.settings)
    if len(r) and (r["by"] != "variant").any():
        r = r[r["by"] != "variant"]
    if r.empty:
        return empty(title, "no comparison configured or computable")
    a = alpha(t.settings)
    paths = data.path_order(t)
    if (r["by"] == "variant").all():
        panels = ratio_panels(r, "scenario", "treatment", a, data.stream_bounds(t))
        hues = data.variant_order(t)
    else:
        panels = ratio_panels(r, "treatment", "variant", a, data.stream_bounds(t))
        hues = data.variant_order(t)
    note = "no line: too few runs for an interval; arrows: interval open at that end"
    if "role" in r.columns and not (r["role"] == "primary").any():
        note = "exploratory (no stats.primary declared): no adjusted p, none marked resolved\n" + note
    return grid.draw(
        panels, [p for p in paths if p in set(r["treatment"]) | set(r["scenario"])], hues, title, note
    )
