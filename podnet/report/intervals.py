"""The per-interval series of the explore notebook (``intervals.parquet``: iperf3, iperf 2): a panel
per test and direction, never two tests or two directions in one line or median (a bimodal group is
explained, never averaged); in a panel one line per run while they can be told apart, else per path
and variant the median run with the band of the middle 80 % of runs; in words when the slice has no
per-interval data (never an empty plot)."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.report.explore import rows_where
from podnet.report.figures import data, style

#: up to this many runs in a panel one line each; past it one line per path and variant
MAX_LINES = 8
#: an interval shorter than this share of its series' median interval is partial (a run's short last
#: interval): left out, so it never shows as a drop
PARTIAL = 0.5
#: what one line of :func:`rows` is: a run's interval in one direction (the streams' sum)
KEYS = ["run_id", "direction", "t_start", "t_end", "omitted"]
#: a panel: one test of one tool in one direction
PANEL = ["tool", "test", "direction"]
COLUMNS = [*KEYS, "value", "t_mid", "k", "partial", "variant", "scenario", "tool", "test", "repeat"]


def rows(t: data.Tables, metric: str = "throughput", **where: Any) -> pd.DataFrame:
    """The per-interval rows of ``metric`` of the slice's runs, one value per run, direction and
    interval (the streams' sum), with the run's variant, path, tool, test and repeat.

    ``t_mid``: the interval's middle on the run's clock; iperf3 restarts its clock after the ``-O``
    warm-up, so ``omitted`` intervals are moved before 0, where they were. ``k``: the interval's
    place in its run (negative in the warm-up): what lines runs up, whose times differ by
    milliseconds. ``partial``: shorter than :data:`PARTIAL` of the series' median interval."""
    iv = t.intervals
    if iv.empty or "metric" not in iv.columns:
        return pd.DataFrame(columns=COLUMNS)
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    sub = iv[(iv["metric"] == metric) & iv["run_id"].isin(set(tidy["run_id"]))]
    if "stream" in sub.columns and (sub["stream"] == "sum").any():
        sub = sub[sub["stream"] == "sum"]
    sub = sub.assign(
        direction=sub["direction"].fillna("").astype(str) if "direction" in sub else "",
        omitted=sub["omitted"].fillna(False).astype(bool) if "omitted" in sub else False,
    )
    sub = sub.groupby(KEYS, as_index=False)["value"].sum().sort_values(KEYS, ignore_index=True)
    by_run = sub.groupby(["run_id", "direction"])
    warm_end = sub["t_end"].where(sub["omitted"]).groupby([sub["run_id"], sub["direction"]]).transform("max")
    shift = warm_end.fillna(0.0).where(sub["omitted"], 0.0)
    sub["t_start"], sub["t_end"] = sub["t_start"] - shift, sub["t_end"] - shift
    sub["t_mid"] = (sub["t_start"] + sub["t_end"]) / 2
    n_warm = by_run["omitted"].transform("sum")
    sub["k"] = sub.groupby(["run_id", "direction", "omitted"]).cumcount() - n_warm.where(sub["omitted"], 0)
    length = (sub["t_end"] - sub["t_start"]).where(~sub["omitted"])
    typical = length.groupby([sub["run_id"], sub["direction"]]).transform("median")
    sub["partial"] = (~sub["omitted"]) & (length < PARTIAL * typical)
    cols = ["run_id", "variant", "scenario", "tool", "test", "repeat"]
    where_ran = tidy[[c for c in cols if c in tidy.columns]].drop_duplicates("run_id")
    return sub.merge(where_ran, on="run_id", how="left").reindex(columns=COLUMNS)


def view(t: data.Tables, metric: str = "throughput", **where: Any) -> str | plt.Figure:
    """The slice's per-interval series (:func:`series`), or in words why there is none."""
    if len(rows(t, metric, **where)):
        return series(t, metric, **where)
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    n = tidy.loc[tidy["tool"].isin(["iperf3", "iperf2"]), "run_id"].nunique() if len(tidy) else 0
    if not n:
        return (
            "No per-interval series: only iperf3 and iperf 2 runs record one (`intervals.parquet`), and "
            "the slice has no such run."
        )
    return (
        f"No per-interval series: the slice's {n} iperf3 or iperf 2 runs record no per-interval `{metric}` in "
        "`intervals.parquet` (imported text output without its intervals, or none parsed)."
    )


def series(t: data.Tables, metric: str = "throughput", **where: Any) -> plt.Figure:
    """The per-interval values over time, a panel per test and direction (:func:`panels`); in each
    a line per run up to :data:`MAX_LINES` runs, else per path and variant the median over runs at
    each interval and the band from its 10th to its 90th percentile. A path keeps its colour and
    marker in every panel, and no two entries of a legend share both."""
    style.apply()
    sub = rows(t, metric, **where)
    if sub.empty:
        fig, ax = plt.subplots(figsize=(style.PAGE, 2.6), layout="constrained")
        ax.text(
            0.5,
            0.5,
            "no per-interval data (iperf3 and iperf 2 runs only)",
            ha="center",
            transform=ax.transAxes,
        )
        ax.set_axis_off()
        return fig
    n_partial = int(sub["partial"].sum())
    sub = sub[~sub["partial"]]
    variants = [v for v in data.variant_order(t) if v in set(sub["variant"].astype(str))]
    one = len(variants) == 1
    paths = [p for p in data.path_order(t) if p in set(sub["scenario"].astype(str))]
    names = [p if one else f"{v} · {p}" for v in variants for p in paths]
    sub = sub.assign(
        series=sub["scenario"].astype(str)
        if one
        else sub["variant"].astype(str) + " · " + sub["scenario"].astype(str)
    )
    looks = style.line_styles([n for n in names if n in set(sub["series"])])
    found = panels(sub)
    ncols = 1 if len(found) == 1 else 2
    nrows = int(np.ceil(len(found) / ncols))
    entries = [g["series"].nunique() for _, g in found] + [0] * (nrows * ncols - len(found))
    # each row as tall as its longest legend (beside the plot), at least a readable plot
    heights = [max(1.7, 0.75 + 0.12 * max(entries[r * ncols : (r + 1) * ncols])) for r in range(nrows)]
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(style.PAGE, sum(heights) + 0.3),
        height_ratios=heights,
        squeeze=False,
        layout="constrained",
    )
    for ax, (title, g) in zip(axes.flat, found):
        _panel(ax, title, g, looks, metric)
    for ax in list(axes.flat)[len(found) :]:
        ax.set_axis_off()
    said = f"{sub['run_id'].nunique()} runs, a panel per test and direction"
    said += f"; variant {variants[0]}" if one else ""
    if sub["omitted"].any():
        said += "; grey: iperf3's -O warm-up (before 0, not in its result)"
    if n_partial:
        said += f"; {n_partial} partial interval{'s' if n_partial > 1 else ''} (a run's short last) left out"
    fig.suptitle(said, fontsize=7)
    style.thin_ticks(fig)
    return fig


