"""Time to network between variants (net_ready_ratios.csv): which CNIs differ from the baseline.

For an experiment of several variants (a campaign's CNIs), each variant's P50, P90 and P99 of each
ranked metric (:data:`METRICS`: ``net_ready_s``, the time any peer sees, through the API, and
``first_reply_out_s``, the datapath's own time from the pod's side) over the pods of its runs
(:mod:`podnet.stats.netready`) is divided by the baseline variant's: the baseline of
``stats.comparisons`` (``by: variant``), the one variants.csv uses (a campaign's first variant:
``make compare`` declares it), over each of its ``treatments`` (default every other variant).

**Paired by round.** A side-by-side campaign runs every variant in each round (tidy ``round_seq``
within one ``launch_id``): each round's percentile of each side's pods (its burst) gives a log
ratio, and the published ratio is their geometric mean over the rounds both ran, with the paired t
interval and p (t_{k-1}, k those rounds; :func:`round_t`), so what a round shares (the machine's
load, the time of day) cancels and the interval excludes 1 exactly when p < 0.05. It replaced a
round-paired bootstrap of the pooled pods' percentile: over 6-9 rounds that percentile is set by
the slowest one or two bursts when bursts differ more than their pods, a bootstrap over the rounds
cannot show how far those could fall (its se 13-19 % short) and an A/A ratio's interval covered 1
in 88-92 % (benchmarks/sim_netready.py). Without shared rounds each side's runs are bootstrapped on
their own, the ratio of the pooled pods' percentiles with the
:func:`podnet.stats.netready.log_t` interval (k the smaller side's runs; the note says so). No
ratio (and no p) below :data:`~podnet.stats.netready.MIN_RUNS` runs a side; no interval for a
percentile without the pods to support it (P99: a point); a zero spread gives neither interval nor p.

**Family.** The declared family (:data:`FAMILY`) is one row per treatment per ranked metric: its
P90, the burst's tail. Holm runs over the family's rows of one experiment (a row without a p stays
in it as p = 1); ``different``: a family row whose Holm-adjusted p is below alpha. P50 and P99 rows
are exploratory: their p is unadjusted and they are never "different". benchmarks/sim_netready.py
gives coverage, the A/A rate and power; METHODS.md, "Time to network", says what is published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from . import onep
from ._data import key_text, run_rounds
from .bootstrap import group_seed
from .netready import (
    _KEY,
    MIN_RUNS,
    QUANTILES,
    ZERO_SPREAD,
    group_columns,
    log_t,
    numeric,
    pod_rows,
    pooled_quantiles,
    support,
)
from .planning import precise
from .settings import Settings

#: the metrics ranked between variants: the API-visible time, then the datapath's own
METRICS = ("net_ready_s", "first_reply_out_s")
#: the estimand of the declared family (one row per treatment per ranked metric)
FAMILY = "p90"

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
    "estimand",  # p50 | p90 | p99
    "quantile",
    "value",  # the treatment's percentile: paired, the geometric mean of its rounds'; else its pooled pods'
    "baseline_value",
    "ratio",
    "ci_low",
    "ci_high",
    "ci_method",
    "p_value",
    "role",  # primary (in the family) | exploratory
    "p_adjusted",  # Holm over the family's rows of the experiment
    "m",  # rows in that family
    "different",  # a family row whose p_adjusted < alpha
    "precise",  # a family row whose interval meets stats.planning's width target on min_to_stop rounds (runs)
    "n_runs",
    "n_runs_baseline",
    "n_rounds",  # rounds both sides ran (0: not paired by round)
    "n_pods",
    "n_pods_baseline",
    "note",
]


class Side(NamedTuple):
    """One variant's runs in one group: each run's pod values and the round it ran in (launch and
    ``round_seq``; None unless every run carries one)."""

    runs: list[np.ndarray]
    rounds: list[str] | None


class PercentileRatio(NamedTuple):
    """Per quantile: treatment / baseline of the pooled pods' percentiles, its interval and p."""

    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray


