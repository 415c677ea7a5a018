"""The ratios figure: each primary comparison as treatment / baseline on a log axis, its two words
marked (filled: different, dashed interval: not precise). An experiment whose comparisons are all between variants has them drawn
once, by the variants figure: this one is then not published and the plan says so."""

from __future__ import annotations

import matplotlib.pyplot as plt

from . import data, grid, withheld
from .plots import alpha, empty, interval_note, primary_ratios, ratio_panels

#: why the ratios figure is not drawn when the variants figure draws the same comparisons
SAME_AS_VARIANTS = (
    "every comparison is between variants: the variants figure draws them (one figure, not the same twice)"
)


def make(t: data.Tables) -> plt.Figure:
    """Each primary comparison as treatment / baseline with its interval; log axis, 1x marked."""
    title = "Ratio to the baseline"
    r = primary_ratios(t.ratios, t.settings)
    if len(r) and (r["by"] != "variant").any():
        r = r[r["by"] != "variant"]
    if r.empty:
        return empty(title, "no comparison configured or computable")
    if (r["by"] == "variant").all():
        return empty(title, SAME_AS_VARIANTS)
    a = alpha(t.settings)
    paths = data.path_order(t)
    r, left_out = withheld.ratios(r, t.summary)
    if r.empty:
        return empty(title, "; ".join(left_out))
    panels = ratio_panels(r, "treatment", "variant", a, data.stream_bounds(t))
    note = interval_note(panels)
    if "role" in r.columns and not (r["role"] == "primary").any():
        note = (
            "exploratory (no stats.primary declared): no adjusted p, none marked different or precise\n"
            + note
        )
    return grid.draw(
        panels,
        [p for p in paths if p in set(r["treatment"]) | set(r["scenario"])],
        data.variant_order(t),
        title,
        note,
        left_out,
    )
