"""Latency under load for reading: ``latency_under_load.csv`` (:mod:`podnet.stats.underload`) as a
table per variant (CNI), path and load point, and a few sentences (the notebooks' helpers; the
``under_load`` figure draws the same rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report.figures import data
from podnet.report.figures.underload import shown_metrics
from podnet.report.numbers import ratio_texts

#: the table's columns
COLUMNS = [
    "variant",
    "path",
    "probe",
    "metric",
    "load streams",
    "latency",
    "95 % CI",
    "n",
    "ratio to idle",
    "ratio CI",
    "pairs",
    "load carried",
    "note",
]


def _interval(lo: float, hi: float, factor: float = 1.0, ratio: float | None = None) -> str:
    """The interval "12.1–13.4" (in ``factor``s); of a ratio (``ratio``: its value) to the digits its
    width needs."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    if ratio is not None:
        _, a, b = ratio_texts(ratio, lo, hi)
        return f"{a}–{b}"
    return f"{data.fmt_value(lo / factor)}–{data.fmt_value(hi / factor)}"


def rows(t: data.Tables, metrics: list[str] | None = None) -> pd.DataFrame:
    """The rows of latency_under_load.csv the table shows: each probe's P50 and P99 (else its shown
    latency, :func:`podnet.report.figures.underload.shown_metrics`) or ``metrics``, in variant, path
    and load order."""
    u = t.under_load
    if u.empty:
        return u
    keep = []
    for (tool, _sweep), g in u.groupby(["tool", "sweep"], sort=True):
        want = metrics or shown_metrics(g, str(tool))
        keep.append(g[g["metric"].astype(str).isin(want)])
    out = pd.concat(keep, ignore_index=True)
    vorder = {v: i for i, v in enumerate(data.variant_order(t))}
    porder = {p: i for i, p in enumerate(data.path_order(t))}
    out = out.assign(
        _v=out["variant"].astype(str).map(vorder).fillna(len(vorder)),
        _p=out["scenario"].astype(str).map(porder).fillna(len(porder)),
    )
    out = out.sort_values(["tool", "sweep", "metric", "_v", "variant", "_p", "scenario", "load_streams"])
    return out.drop(columns=["_v", "_p"]).reset_index(drop=True)


def table(t: data.Tables, metrics: list[str] | None = None) -> pd.DataFrame:
    """Per variant, path, probe metric and load point: the latency with its 95 % interval, the ratio to
    the idle point of the same rounds with its interval and pairs, and the load carried, in display
    units (one unit per probe metric)."""
    r = rows(t, metrics)
    if r.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for (tool, sweep, metric), g in r.groupby(["tool", "sweep", "metric"], sort=False):
        f, unit = data.display_unit(g["centre"], str(g["unit"].iloc[0]))
        lf, lunit = data.display_unit(g["load_throughput"], "bit/s")
        for _, x in g.iterrows():
            idle = int(x["load_streams"]) == 0
            carried = float(x["load_throughput"])
            out.append(
                {
                    "variant": x["variant"],
                    "path": x["scenario"],
                    "probe": f"{data.tool_name(str(tool))} {sweep}",
                    "metric": data.axis_label(str(metric), str(tool), unit),
                    "load streams": int(x["load_streams"]),
                    "latency": data.fmt_value(float(x["centre"]) / f),
                    "95 % CI": _interval(float(x["ci_low"]), float(x["ci_high"]), f),
                    "n": int(x["n"]),
                    "ratio to idle": "1 (idle)"
                    if idle
                    else ratio_texts(
                        float(x["ratio_to_idle"]), float(x["ratio_low"]), float(x["ratio_high"])
                    )[0],
                    "ratio CI": ""
                    if idle
                    else _interval(
                        float(x["ratio_low"]), float(x["ratio_high"]), ratio=float(x["ratio_to_idle"])
                    ),
                    "pairs": int(x["n_pairs"]),
                    "load carried": ""
                    if idle or not np.isfinite(carried)
                    else f"{data.fmt_value(carried / lf)} {lunit}",
                    "note": "" if pd.isna(x["note"]) else str(x["note"]),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def markdown(t: data.Tables) -> str:
    """One sentence per variant, path and probe metric: its latency idle and at the largest load, and
    that load's ratio to idle with its interval ("" without a load sweep)."""
    r = rows(t)
    if r.empty:
        return ""
    lines = []
    for (variant, scenario, tool, sweep, metric), g in r.groupby(
        ["variant", "scenario", "tool", "sweep", "metric"], sort=False
    ):
        idle = g[g["load_streams"] == 0]
        top = g[g["load_streams"] == g["load_streams"].max()].iloc[0]
        if idle.empty or int(top["load_streams"]) == 0:
            continue
        unit = str(top["unit"])
        label = data.in_sentence(data.axis_label(str(metric), str(tool), "").strip())
        lo, hi = float(top["ratio_low"]), float(top["ratio_high"])
        ratio, lo_t, hi_t = ratio_texts(float(top["ratio_to_idle"]), lo, hi)
        ci = (
            f" (interval {lo_t}–{hi_t}, {int(top['n_pairs'])} pairs)"
            if np.isfinite(lo)
            else (f" (no interval: {int(top['n_pairs'])} pair(s))")
        )
        lines.append(
            f"- **{variant}**, {scenario}, {data.tool_name(str(tool))} {sweep} {label}: "
            f"{data.human(float(idle['centre'].iloc[0]), str(metric), str(tool), unit)} idle, "
            f"{data.human(float(top['centre']), str(metric), str(tool), unit)} beside "
            f"{int(top['load_streams'])} load streams: {ratio}x idle{ci}."
        )
    return "\n".join(lines)