def round_t(
    treatment: list[np.ndarray], baseline: list[np.ndarray], qs: np.ndarray, confidence: float
) -> PercentileRatio:
    """Per quantile ``qs``: the geometric mean over the rounds both sides ran (unit i of both sides:
    round i; a side may have no pods in a round) of each round's percentile ratio, with the paired t
    interval and p of its log (t_{k-1}, k those rounds; METHODS.md, "Time to network": a bootstrap
    over k rounds of the pooled pods' percentile is set by the slowest bursts and under-covers).
    Under k = 2 rounds or a zero spread of the log ratios: the ratio alone, no interval, no p."""
    if len(treatment) != len(baseline):
        raise ValueError("paired: both sides need one unit per round")
    top, bottom = _round_logs(treatment, baseline, qs)
    nan = np.full(len(qs), np.nan)
    if not len(top):
        return PercentileRatio(nan, nan, nan, nan)
    with np.errstate(invalid="ignore"):
        d = top - bottom  # rounds x qs
    k, centre = len(d), d.mean(axis=0)
    se = d.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else nan
    ok = np.isfinite(centre) & np.isfinite(se) & (se > ZERO_SPREAD)
    if not ok.any():
        return PercentileRatio(np.exp(centre), nan, nan.copy(), nan.copy())
    t = stats.t.ppf(0.5 + confidence / 2.0, k - 1)
    s = np.where(ok, se, 1.0)
    low = np.where(ok, np.exp(centre - t * s), np.nan)
    high = np.where(ok, np.exp(centre + t * s), np.nan)
    p = np.where(ok, 2.0 * stats.t.sf(np.abs(np.nan_to_num(centre)) / s, k - 1), np.nan)
    return PercentileRatio(np.exp(centre), low, high, p)


def percentile_ratio(
    treatment: list[np.ndarray],
    baseline: list[np.ndarray],
    qs: np.ndarray,
    confidence: float,
    resamples: int,
    rng: np.random.Generator,
    paired: bool = False,
) -> PercentileRatio:
    """``paired`` (the units are rounds, aligned): :func:`round_t`. Else the ratio of the two
    sides' pooled percentiles ``qs`` (each side: its units' positive pod values) with the
    :func:`~podnet.stats.netready.log_t` interval and p over ``resamples`` resamples of each side's
    units drawn on their own (k the smaller side's count)."""
    qs = np.asarray(qs, dtype=float)
    if paired:
        return round_t(treatment, baseline, qs, confidence)
    ratio = np.quantile(np.concatenate(treatment), qs) / np.quantile(np.concatenate(baseline), qs)
    k = min(len(treatment), len(baseline))
    top = pooled_quantiles(treatment, rng.integers(0, len(treatment), (resamples, len(treatment))), qs)
    bottom = pooled_quantiles(baseline, rng.integers(0, len(baseline), (resamples, len(baseline))), qs)
    with np.errstate(divide="ignore", invalid="ignore"):
        iv = log_t(ratio, top / bottom, k, confidence)
    return PercentileRatio(ratio, iv.low, iv.high, iv.p)


