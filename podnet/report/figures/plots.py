"""The four questions an experiment answers, one figure each.

``throughput``: each path's headline rate per test; ``latency``: each path's headline time;
``ratios``: every primary comparison against its baseline on a log ratio axis, significance
after adjustment marked; ``variants``: each variant against the reference variant.
"""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.config import schema

from . import data, grid, style


def empty(title: str, message: str) -> plt.Figure:
    """A column-wide figure that says why there is nothing to draw."""
    if grid.capturing():
        return grid.Spec("empty", title, message)
    style.apply()
    fig = plt.figure(figsize=(style.COLUMN, 1.0), layout="constrained")
    fig.suptitle(title)
    fig.text(0.5, 0.4, textwrap.fill(message, 60), ha="center", va="center", fontsize=7, color="0.3")
    fig.podnet_intervals = []
    return fig


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
    for _, sub in rows.groupby(data.MEASURE, sort=True, dropna=False):
        first = sub.iloc[0]
        factor, unit = data.display_unit(sub["mean"], str(first["unit"]))
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
                    }
                ),
                dots=dots,
                positive=data.is_positive(str(first["metric"]), str(first["tool"])),
            )
        )
    return grid.draw(panels, data.path_order(t), data.variant_order(t), title, note)


def primary_ratios(ratios: pd.DataFrame, settings: dict[str, Any] | None = None) -> pd.DataFrame:
    """The primary comparisons: rows with ``role == "primary"`` when the statistics mark roles,
    else each (tool, test)'s first headline metric."""
    if ratios.empty:
        return ratios
    if "role" in ratios.columns and (ratios["role"] == "primary").any():
        return ratios[ratios["role"] == "primary"].reset_index(drop=True)
    return data.headline_rows(ratios, None, settings)


def alpha(settings: dict[str, Any] | None) -> float:
    """The significance level the statistics used (1 - confidence)."""
    confidence = {**schema.defaults("stats"), **(settings or {})}["confidence"]
    return 1.0 - float(confidence)


def _ratio_panels(
    r: pd.DataFrame, y: str, hue: str, a: float, bounds: dict[tuple[str, str], str] | None = None
) -> list[grid.Panel]:
    from podnet.stats.precision import as_judged  # the interval the findings state (paired when it can be)

    r = as_judged(r)
    panels = []
    for _, sub in r.groupby(data.MEASURE + ["baseline"], sort=True, dropna=False):
        first = sub.iloc[0]
        p = sub["p_adjusted"].astype(float) if "p_adjusted" in sub.columns else pd.Series(np.nan, sub.index)
        panels.append(
            grid.Panel(
                title=data.measure_label(first, with_metric=True, bounds=bounds),
                xlabel=f"Ratio to {first['baseline']} (log scale)",
                rows=pd.DataFrame(
                    {
                        "y": sub[y].astype(str),
                        "hue": sub[hue].astype(str),
                        "centre": sub["ratio"].astype(float),
                        "lo": sub["ci_low"].astype(float),
                        "hi": sub["ci_high"].astype(float),
                        "sig": [bool(v < a) if np.isfinite(v) else None for v in p],
                        "unbounded": sub.get("ci_note", pd.Series("", sub.index))
                        .astype(str)
                        .str.contains("unbounded"),
                    }
                ),
                positive=True,
                ratio=True,
            )
        )
    return panels


def ratios(t: data.Tables) -> plt.Figure:
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
        panels = _ratio_panels(r, "scenario", "treatment", a, data.stream_bounds(t))
        hues = data.variant_order(t)
    else:
        panels = _ratio_panels(r, "treatment", "variant", a, data.stream_bounds(t))
        hues = data.variant_order(t)
    note = "no line: too few runs for an interval; arrows: interval open at that end"
    if "role" in r.columns and not (r["role"] == "primary").any():
        note = "exploratory (no stats.primary declared): no adjusted p, none marked resolved\n" + note
    return grid.draw(
        panels, [p for p in paths if p in set(r["treatment"]) | set(r["scenario"])], hues, title, note
    )


def variant_ratios(t: data.Tables) -> pd.DataFrame:
    """Ratios of each variant to the reference variant: from ratios.csv when the experiment
    compares variants, else computed here with the experiment's statistics settings."""
    r = t.ratios
    if len(r) and (r["by"] == "variant").any():
        return primary_ratios(r[r["by"] == "variant"], t.settings)
    variants = data.variant_order(t)
    if len(variants) < 2 or t.tidy.empty:
        return pd.DataFrame()
    from podnet.stats.ratios import compare

    settings = {k: v for k, v in t.settings.items() if k in ("confidence", "bootstrap", "paired")}
    settings["comparisons"] = [{"by": "variant", "baseline": variants[0]}]
    return primary_ratios(compare(t.tidy, settings), t.settings)


def variants(t: data.Tables) -> plt.Figure:
    """Each variant (e.g. CNI) against the reference variant, per path and test."""
    title = "Variants compared"
    r = variant_ratios(t)
    if r.empty:
        names = data.variant_order(t)
        if len(names) > 1:
            return empty(title, "no measured runs: nothing to compare with an interval")
        return empty(title, f"one variant ({', '.join(names) or 'none'}): nothing to compare")
    a = alpha(t.settings)
    panels = _ratio_panels(r, "scenario", "treatment", a, data.stream_bounds(t))
    note = "no line: too few runs for an interval; arrows: interval open at that end"
    paths = [p for p in data.path_order(t) if p in set(r["scenario"].astype(str))]
    return grid.draw(panels, paths, data.variant_order(t), title, note)
