"""The costs figure: what each path's work costs the machine's CPU (per Gbit, or per transaction),
one panel per test, one row per path sorted cheapest first, the mean with its interval; beside each
row, the rate the path reached (with its interval in the throughput figure). One colour per variant.

(Rate against cost as x-y points with intervals on both axes made a knot of crossing bars at the
main experiment's fifteen paths of near-equal rate.)
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import data, grid
from .plots import empty

#: what a cost figure shows per quantity: the rate metric, its CPU cost metric, the x scale and unit
COSTS = {
    "throughput": ("machine_cpu_per_bit", 1e9, "CPU·s per Gbit"),
    "transaction_rate": ("machine_cpu_per_transaction", 1e6, "CPU·µs per transaction"),
}


def make(t: data.Tables) -> plt.Figure:
    """Each path's CPU time per bit or per transaction, sorted cheapest first, beside its rate."""
    title = "What each path costs"
    s = t.summary
    if s.empty or "metric" not in s.columns:
        return empty(title, "no summary")
    s = s[s["source"].fillna("measured") == "measured"] if "source" in s.columns else s
    keys = ["variant", "scenario", "tool", "test", "protocol", "direction", "streams"]
    panels = []
    rated = True  # every row names its rate (one variant a row)
    for rate_metric, (cost_metric, scale, xlabel) in COSTS.items():
        rate = s[s["metric"] == rate_metric]
        cost = s[s["metric"] == cost_metric]
        if rate.empty or cost.empty:
            continue
        both = rate.merge(cost, on=keys, suffixes=("", "_cost"))
        # a load curve's offered steps are not paths to rank by cost: the sweeps figure has them
        both = both[~both["test"].astype(str).isin(_load_curve_tests(t))]
        for _, g in both.groupby(["tool", "test", "direction", "streams"], sort=True):
            first = g.iloc[0]
            f, unit = data.display_unit(g["centre"], str(first["unit"]))
            x = g["centre_cost"].astype(float).to_numpy() * scale
            one = not g["scenario"].duplicated().any()
            rated = rated and one
            rows = pd.DataFrame(
                {
                    "y": g["scenario"].astype(str).to_numpy(),
                    "hue": g["variant"].astype(str).to_numpy(),
                    "centre": x,
                    "lo": g["ci_low_cost"].astype(float).to_numpy() * scale,
                    "hi": g["ci_high_cost"].astype(float).to_numpy() * scale,
                    **({"label": [_rate(v / f, unit) for v in g["centre"].astype(float)]} if one else {}),
                }
            )
            # cheapest first: each path by its mean cost over the variants
            order = list(rows.groupby("y")["centre"].mean().sort_values(kind="stable").index)
            panels.append(
                grid.Panel(
                    title=data.measure_label(first, bounds=data.stream_bounds(t)),
                    xlabel=xlabel,
                    rows=rows,
                    positive=True,
                    order=order,
                )
            )
    if not panels:
        return empty(
            title,
            "no run recorded the machine's CPU beside a rate (launch.interference, on by default, "
            "records it for launched runs)",
        )
    note = (
        "rows: cheapest first; "
        + ("beside each: the rate it reached (throughput figure: its interval); " if rated else "")
        + "CPU = busy share of the machines' CPUs during the run x their "
        "count (embedded cluster: the one machine, both ends and every daemon); 1 CPU·s per Gbit = one "
        "core busy at 1 Gbit/s; UDP load-curve steps: see the sweeps figure"
    )
    return grid.draw(panels, data.path_order(t), data.variant_order(t), title, note)


def _rate(value: float, unit: str) -> str:
    """A rate as a row's note: "11.2 Gbit/s", "35.2 k/s" (of "k transactions/s")."""
    if not np.isfinite(value):
        return ""
    text = f"{value:.3g}" if value < 1000 else f"{value:,.0f}"
    prefix, _, noun = unit.rpartition(" ")  # "k transactions/s" -> "k/s", as the throughput axis
    return f"{text} {prefix}/s" if noun.endswith("/s") and prefix else f"{text} {unit}".strip()


def _load_curve_tests(t: data.Tables) -> set[str]:
    """The tests that are offered-rate steps of a load curve (bandwidth sweeps)."""
    sw = t.sweeps
    if sw is None or sw.empty:
        return set()
    return set(sw.loc[sw["sweep_param"].astype(str) == "bandwidth", "test"].astype(str))
