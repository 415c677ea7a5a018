"""What the headline figures do not draw as a finding, and why (issue 45).

- A measure printed coarser than its spread: where the statistics found, at most of a measure's
  paths, that the tool's printed resolution rather than the runs sets the interval (``quantised`` in
  summary.csv, :mod:`podnet.stats.rounding`; ab's latency printed in whole milliseconds: 1 ms
  [0.5, 2] at every path, CV 0), the throughput, latency, ratios and variants figures leave the
  measure out and say so in their note and in ``figures/plan.json``.
- A loss-dominated UDP rate: what arrived of a UDP stream that lost most of what was sent measures
  the drops, not the path. The throughput figure writes the loss beside each UDP rate that lost at
  least :data:`LOSS_SHOWN`; the ratio figures leave out a ratio whose either side lost at least
  :data:`LOSS_DOMINATED` (seed-qperf's udp_bw: 1.1 Mbit/s received of 944 Mbit/s sent, a
  "10,000x" that is the loss).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import data

#: a UDP rate that lost at least this share of what was sent is loss-dominated: no ratio of it
LOSS_DOMINATED = 0.5
#: a UDP rate that lost at least this share has its loss written beside it
LOSS_SHOWN = 0.01
#: a measure is printed coarser than its spread when at least this share of its groups of two or
#: more runs, and at least :data:`COARSE_MIN` of them, have an interval set by the printed
#: resolution (the statistics' ``quantised``) with a printed step of at least :data:`COARSE_STEP` of
#: the value: ab's latency in whole ms at 1-2 ms (a step of 50-100 %), not iperf 2's 3 digits at
#: 105 Mbit/s (1 %: equal prints there are a stable rate, drawn)
COARSE_SHARE = 0.5
COARSE_MIN = 2
COARSE_STEP = 0.1
#: one UDP stream's group: a path of a variant, one test, direction and stream count
LOSS_KEYS = ["variant", "scenario", "tool", "test", "direction", "streams"]


def _text(v: object) -> str:
    """A key cell as text, a whole number without its ".0" (streams is 1 in one table, 1.0 in another)."""
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(v)
    return str(int(f)) if f.is_integer() else str(v)


def keys(df: pd.DataFrame, columns: list[str]) -> list[tuple[str, ...]]:
    """Each row's ``columns`` as a tuple of text (see :func:`_text`)."""
    return list(zip(*(df[c].map(_text) for c in columns))) if len(df) else []


def _measured(summary: pd.DataFrame) -> pd.DataFrame:
    if "source" not in summary.columns:
        return summary
    return summary[summary["source"].fillna("measured") == "measured"]


def _flag(values: pd.Series) -> np.ndarray:
    """A boolean column read back from CSV (True, "True", NaN) as booleans."""
    return values.astype(str).str.lower().eq("true").to_numpy()


def coarse_measures(summary: pd.DataFrame) -> dict[tuple[str, ...], str]:
    """The measures (:data:`data.MEASURE` as text) printed coarser than their spread -> why, for a
    figure's note: at least :data:`COARSE_SHARE` of their groups of two or more runs, and two, are
    ``quantised`` with a printed step of at least :data:`COARSE_STEP` of their value. Groups of one
    run have no spread to compare with and decide nothing."""
    if summary.empty or not {"quantised", "n", "tool", "metric", "mean"} <= set(summary.columns):
        return {}
    from podnet.stats.kinds import metric_resolution
    from podnet.stats.rounding import relative_quantum

    s = _measured(summary)
    s = s[pd.to_numeric(s["n"], errors="coerce") >= 2]
    if s.empty:
        return {}
    step, digits = metric_resolution(s[["tool", "metric"]])
    size = pd.to_numeric(s["gmean"] if "gmean" in s.columns else s["mean"], errors="coerce")
    size = size.fillna(pd.to_numeric(s["mean"], errors="coerce")).to_numpy(dtype=float)
    q_rel = relative_quantum(step, digits, size)
    coarse = _flag(s["quantised"]) & (q_rel >= COARSE_STEP)
    flags: dict[tuple[str, ...], list[tuple[bool, float]]] = {}
    for k, c, q in zip(keys(s, data.MEASURE), coarse, q_rel):
        flags.setdefault(k, []).append((bool(c), float(q)))
    out = {}
    for k, f in flags.items():
        steps = [q for c, q in f if c]
        if len(steps) >= COARSE_MIN and len(steps) >= COARSE_SHARE * len(f):
            out[k] = (
                f"printed coarser than its spread (in steps of {data.fmt_value(100 * min(steps), 2)} % of "
                f"its value or more, so the printed resolution, not the runs, sets the interval at "
                f"{len(steps)} of its {len(f)} points: summary.csv, quantised)"
            )
    return out


