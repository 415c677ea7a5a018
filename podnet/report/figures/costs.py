"""The costs figure: each path's rate against the machine's CPU time per bit (or per transaction),
both with their intervals, so a path that reaches the same rate by burning more CPU sits to the right.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from . import data, grid
from .curves import draw_xy, hue_order, series
from .plots import empty

#: what a cost figure shows per quantity: the rate metric, its CPU cost metric, the x scale and unit
COSTS = {
    "throughput": ("machine_cpu_per_bit", 1e9, "CPU·s per Gbit"),
    "transaction_rate": ("machine_cpu_per_transaction", 1e6, "CPU·µs per transaction"),
}


def make(t: data.Tables) -> plt.Figure:
    """Each path's rate against the machine's CPU time per bit or per transaction."""
    title = "What each path costs"
    s = t.summary
    if s.empty or "metric" not in s.columns:
        return empty(title, "no summary")
    s = s[s["source"].fillna("measured") == "measured"] if "source" in s.columns else s
    keys = ["variant", "scenario", "tool", "test", "protocol", "direction", "streams"]
    panels = []
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
            tool = str(first["tool"])
            f, unit = data.display_unit(g["centre"], str(first["unit"]))
            label, hue, _ = series(g, t)
            rows = pd.DataFrame(
                {
                    "series": label.to_numpy(),
                    "hue": hue.to_numpy(),
                    "x": g["centre_cost"].astype(float).to_numpy() * scale,
                    "xlo": g["ci_low_cost"].astype(float).to_numpy() * scale,
                    "xhi": g["ci_high_cost"].astype(float).to_numpy() * scale,
                    "centre": g["centre"].astype(float).to_numpy() / f,
                    "lo": g["ci_low"].astype(float).to_numpy() / f,
                    "hi": g["ci_high"].astype(float).to_numpy() / f,
                    "label": "",
                    "path": g["scenario"].astype(str).to_numpy(),
                }
            )
            panels.append(
                grid.Panel(
                    title=f"{data.measure_label(first, bounds=data.stream_bounds(t))} · "
                    f"{data.axis_label(rate_metric, str(tool), unit)}",
                    xlabel=xlabel,
                    rows=rows,
                    positive=True,
                )
            )
    if not panels:
        return empty(
            title,
            "no run recorded the machine's CPU beside a rate (launch.interference, on by default, "
            "records it for launched runs)",
        )
    hues = hue_order(t, panels)
    ci = (
        "mean with 95 % CI on both axes"
        if grid.has_interval(panels)
        else "mean (too few runs for an interval)"
    )
    note = (
        f"{ci}; CPU = busy share of the machines' CPUs during the run x their "
        "count (embedded cluster: the one machine, both ends and every daemon); 1 CPU·s per Gbit = one "
        "core busy at 1 Gbit/s; UDP load-curve steps: see the sweeps figure"
    )
    return draw_xy(panels, hues, title, note)


def _load_curve_tests(t: data.Tables) -> set[str]:
    """The tests that are offered-rate steps of a load curve (bandwidth sweeps)."""
    sw = t.sweeps
    if sw is None or sw.empty:
        return set()
    return set(sw.loc[sw["sweep_param"].astype(str) == "bandwidth", "test"].astype(str))
