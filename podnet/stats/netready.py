"""Time to a working pod network: percentiles over pods, intervals over runs (net_ready.csv).

A netready run (:mod:`podnet.tools.netready`) has one tidy row per pod and metric (tidy ``pod`` =
the pod's index; those rows are in no summary of runs: :func:`podnet.stats._data.split_sources`).
:func:`net_ready_table` pools, per (variant, scenario, test, sweep point, metric), the pods of every
measured run that is not disturbed, and gives P50, P90 and P99 (numpy's default linear
interpolation between order statistics, Hyndman-Fan type 7). A percentile gets a 95 % interval
only where runs and pods support one (:func:`support`): a variant's own P50 from :data:`MIN_RUNS`
runs (its P90 and P99 are points); between variants (:mod:`podnet.stats.netready_compare`) also the
P90, and a P99 only from 500 pods (at least :data:`FEW_ABOVE` expected above it). The interval comes from a **cluster bootstrap over runs**
(each resample draws whole runs with replacement, their pods with them, and takes the same
percentile of the pooled pods; ``stats.bootstrap.resamples`` and ``seed``, one random stream per
group) read as a t interval on the log scale (:func:`log_t`): the resamples' sd, expanded by
sqrt(k/(k-1)), times t_{k-1}. Pods of one run share its moment (the machine's load, the CNI's
state, a burst's queue), so they are not independent; resampling runs keeps that dependence.
benchmarks/sim_netready.py gives the coverage; METHODS.md, "Time to network", says what is
published and why.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from ._data import disturbed_mask, key_text, per_pod_mask
from .bootstrap import group_seed
from .settings import Settings

#: the percentiles reported, and their names
QUANTILES = ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"))
#: fewest runs for an interval (and, a side, for a ratio: :mod:`podnet.stats.netready_compare`)
MIN_RUNS = 4
#: fewest pods expected above a percentile for its interval (fewer: the value alone, with a note)
FEW_ABOVE = 5
#: the highest percentile with an interval of one variant's own (above it: a point; between variants,
#: where the top runs' pull cancels in the ratio, up to the pods' limit): benchmarks/sim_netready.py
OWN_TOP = 0.5
#: resampled log sd at or below which the spread counts as zero (no interval, no p)
ZERO_SPREAD = 1e-12

#: columns of net_ready.csv
NET_READY_COLUMNS = [
    "experiment",
    "variant",
    "scenario",
    "tool",
    "test",
    "sweep",
    "sweep_param",
    "sweep_value",
    "mode",  # burst (K pods created at once) | serial (one at a time)
    "concurrency",  # pods created at once (tidy streams)
    "metric",
    "unit",
    "estimand",  # p50 | p90 | p99
    "quantile",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_runs",
    "n_pods",
    "pods_per_run",  # the median over runs of their pods
    "note",
]

_KEY = [
    "experiment",
    "variant",
    "scenario",
    "tool",
    "test",
    "sweep",
    "sweep_param",
    "sweep_value",
    "streams",
    "metric",
    "unit",
]


class LogT(NamedTuple):
    """Per quantile: a t interval on the log scale from resampled values, its two-sided p of "the
    log is 0" (a ratio of 1) and the expanded sd it rests on; NaN where the spread is zero."""

    low: np.ndarray
    high: np.ndarray
    p: np.ndarray
    sd: np.ndarray


def pod_rows(tidy: pd.DataFrame) -> pd.DataFrame:
    """The measured per-pod rows of runs that were not disturbed."""
    if tidy.empty or "pod" not in tidy.columns:
        return tidy.iloc[0:0]
    keep = per_pod_mask(tidy) & ~disturbed_mask(tidy)
    if "source" in tidy.columns:
        keep &= tidy["source"].astype(str).str.lower().to_numpy() != "reference"
    return tidy[keep]