def typical_round(
    tu: list[np.ndarray], bu: list[np.ndarray], qs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each side's geometric mean over the rounds both ran of its round's percentiles ``qs``: the
    ``value`` and ``baseline_value`` of a paired row (their quotient is :func:`round_t`'s ratio)."""
    top, bottom = _round_logs(tu, bu, qs)
    if not len(top):
        nan = np.full(len(qs), np.nan)
        return nan, nan.copy()
    return np.exp(top.mean(axis=0)), np.exp(bottom.mean(axis=0))


def _round_logs(
    treatment: list[np.ndarray], baseline: list[np.ndarray], qs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each side's log percentiles ``qs`` of its pods in each round both sides ran (rounds x qs):
    what :func:`round_t` pairs and :func:`typical_round` averages."""
    both = [(t, b) for t, b in zip(treatment, baseline) if len(t) and len(b)]
    with np.errstate(divide="ignore"):
        top = np.log(np.array([np.quantile(t, qs) for t, _ in both]).reshape(len(both), len(qs)))
        bottom = np.log(np.array([np.quantile(b, qs) for _, b in both]).reshape(len(both), len(qs)))
    return top, bottom


def round_units(tr: Side, br: Side) -> tuple[list[np.ndarray], list[np.ndarray], int] | None:
    """Both sides' pods per round (every round either ran, in order) and the rounds both ran; None
    unless both sides carry their rounds and share at least one."""
    if tr.rounds is None or br.rounds is None:
        return None
    shared = set(tr.rounds) & set(br.rounds)
    if not shared:
        return None
    rounds = sorted(set(tr.rounds) | set(br.rounds))

    def pods(side: Side, rnd: str) -> np.ndarray:
        got = [r for r, k in zip(side.runs, side.rounds or []) if k == rnd]
        return np.concatenate(got) if got else np.zeros(0)

    return [pods(tr, r) for r in rounds], [pods(br, r) for r in rounds], len(shared)


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


def _round_of(run: pd.DataFrame) -> str | None:
    """The round one run ran in (:func:`podnet.stats._data.run_rounds`), None without its launch
    and ``round_seq``."""
    label = run_rounds(run.iloc[:1]).iloc[0]
    return None if pd.isna(label) else str(label)


def _sides(rows: pd.DataFrame) -> dict[tuple[str, str], Side]:
    """(group key text, variant) -> its runs (run_id order) and their rounds."""
    out: dict[tuple[str, str], Side] = {}
    for (k, v), g in rows.groupby(["_k", "_v"], sort=True):
        runs = list(g.groupby("run_id", sort=True))
        rounds = [_round_of(r) for _, r in runs]
        known = all(x is not None for x in rounds)  # a round of two runs: both in its unit
        out[(str(k), str(v))] = Side(
            [r["value"].to_numpy(dtype=float) for _, r in runs], [str(x) for x in rounds] if known else None
        )
    return out


def _pair_rows(
    first: pd.Series, treat: str, base: str, ts: Side, bs: Side, s: Settings
) -> list[dict[str, Any]]:
    """The rows of one treatment over its baseline in one group and metric (one per percentile)."""
    qs = np.array([q for q, _ in QUANTILES])
    t_all, b_all = np.concatenate(ts.runs), np.concatenate(bs.runs)
    tv, bv = np.quantile(t_all, qs), np.quantile(b_all, qs)
    nan = np.full(len(qs), np.nan)
    iv = PercentileRatio(nan, nan, nan, nan)
    method, notes, n_rounds = "", [""] * len(qs), 0
    fewest = min(len(ts.runs), len(bs.runs))
    if fewest < MIN_RUNS:
        why = (
            f"{len(ts.runs)} and {len(bs.runs)} runs: no ratio below {MIN_RUNS} runs a side (a bootstrap "
            "over 3 runs has 10 distinct resamples a side; its interval and p are no test)"
        )
        notes = [why] * len(qs)
    elif not ((t_all > 0).all() and (b_all > 0).all()):
        notes = ["a time not above 0: no ratio"] * len(qs)
    else:
        notes = [support(q, fewest, min(len(t_all), len(b_all)), own=False) for q in qs]
        rng = np.random.default_rng(group_seed(s.bootstrap.seed, f"{first['_k']}\x1f{treat}\x1f{base}"))
        units = round_units(ts, bs)
        if units is not None:
            tu, bu, n_rounds = units
            iv = round_t(tu, bu, qs, s.confidence)
            tv, bv = typical_round(tu, bu, qs)
            method = f"paired t over {n_rounds} rounds of each round's log percentile ratio"
        else:
            iv = percentile_ratio(ts.runs, bs.runs, qs, s.confidence, s.bootstrap.resamples, rng)
            method = (
                f"each side's runs resampled on their own (log-scale t, {s.bootstrap.resamples} resamples)"
            )
            notes = [
                "; ".join(x for x in (n, "no shared rounds: the sides are not paired") if x) for n in notes
            ]
    ratio = np.where(bv > 0, tv / np.where(bv > 0, bv, 1.0), np.nan) if fewest >= MIN_RUNS else nan
    columns = group_columns(first, drop=("variant",))
    out = []
    for i, (q, name) in enumerate(QUANTILES):
        shown = (
            method != ""
            and not support(q, fewest, min(len(t_all), len(b_all)), own=False)
            and np.isfinite(iv.low[i])
        )
        note = notes[i]
        if method and not shown and not note:
            note = "every resample gives the same ratio (zero spread): no interval and no p"
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
                "ci_low": float(iv.low[i]) if shown else np.nan,
                "ci_high": float(iv.high[i]) if shown else np.nan,
                "ci_method": method if shown else "",
                "p_value": float(iv.p[i]) if shown else np.nan,
                "n_runs": len(ts.runs),
                "n_runs_baseline": len(bs.runs),
                "n_rounds": n_rounds,
                "n_pods": len(t_all),
                "n_pods_baseline": len(b_all),
                "note": note,
            }
        )
    return out


def adjust(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """``role`` (primary: a :data:`FAMILY` row of a ranked metric), ``p_adjusted`` (Holm over each
    experiment's primary rows, a missing p counted as 1), ``m`` and ``different`` (a primary row
    whose p_adjusted < ``alpha``)."""
    p = df["p_value"].to_numpy(dtype=float)
    prim = (df["estimand"].astype(str) == FAMILY).to_numpy() & df["metric"].astype(str).isin(
        METRICS
    ).to_numpy()
    exp = df["experiment"].astype("string").fillna("").to_numpy(dtype=object)
    h = onep.holm(p, np.where(prim, "netready:" + exp.astype(str), ""))  # one family per experiment
    padj = np.where(np.isfinite(p), h.p_adjusted, np.nan)  # a row without p counts as 1, states none
    m = np.nan_to_num(h.m, nan=0.0).astype(int)
    different = onep.different(padj, prim, alpha)
    return df.assign(role=np.where(prim, "primary", "exploratory"), p_adjusted=padj, m=m, different=different)


def net_ready_ratios(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """net_ready_ratios.csv: per group (scenario, test, sweep point), ranked metric and ``by:
    variant`` comparison, each treatment's P50, P90 and P99 over the baseline's, with the
    round-paired t interval and p, and Holm over the declared family (empty without
    netready runs of two compared variants)."""
    s = Settings.of(settings)
    empty = pd.DataFrame(columns=NET_READY_RATIO_COLUMNS)
    rows = pod_rows(tidy)
    if rows.empty:
        return empty
    rows = rows[rows["metric"].astype(str).isin(METRICS)]
    pairs = variant_pairs(s, sorted(set(rows["variant"].astype(str))))
    if rows.empty or not pairs:
        return empty
    rows = numeric(rows)
    rows = rows[np.isfinite(rows["value"].to_numpy(dtype=float))]
    key = [c for c in _KEY if c != "variant"]
    rows = rows.assign(_k=key_text(rows[key]), _v=rows["variant"].astype(str))
    sides = _sides(rows)
    firsts = rows.drop_duplicates("_k")
    rank = {m: i for i, m in enumerate(METRICS)}
    firsts = firsts.assign(_m=firsts["metric"].astype(str).map(rank)).sort_values(["_m", "_k"])
    out: list[dict[str, Any]] = []
    for _, first in firsts.iterrows():
        for treat, base in pairs:
            ts, bs = sides.get((first["_k"], treat)), sides.get((first["_k"], base))
            if ts and bs:
                out += _pair_rows(first, treat, base, ts, bs, s)
    if not out:
        return empty
    return with_precise(adjust(pd.DataFrame(out), s.alpha), s)[NET_READY_RATIO_COLUMNS]


def with_precise(df: pd.DataFrame, s: Settings) -> pd.DataFrame:
    """``precise`` (METHODS.md, "Two words: different and precise"): a family row whose interval's
    relative half-width is within ``stats.planning.target_rel_half_width`` on at least
    ``min_to_stop`` rounds (the smaller side's runs when not paired by round)."""
    lo, hi = (pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) for c in ("ci_low", "ci_high"))
    ratio = pd.to_numeric(df["ratio"], errors="coerce").to_numpy(dtype=float)
    rounds = pd.to_numeric(df["n_rounds"], errors="coerce").fillna(0).to_numpy(dtype=float)
    runs = np.fmin(
        *(pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) for c in ("n_runs", "n_runs_baseline"))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (hi - lo) / (2.0 * np.abs(ratio))
    n = np.where(rounds > 0, rounds, runs)
    prim = (df["role"].astype(str) == "primary").to_numpy()
    return df.assign(precise=prim & precise(rhw, s.planning.target_rel_half_width, n, s, lo, hi))