def udp_loss(summary: pd.DataFrame) -> dict[tuple[str, ...], float]:
    """The share of what was sent that each UDP group lost, keyed by :data:`LOSS_KEYS` (as text): the
    tool's ``loss`` where it reports one, else 1 - received / sent rate (``throughput`` over
    ``sender_throughput``: qperf's udp_bw). Tests that are not UDP are not in it."""
    if summary.empty or not {"metric", "protocol", "mean"} <= set(summary.columns):
        return {}
    s = _measured(summary)
    udp = set(keys(s[s["protocol"].astype(str) == "udp"], ["tool", "test"]))
    if not udp:
        return {}
    s = s[np.array([k in udp for k in keys(s, ["tool", "test"])], dtype=bool)]
    s = s[s["metric"].isin(["loss", "throughput", "sender_throughput"])]
    values: dict[tuple[str, ...], dict[str, float]] = {}
    for k, metric, mean in zip(keys(s, LOSS_KEYS), s["metric"], pd.to_numeric(s["mean"], errors="coerce")):
        values.setdefault(k, {})[str(metric)] = float(mean)
    out = {}
    for k, v in values.items():
        loss = v.get("loss", np.nan)
        got, sent = v.get("throughput", np.nan), v.get("sender_throughput", np.nan)
        if not np.isfinite(loss) and np.isfinite(got) and np.isfinite(sent) and sent > 0:
            loss = max(0.0, 1.0 - got / sent)
        if np.isfinite(loss):
            out[k] = float(loss)
    return out


def loss_text(loss: float) -> str:
    """ "99.9 % lost" (three significant digits; never "100 %" for what is not all)."""
    shown = data.fmt_value(100 * loss)
    if loss < 1 and float(shown.replace(",", "")) >= 100:
        shown = ">99.9"
    return f"{shown} % lost"


def loss_labels(rows: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """For each summary row of ``rows`` (a rate), its UDP loss as :func:`loss_text` where it lost at
    least :data:`LOSS_SHOWN`, else ""."""
    losses = udp_loss(summary)
    out = []
    for k in keys(rows, LOSS_KEYS):
        loss = losses.get(k, np.nan)
        out.append(loss_text(loss) if np.isfinite(loss) and loss >= LOSS_SHOWN else "")
    return out


def ratios(r: pd.DataFrame, summary: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ratios ``r`` a ratio figure draws, and what it leaves out and why: the measures
    printed coarser than their spread (:func:`coarse_measures`) and the ratios of a loss-dominated
    UDP rate (either side lost at least :data:`LOSS_DOMINATED`), one line per measure."""
    if r.empty:
        return r, []
    coarse = coarse_measures(summary)
    losses = udp_loss(summary)
    measure = keys(r, data.MEASURE)
    treated = keys(r, LOSS_KEYS)
    by_variant = r["by"].astype(str).eq("variant").to_numpy()
    base = r.assign(
        variant=np.where(by_variant, r["baseline"].astype(str), r["variant"].astype(str)),
        scenario=np.where(by_variant, r["scenario"].astype(str), r["baseline"].astype(str)),
    )
    based = keys(base, LOSS_KEYS)
    one_variant = r["variant"].nunique() <= 1 and not by_variant.any()
    keep = np.ones(len(r), dtype=bool)
    why: dict[tuple[str, ...], str] = {}
    lost: dict[tuple[str, ...], dict[str, str]] = {}
    for i, (m, tk, bk) in enumerate(zip(measure, treated, based)):
        if m in coarse:
            keep[i] = False
            why[m] = coarse[m]
            continue
        for k in dict.fromkeys((bk, tk)):  # the baseline's first
            x = losses.get(k, np.nan)
            if np.isfinite(x) and x >= LOSS_DOMINATED:
                keep[i] = False
                lost.setdefault(m, {})[k[1] if one_variant else f"{k[0]} {k[1]}"] = loss_text(x)
    out = [f"{_label(r, measure, m)}: {w}" for m, w in why.items()]
    for m, sides in lost.items():
        n = sum(1 for x in measure if x == m)
        dropped = sum(1 for x, k in zip(measure, keep) if x == m and not k)
        shown = "; ".join(f"{side} {text}" for side, text in sides.items())
        out.append(
            f"{_label(r, measure, m)}: {dropped} of {n} ratios, of a UDP rate that lost most of what was "
            f"sent ({shown}): the ratio would measure the loss, not the path (throughput figure)"
        )
    return r[keep].reset_index(drop=True), out


def _label(r: pd.DataFrame, measure: list[tuple[str, ...]], m: tuple[str, ...]) -> str:
    """The measure ``m``'s label with its metric ("qperf udp_bw · Throughput")."""
    first = r.iloc[next(i for i, x in enumerate(measure) if x == m)]
    return data.measure_label(first, with_metric=True)
