"""Latency under load: each load point's probe latency and its ratio to the idle point of the same runs.

A test with ``load: {streams: [0, 1, 4]}`` (:mod:`podnet.launch.spec.load`) is a sweep over
``load_streams``: its points are ordinary groups with their summaries (``sweeps.csv``, through
:func:`podnet.stats.sweeps.sweep_table`). :func:`latency_under_load` takes from them every latency
metric of the probe (tidy ``role`` probe; :func:`is_latency`: a time in seconds where lower is
better, not the test length nor a CPU cost per transaction) and adds, per loaded point, its ratio to the
idle point (``load_streams`` 0): the median over pairs of loaded / idle values, a pair being one
repeat of both points (same launch, same round: :func:`pair_key`), with the distribution-free
interval of a median from order statistics (:func:`podnet.stats.sweeps.median_interval`); and the
load the point actually carried (the median over its runs of the load's received throughput, both
directions summed for ``both``). METHODS.md, "Latency under load", says what this measures and
what it does not.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.tools import metric_info

from ._data import run_rounds
from .kinds import metric_resolution
from .rounding import relative_quantum
from .sweeps import MedianInterval, median_interval, median_interval_bounded

#: the sweep parameter of a load sweep (podnet.launch.spec.load.SWEEP_PARAM; stats does not import launch)
LOAD_STREAMS = "load_streams"

#: columns of latency_under_load.csv
UNDER_LOAD_COLUMNS = [
    "experiment",
    "variant",
    "scenario",
    "tool",
    "sweep",
    "metric",
    "unit",
    "load_streams",
    "load_direction",
    "n",
    "centre",
    "estimand",
    "ci_low",
    "ci_high",
    "ci_method",
    "idle_centre",
    "n_pairs",
    "ratio_to_idle",
    "ratio_low",
    "ratio_high",
    "ratio_method",
    "load_throughput",
    "note",
]

_KEY = ["experiment", "variant", "scenario", "tool", "sweep", "metric"]


def pair_key(rows: pd.DataFrame) -> pd.Series:
    """The pair a run belongs to: its launch and round (``round_seq``), else its launch and repeat
    (:func:`podnet.stats._data.run_rounds`; a run of no known launch pairs by its numbers alone)."""
    return run_rounds(rows, need_launch=False).fillna(run_rounds(rows, "repeat", need_launch=False))


def is_latency(metric: object) -> bool:
    """A time the probe measured (``lower`` is better, in seconds), not a setting echoed back
    (``duration``: the test length) nor a CPU cost per transaction (``machine_cpu_per_transaction``)."""
    name = str(metric)
    try:
        info = metric_info(name)
    except KeyError:
        return False
    return info.unit == "s" and info.better == "lower" and "cpu" not in name


def _load_rows(tidy: pd.DataFrame) -> pd.DataFrame:
    """The measured rows of load sweeps (both roles)."""
    if tidy.empty or "sweep_param" not in tidy.columns or "role" not in tidy.columns:
        return tidy.iloc[0:0]
    t = tidy[(tidy["sweep_param"].astype(str) == LOAD_STREAMS) & (tidy["source"].astype(str) == "measured")]
    if "disturbed" in t.columns:
        t = t[~t["disturbed"].astype(bool)]
    return t.assign(sweep_value=t["sweep_value"].astype(float))


def latency_under_load(tidy: pd.DataFrame, sweeps: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per load sweep, latency metric and load point: the point's summary from ``sweeps``
    (:func:`podnet.stats.sweeps.sweep_table`: centre and interval), its ratio to the idle point over
    paired repeats with an order-statistic interval, and the load it carried
    (latency_under_load.csv; empty without a load sweep)."""
    rows = _load_rows(tidy)
    if rows.empty:
        return pd.DataFrame(columns=UNDER_LOAD_COLUMNS)
    probe = rows[(rows["role"].astype(str) == "probe") & rows["metric"].map(is_latency).astype(bool)]
    load = rows[(rows["role"].astype(str) == "load") & (rows["metric"].astype(str) == "throughput")]
    points = sweeps[sweeps["sweep_param"].astype(str) == LOAD_STREAMS]
    probe = probe.assign(_pair=pair_key(probe))
    carried = _carried(load)
    out = []
    for key, g in probe.groupby(_KEY, sort=True):
        k = dict(zip(_KEY, key))
        idle = g[g["sweep_value"] == 0].groupby("_pair")["value"].median()
        for v, pg in g.groupby("sweep_value", sort=True):
            out.append(_row(k, float(v), pg, idle, points, carried, confidence))
    return pd.DataFrame(out, columns=UNDER_LOAD_COLUMNS)


