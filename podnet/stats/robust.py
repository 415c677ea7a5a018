"""Robust paired intervals of a log ratio: what a few disturbed rounds cannot swamp.

Pure, vectorised formulas (arrays in, arrays out; the last axis is the pairs), no I/O. Each
location function takes the per-round log ratios ``d = ln treatment - ln baseline`` and returns
a :class:`Location` on the log scale; :func:`paired_ratio` turns the chosen one into a ratio with
its interval, in the field order of :class:`podnet.stats.variants.RatioInterval` (ratio, low,
high, n, p). ``benchmarks/sim_intervals.py --contaminated`` compares them (coverage overall and
conditional on stopping as met, heavy tails, disturbed rounds; METHODS.md, "Robust paired
intervals").

- :func:`mean_t`: the mean with Student's t interval (what ``variants.side_by_side`` states).
- :func:`trimmed_yuen`: the gamma-trimmed mean with the Tukey-McLaughlin (one-sample Yuen)
  interval: standard error from the winsorized variance, ``h - 1`` degrees of freedom where ``h``
  values are kept.
- :func:`hodges_lehmann`: the median of the Walsh averages with the interval that inverts the
  exact Wilcoxon signed-rank test (distribution-free for symmetric noise).
- :func:`huber`: Huber's M-estimate (k = 1.345, scale 1.4826 MAD) with its sandwich standard error
  and ``n - 1`` degrees of freedom.

:attr:`Stated.p_t` is a paired comparison's p, the one the tables state and Holm reads (the paired
t on the log ratios at every n: the exact Wilcoxon p cannot pass a family's first step below
:func:`exact_reach` pairs; METHODS.md, "One comparison, one p").

Vectorised inputs must be complete (no NaN); :func:`paired_ratio` on 1-D input drops the rounds
where either value is missing or not positive, as ``side_by_side`` does.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from . import rounding

#: the paired interval ``podnet.stats`` states for a variant ratio (METHODS.md: "Robust paired intervals")
DEFAULT_METHOD = "hodges-lehmann"
METHODS = ("mean", "trimmed", "hodges-lehmann", "huber")
#: after an adaptive (data-dependent) stop the interval is computed with alpha * STOP_ALPHA_FACTOR
#: (95 % -> 97.5 %): the stop picks samples whose spread happened to be low; this keeps the
#: coverage among the comparisons that stop as met at 93 % or more wherever at least a fifth of
#: them are met (benchmarks/sim_intervals.py --contaminated; METHODS.md)
STOP_ALPHA_FACTOR = 0.5
#: ``stop_when_different``: the per-look level of the adaptive stop's test (a constant, Pocock-style
#: level; its p threshold is 1 - DIFFERENT_LEVEL, :data:`podnet.stats.onep.STOP_P`). The launcher
#: looks after every round from min_to_stop on (up to 51 looks to a cap of 60); at 95 % per look up
#: to 24 % of A/A comparisons stopped, at 99.3 % about 5 % (benchmarks/sim_intervals.py --different,
#: of the Hodges-Lehmann interval the stop read before issue 44; METHODS.md for the p it reads now)
DIFFERENT_LEVEL = 0.993


class Location(NamedTuple):
    """A location estimate on the log scale with its two-sided interval, n and the p of location 0."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    p: np.ndarray


class PairedRatio(NamedTuple):
    """The fields of :class:`podnet.stats.variants.RatioInterval` (ratio, interval, pairs, p of ratio 1),
    then the method that made the interval and its level."""

    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    p: np.ndarray
    method: str = DEFAULT_METHOD
    level: float = 0.95


def _array(d: ArrayLike) -> np.ndarray:
    x = np.asarray(d, dtype=float)
    if x.ndim == 0:
        x = x[None]
    if not np.isfinite(x).all():
        raise ValueError("robust intervals need complete rows (no NaN or inf); drop missing rounds first")
    return x


