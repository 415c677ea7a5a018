"""iperf3's per-interval series of the explore notebook (``intervals.parquet``): one line per run
while they can be told apart, else per path and variant the median run with the band of the middle
80 % of runs; in words when the slice has no per-interval data (never an empty plot)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.report.explore import rows_where
from podnet.report.figures import data, style

#: up to this many runs (or run directions) one line each; past it one line per path and variant
MAX_LINES = 8


def rows(t: data.Tables, metric: str = "throughput", **where: Any) -> pd.DataFrame:
    """The per-interval rows of ``metric`` of the slice's runs, one value per run, direction and
    interval (the streams' sum), with the run's variant and path."""
    iv = t.intervals
    if iv.empty or "metric" not in iv.columns:
        return pd.DataFrame(columns=["run_id", "direction", "t_mid", "value", "variant", "scenario"])
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    sub = iv[(iv["metric"] == metric) & iv["run_id"].isin(set(tidy["run_id"]))]
    if "stream" in sub.columns and (sub["stream"] == "sum").any():
        sub = sub[sub["stream"] == "sum"]
    sub = sub.assign(direction=sub["direction"].fillna("") if "direction" in sub else "")
    sub = sub.groupby(["run_id", "direction", "t_start", "t_end"], as_index=False)["value"].sum()
    sub["t_mid"] = (sub["t_start"] + sub["t_end"]) / 2
    where_ran = tidy[["run_id", "variant", "scenario"]].drop_duplicates("run_id")
    return sub.merge(where_ran, on="run_id", how="left")


def view(t: data.Tables, metric: str = "throughput", **where: Any) -> str | plt.Figure:
    """The slice's per-interval series (:func:`series`), or in words why there is none."""
    if len(rows(t, metric, **where)):
        return series(t, metric, **where)
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    n = tidy.loc[tidy["tool"] == "iperf3", "run_id"].nunique() if len(tidy) else 0
    if not n:
        return (
            "No per-interval series: only iperf3 runs record one (`intervals.parquet`), and the slice "
            "has no iperf3 run."
        )
    return (
        f"No per-interval series: the slice's {n} iperf3 runs record no per-interval `{metric}` in "
        "`intervals.parquet` (imported text output without its intervals, or none parsed)."
    )


def series(t: data.Tables, metric: str = "throughput", **where: Any) -> plt.Figure:
    """iperf3's per-interval values over time: a line per run (and direction) up to
    :data:`MAX_LINES`, else per path and variant the median over runs at each interval and the band
    from its 10th to its 90th percentile (hundreds of runs' lines would only overlap)."""
    style.apply()
    sub = rows(t, metric, **where)
    lines = sub.groupby(["run_id", "direction"]).ngroups if len(sub) else 0
    entries = lines if lines <= MAX_LINES else sub.groupby(["variant", "scenario"]).ngroups
    height = max(2.6, 0.6 + 0.11 * entries)  # the legend beside the plot fits its height
    fig, ax = plt.subplots(figsize=(style.PAGE, height), layout="constrained")
    if sub.empty:
        ax.text(0.5, 0.5, "no per-interval data (iperf3 runs only)", ha="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    factor, unit = data.display_unit(sub["value"], "bit/s" if metric == "throughput" else "")
    sub = sub.assign(value=sub["value"] / factor)
    if lines <= MAX_LINES:
        for (rid, direction), g in sub.groupby(["run_id", "direction"]):
            ax.plot(g["t_mid"], g["value"], lw=0.7, alpha=0.8, label=f"{rid} {direction}".strip())
        title = f"{lines} run{'s' if lines > 1 else ''}, one line each"
    else:
        sub = sub.assign(series=sub["variant"].astype(str) + " · " + sub["scenario"].astype(str))
        names = list(dict.fromkeys(sub.sort_values(["variant", "scenario"])["series"]))
        styles = style.series_styles(names)
        for name in names:
            g = sub[sub["series"] == name].groupby("t_mid")["value"]
            q = g.quantile([0.1, 0.5, 0.9]).unstack()
            colour, marker = styles[name]
            n = sub.loc[sub["series"] == name, "run_id"].nunique()
            ax.fill_between(q.index, q[0.1], q[0.9], color=colour, alpha=0.2, lw=0)
            ax.plot(q.index, q[0.5], color=colour, marker=marker, ms=2, lw=0.9, label=f"{name} ({n} runs)")
        title = f"{sub['run_id'].nunique()} runs: median per path and variant, band 10-90 % of runs"
    ax.set_title(title)
    ax.set_xlabel("Time into the run (s)")
    ax.set_ylabel(data.axis_label(metric, "iperf3", unit))
    ax.set_ylim(bottom=0 if np.nanmin(sub["value"]) >= 0 else None)
    style.plain_axis(ax, "y")
    ax.legend(fontsize=5.5, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    style.thin_ticks(fig)
    return fig
