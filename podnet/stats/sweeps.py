"""Sweeps and load curves: the points of a swept test as one curve, and a UDP path's loss-free rate.

A sweep (``launch.tools.<tool>.tests[].sweep``) runs one test per value of one adapter parameter
(streams, message length, offered bandwidth, concurrency). Each point is an ordinary group of
repeats with its summary and interval (``summary.csv``); :func:`sweep_table` joins those summaries
with the point they belong to, so a figure draws the curve.

A sweep over ``bandwidth`` of a tool that reports loss is a load curve. :func:`load_curves` gives,
per repeat (one pass over the offered steps: steps of one repeat were run in the same round), the
received rate at the highest step below the first step whose loss exceeds ``load_curve.max_loss``,
and over the repeats its mean with a Student t interval (METHODS.md, "Load curves").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from podnet.parse.tidy import GROUP_COLUMNS

#: columns of sweeps.csv: the point, the measure, and the summary of its repeats
SWEEP_COLUMNS = [
    *GROUP_COLUMNS[:4],  # experiment, variant, scenario, tool
    "sweep",
    "sweep_param",
    "sweep_value",
    *GROUP_COLUMNS[4:],  # test, protocol, direction, streams, metric, unit
    "n",
    "centre",
    "estimand",
    "ci_low",
    "ci_high",
    "ci_method",
]

#: columns of load_curves.csv
CURVE_COLUMNS = [
    "experiment",
    "variant",
    "scenario",
    "tool",
    "sweep",
    "direction",
    "max_loss",
    "unit",
    "n",
    "loss_free_rate",
    "ci_low",
    "ci_high",
    "ci_method",
    "offered_step",
    "next_step",
    "n_saturated",
    "n_incomplete",
    "per_repeat",
    "note",
]

_POINT = ["experiment", "variant", "scenario", "tool", "test"]
_CURVE = ["experiment", "variant", "scenario", "tool", "sweep", "direction"]
#: the tools' words for the received rate and the lost fraction of a UDP run
RECEIVED, LOSS = "throughput", "loss"


def _points(tidy: pd.DataFrame) -> pd.DataFrame:
    """The measured rows of sweep points."""
    if tidy.empty or "sweep" not in tidy.columns:
        return tidy.iloc[0:0]
    t = tidy[(tidy["sweep"].fillna("").astype(str) != "") & (tidy["source"].astype(str) != "reference")]
    return t


def sweep_table(tidy: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Summary rows of every sweep point with the sweep, parameter and value it belongs to, in
    curve order (sweeps.csv; empty when no test was swept)."""
    pts = _points(tidy)
    if pts.empty or summary.empty:
        return pd.DataFrame(columns=SWEEP_COLUMNS)
    key = pts[[*_POINT, "sweep", "sweep_param", "sweep_value"]].drop_duplicates(_POINT)
    key = key.assign(**{c: key[c].astype(str) for c in _POINT})
    s = summary[summary["source"].astype(str) == "measured"]
    s = s.assign(**{c: s[c].astype(str) for c in _POINT})
    out = s.merge(key, on=_POINT, how="inner")
    out["sweep_value"] = out["sweep_value"].astype(float)
    out = out.sort_values(
        ["experiment", "variant", "scenario", "tool", "sweep", "metric", "direction", "sweep_value"]
    )
    return out[SWEEP_COLUMNS].reset_index(drop=True)


def loss_free_rate(steps: pd.DataFrame, max_loss: float) -> tuple[float, float, float, bool] | None:
    """One repeat's curve (columns offered, received, loss; one row per step) -> (received rate at the
    highest step below the first lossy one, that step's offered rate, the next step's offered rate,
    whether a lossy step was reached); None when a step lacks its loss or received rate (a failed run
    leaves the curve unjudgeable: no guess). No loss-free step gives rate 0 at offered 0."""
    steps = steps.sort_values("offered")
    if steps[["received", "loss"]].isna().any().any():
        return None
    rate, offered, nxt, saturated = 0.0, 0.0, float(steps["offered"].iloc[0]), False
    for _, r in steps.iterrows():
        if float(r["loss"]) > max_loss:
            saturated, nxt = True, float(r["offered"])
            break
        rate, offered = float(r["received"]), float(r["offered"])
        nxt = float("nan")
    return rate, offered, nxt, saturated


