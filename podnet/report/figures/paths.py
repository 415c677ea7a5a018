"""The throughput and latency figures: each path's headline rate (or time) per test.

One panel per measure (e.g. iperf3 tcp throughput), its rows the paths that measured it, one colour
per variant: the mean with its interval and every repeat as a dot.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from . import data, grid, withheld
from .plots import empty


def _measured(summary: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if summary.empty or "source" not in summary.columns:
        return summary, ""
    m = summary[summary["source"].fillna("measured") == "measured"]
    if len(m):
        return m, ""
    return summary, "published values (no raw runs): no intervals, no repeats"


def _dots(tidy: pd.DataFrame, rows: pd.DataFrame, y: str, hue: str) -> pd.DataFrame:
    if tidy.empty or rows.empty:
        return pd.DataFrame(columns=["y", "hue", "value"])
    keys = [c for c in data.GROUP if c in tidy.columns and c in rows.columns]
    t = tidy
    if "source" in t.columns:
        t = t[t["source"].fillna("measured") == "measured"]
    k = rows[keys].drop_duplicates()
    for c in keys:  # join on strings: streams may be int in one table and float in the other
        k[c] = k[c].astype(str)
    tt = t.assign(**{c: t[c].astype(str) for c in keys})
    m = tt.merge(k, on=keys)
    return pd.DataFrame({"y": m[y].astype(str), "hue": m[hue].astype(str), "value": m["value"].astype(float)})


def by_path(t: data.Tables, kind: str) -> plt.Figure:
    """Headline ``kind`` ("rate" or "time") per path, one panel per test, one colour per variant."""
    title = {"rate": "Throughput by path", "time": "Latency by path"}[kind]
    summary, note = _measured(t.summary)
    rows = data.headline_rows(summary, kind, t.settings)
    if rows.empty:
        return empty(title, f"no {'throughput' if kind == 'rate' else 'latency'} measured in this experiment")
    panels = []
    bounds = data.stream_bounds(t)
    coarse = withheld.coarse_measures(summary)
    left_out: list[str] = []
    lossy = False
    for _, sub in rows.groupby(data.MEASURE, sort=True, dropna=False):
        first = sub.iloc[0]
        why = coarse.get(withheld.keys(sub.iloc[:1], data.MEASURE)[0])
        if why:  # a measure printed coarser than its spread is no finding: left out, the note says why
            label = data.in_sentence(data.metric_info(str(first["metric"]), str(first["tool"])).label)
            left_out.append(f"{data.measure_label(first, bounds=bounds)} {label}: {why}")
            continue
        factor, unit = data.display_unit(sub["mean"], str(first["unit"]))
        # a UDP rate carries its loss beside it (what arrived of a stream that lost most is the loss)
        losses = withheld.loss_labels(sub, summary) if kind == "rate" else [""] * len(sub)
        lossy = lossy or any(losses)
        dots = _dots(t.tidy, sub, "scenario", "variant")
        dots["value"] = dots["value"] / factor
        panels.append(
            grid.Panel(
                title=data.measure_label(first, bounds=bounds),
                xlabel=data.axis_label(str(first["metric"]), str(first["tool"]), unit),
                rows=pd.DataFrame(
                    {
                        "y": sub["scenario"].astype(str),
                        "hue": sub["variant"].astype(str),
                        "centre": sub["mean"] / factor,
                        "lo": sub["ci_low"].astype(float) / factor,
                        "hi": sub["ci_high"].astype(float) / factor,
                        **({"label": losses} if any(losses) else {}),
                    }
                ),
                dots=dots,
                positive=data.is_positive(str(first["metric"]), str(first["tool"])),
            )
        )
    if lossy:
        note = "\n".join(
            x for x in (note, "% lost: the share of what was sent that did not arrive (UDP)") if x
        )
    if not panels:
        return empty(title, "; ".join(left_out))
    return grid.draw(panels, data.path_order(t), data.variant_order(t), title, note, left_out)


def throughput(t: data.Tables) -> plt.Figure:
    """Headline throughput of each path per test."""
    return by_path(t, "rate")


def latency(t: data.Tables) -> plt.Figure:
    """Headline latency of each path per test."""
    return by_path(t, "time")