def _t_location(
    est: np.ndarray, se: np.ndarray, df: np.ndarray | float, n: int, confidence: float
) -> Location:
    """est -/+ t_{1-a/2, df} se, with the two-sided t p-value of 0 (NaN where df < 1 or se is 0)."""
    df = np.broadcast_to(np.asarray(df, dtype=float), est.shape)
    ok = (df >= 1) & np.isfinite(se)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = stats.t.ppf(0.5 + confidence / 2.0, np.where(ok, df, np.nan))
        half = q * se
        p = np.where(ok & (se > 0), 2.0 * stats.t.sf(np.abs(est) / se, np.where(ok, df, np.nan)), np.nan)
    nn = np.full(est.shape, float(n))
    return Location(est, np.where(ok, est - half, np.nan), np.where(ok, est + half, np.nan), nn, p)


def mean_t(d: ArrayLike, confidence: float = 0.95) -> Location:
    """Mean of ``d`` with the Student t interval (n - 1 df)."""
    x = _array(d)
    n = x.shape[-1]
    est = x.mean(axis=-1)
    se = x.std(axis=-1, ddof=1) / np.sqrt(n) if n >= 2 else np.full(est.shape, np.nan)
    return _t_location(est, se, n - 1, n, confidence)


def trimmed_yuen(d: ArrayLike, confidence: float = 0.95, trim: float = 0.2) -> Location:
    """``trim``-trimmed mean with the Tukey-McLaughlin interval (one-sample Yuen).

    g = floor(trim * n) values are cut from each end, h = n - 2g remain; the estimate is the mean
    of the h middle values (``scipy.stats.trim_mean``), its standard error
    sqrt((n - 1) s_w^2 / (h (h - 1))) with s_w^2 the variance of the sample winsorized at the same
    g, and the interval uses t with h - 1 df (Wilcox, Introduction to Robust Estimation, 4.3).
    """
    if not 0.0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5), not {trim}")
    x = np.sort(_array(d), axis=-1)
    n = x.shape[-1]
    g = int(np.floor(trim * n))
    h = n - 2 * g
    est = stats.trim_mean(x, trim, axis=-1)
    if h < 2:
        nan = np.full(est.shape, np.nan)
        return Location(est, nan, nan, np.full(est.shape, float(n)), nan)
    w = np.clip(x, x[..., g : g + 1], x[..., n - g - 1 : n - g])
    sw2 = w.var(axis=-1, ddof=1)
    se = np.sqrt((n - 1) * sw2 / (h * (h - 1)))
    return _t_location(est, se, h - 1, n, confidence)


@lru_cache(maxsize=256)
def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(T+ <= k), k = 0 ... n(n+1)/2, of the Wilcoxon signed-rank statistic under symmetry about 0."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):  # add rank r to every subset: counts(k) += counts(k - r)
        counts[r:] = counts[r:] + counts[:-r].copy()
    return np.cumsum(counts) / 2.0**n


def wilcoxon_rank(n: int, confidence: float = 0.95) -> int:
    """k: the interval is [W_(k+1), W_(M-k)] of the M sorted Walsh averages (-1: none at this level).

    The largest k with P(T+ <= k) <= (1 - confidence) / 2, exact for n <= 200 (the coverage is then
    at least ``confidence`` for continuous noise symmetric about the location), else from the
    normal approximation of T+.
    """
    alpha2 = (1.0 - confidence) / 2.0
    if n <= 200:
        cdf = _signed_rank_cdf(n)
        return int(np.searchsorted(cdf, alpha2, side="right")) - 1
    m = n * (n + 1) / 4.0
    s = np.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    return int(np.floor(m - stats.norm.ppf(1 - alpha2) * s - 0.5))


def walsh_averages(x: np.ndarray) -> np.ndarray:
    """(x_i + x_j) / 2 for i <= j over the last axis: n(n+1)/2 values."""
    i, j = np.triu_indices(x.shape[-1])
    return (x[..., i] + x[..., j]) / 2.0


