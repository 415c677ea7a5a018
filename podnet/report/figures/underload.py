"""The under_load figure, in flent's RRUL manner: per variant (CNI) and path, the probe's latency
(P50 and P99 where the probe reports them) against the number of TCP load streams beside it (0 =
idle), each point's centre with its 95 % interval; each point's ratio to the idle point of the same
rounds with its order-statistic interval; and the load the point actually carried. Read from
``latency_under_load.csv`` (:mod:`podnet.stats.underload`) only.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.tools import metric_info

from . import data, grid
from .curves import draw_xy, series
from .plots import empty

TITLE = "Latency under load"
#: the probe metrics drawn, in this order, where the probe reports them (else its headline time)
SHOWN = ("latency_p50", "latency_p99", "rtt_median", "rtt_p99")
#: the load's direction (tidy ``direction`` of its rows, joined) in an axis label
DIRECTIONS = {"forward": "client to server", "reverse": "server to client", "bidir": "both ways"}


def shown_metrics(u: pd.DataFrame, tool: str) -> list[str]:
    """The latency metrics of one probe the figure draws: :data:`SHOWN` present, else its first
    headline metric (latency_under_load.csv holds its latencies only), else its first metric."""
    present = list(dict.fromkeys(u["metric"].astype(str)))
    pick = [m for m in SHOWN if m in present]
    if pick:
        return pick
    heads = [m for m in data.headline_for(tool) if m in present]
    return heads[:1] or present[:1]


def streams_label(directions: pd.Series) -> str:
    """The x axis: "Load streams (client to server)", from the points' ``load_direction``."""
    words = sorted(
        {
            DIRECTIONS["bidir" if "bidir" in d else d] if (d in DIRECTIONS or "bidir" in d) else d
            for d in directions.dropna().astype(str)
            if d and d != "nan"
        }
    )
    return f"Load streams ({', '.join(words)})" if words else "Load streams"


def _rows(g: pd.DataFrame, t: data.Tables, centre: str, lo: str, hi: str, f: float) -> pd.DataFrame:
    label, hue, _ = series(g, t)
    return pd.DataFrame(
        {
            "series": label.to_numpy(),
            "hue": hue.to_numpy(),
            "path": g["scenario"].astype(str).to_numpy(),
            "x": g["load_streams"].astype(float).to_numpy(),
            "xlo": np.nan,
            "xhi": np.nan,
            "centre": g[centre].astype(float).to_numpy() / f,
            "lo": g[lo].astype(float).to_numpy() / f if lo else np.nan,
            "hi": g[hi].astype(float).to_numpy() / f if hi else np.nan,
            "label": "",
        }
    )


def panels(t: data.Tables) -> list[grid.Panel]:
    """Per probe (tool and swept test): its latency metrics against the load, their ratios to idle,
    and the load carried (when any load output was parsed)."""
    u = t.under_load
    out: list[grid.Panel] = []
    for (tool, sweep), g in u.groupby(["tool", "sweep"], sort=True):
        name = f"{data.tool_name(str(tool))} {sweep}"
        xlabel = streams_label(g["load_direction"])
        metrics = shown_metrics(g, str(tool))
        for metric in metrics:
            m = g[g["metric"].astype(str) == metric]
            f, unit = data.display_unit(m["centre"], str(m["unit"].iloc[0]))
            out.append(
                grid.Panel(
                    title=f"{name} · {data.axis_label(metric, str(tool), unit)}",
                    xlabel=xlabel,
                    rows=_rows(m, t, "centre", "ci_low", "ci_high", f),
                )
            )
        for metric in metrics:
            m = g[g["metric"].astype(str) == metric]
            label = metric_info(metric, str(tool)).label
            out.append(
                grid.Panel(
                    title=f"{name} · {label}, ratio to idle",
                    xlabel=xlabel,
                    rows=_rows(m, t, "ratio_to_idle", "ratio_low", "ratio_high", 1.0),
                )
            )
        carried = g[(g["metric"].astype(str) == metrics[0]) & (g["load_streams"].astype(float) > 0)]
        carried = carried[np.isfinite(carried["load_throughput"].astype(float))]
        if len(carried):
            f, unit = data.display_unit(carried["load_throughput"], "bit/s")
            out.append(
                grid.Panel(
                    title=f"{name} · load carried ({unit})",
                    xlabel=xlabel,
                    rows=_rows(carried, t, "load_throughput", "", "", f),
                )
            )
    return out


def note(u: pd.DataFrame) -> str:
    """What the points and bars are (estimands, the ratio interval's own coverage)."""
    est = sorted({str(e).replace("_", " ") for e in u["estimand"].dropna() if str(e) and str(e) != "nan"})
    cover = sorted(
        {float(c) for c in u["ratio_method"].astype(str).str.extract(r"coverage ([0-9.]+)%")[0].dropna()}
    )
    covered = f", coverage {' / '.join(f'{c:g} %' for c in cover)}" if cover else ""
    return (
        f"latency: each load point's {' / '.join(est) or 'centre'} over its runs, 95 % interval; "
        f"ratio to idle: median of loaded / idle ratios of runs paired by round, order-statistic "
        f"interval{covered} (no bar: fewer than 2 pairs); load carried: median of the load's "
        "received throughput (both directions summed); 0 streams = the probe alone"
    )


def make(t: data.Tables) -> plt.Figure:
    """Probe latency against load streams per variant and path, its ratio to idle, the load carried."""
    u = t.under_load
    if u.empty:
        return empty(TITLE, "no test ran under load in this experiment (launch.tools.<tool>.tests[].load)")
    ps = panels(t)
    hues = list(dict.fromkeys(h for p in ps for h in p.rows["hue"].astype(str)))
    order = [v for v in data.variant_order(t) if v in hues] + [h for h in data.path_order(t) if h in hues]
    order += [h for h in hues if h not in order]
    return draw_xy(ps, order, TITLE, note(u))
