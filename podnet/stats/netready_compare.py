"""Time to network between variants (net_ready_ratios.csv): which differences between CNIs resolve.

For an experiment of several variants (a campaign's CNIs), each variant's P50 and P99 of
``net_ready_s`` over the pods of its runs (:mod:`podnet.stats.netready`) is divided by the baseline
variant's: the baseline of ``stats.comparisons`` (``by: variant``), the one variants.csv uses
(a campaign's first variant: ``make compare`` declares it), over each of its ``treatments``
(default every other variant). The 95 % interval comes from the same **cluster bootstrap over
runs** as net_ready.csv's, run on each side on its own: a resample draws each variant's runs with
replacement (their pods with them), takes the percentile of each side's pooled pods, and divides;
the interval is the resampled ratios' *expanded* percentile interval (tails at
:func:`podnet.stats.bootstrap.expanded_tail` of the smaller side's number of runs: over 4-10 runs
the plain 2.5/97.5 percentiles under-cover). The two-sided p of "ratio = 1" is a normal
approximation of the resampled log ratios (2 Phi(-|mean| / sd)), on the same expanded scale
(:func:`podnet.stats.bootstrap.expanded_p`), so the interval excludes 1 about when p < 0.05. Holm runs over every
row of one experiment (every treatment, percentile and group: one family); a row without a
p-value stays in it as p = 1. ``resolved``: the Holm-adjusted p is below alpha. Runs judged
disturbed and reference rows are left out (:func:`podnet.stats.netready.pod_rows`). The runs of
the two sides are not paired by round: round-to-round drift common to both widens the interval
instead of cancelling. METHODS.md, "net_ready.csv: time to network", says where it is weak.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from . import core
from ._data import key_text
from .bootstrap import expanded_p, expanded_tail, group_seed
from .netready import (
    _KEY,
    FEW_ABOVE,
    MIN_RUNS,
    bootstrap_quantiles,
    group_columns,
    numeric,
    pod_rows,
    run_values,
)
from .settings import Settings

#: the metric compared between variants, and its percentiles
METRIC = "net_ready_s"
COMPARED = ((0.5, "p50"), (0.99, "p99"))
#: runs a side below which the note says the percentile bootstrap under-covers
FEW_RUNS = 10

#: columns of net_ready_ratios.csv
NET_READY_RATIO_COLUMNS = [
    "experiment",
    "variant",  # the treatment
    "baseline_variant",
    "scenario",
    "tool",
    "test",
    "sweep",
    "sweep_param",
    "sweep_value",
    "mode",
    "concurrency",
    "metric",
    "unit",
    "estimand",  # p50 | p99
    "quantile",
    "value",  # the treatment's percentile over its pooled pods
    "baseline_value",
    "ratio",
    "ci_low",
    "ci_high",
    "ci_method",
    "p_value",
    "p_adjusted",  # Holm over every row of the experiment
    "m",  # rows in that family
    "different",  # the interval excludes 1
    "resolved",  # p_adjusted < alpha
    "n_runs",
    "n_runs_baseline",
    "n_pods",
    "n_pods_baseline",
    "note",
]


class PercentileRatio(NamedTuple):
    """Per quantile: treatment / baseline of the pooled pods' percentiles, its interval and p."""

    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray


def percentile_ratio(
    treatment: list[np.ndarray],
    baseline: list[np.ndarray],
    qs: np.ndarray,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
) -> PercentileRatio:
    """The ratio of the two sides' pooled percentiles ``qs`` (each side: its runs' positive pod
    values), with the expanded percentile interval and two-sided p of ratio = 1 over ``resamples``
    cluster bootstrap resamples, each side's runs drawn on their own (expanded for the smaller
    side's number of runs: :func:`podnet.stats.bootstrap.expanded_tail`, :func:`~podnet.stats.bootstrap.expanded_p`)."""
    qs = np.asarray(qs, dtype=float)
    ratio = np.quantile(np.concatenate(treatment), qs) / np.quantile(np.concatenate(baseline), qs)
    top = bootstrap_quantiles(treatment, qs, resamples, rng)
    dist = top / bootstrap_quantiles(baseline, qs, resamples, rng)
    fewest = min(len(treatment), len(baseline))
    a = expanded_tail(fewest, confidence)
    low, high = np.quantile(dist, a, axis=1), np.quantile(dist, 1.0 - a, axis=1)
    # p of ratio = 1 from the resampled log ratios' mean and sd (a normal approximation of the
    # bootstrap distribution: no floor at 2/(resamples + 1), which the expansion below would lift
    # above what Holm needs even where every resample lies beyond 1), then expanded as the interval
    logs = np.log(dist)
    sd = np.std(logs, axis=1, ddof=1)
    z = np.divide(np.abs(np.mean(logs, axis=1)), sd, out=np.full(len(qs), np.inf), where=sd > 0)
    p = 2.0 * stats.norm.sf(z)
    return PercentileRatio(ratio, low, high, expanded_p(p, fewest))


def variant_pairs(s: Settings, variants: list[str]) -> list[tuple[str, str]]:
    """(treatment, baseline) of every ``by: variant`` entry of ``stats.comparisons`` (its
    ``treatments``, else every other of ``variants``), in the order declared, as variants.csv."""
    out: list[tuple[str, str]] = []
    for c in s.comparisons:
        if c.get("by") != "variant":
            continue
        base = str(c["baseline"])
        treats = [str(t) for t in c.get("treatments") or []] or sorted(v for v in variants if v != base)
        out += [(t, base) for t in treats if t != base and (t, base) not in out]
    return out


