"""The variants figure: each variant (e.g. CNI) against the reference variant, per path and test."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from . import data, grid, withheld
from .plots import alpha, empty, interval_note, primary_ratios, ratio_panels


def variant_ratios(t: data.Tables) -> pd.DataFrame:
    """Ratios of each variant to the reference variant: from ratios.csv when the experiment
    compares variants, else computed here with the experiment's statistics settings (each pair's
    bootstrap and paired columns kept in .cache/variant_ratios.pickle while its groups are unchanged)."""
    r = t.ratios
    if len(r) and (r["by"] == "variant").any():
        return primary_ratios(r[r["by"] == "variant"], t.settings)
    variants = data.variant_order(t)
    if len(variants) < 2 or t.tidy.empty:
        return pd.DataFrame()
    from podnet.stats.ratios import compare

    settings = {k: v for k, v in t.settings.items() if k in ("confidence", "bootstrap", "paired")}
    settings["comparisons"] = [{"by": "variant", "baseline": variants[0]}]
    # each pair's bootstrap kept while its groups are unchanged (the plan and the figure job both ask)
    cache = Path(t.source) / ".cache" / "variant_ratios.pickle" if t.source else None
    return primary_ratios(compare(t.tidy, settings, cache=cache), t.settings)


def make(t: data.Tables) -> plt.Figure:
    """Each variant (e.g. CNI) against the reference variant, per path and test."""
    title = "Variants compared"
    r = variant_ratios(t)
    if r.empty:
        names = data.variant_order(t)
        if len(names) > 1:
            return empty(title, "no measured runs: nothing to compare with an interval")
        return empty(title, f"one variant ({', '.join(names) or 'none'}): nothing to compare")
    a = alpha(t.settings)
    r, left_out = withheld.ratios(r, t.summary)
    if r.empty:
        return empty(title, "; ".join(left_out))
    panels = ratio_panels(r, "scenario", "treatment", a, data.stream_bounds(t))
    note = interval_note(panels)
    paths = [p for p in data.path_order(t) if p in set(r["scenario"].astype(str))]
    return grid.draw(panels, paths, data.variant_order(t), title, note, left_out)