def hodges_lehmann(d: ArrayLike, confidence: float = 0.95) -> Location:
    """Median of the Walsh averages with the Wilcoxon signed-rank interval (Hollander and Wolfe 3.2).

    No interval (NaN) while the exact test cannot reach the level (n <= 5 at 95 %). The p-value is
    ``scipy.stats.wilcoxon``'s two-sided p of location 0 (exact for small n).
    """
    x = _array(d)
    n = x.shape[-1]
    w = walsh_averages(x)
    m = w.shape[-1]
    k = wilcoxon_rank(n, confidence)
    mid = [(m - 1) // 2, m // 2]
    kth = sorted({*mid, *([k, m - k - 1] if k >= 0 else [])})
    part = np.partition(w, kth, axis=-1)
    est = 0.5 * (part[..., mid[0]] + part[..., mid[1]])
    nan = np.full(est.shape, np.nan)
    low, high = (part[..., k], part[..., m - k - 1]) if k >= 0 else (nan, nan)
    p = wilcoxon_p(x) if n >= 2 else nan.copy()
    return Location(est, low, high, np.full(est.shape, float(n)), p)


def wilcoxon_p(x: np.ndarray) -> np.ndarray:
    """Two-sided ``scipy.stats.wilcoxon`` p of location 0 over the last axis (NaN where every value is 0).

    Exact where a row has no zero and no tied |value| (n <= 50), else the normal approximation with
    the tie correction, zeros dropped: scipy's "auto" runs a permutation test per row for tied rows
    of up to 13 values (printed, quantised ratios), seconds each.
    """
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1, x.shape[-1])
    p = np.full(flat.shape[0], np.nan)
    a = np.sort(np.abs(flat), axis=-1)
    zero = a[:, 0] == 0
    tied = zero | np.any(np.diff(a, axis=-1) == 0, axis=-1)
    some = np.any(flat != 0, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        for rows, method in ((~tied, "exact" if x.shape[-1] <= 50 else "approx"), (tied & some, "approx")):
            if rows.any():
                p[rows] = stats.wilcoxon(flat[rows], axis=-1, method=method).pvalue
    return p.reshape(x.shape[:-1])


def huber(d: ArrayLike, confidence: float = 0.95, k: float = 1.345, iterations: int = 50) -> Location:
    """Huber's M-estimate of location (scale 1.4826 MAD about the median, held fixed) with the sandwich
    standard error s sqrt(mean psi^2) / (mean psi' sqrt(n)) and t with n - 1 df.

    Iteratively reweighted from the median. With a MAD of 0 the scale falls back to the sd; with
    that 0 too the interval has no width and no p-value.
    """
    x = _array(d)
    n = x.shape[-1]
    med = np.median(x, axis=-1)
    s = 1.4826 * np.median(np.abs(x - med[..., None]), axis=-1)
    s = np.where(s > 0, s, x.std(axis=-1, ddof=1) if n >= 2 else 0.0)
    safe = np.where(s > 0, s, 1.0)[..., None]
    mu = med
    for _ in range(iterations):
        r = (x - mu[..., None]) / safe
        wts = np.where(np.abs(r) <= k, 1.0, k / np.maximum(np.abs(r), 1e-300))
        new = np.sum(wts * x, axis=-1) / np.sum(wts, axis=-1)
        if np.allclose(new, mu, rtol=0.0, atol=1e-12 * float(np.max(safe))):
            mu = new
            break
        mu = new
    r = (x - mu[..., None]) / safe
    psi = np.clip(r, -k, k)
    dpsi = np.mean(np.abs(r) <= k, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(
            dpsi > 0, s * np.sqrt(np.mean(psi**2, axis=-1) * n / max(n - 1, 1)) / (dpsi * np.sqrt(n)), np.nan
        )
    return _t_location(mu, se, n - 1, n, confidence)


def location(
    d: ArrayLike, confidence: float = 0.95, method: str = DEFAULT_METHOD, trim: float = 0.2
) -> Location:
    """The location interval of ``method`` (one of :data:`METHODS`; ``trimmed`` uses ``trim``)."""
    if method == "mean":
        return mean_t(d, confidence)
    if method == "trimmed":
        return trimmed_yuen(d, confidence, trim)
    if method == "hodges-lehmann":
        return hodges_lehmann(d, confidence)
    if method == "huber":
        return huber(d, confidence)
    raise ValueError(f"unknown method {method!r}; one of {METHODS}")


def paired_ratio(
    treatment: ArrayLike,
    baseline: ArrayLike,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    trim: float = 0.2,
) -> PairedRatio:
    """Paired-by-round ratio treatment / baseline by ``method``: exp of the location of the log ratios.

    ``treatment[..., k]`` and ``baseline[..., k]`` ran in round k. 1-D input drops the rounds where
    either value is missing or not positive; N-D input must be complete and positive.
    """
    a, b = np.asarray(treatment, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"treatment and baseline differ in shape: {a.shape} vs {b.shape}")
    if a.ndim <= 1:
        keep = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
        a, b = a[keep], b[keep]
    if a.shape[-1] < 2:
        nan = np.full(a.shape[:-1], np.nan)
        return PairedRatio(nan, nan, nan, np.full(a.shape[:-1], float(a.shape[-1])), nan, method, confidence)
    loc = location(np.log(a) - np.log(b), confidence, method, trim)
    return PairedRatio(
        np.exp(loc.estimate), np.exp(loc.low), np.exp(loc.high), loc.n, loc.p, method, confidence
    )


def stop_level(confidence: float = 0.95) -> float:
    """The level a paired interval is computed at when the number of pairs came from an adaptive stop:
    1 - STOP_ALPHA_FACTOR * (1 - confidence) (0.95 -> 0.975)."""
    return 1.0 - STOP_ALPHA_FACTOR * (1.0 - confidence)


def min_pairs(confidence: float) -> int:
    """The fewest pairs for which the Wilcoxon signed-rank interval exists at ``confidence`` (6 at 95 %,
    7 at 97 % and 97.5 %)."""
    n = 2
    while wilcoxon_rank(n, confidence) < 0:
        n += 1
    return n


def side_by_side(
    treatment: ArrayLike, baseline: ArrayLike, confidence: float = 0.95, adaptive: bool = True
) -> PairedRatio:
    """The paired ratio podnet states for rounds of a side-by-side launch (METHODS.md, "Robust paired
    intervals"): Hodges-Lehmann estimate of the per-round log ratios with the Wilcoxon signed-rank
    interval, at :func:`stop_level` when ``adaptive`` (the pairs' number came from the launcher's stop
    rule; fixed rounds: ``confidence``). With fewer pairs than that interval needs (:func:`min_pairs`:
    7 at 97.5 %) it is the t interval of the mean log ratio at the same level (``method`` "mean").

    ``treatment[..., k]`` and ``baseline[..., k]`` ran in round k; 1-D input drops the rounds where a
    side is missing or not positive, N-D input must be complete.
    """
    level = stop_level(confidence) if adaptive else confidence
    a = np.asarray(treatment, dtype=float)
    b = np.asarray(baseline, dtype=float)
    n = int(np.sum(np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0))) if a.ndim <= 1 else a.shape[-1]
    method = "hodges-lehmann" if n >= min_pairs(level) else "mean"
    return paired_ratio(a, b, level, method)


# -- the interval podnet states: H's rule with the printed resolution (METHODS.md, "Robust paired intervals")


class Stated(NamedTuple):
    """A paired log-ratio interval as the tables state it (log scale: ``estimate``, ``low``, ``high``),
    with its own test's p of ratio 1 (Wilcoxon where Hodges-Lehmann made it, else t), the method and
    level that made it, whether the printed resolution widened it materially (``quantised``) and the
    paired t p of the mean log ratio with the rounding terms (``p_t``: the comparison's p, the one
    every table states and Holm reads, METHODS.md "One comparison, one p")."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray
    method: np.ndarray
    level: float
    quantised: np.ndarray
    p_t: np.ndarray


def interval_level(confidence: float, adaptive: bool) -> float:
    """The level a stated paired interval has: :func:`stop_level` after an adaptive stop, else ``confidence``."""
    return stop_level(confidence) if adaptive else confidence


#: the Hodges-Lehmann interval is stated only where the printed resolution's noise is at most this
#: share of the sample variance of the log ratios; on a coarser lattice the median of the Walsh
#: averages is biased by up to half a step (whole-us latencies at ~20 us, true ratio 1.03, run CV
#: 0.5-5 %, 30 pairs: 74-93 % coverage), and the mean's t interval with the rounding terms is stated
LATTICE_SHARE = 0.01


def _mean_t_at(d, level, s2, known, floor):
    """A's t interval of the mean log ratio with the rounding terms (:func:`rounding.combine`)."""
    n = d.shape[-1]
    est = d.mean(axis=-1)
    se, df = rounding.combine(s2, np.full(est.shape, n - 1.0), known, floor)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.ppf(0.5 + level / 2.0, df) * se
        p = np.where(se > 0, 2.0 * stats.t.sf(np.abs(est) / se, df), np.nan)
    return est, est - half, est + half, p


def _stated_at(d: np.ndarray, level: float, known: np.ndarray, floor: np.ndarray, flat: np.ndarray):
    """(estimate, low, high, p, method, quantised) at ``level`` for complete log ratios ``d`` (last axis)."""
    n = d.shape[-1]
    s2 = np.where(flat, 0.0, d.var(axis=-1, ddof=1)) / n
    quant = rounding.material(s2, known, floor)
    t_rows = np.broadcast_to(known + floor > LATTICE_SHARE * s2, s2.shape)
    mt = _mean_t_at(d, level, s2, known, floor)
    if n < min_pairs(level) or t_rows.all():
        return (*mt, np.full(s2.shape, "mean", dtype=object), quant)
    loc = hodges_lehmann(d, level)
    extra = known + np.fmax(floor - s2, 0.0)  # what the printed values cannot show of their rounding
    zr = stats.norm.ppf(0.5 + level / 2.0) * np.sqrt(extra)  # the rounding part, known variance: z
    hl = (
        loc.estimate,
        loc.estimate - np.hypot(loc.estimate - loc.low, zr),
        loc.estimate + np.hypot(loc.high - loc.estimate, zr),
        np.where(flat, np.nan, loc.p),
    )
    out = tuple(np.where(t_rows, a, b) for a, b in zip(mt, hl))
    return (*out, np.where(t_rows, "mean", "hodges-lehmann").astype(object), quant)


def stated(
    d: ArrayLike,
    confidence: float = 0.95,
    adaptive: bool = True,
    known: ArrayLike = 0.0,
    floor: ArrayLike = 0.0,
    flat: ArrayLike = False,
) -> Stated:
    """The paired interval of complete log ratios ``d`` (last axis: the pairs; n >= 2) the tables state.

    H's rule (:func:`side_by_side`: Hodges-Lehmann with the exact Wilcoxon interval at
    :func:`interval_level`, the t interval of the mean below :func:`min_pairs`) with A's printed
    resolution (:mod:`podnet.stats.rounding`): ``known`` is the common rounding error's variance of the
    mean log ratio, ``floor`` the rounding noise of the mean the printed values must carry (both on
    the se^2 scale). Where they exceed :data:`LATTICE_SHARE` of s^2/n (values printed on a lattice
    coarse against their spread, or all equal) the row's interval is the mean's t interval with
    them in its standard error (A's rule: never of width zero; ``method`` "mean"); elsewhere the
    part the sample does not show, ``known + max(floor - s^2/n, 0)``, is added to each Wilcoxon
    half-width in quadrature at the normal quantile. ``flat``: the spread is float noise (all
    ratios equal; no p-value without a resolution). ``method`` is per row. ``p_t``: the paired t p
    of the mean log ratio with the same rounding terms, at every n (the comparison's p).
    """
    x = _array(d)
    kv = np.broadcast_to(np.nan_to_num(np.asarray(known, dtype=float)), x.shape[:-1])
    fv = np.broadcast_to(np.nan_to_num(np.asarray(floor, dtype=float)), x.shape[:-1])
    fl = np.broadcast_to(np.asarray(flat, dtype=bool), x.shape[:-1])
    level = interval_level(confidence, adaptive)
    est, low, high, p, method, quant = _stated_at(x, level, kv, fv, fl)
    s2 = np.where(fl, 0.0, x.var(axis=-1, ddof=1)) / x.shape[-1]
    p_t = _mean_t_at(x, level, s2, kv, fv)[3]  # the level moves the interval, not the p
    return Stated(est, low, high, p, method, level, quant, np.asarray(p_t))


def exact_reach(m: int, alpha: float = 0.05) -> int:
    """The fewest pairs whose exact two-sided Wilcoxon signed-rank p can pass Holm's first step over
    ``m`` rows: its smallest value 2 / 2^n below alpha / m (6 for m = 1, 8 for 4, 10 for 24). Below
    it no row of such a family can be different by that p whatever the data, which is why a
    comparison's p is :attr:`Stated.p_t` (METHODS.md, "One comparison, one p")."""
    n = 2
    while 2.0 / 2.0**n >= alpha / max(int(m), 1):
        n += 1
    return n
