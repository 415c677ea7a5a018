"""Figures with a numeric x axis: swept tests as curves, UDP load curves, and what a path costs.

``sweeps``: every swept test's headline metric against the swept parameter (streams, message
length, offered bandwidth, concurrency), the centre of each point's repeats with its interval; a
bandwidth sweep of a tool that reports loss is a load curve: received against offered rate (the
diagonal is "everything arrived") beside the loss, with the configured loss threshold.
``costs``: each path's rate against the machine's CPU time per bit (or per transaction), both
with their intervals, so a path that reaches the same rate by burning more CPU sits to the right.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import data, grid, style

#: an xy panel's rows: series (legend label), hue (colour key), x and its interval, y and its;
#: an optional "path" column gives each path its own line style when colours are variants
XY_COLUMNS = ["series", "hue", "x", "xlo", "xhi", "centre", "lo", "hi", "label"]
#: line style and marker of the n-th path
PATH_STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D")]
#: a loss panel's y axis ends at this many times its largest centre (at least 1 %), so the points
#: stay readable; an interval reaching beyond is drawn to the edge with an arrow head
LOSS_VIEW = 3.0

#: what a cost figure shows per quantity: the rate metric, its CPU cost metric, the x scale and unit
COSTS = {
    "throughput": ("machine_cpu_per_bit", 1e9, "CPU·s per Gbit"),
    "transaction_rate": ("machine_cpu_per_transaction", 1e6, "CPU·µs per transaction"),
}


def draw_xy(panels: list[grid.Panel], hue_order: list[str], title: str, note: str = "") -> plt.Figure:
    """Draw panels of (x, y) points with intervals on both axes, a line through each series
    (within :func:`grid.specs_only`: return their :class:`grid.Spec`, draw nothing)."""
    if grid.capturing():
        return grid.Spec("xy", title, note, list(panels), [], list(hue_order))
    style.apply()
    colors = style.variant_colors(hue_order)
    n = len(panels)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3
    nrows = int(np.ceil(n / ncols))
    width = style.COLUMN if n == 1 else style.PAGE
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width, min(style.PAGE_HEIGHT, 0.6 + 2.1 * nrows)),
        squeeze=False,
        layout="constrained",
    )
    fig.podnet_intervals = []
    paths = list(dict.fromkeys(str(x) for p in panels if "path" in p.rows for x in p.rows["path"]))
    styles = {path: PATH_STYLES[i % len(PATH_STYLES)] for i, path in enumerate(paths)}
    for ax, p in zip(axes.flat, panels):
        _xy_panel(fig, ax, p, colors, styles)
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    drawn = [h for h in hue_order if any((p.rows["hue"] == h).any() for p in panels)]
    handles = [plt.Line2D([], [], color=colors[h], marker="o", ls="-", ms=3.5, label=h) for h in drawn]
    if len(styles) > 1:
        handles += [
            plt.Line2D([], [], color="0.35", marker=m, ls=ls, ms=3.5, label=path)
            for path, (ls, m) in styles.items()
        ]
    style.legend(fig, handles, note, wrap=62 if width < style.PAGE else 125)
    fig.suptitle(title)
    return fig


def _xy_panel(fig: plt.Figure, ax: plt.Axes, p: grid.Panel, colors: dict, styles: dict | None = None) -> None:
    rows = p.rows
    top = _loss_view(rows) if p.title.split(" · ")[-1].startswith("Loss") else None
    for _, g in rows.groupby("series", sort=False):
        g = g.sort_values("x")
        c = colors[str(g["hue"].iloc[0])]
        ls, marker = (styles or {}).get(str(g["path"].iloc[0]) if "path" in g else "", ("-", "o"))
        x, y = g["x"].to_numpy(float), g["centre"].to_numpy(float)
        hi = g["hi"].to_numpy(float)
        clipped = np.isfinite(hi) & (hi > top) if top is not None else np.zeros(len(hi), bool)
        xerr = _err(x, g["xlo"].to_numpy(float), g["xhi"].to_numpy(float))
        yerr = _err(y, g["lo"].to_numpy(float), hi if top is None else np.where(clipped, top, hi))
        ax.errorbar(
            x,
            y,
            xerr=xerr,
            yerr=yerr,
            color=c,
            marker=marker,
            ls=ls,
            ms=3.2,
            lw=0.9,
            elinewidth=0.8,
            capsize=1.5,
        )
        if clipped.any():  # the interval goes on above the view: an arrow head at the edge
            ax.plot(
                x[clipped], np.full(clipped.sum(), top), ls="", marker="^", ms=3.5, color=c, clip_on=False
            )
        for lo, hi in zip(g["lo"].to_numpy(float), g["hi"].to_numpy(float)):
            if np.isfinite(lo) and np.isfinite(hi):
                fig.podnet_intervals.append((p.positive, lo, hi))
        for xi, yi, text in zip(x, y, g["label"].astype(str)):
            if text and text != "nan":
                ax.annotate(
                    text, (xi, yi), xytext=(3, 2), textcoords="offset points", fontsize=5.5, color="0.25"
                )
    xs = rows["x"].to_numpy(float)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if p.ratio and len(xs):  # ``ratio`` marks a load curve's received panel: the diagonal
        lim = [float(xs.min()), float(xs.max())]
        ax.plot(lim, lim, ls="--", lw=0.6, color="0.6", zorder=0)
    if len(xs) > 1 and xs.max() / xs.min() > 30:
        ax.set_xscale("log")
    if p.positive:
        ax.set_ylim(bottom=0)
    if top is not None:
        ax.set_ylim(0, top)
    style.plain_axis(ax, "y")
    ax.set_title(textwrap.fill(p.title, 48 if len(fig.axes) <= 2 else 34))
    ax.set_xlabel(p.xlabel)
    ax.grid(lw=0.4, alpha=0.4)


def _loss_view(rows: pd.DataFrame) -> float | None:
    """The top of a loss panel's view: LOSS_VIEW x its largest centre, at least 1 (%), at most what
    the intervals need; None when every interval fits under that anyway."""
    c = rows["centre"].to_numpy(float)
    hi = rows["hi"].to_numpy(float)
    if not np.isfinite(c).any():
        return None
    top = max(LOSS_VIEW * float(np.nanmax(c)), 1.0)
    need = float(np.nanmax(hi)) if np.isfinite(hi).any() else 0.0
    return top if need > top else None


def _err(centre: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """matplotlib's asymmetric error bars; no bar where the interval is not finite."""
    if not (np.isfinite(lo).any() or np.isfinite(hi).any()):
        return None
    below = np.where(np.isfinite(lo), np.clip(centre - lo, 0, None), 0.0)
    above = np.where(np.isfinite(hi), np.clip(hi - centre, 0, None), 0.0)
    return np.vstack([below, above])