def load_curves(tidy: pd.DataFrame, settings: Mapping[str, Any], confidence: float = 0.95) -> pd.DataFrame:
    """Per UDP load curve (a bandwidth sweep with loss), the loss-free rate of each repeat and their
    mean with a t interval (load_curves.csv; empty when there is none)."""
    max_loss = float((settings.get("load_curve") or {}).get("max_loss", 0.001))
    pts = _points(tidy)
    if pts.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    pts = pts[pts["sweep_param"].astype(str) == "bandwidth"]
    pts = pts[pts["metric"].isin([RECEIVED, LOSS])]
    if pts.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    launch = pts["launch_id"].astype(str) if "launch_id" in pts.columns else pd.Series("", pts.index)
    pts = pts.assign(
        _rep=launch + "#" + pts["repeat"].astype(str),
        direction=pts["direction"].astype(str),
        sweep_value=pts["sweep_value"].astype(float),
    )
    rows = []
    for key, g in pts.groupby(_CURVE, sort=True, dropna=False):
        # every offered step of the curve: a repeat missing one is incomplete
        offered_all = np.sort(g["sweep_value"].unique())
        per = []
        n_incomplete = n_sat = 0
        unit = (
            str(g.loc[g["metric"] == RECEIVED, "unit"].iloc[0])
            if (g["metric"] == RECEIVED).any()
            else "bit/s"
        )
        for _, r in g.groupby("_rep", sort=True):
            wide = r.pivot_table(index="sweep_value", columns="metric", values="value", aggfunc="first")
            wide = wide.reindex(index=offered_all, columns=[RECEIVED, LOSS])
            steps = pd.DataFrame(
                {"offered": wide.index, "received": wide[RECEIVED].to_numpy(), "loss": wide[LOSS].to_numpy()}
            )
            res = loss_free_rate(steps, max_loss)
            if res is None:
                n_incomplete += 1
                continue
            per.append(res)
            n_sat += int(res[3])
        rows.append(_curve_row(dict(zip(_CURVE, key)), per, n_sat, n_incomplete, max_loss, unit, confidence))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def _curve_row(
    key: dict[str, Any],
    per: list[tuple[float, float, float, bool]],
    n_sat: int,
    n_incomplete: int,
    max_loss: float,
    unit: str,
    confidence: float,
) -> dict[str, Any]:
    rates = np.array([p[0] for p in per], dtype=float)
    n = len(rates)
    mean = float(rates.mean()) if n else float("nan")
    lo = hi = float("nan")
    method = ""
    if n >= 2:
        sd = float(rates.std(ddof=1))
        half = float(sps.t.ppf(0.5 + confidence / 2, n - 1)) * sd / np.sqrt(n)
        lo, hi, method = mean - half, mean + half, "t over repeats"
    offered = float(np.median([p[1] for p in per])) if n else float("nan")
    nexts = [p[2] for p in per if np.isfinite(p[2])]
    nxt = float(np.median(nexts)) if nexts else float("nan")
    notes = []
    if n < 2:
        notes.append("n < 2: no interval")
    if n and n_sat < n:
        notes.append(
            f"{n - n_sat} of {n} repeats lost no more than {max_loss:g} at every offered step: "
            "the rate is a lower bound (offer more)"
        )
    if n and np.any(rates == 0):
        notes.append("a repeat lost more than the threshold at the lowest step (rate 0)")
    if n_incomplete:
        notes.append(f"{n_incomplete} repeats left out: a step failed or lacks its loss")
    if n >= 2 and float(rates.std(ddof=1)) == 0:
        notes.append("every repeat gave the same step: the interval shows the rate's spread only")
    return {
        **key,
        "max_loss": max_loss,
        "unit": unit,
        "n": n,
        "loss_free_rate": mean,
        "ci_low": lo,
        "ci_high": hi,
        "ci_method": method,
        "offered_step": offered,
        "next_step": nxt,
        "n_saturated": n_sat,
        "n_incomplete": n_incomplete,
        "per_repeat": ";".join(f"{r:.6g}" for r in rates),
        "note": "; ".join(notes),
    }
