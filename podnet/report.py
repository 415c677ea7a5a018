"""Figures and tables for the report notebooks.

Inputs: an experiment's processed tables (tidy, summary, ratios, failed runs).
Outputs: ``figures/<name>.png`` and ``.svg`` written reproducibly (no dates in
the files, a fixed SVG hash salt), so a regenerated report is byte-stable.
The notebooks call these functions; they hold no logic of their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

plt.rcParams["svg.hashsalt"] = "podnet"
plt.rcParams["svg.fonttype"] = "none"

#: metric names that are a test's headline throughput / latency, in order of preference
THROUGHPUT_METRICS = ["throughput", "requests_per_second", "transaction_rate", "pps"]
LATENCY_METRICS = ["rtt_avg", "latency_mean", "latency", "latency_p50", "time_per_request"]

_SCALES = {
    "bit/s": [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1, "bit/s")],
    "s": [(1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")],
}


@dataclass
class Tables:
    """An experiment's processed tables."""

    tidy: pd.DataFrame
    summary: pd.DataFrame
    ratios: pd.DataFrame
    failed: pd.DataFrame


def load(processed_dir: str | Path) -> Tables:
    """Read tidy.parquet, summary.csv, ratios.csv and failed_runs.csv of one experiment."""
    d = Path(processed_dir)

    def csv(name: str) -> pd.DataFrame:
        p = d / name
        return pd.read_csv(p) if p.exists() and p.stat().st_size else pd.DataFrame()

    tidy = pd.read_parquet(d / "tidy.parquet") if (d / "tidy.parquet").exists() else pd.DataFrame()
    return Tables(
        tidy=tidy, summary=csv("summary.csv"), ratios=csv("ratios.csv"), failed=csv("failed_runs.csv")
    )


def display_scale(values: pd.Series | np.ndarray, unit: str) -> tuple[float, str]:
    """A divisor and a readable unit for values in ``unit`` (e.g. 3.6e9 bit/s -> 1e9, Gbit/s)."""
    vals = np.abs(np.asarray(values, dtype=float))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if unit not in _SCALES or not len(vals):
        return 1.0, unit
    ref = float(np.max(vals))
    for factor, name in _SCALES[unit]:
        if ref >= factor:
            return factor, name
    return _SCALES[unit][-1]