def numeric(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with ``sweep_value`` and ``value`` as numbers (NaN where not one)."""
    return rows.assign(
        sweep_value=pd.to_numeric(rows["sweep_value"], errors="coerce"),
        value=pd.to_numeric(rows["value"], errors="coerce"),
    )


def group_columns(key: Mapping[str, Any] | pd.Series, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A group's columns in both net_ready tables: its key (:data:`_KEY`) but ``streams`` and ``drop``,
    then ``mode`` (burst: more than one pod created at once; serial) and ``concurrency`` (tidy streams)."""
    conc = int(key["streams"]) if pd.notna(key["streams"]) else 1
    return {
        **{c: key[c] for c in _KEY if c != "streams" and c not in drop},
        "mode": "burst" if conc > 1 else "serial",
        "concurrency": conc,
    }


def run_values(pods: pd.DataFrame) -> list[np.ndarray]:
    """Each run's pod values of ``pods`` (per-pod rows of one group), runs in run_id order: the unit
    the cluster bootstrap resamples."""
    return [r["value"].to_numpy(dtype=float) for _, r in pods.groupby("run_id", sort=True)]


def pooled_quantiles(units: Sequence[np.ndarray], draws: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """The quantiles ``qs`` of the pooled values of the units each row of ``draws`` (resamples x
    units drawn) picks, shape (len(qs), resamples); NaN for a resample that pools no value."""
    sizes = {len(u) for u in units}
    if len(sizes) == 1 and 0 not in sizes:  # the usual case: every unit has its K pods
        data = np.stack(units)
        return np.quantile(data[draws].reshape(len(draws), -1), qs, axis=1)
    out = np.full((len(qs), len(draws)), np.nan)
    for j, d in enumerate(draws):
        pooled = np.concatenate([units[i] for i in d])
        if len(pooled):
            out[:, j] = np.quantile(pooled, qs)
    return out


def bootstrap_quantiles(
    runs: list[np.ndarray], qs: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """The pooled pods' quantiles ``qs`` in each of ``resamples`` resamples of whole runs drawn with
    replacement (``runs``: each run's pod values), shape (len(qs), resamples)."""
    return pooled_quantiles(runs, rng.integers(0, len(runs), size=(resamples, len(runs))), qs)


def log_t(estimate: np.ndarray, dist: np.ndarray, k: int, confidence: float) -> LogT:
    """The ``confidence`` t interval of positive ``estimate`` (per quantile) on the log scale, from
    its resampled values ``dist`` (quantiles x resamples) over ``k`` resampled units: the log
    resamples' sd times sqrt(k/(k-1)) (a bootstrap over k units is as narrow as divisor k; Hesterberg
    2015, 4.1) is the standard error, with t_{k-1}. p: two-sided, of "log estimate = 0" on the same
    scale, so the interval excludes 1 exactly when p < 1 - confidence. A zero (or undefined) spread
    gives neither interval nor p: never a width-zero interval, never p = 0."""
    est = np.asarray(estimate, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a quantile with < 2 finite resamples: NaN
        logs = np.log(np.where(dist > 0, dist, np.nan))
        n_ok = np.sum(np.isfinite(logs), axis=1)
        sd = np.nanstd(logs, axis=1, ddof=1) * np.sqrt(k / (k - 1.0)) if k > 1 else np.full(len(est), np.nan)
        centre = np.log(np.where(est > 0, est, np.nan))
    ok = (n_ok > 1) & np.isfinite(sd) & (sd > ZERO_SPREAD) & np.isfinite(centre)
    nan = np.full(len(est), np.nan)
    if k < 2 or not ok.any():
        return LogT(nan, nan.copy(), nan.copy(), np.where(ok, sd, nan))
    t = stats.t.ppf(0.5 + confidence / 2.0, k - 1)
    se = np.where(ok, sd, 1.0)
    low = np.where(ok, np.exp(centre - t * se), np.nan)
    high = np.where(ok, np.exp(centre + t * se), np.nan)
    p = np.where(ok, 2.0 * stats.t.sf(np.abs(np.nan_to_num(centre)) / se, k - 1), np.nan)
    return LogT(low, high, p, np.where(ok, sd, np.nan))


def cluster_bootstrap(
    runs: list[np.ndarray], qs: np.ndarray, confidence: float, resamples: int, rng: np.random.Generator
) -> LogT:
    """Per quantile in ``qs``: the :func:`log_t` interval of the pooled pods' quantile over
    resamples of whole runs (``runs``: each run's pod values; :func:`bootstrap_quantiles`)."""
    est = np.quantile(np.concatenate(runs), qs)
    return log_t(est, bootstrap_quantiles(runs, qs, resamples, rng), len(runs), confidence)


def support(q: float, n_runs: int, n_pods: int, own: bool = True) -> str:
    """Why the percentile ``q`` of ``n_pods`` pods from ``n_runs`` runs gets no interval ("" when it
    gets one): fewer than :data:`MIN_RUNS` runs; a variant's own (``own``) percentile above
    :data:`OWN_TOP` (over 4-10 runs its top runs set it: a P90's interval covered 89-95 %); fewer
    than :data:`FEW_ABOVE` pods expected above it (a P99 of 80-200 pods is about the second-largest
    pod: its interval covered 76-89 %; benchmarks/sim_netready.py)."""
    name = f"P{round(100 * q):d}"
    if n_runs < MIN_RUNS:
        return f"{n_runs} run(s): no interval (at least {MIN_RUNS} runs)"
    if own and q > OWN_TOP:
        return (
            f"{name}: a point (over a few runs a variant's own {name} is set by its top runs and its "
            "interval under-covers; the ratio between variants has one)"
        )
    above = n_pods * (1.0 - q)
    if above < FEW_ABOVE - 1e-9:
        need = int(np.ceil(FEW_ABOVE / (1.0 - q) - 1e-9))
        return (
            f"{name} of {n_pods} pods ({above:.1f} expected above it): a point, no interval (one needs "
            f"{FEW_ABOVE} pods above it, {need} pods; the P90 ratio is the tail with an interval)"
        )
    return ""


def net_ready_table(tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None) -> pd.DataFrame:
    """net_ready.csv: per group and metric, P50/P90/P99 over pods with cluster-bootstrap intervals
    over runs where runs and pods support one (:func:`support`; empty without netready runs)."""
    s = Settings.of(settings)
    rows = pod_rows(tidy)
    if rows.empty:
        return pd.DataFrame(columns=NET_READY_COLUMNS)
    rows = numeric(rows)
    qs = np.array([q for q, _ in QUANTILES])
    out = []
    for key, g in rows.groupby(_KEY, sort=True, dropna=False):
        k = dict(zip(_KEY, key, strict=True))
        g = g[np.isfinite(g["value"].to_numpy(dtype=float))]
        if g.empty:
            continue
        runs = run_values(g)
        pooled = np.concatenate(runs)
        values = np.quantile(pooled, qs)
        why = [support(q, len(runs), len(pooled)) for q in qs]
        nan = np.full(len(qs), np.nan)
        iv = LogT(nan, nan, nan, nan)
        method = ""
        if any(not w for w in why):
            rng = np.random.default_rng(group_seed(s.bootstrap.seed, key_text(pd.DataFrame([k]))[0]))
            iv = cluster_bootstrap(runs, qs, s.confidence, s.bootstrap.resamples, rng)
            method = f"cluster bootstrap over runs (log-scale t, {s.bootstrap.resamples} resamples)"
        columns = group_columns(k)
        for i, (q, name) in enumerate(QUANTILES):
            note = why[i]
            shown = not note and np.isfinite(iv.low[i])
            if not note and not shown:
                note = "the resampled percentiles do not spread (zero spread): no interval"
            out.append(
                {
                    **columns,
                    "estimand": name,
                    "quantile": q,
                    "value": float(values[i]),
                    "ci_low": float(iv.low[i]) if shown else np.nan,
                    "ci_high": float(iv.high[i]) if shown else np.nan,
                    "ci_method": method if shown else "",
                    "n_runs": len(runs),
                    "n_pods": len(pooled),
                    "pods_per_run": float(np.median([len(r) for r in runs])),
                    "note": note,
                }
            )
    return pd.DataFrame(out, columns=NET_READY_COLUMNS)