def _sides(rows: pd.DataFrame) -> dict[tuple[str, str], list[np.ndarray]]:
    """(group key text, variant) -> each run's pod values (runs in run_id order)."""
    return {(str(k), str(v)): run_values(g) for (k, v), g in rows.groupby(["_k", "_v"], sort=True)}


def _pair_rows(
    first: pd.Series, treat: str, base: str, tr: list[np.ndarray], br: list[np.ndarray], s: Settings
) -> list[dict[str, Any]]:
    """The rows of one treatment over its baseline in one group (one per percentile compared)."""
    qs = np.array([q for q, _ in COMPARED])
    t_all, b_all = np.concatenate(tr), np.concatenate(br)
    tv, bv = np.quantile(t_all, qs), np.quantile(b_all, qs)
    nan = np.full(len(qs), np.nan)
    iv = PercentileRatio(nan, nan, nan, nan)
    method = ""
    notes: list[str] = []
    fewest = min(len(tr), len(br))
    if fewest < MIN_RUNS:
        notes.append(f"{len(tr)} and {len(br)} run(s): no interval (at least {MIN_RUNS} runs a side)")
    elif not ((t_all > 0).all() and (b_all > 0).all()):
        notes.append("a time not above 0: no ratio")
    else:
        rng = np.random.default_rng(group_seed(s.bootstrap.seed, f"{first['_k']}\x1f{treat}\x1f{base}"))
        iv = percentile_ratio(tr, br, qs, s.confidence, s.bootstrap.resamples, rng)
        method = (
            "cluster bootstrap over runs, each variant's resampled on its own "
            f"(expanded percentile, {s.bootstrap.resamples} resamples)"
        )
        if fewest < FEW_RUNS:
            notes.append(f"{fewest} runs on the smaller side: a bootstrap over few runs under-covers")
    ratio = np.where(bv > 0, tv / np.where(bv > 0, bv, 1.0), np.nan)
    columns = group_columns(first, drop=("variant",))
    out = []
    for i, (q, name) in enumerate(COMPARED):
        note = list(notes)
        above = min(len(t_all), len(b_all)) * (1.0 - q)
        if method and above < FEW_ABOVE:
            note.append(f"{above:.1f} pods expected above the {name} (smaller side): it rests on the largest")
        out.append(
            {
                **columns,
                "variant": treat,
                "baseline_variant": base,
                "estimand": name,
                "quantile": q,
                "value": float(tv[i]),
                "baseline_value": float(bv[i]),
                "ratio": float(ratio[i]),
                "ci_low": float(iv.low[i]),
                "ci_high": float(iv.high[i]),
                "ci_method": method,
                "p_value": float(iv.p[i]),
                "n_runs": len(tr),
                "n_runs_baseline": len(br),
                "n_pods": len(t_all),
                "n_pods_baseline": len(b_all),
                "note": "; ".join(note),
            }
        )
    return out


def adjust(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """``p_adjusted`` (Holm over each experiment's rows, a missing p counted as 1), ``m``,
    ``different`` (the interval excludes 1) and ``resolved`` (p_adjusted < ``alpha``)."""
    p = df["p_value"].to_numpy(dtype=float)
    padj = np.full(len(df), np.nan)
    m = np.zeros(len(df), dtype=int)
    for idx in df.groupby(df["experiment"].astype("string").fillna(""), sort=False).indices.values():
        padj[idx] = core.holm(np.where(np.isfinite(p[idx]), p[idx], 1.0))
        m[idx] = len(idx)
    lo, hi = df["ci_low"].to_numpy(dtype=float), df["ci_high"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        different = (lo > 1.0) | (hi < 1.0)
    return df.assign(
        p_adjusted=np.where(np.isfinite(p), padj, np.nan),
        m=m,
        different=different,
        resolved=np.isfinite(p) & (padj < alpha),
    )


def net_ready_ratios(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """net_ready_ratios.csv: per group (scenario, test, sweep point) and ``by: variant`` comparison,
    each treatment's net_ready_s P50 and P99 over the baseline's, with the cluster-bootstrap
    interval, p and Holm (empty without netready runs of two compared variants)."""
    s = Settings.of(settings)
    empty = pd.DataFrame(columns=NET_READY_RATIO_COLUMNS)
    rows = pod_rows(tidy)
    if rows.empty:
        return empty
    rows = rows[rows["metric"].astype(str) == METRIC]
    pairs = variant_pairs(s, sorted(set(rows["variant"].astype(str))))
    if rows.empty or not pairs:
        return empty
    rows = numeric(rows)
    rows = rows[np.isfinite(rows["value"].to_numpy(dtype=float))]
    key = [c for c in _KEY if c != "variant"]
    rows = rows.assign(_k=key_text(rows[key]), _v=rows["variant"].astype(str))
    sides = _sides(rows)
    firsts = rows.drop_duplicates("_k").sort_values("_k")
    out: list[dict[str, Any]] = []
    for _, first in firsts.iterrows():
        for treat, base in pairs:
            tr, br = sides.get((first["_k"], treat)), sides.get((first["_k"], base))
            if tr and br:
                out += _pair_rows(first, treat, base, tr, br, s)
    if not out:
        return empty
    return adjust(pd.DataFrame(out), s.alpha)[NET_READY_RATIO_COLUMNS]
