"""The sweeps figure: every swept test's headline metric against the swept parameter (streams,
message length, offered bandwidth, concurrency), the centre of each point's repeats with its
interval; a bandwidth sweep of a tool that reports loss is a load curve: received against offered
rate (the diagonal is "everything arrived") beside the loss, with the configured loss threshold.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import data, grid
from .curves import draw_xy, hue_order, series
from .plots import empty


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


def make(t: data.Tables) -> plt.Figure:
    """Each swept test's headline metric against the swept parameter; load curves with their loss."""
    title = "Sweeps"
    sw = t.sweeps
    if sw.empty:
        return empty(title, "no test was swept in this experiment (launch.tools.<tool>.tests[].sweep)")
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
                label, hue, _ = series(md, t)
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
    hues = hue_order(t, panels)
    note = "mean or geometric mean of each point's repeats" + (
        ", 95 % CI" if grid.has_interval(panels) else " (too few for an interval)"
    )
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
