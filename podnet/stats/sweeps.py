"""Sweeps and load curves: the points of a swept test as one curve, and a UDP path's loss-free rate.

A sweep (``launch.tools.<tool>.tests[].sweep``) runs one test per value of one adapter parameter
(streams, message length, offered bandwidth, concurrency). Each point is an ordinary group of
repeats with its summary and interval (``summary.csv``); :func:`sweep_table` joins those summaries
with the point they belong to, so a figure draws the curve.

A sweep over ``bandwidth`` of a tool that reports loss is a load curve. :func:`load_curves` gives,
per repeat (one pass over the offered steps: steps of one repeat were run in the same round), the
received rate at the highest step below the first step whose loss exceeds ``load_curve.max_loss``,
and over the repeats its median with a distribution-free interval from order statistics (the
per-repeat rates sit on a grid of steps, and a repeat lossy at the lowest step is only known to be
below it; METHODS.md, "Load curves").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as sps

from podnet.parse.tidy import GROUP_COLUMNS

from .settings import Settings

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


def sweep_table(tidy: pd.DataFrame, summary: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Summary rows of every sweep point with the sweep, parameter and value it belongs to, in
    curve order (sweeps.csv; empty when no test was swept). A UDP point's ``loss`` is the pooled
    fraction of its runs' datagrams with :func:`pooled_loss`'s interval, where the runs report
    their datagram counts."""
    pts = _points(tidy)
    if pts.empty or summary.empty:
        return pd.DataFrame(columns=SWEEP_COLUMNS)
    key = pts[[*_POINT, "sweep", "sweep_param", "sweep_value"]].drop_duplicates(_POINT)
    key = key.assign(**{c: key[c].astype(str) for c in _POINT})
    s = summary[summary["source"].astype(str) == "measured"]
    s = s.assign(**{c: s[c].astype(str) for c in _POINT})
    out = s.merge(key, on=_POINT, how="inner")
    out["sweep_value"] = out["sweep_value"].astype(float)
    out = _pooled_loss_rows(out, pts, confidence)
    out = out.sort_values(
        ["experiment", "variant", "scenario", "tool", "sweep", "metric", "direction", "sweep_value"]
    )
    return out[SWEEP_COLUMNS].reset_index(drop=True)


def pooled_loss(lost: np.ndarray, total: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float]:
    """The fraction of all datagrams lost over a point's runs, sum(lost) / sum(total), and its
    interval: the union of Cox's interval for a log-normal mean over the runs' fractions (their
    spread, n - 1 df; each fraction (lost + 1/2) / (sent + 1), so a run without loss counts) and the
    Clopper-Pearson interval of the pooled counts (the binomial floor when the runs agree, e.g. no
    loss at all), clipped to [0, 1]. Coverage is simulated in tests/unit/test_sweeps.py and
    METHODS.md ("Load curves"). (nan, nan, nan) without datagrams."""
    lost, total = np.asarray(lost, dtype=float), np.asarray(total, dtype=float)
    n, y, x = len(total), float(lost.sum()), float(total.sum())
    if n == 0 or x <= 0:
        return float("nan"), float("nan"), float("nan")
    p = y / x
    a = 1 - confidence
    lo = float(sps.beta.ppf(a / 2, y, x - y + 1)) if y > 0 else 0.0
    hi = float(sps.beta.ppf(1 - a / 2, y + 1, x - y)) if y < x else 1.0
    if n >= 2:
        f = np.log((lost + 0.5) / (total + 1))
        m, s2 = float(f.mean()), float(f.var(ddof=1))
        half = float(sps.t.ppf(1 - a / 2, n - 1)) * float(np.sqrt(s2 / n + s2 * s2 / (2 * (n - 1))))
        lo, hi = min(lo, float(np.exp(m + s2 / 2 - half))), max(hi, float(np.exp(m + s2 / 2 + half)))
    return p, max(lo, 0.0), min(hi, 1.0)


#: the tools' datagram counts of a UDP run: lost, and sent (iperf2 total_packets, iperf3 packets)
LOST, SENT = "lost_packets", ("total_packets", "packets")