def _series(df: pd.DataFrame, t: data.Tables) -> tuple[pd.Series, pd.Series, list[str]]:
    """(series label, colour key, colour order): one colour per variant when several, else per path."""
    variants = sorted(set(df["variant"].astype(str)))
    if len(variants) > 1:
        order = [v for v in data.variant_order(t) if v in variants]
        many_paths = df["scenario"].nunique() > 1
        label = df["variant"].astype(str) + ((" · " + df["scenario"].astype(str)) if many_paths else "")
        return label, df["variant"].astype(str), order
    order = [p for p in data.path_order(t) if p in set(df["scenario"].astype(str))]
    return df["scenario"].astype(str), df["scenario"].astype(str), order


def _sweep_param_label(param: str, unit_values: pd.Series) -> tuple[float, str]:
    if param == "bandwidth":
        f, u = data.display_unit(unit_values, "bit/s")
        return f, f"Offered rate ({u})"
    if param in ("length", "size", "message_size", "send_size"):
        return 1.0, "Message size (bytes)"
    if param in ("streams", "parallel"):
        return 1.0, "Parallel streams"
    if param in ("concurrency", "connections"):
        return 1.0, "Concurrent connections"
    return 1.0, param.replace("_", " ")


def sweeps(t: data.Tables) -> plt.Figure:
    """Each swept test's headline metric against the swept parameter; load curves with their loss."""
    title = "Sweeps"
    sw = t.sweeps
    if sw.empty:
        return _empty(title, "no test was swept in this experiment (launch.tools.<tool>.tests[].sweep)")
    max_loss = float(((t.settings or {}).get("load_curve") or {}).get("max_loss", 0.001))
    panels = []
    for (tool, sweep, param), g in sw.groupby(["tool", "sweep", "sweep_param"], sort=True):
        metrics = list(dict.fromkeys(data.headline_rows(g, None, t.settings)["metric"]))
        if param == "bandwidth" and (g["metric"] == "loss").any():
            metrics = ["throughput", "loss"] if (g["metric"] == "throughput").any() else ["loss"]
        xf, xlabel = _sweep_param_label(str(param), g["sweep_value"])
        for metric in metrics:
            m = g[g["metric"] == metric]
            for direction, md in m.groupby("direction", sort=True):
                first = md.iloc[0]
                f, unit = data.display_unit(md["centre"], str(first["unit"]))
                diagonal = param == "bandwidth" and metric == "throughput" and str(first["unit"]) == "bit/s"
                if diagonal:  # received on the offered axis's scale, so the diagonal is "all arrived"
                    f, unit = data.display_unit(g["sweep_value"], "bit/s")
                label, hue, _ = _series(md, t)
                rows = pd.DataFrame(
                    {
                        "series": label.to_numpy(),
                        "hue": hue.to_numpy(),
                        "path": md["scenario"].astype(str).to_numpy(),
                        "x": md["sweep_value"].astype(float).to_numpy() / xf,
                        "xlo": np.nan,
                        "xhi": np.nan,
                        "centre": md["centre"].astype(float).to_numpy() / f,
                        "lo": md["ci_low"].astype(float).to_numpy() / f,
                        "hi": md["ci_high"].astype(float).to_numpy() / f,
                        "label": "",
                    }
                )
                dirn = "" if str(direction) in ("forward", "roundtrip", "nan") else f" {direction}"
                name = f"{data.tool_name(str(tool))} {sweep}{dirn} · {data.axis_label(str(metric), str(tool), unit)}"
                if metric == "loss":
                    name += f" (threshold {max_loss * 100:g} %)"
                panels.append(
                    grid.Panel(
                        title=name,
                        xlabel=xlabel,
                        rows=rows,
                        positive=data.is_positive(str(metric), str(tool)),
                        # a load curve's received rate: draw the diagonal (offered = received)
                        ratio=bool(diagonal),
                    )
                )
    hues = list(dict.fromkeys(h for p in panels for h in p.rows["hue"].astype(str)))
    note = "mean or geometric mean of each point's repeats, 95 % CI"
    lc = t.load_curves
    if len(lc):
        # one display unit for every loss-free rate (a rate of 0 has no unit of its own)
        vals = lc[["loss_free_rate", "ci_low", "ci_high"]].to_numpy(dtype=float).ravel()
        f, unit = data.display_unit(
            [v for v in vals if np.isfinite(v) and v > 0] or [1.0], str(lc["unit"].iloc[0])
        )
        parts = []
        for _, r in lc.iterrows():
            ci = (
                f" [{data.fmt_value(r['ci_low'] / f)}, {data.fmt_value(r['ci_high'] / f)}]"
                if np.isfinite(float(r["ci_low"]))
                else ""
            )
            parts.append(
                f"{r['tool']} {r['variant']} {r['scenario']}: {data.fmt_value(r['loss_free_rate'] / f)}{ci} {unit}"
            )
        lines = ["; ".join(parts[i : i + 3]) for i in range(0, min(len(parts), 12), 3)]
        more = f" (and {len(parts) - 12} more: load_curves.csv)" if len(parts) > 12 else ""
        # the order-statistic interval's own coverage (75 % from 3 repeats), never implied to be 95 %
        cover = sorted(
            {m for m in lc["ci_method"].astype(str).str.extract(r"coverage ([0-9.]+)%")[0].dropna()}
        )
        covered = f", coverage {' / '.join(f'{float(c):g} %' for c in cover)}" if cover else ""
        note += (
            f"\nloss-free rate (loss ≤ {max_loss * 100:g} %; median of the repeats, order-statistic "
            f"interval{covered}){more}:\n" + "\n".join(lines)
        )
    return draw_xy(panels, hues, title, note)


def costs(t: data.Tables) -> plt.Figure:
    """Each path's rate against the machine's CPU time per bit or per transaction."""
    title = "What each path costs"
    s = t.summary
    if s.empty or "metric" not in s.columns:
        return _empty(title, "no summary")
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
            label, hue, _ = _series(g, t)
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
        return _empty(
            title,
            "no run recorded the machine's CPU beside a rate (launch.interference, on by default, "
            "records it for launched runs)",
        )
    hues = list(dict.fromkeys(h for p in panels for h in p.rows["hue"].astype(str)))
    note = (
        "mean with 95 % CI on both axes; CPU = busy share of the machines' CPUs during the run x their "
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


def _empty(title: str, message: str) -> plt.Figure:
    from .plots import empty

    return empty(title, message)