def panels(sub: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """``sub``'s rows per tool, test and direction, each with its title ("iperf3 tcp-bidir ·
    bidir-reverse": the direction named where the test has more than one)."""
    out = []
    many = sub.groupby(["tool", "test"])["direction"].nunique()
    for (tool, test, direction), g in sub.groupby(PANEL, sort=True):
        title = f"{tool} {test}"
        if many.get((tool, test), 1) > 1 and direction:
            title += f" · {direction}"
        out.append((title, g))
    return out


def _panel(ax: plt.Axes, title: str, g: pd.DataFrame, looks: dict, metric: str) -> None:
    """One panel: a line per run (each in its path's colour and marker), or per path the median
    at each interval (``k``, drawn at its median time) with the 10-90 % band of the runs."""
    factor, unit = data.display_unit(g["value"], "bit/s" if metric == "throughput" else "")
    g = g.assign(value=g["value"] / factor)
    runs = g["run_id"].nunique()
    each = runs <= MAX_LINES
    for name in [n for n in looks if n in set(g["series"])]:
        s = g[g["series"] == name]
        colour, marker, line = looks[name]
        n = s["run_id"].nunique()
        label = f"{name} ({n} run{'s' if n > 1 else ''})"
        if each:
            for i, (_rid, r) in enumerate(s.groupby("run_id", sort=True)):
                first = label if i == 0 else "_nolegend_"  # one legend entry per path
                ax.plot(
                    r["t_mid"], r["value"], color=colour, marker=marker, ls=line, ms=2.5, lw=0.7, label=first
                )
            continue
        by = s.groupby("k")
        q = by["value"].quantile([0.1, 0.5, 0.9]).unstack()
        x = by["t_mid"].median()
        ax.fill_between(x, q[0.1], q[0.9], color=colour, alpha=0.2, lw=0)
        ax.plot(x, q[0.5], color=colour, marker=marker, ls=line, ms=2.5, lw=0.9, label=label)
    if g["omitted"].any():
        ax.axvspan(g["t_start"].min(), 0, color="0.92", lw=0, zorder=0)
    per = "path and variant" if g["variant"].nunique() > 1 else "path"
    how = "a line each" if each else f"median per {per}, band 10-90 % of runs"
    ax.set_title(f"{title}\n{runs} run{'s' if runs > 1 else ''}, {how}", fontsize=6.5)
    ax.set_xlabel("Time into the run (s)", fontsize=6)
    ax.set_ylabel(data.axis_label(metric, str(g["tool"].iloc[0]), unit), fontsize=6)
    ax.set_ylim(bottom=0 if np.nanmin(g["value"]) >= 0 else None)
    style.plain_axis(ax, "y")
    ax.legend(fontsize=5.5, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
