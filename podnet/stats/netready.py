"""Time to a working pod network: percentiles over pods, intervals over runs (net_ready.csv).

A netready run (:mod:`podnet.tools.netready`) has one tidy row per pod and metric (tidy ``pod`` =
the pod's index; those rows are in no summary of runs: :func:`podnet.stats._data.split_sources`).
:func:`net_ready_table` pools, per (variant, scenario, test, sweep point, metric), the pods of every
measured run that is not disturbed, and gives P50, P90 and P99 (numpy's default linear
interpolation between order statistics, Hyndman-Fan type 7) with a 95 % interval from a **cluster
bootstrap over runs**: each resample draws whole runs with replacement (their pods with them) and
takes the same percentile of the pooled pods; the interval is the resamples' 2.5 and 97.5
percentiles (``stats.bootstrap.resamples`` and ``seed``, one random stream per group). Pods of one
run share its moment (the machine's load, the CNI's state, a burst's queue), so they are not
independent; resampling runs keeps that dependence, where an order-statistic interval over pods
taken as iid would be too narrow. METHODS.md, "Time to network", says what this measures and what
not, and where these intervals are weak (few runs; a P99 from fewer than ~100 pods).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._data import disturbed_mask, key_text, per_pod_mask
from .bootstrap import expanded_tail, group_seed
from .settings import Settings

#: the percentiles reported, and their names
QUANTILES = ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"))
#: fewest runs for an interval (fewer: the value alone, with a note)
MIN_RUNS = 3
#: pods expected above a percentile below which its interval rests on a handful of values
FEW_ABOVE = 5

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


def bootstrap_quantiles(
    runs: list[np.ndarray], qs: np.ndarray, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """The pooled pods' quantiles ``qs`` in each of ``resamples`` resamples of whole runs drawn with
    replacement (``runs``: each run's pod values), shape (len(qs), resamples)."""
    k = len(runs)
    draws = rng.integers(0, k, size=(resamples, k))
    sizes = {len(r) for r in runs}
    if len(sizes) == 1:  # the usual case: every run has its K pods
        data = np.stack(runs)
        return np.quantile(data[draws].reshape(resamples, -1), qs, axis=1)
    return np.stack([np.quantile(np.concatenate([runs[i] for i in d]), qs) for d in draws], axis=1)


def cluster_bootstrap(
    runs: list[np.ndarray], qs: np.ndarray, confidence: float, resamples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per quantile in ``qs``: expanded percentile intervals (tails at
    :func:`podnet.stats.bootstrap.expanded_tail` of the number of runs) of the pooled pods' quantiles
    over resamples of whole runs (``runs``: each run's pod values; :func:`bootstrap_quantiles`)."""
    dist = bootstrap_quantiles(runs, qs, resamples, rng)
    a = expanded_tail(len(runs), confidence)
    return np.quantile(dist, a, axis=1), np.quantile(dist, 1.0 - a, axis=1)


def net_ready_table(tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None) -> pd.DataFrame:
    """net_ready.csv: per group and metric, P50/P90/P99 over pods with cluster-bootstrap intervals
    over runs (empty without netready runs)."""
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
        lo = hi = np.full(len(qs), np.nan)
        method = ""
        notes = []
        if len(runs) >= MIN_RUNS:
            rng = np.random.default_rng(group_seed(s.bootstrap.seed, key_text(pd.DataFrame([k]))[0]))
            lo, hi = cluster_bootstrap(runs, qs, s.confidence, s.bootstrap.resamples, rng)
            method = f"cluster bootstrap over runs (expanded percentile, {s.bootstrap.resamples} resamples)"
        else:
            notes.append(f"{len(runs)} run(s): no interval (at least {MIN_RUNS} runs)")
        columns = group_columns(k)
        for i, (q, name) in enumerate(QUANTILES):
            above = len(pooled) * (1.0 - q)
            note = list(notes)
            if above < FEW_ABOVE and method:
                note.append(
                    f"{above:.1f} pods expected above the {name}: its interval rests on the few largest "
                    "values and cannot reach beyond the largest seen"
                )
            out.append(
                {
                    **columns,
                    "estimand": name,
                    "quantile": q,
                    "value": float(values[i]),
                    "ci_low": float(lo[i]),
                    "ci_high": float(hi[i]),
                    "ci_method": method,
                    "n_runs": len(runs),
                    "n_pods": len(pooled),
                    "pods_per_run": float(np.median([len(r) for r in runs])),
                    "note": "; ".join(note),
                }
            )
    return pd.DataFrame(out, columns=NET_READY_COLUMNS)