def _pooled_loss_rows(out: pd.DataFrame, pts: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Replace the loss rows of sweep points whose runs report datagram counts by :func:`pooled_loss`."""
    loss = out["metric"].astype(str) == LOSS
    if not loss.any():
        return out
    keys = [*_POINT, "direction"]
    counts = pts[pts["metric"].isin([LOST, *SENT])].assign(
        **{c: lambda d, c=c: d[c].astype(str) for c in keys}
    )
    if counts.empty:
        return out
    run = "run_id" if "run_id" in counts.columns else "raw_path"
    wide = counts.pivot_table(index=[*keys, run], columns="metric", values="value", aggfunc="first")
    present = [c for c in SENT if c in wide.columns]
    if not present or LOST not in wide.columns:
        return out
    sent = "_sent"
    wide[sent] = wide[present].bfill(axis=1).iloc[:, 0]  # each tool's own word for it
    wide = wide[[LOST, sent]].dropna()
    out = out.copy()
    for i in out.index[loss]:
        key = tuple(str(out.at[i, c]) for c in keys)
        try:
            g = wide.loc[key]
        except KeyError:
            continue
        if len(g) != int(out.at[i, "n"]):
            continue  # not every run has its counts: the summary's interval stands
        p, lo, hi = pooled_loss(g[LOST].to_numpy(), g[sent].to_numpy(), confidence)
        out.loc[i, ["centre", "ci_low", "ci_high"]] = [p, lo, hi]
        out.loc[i, "estimand"] = "lost / sent datagrams over the runs"
        out.loc[i, "ci_method"] = "pooled datagrams: Cox log-normal and Clopper-Pearson"
    return out


class LossFree(NamedTuple):
    """One repeat's loss-free point on its load curve (:func:`loss_free_rate`)."""

    rate: float  # received rate at the highest step below the first lossy one (0: none)
    offered: float  # that step's offered rate
    next_offered: float  # the next (first lossy) step's offered rate; NaN when none was lossy
    saturated: bool  # a lossy step was reached


class MedianInterval(NamedTuple):
    """A median with its order-statistic interval and the interval's coverage (:func:`median_interval`)."""

    median: float
    low: float
    high: float
    coverage: float


def loss_free_rate(steps: pd.DataFrame, max_loss: float) -> LossFree | None:
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
    return LossFree(rate, offered, nxt, saturated)


def load_curves(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any], confidence: float = 0.95
) -> pd.DataFrame:
    """Per UDP load curve (a bandwidth sweep with loss), the loss-free rate of each repeat and their
    median with its order-statistic interval (load_curves.csv; empty when there is none)."""
    if isinstance(settings, Settings):
        max_loss = settings.max_loss
    else:  # a bare ``stats`` mapping: only its load_curve section is read
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
            n_sat += int(res.saturated)
        rows.append(_curve_row(dict(zip(_CURVE, key)), per, n_sat, n_incomplete, max_loss, unit, confidence))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def _order_rank(n: int, confidence: float) -> tuple[int, float]:
    """(k, coverage): the largest k whose [x(k), x(n-k+1)] covers the median with at least
    ``confidence`` (1 - 2 P(Bin(n, 1/2) < k)); k = 1 (the range) and its coverage when none does."""
    k = 1
    for j in range(1, n // 2 + 1):
        if 1 - 2 * float(sps.binom.cdf(j - 1, n, 0.5)) >= confidence:
            k = j
    return k, 1 - 2 * float(sps.binom.cdf(k - 1, n, 0.5))


def median_interval(x: np.ndarray, confidence: float = 0.95) -> MedianInterval:
    """Median of ``x`` and its distribution-free interval from order statistics: [x(k), x(n-k+1)]
    with the largest k whose coverage 1 - 2 P(Bin(n, 1/2) < k) is at least ``confidence``; with too
    few values for that, the full range (k = 1) and its smaller coverage. -> (median, low, high,
    coverage); (median, nan, nan, nan) for n < 2. :func:`median_interval_bounded` with each value
    its own bounds."""
    return median_interval_bounded(x, x, x, confidence)


def median_interval_bounded(
    x: np.ndarray, low: np.ndarray, high: np.ndarray, confidence: float = 0.95
) -> MedianInterval:
    """:func:`median_interval` of values known only within [``low``, ``high``] each (printed values
    rounded to a quantum): the median of the printed ``x``, and [low(k), high(n-k+1)], the k-th
    smallest lower bound and the k-th largest upper bound. Each true order statistic lies between
    them, so the coverage holds whatever the rounding hid, and values that printed alike still
    give an interval of the rounding's width, never of width zero."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    med = float(np.median(x)) if n else float("nan")
    if n < 2:
        return MedianInterval(med, float("nan"), float("nan"), float("nan"))
    k, cover = _order_rank(n, confidence)
    lo = np.sort(np.asarray(low, dtype=float))
    hi = np.sort(np.asarray(high, dtype=float))
    return MedianInterval(med, float(lo[k - 1]), float(hi[n - k]), cover)


def _curve_row(
    key: dict[str, Any],
    per: list[LossFree],
    n_sat: int,
    n_incomplete: int,
    max_loss: float,
    unit: str,
    confidence: float,
) -> dict[str, Any]:
    rates = np.array([p.rate for p in per], dtype=float)
    n = len(rates)
    below = int(np.sum(np.array([p.offered for p in per]) == 0)) if n else 0
    med, lo, hi, cover = median_interval(rates, confidence)
    method = f"median; order statistics, coverage {cover:.1%}" if np.isfinite(cover) else ""
    offered = float(np.median([p.offered for p in per])) if n else float("nan")
    nexts = [p.next_offered for p in per if np.isfinite(p.next_offered)]
    nxt = float(np.median(nexts)) if nexts else float("nan")
    notes = []
    if n < 2:
        notes.append("n < 2: no interval")
    if n and n_sat < n:
        notes.append(
            f"{n - n_sat} of {n} repeats lost no more than {max_loss:g} at every offered step: "
            "the rate is a lower bound (offer more)"
        )
    if below:
        notes.append(
            f"{below} of {n} repeats lost more than {max_loss:g} already at the lowest step: below it "
            "(counted as 0; offer less)"
        )
    if n_incomplete:
        notes.append(f"{n_incomplete} repeats left out: a step failed or lacks its loss")
    if n and len({p.offered for p in per}) == 1 and not below:
        notes.append(
            "every repeat stopped at the same step: the path's loss-free rate lies between it and the "
            "next step (offer finer steps to narrow it)"
        )
    return {
        **key,
        "max_loss": max_loss,
        "unit": unit,
        "n": n,
        "loss_free_rate": med,
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