def _carried(load: pd.DataFrame) -> pd.DataFrame:
    """Per point (experiment, variant, scenario, sweep, streams): the median over its runs of the
    load's throughput (directions summed) and its directions."""
    cols = ["experiment", "variant", "scenario", "sweep", "sweep_value"]
    if load.empty:
        return pd.DataFrame(columns=[*cols, "load_throughput", "load_direction"])
    per_run = load.groupby([*cols, "run_id"], sort=False).agg(
        thr=("value", "sum"), direction=("direction", lambda d: "+".join(sorted(set(map(str, d)))))
    )
    per_point = per_run.groupby(cols).agg(
        load_throughput=("thr", "median"), load_direction=("direction", "first")
    )
    return per_point.reset_index()


def _ratio_interval(
    k: dict, loaded: np.ndarray, idle: np.ndarray, confidence: float
) -> tuple[MedianInterval, bool]:
    """(median interval of the paired ratios loaded / idle, whether the tool's printed resolution
    widened it). A value printed to a quantum q (netperf's whole microseconds) lies within q / 2 of
    what was measured, so each ratio lies in [(L - qL/2) / (I + qI/2), (L + qL/2) / (I - qI/2)] and
    the order-statistic interval is taken over those bounds (:func:`median_interval_bounded`): ratios
    that all printed 1.0 give [0.97, 1.03] at 33 us, not [1, 1]."""
    r = loaded / idle
    step, digits = metric_resolution(pd.DataFrame({"tool": [k["tool"]], "metric": [k["metric"]]}))
    if not (step[0] > 0 or digits[0] > 0):
        return median_interval(r, confidence), False
    ql = relative_quantum(step[0], digits[0], loaded) * loaded
    qi = relative_quantum(step[0], digits[0], idle) * idle
    below = np.where(idle - qi / 2 > 0, idle - qi / 2, np.nan)
    low = (loaded - ql / 2) / (idle + qi / 2)
    high = np.where(np.isfinite(below), (loaded + ql / 2) / below, np.inf)
    return median_interval_bounded(r, low, high, confidence), True


def _row(
    k: dict,
    streams: float,
    g: pd.DataFrame,
    idle: pd.Series,
    points: pd.DataFrame,
    carried: pd.DataFrame,
    confidence: float,
) -> dict:
    """One point's row: its summary from sweeps.csv, its ratio to idle, the load it carried."""
    at = points[
        (points["experiment"].astype(str) == k["experiment"])
        & (points["variant"].astype(str) == k["variant"])
        & (points["scenario"].astype(str) == k["scenario"])
        & (points["tool"].astype(str) == k["tool"])
        & (points["sweep"].astype(str) == k["sweep"])
        & (points["metric"].astype(str) == k["metric"])
        & (points["sweep_value"].astype(float) == streams)
    ]
    s = at.iloc[0] if len(at) else None
    notes = []
    loaded = g.groupby("_pair")["value"].median()
    both = pd.concat([loaded.rename("loaded"), idle.rename("idle")], axis=1, join="inner").dropna()
    both = both[both["idle"] > 0]
    ratio = lo = hi = float("nan")
    method = ""
    if streams == 0:
        ratio, method = 1.0, "the idle point itself"
    elif idle.empty:
        notes.append("no idle point (load_streams 0) in these runs: no ratio")
    elif len(both) >= 2:
        mi, widened = _ratio_interval(
            k, both["loaded"].to_numpy(float), both["idle"].to_numpy(float), confidence
        )
        ratio, lo, hi = mi.median, mi.low, mi.high
        method = f"median of paired loaded/idle ratios; order statistics, coverage {mi.coverage:.1%}"
        if widened:
            method += "; bounds widened by the tool's printed resolution"
    else:
        notes.append(f"{len(both)} pair(s) with the idle point: no interval")
        ratio = float((both["loaded"] / both["idle"]).median()) if len(both) else float("nan")
    c = carried[
        (carried["experiment"].astype(str) == k["experiment"])
        & (carried["variant"].astype(str) == k["variant"])
        & (carried["scenario"].astype(str) == k["scenario"])
        & (carried["sweep"].astype(str) == k["sweep"])
        & (carried["sweep_value"].astype(float) == streams)
    ]
    if streams > 0 and c.empty:
        notes.append("no load output parsed for this point")
    unit = str(g["unit"].iloc[0])
    return {
        **k,
        "unit": unit,
        "load_streams": int(streams),
        "load_direction": str(c["load_direction"].iloc[0]) if len(c) else "",
        "n": int(s["n"]) if s is not None else g["run_id"].nunique(),
        "centre": float(s["centre"]) if s is not None else float(np.median(g["value"])),
        "estimand": str(s["estimand"]) if s is not None else "median",
        "ci_low": float(s["ci_low"]) if s is not None else float("nan"),
        "ci_high": float(s["ci_high"]) if s is not None else float("nan"),
        "ci_method": str(s["ci_method"]) if s is not None else "",
        "idle_centre": float(idle.median()) if len(idle) else float("nan"),
        "n_pairs": int(len(both)) if streams > 0 else int(len(idle)),
        "ratio_to_idle": ratio,
        "ratio_low": lo,
        "ratio_high": hi,
        "ratio_method": method,
        "load_throughput": float(c["load_throughput"].iloc[0]) if len(c) else float("nan"),
        "note": "; ".join(notes),
    }