def save_figure(fig: plt.Figure, name: str, figures_dir: str | Path) -> list[Path]:
    """Write ``name``.png and ``name``.svg without timestamps; returns the paths."""
    out = Path(figures_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    fig.savefig(png, dpi=120, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    return [png, svg]


def headline(summary: pd.DataFrame, candidates: list[str]) -> pd.DataFrame:
    """Rows of ``summary`` whose metric is the first candidate each (tool, test) reports."""
    if summary.empty:
        return summary
    keep = []
    for _, grp in summary.groupby(["tool", "test"], dropna=False, sort=True):
        for metric in candidates:
            sel = grp[grp["metric"] == metric]
            if len(sel):
                keep.append(sel)
                break
    return pd.concat(keep, ignore_index=True) if keep else summary.iloc[0:0]


def _facet_label(row: pd.Series) -> str:
    parts = [str(row["tool"]), str(row["test"])]
    if str(row.get("direction", "")) not in ("", "nan", "roundtrip", "forward"):
        parts.append(str(row["direction"]))
    if "streams" in row and not pd.isna(row["streams"]) and int(row["streams"]) > 1:
        # parallel streams (iperf -P) or concurrent connections (ab -c, wrk -c)
        parts.append(f"{'c' if row['protocol'] == 'http' else 'P'}{int(row['streams'])}")
    return " ".join(parts) + f" — {row['metric']}"


def bars_with_ci(rows: pd.DataFrame, title: str, source: str = "measured") -> plt.Figure:
    """Horizontal bars of the mean per scenario (hue: variant) with CI whiskers, one panel per test."""
    rows = rows.copy()
    if "source" in rows.columns:
        rows = rows[rows["source"].fillna("measured") == source]
    if rows.empty:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.text(0.5, 0.5, f"no {title.lower()} data", ha="center", va="center")
        ax.axis("off")
        return fig
    rows["facet"] = rows.apply(_facet_label, axis=1)
    facets = sorted(rows["facet"].unique())
    ncols = 1 if len(facets) == 1 else 2
    nrows = math.ceil(len(facets) / ncols)
    height = [
        max(1.5, 0.35 * rows[rows["facet"] == f]["scenario"].nunique() * rows["variant"].nunique() + 1)
        for f in facets
    ]
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, sum(height[::ncols]) + 0.6), squeeze=False)
    variants = sorted(rows["variant"].astype(str).unique())
    colors = dict(zip(variants, plt.get_cmap("tab10").colors))
    for ax, facet in zip(axes.flat, facets):
        sub = rows[rows["facet"] == facet]
        factor, unit = display_scale(sub["mean"], str(sub["unit"].iloc[0]))
        scenarios = list(dict.fromkeys(sub.sort_values("scenario")["scenario"].astype(str)))
        width = 0.8 / max(len(variants), 1)
        for k, variant in enumerate(variants):
            v = sub[sub["variant"].astype(str) == variant].set_index(
                sub[sub["variant"].astype(str) == variant]["scenario"].astype(str)
            )
            ys, means, lo, hi = [], [], [], []
            for i, scen in enumerate(scenarios):
                if scen not in v.index:
                    continue
                r = v.loc[scen]
                r = r.iloc[0] if isinstance(r, pd.DataFrame) else r
                ys.append(i + (k - (len(variants) - 1) / 2) * width)
                means.append(r["mean"] / factor)
                has_ci = not (pd.isna(r.get("ci_low")) or pd.isna(r.get("ci_high")))
                lo.append(max(r["mean"] - r["ci_low"], 0) / factor if has_ci else 0.0)
                hi.append(max(r["ci_high"] - r["mean"], 0) / factor if has_ci else 0.0)
            ax.barh(ys, means, height=width, color=colors[variant], label=variant)
            ci = [i for i, (a, b) in enumerate(zip(lo, hi)) if a or b]
            if ci:
                ax.errorbar(
                    [means[i] for i in ci],
                    [ys[i] for i in ci],
                    xerr=[[lo[i] for i in ci], [hi[i] for i in ci]],
                    fmt="none",
                    ecolor="black",
                    capsize=3,
                    lw=1,
                )
            for y, m in zip(ys, means):
                ax.annotate(
                    f"{m:,.0f}" if abs(m) >= 1000 else f"{m:.3g}",
                    (m, y),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                )
        spread = sub["mean"].abs().replace(0, np.nan).dropna()
        if len(spread) and spread.max() / spread.min() > 50:
            ax.set_xscale("log")
        ax.set_yticks(range(len(scenarios)), scenarios)
        ax.invert_yaxis()
        ax.set_xlabel(
            f"mean ({unit}){'' if ax.get_xscale() == 'linear' else ', log scale'}; whiskers: CI of the mean"
        )
        ax.set_title(facet, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(facets) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if len(variants) > 1:
        fig.legend(handles, labels, title="variant", loc="upper right")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def ratio_plot(ratios: pd.DataFrame, metrics: list[str] | None = None) -> plt.Figure:
    """Ratio of means (treatment / baseline) with its CI, one panel per metric; log axis, 1 marked."""
    r = ratios.copy()
    if metrics is not None and not r.empty:
        r = r[r["metric"].isin(metrics)]
    if r.empty:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.text(0.5, 0.5, "no ratios requested or computable", ha="center", va="center")
        ax.axis("off")
        return fig
    r["label"] = r.apply(
        lambda x: (
            f"{x['treatment']} / {x['baseline']}  [{x['tool']} {x['test']} {x.get('direction', '')}]".replace(
                " roundtrip", ""
            )
        ),
        axis=1,
    )
    metrics_present = sorted(r["metric"].unique())
    fig, axes = plt.subplots(
        len(metrics_present),
        1,
        figsize=(8, sum(0.35 * (r["metric"] == m).sum() + 1.2 for m in metrics_present)),
        squeeze=False,
    )
    for ax, metric in zip(axes.flat, metrics_present):
        sub = r[r["metric"] == metric].sort_values("label")
        y = np.arange(len(sub))
        ax.plot(sub["ratio"], y, "o", color="tab:blue")
        ok = sub["ci_low"].notna() & sub["ci_high"].notna()
        ax.hlines(y[ok.values], sub["ci_low"][ok], sub["ci_high"][ok], color="tab:blue")
        ax.axvline(1.0, color="grey", lw=1, ls="--")
        ax.set_xscale("log")
        ax.set_yticks(y, sub["label"], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{metric}: ratio of means (treatment / baseline); lines: CI where n allows", fontsize=9)
        ax.grid(axis="x", alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def publish_standard_figures(processed_dir: str | Path, figures_dir: str | Path | None = None) -> list[Path]:
    """Throughput, latency and ratio figures of one experiment; returns the written paths."""
    t = load(processed_dir)
    figures_dir = Path(figures_dir or Path(processed_dir) / "figures")
    written: list[Path] = []
    summary = t.summary
    for name, metrics, title in (
        ("throughput", THROUGHPUT_METRICS, "Throughput by scenario"),
        ("latency", LATENCY_METRICS, "Latency by scenario"),
    ):
        fig = bars_with_ci(headline(summary, metrics), title)
        written += save_figure(fig, name, figures_dir)
        plt.close(fig)
    fig = ratio_plot(t.ratios, THROUGHPUT_METRICS + LATENCY_METRICS)
    written += save_figure(fig, "ratios", figures_dir)
    plt.close(fig)
    return written
