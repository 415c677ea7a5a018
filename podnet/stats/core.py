"""Vectorised formulas (numpy arrays in, arrays out). See METHODS.md for the why."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats


def cv(values: ArrayLike) -> float:
    """Coefficient of variation (sample sd over |mean|); NaN for fewer than 2 values or a zero mean."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2 or np.mean(x) == 0:
        return float("nan")
    return float(np.std(x, ddof=1) / abs(np.mean(x)))


def t_quantile(confidence: float, df: np.ndarray | float) -> np.ndarray:
    """Two-sided t critical value t_{1-alpha/2, df} (NaN where df is not > 0)."""
    df = np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        q = stats.t.ppf(0.5 + confidence / 2.0, np.where(df > 0, df, np.nan))
    return np.asarray(q, dtype=float)


def t_interval(
    mean: np.ndarray, sd: np.ndarray, n: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """Student t interval of the mean: mean -/+ t_{1-a/2,n-1} sd / sqrt(n). NaN for n < 2."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = t_quantile(confidence, n - 1) * np.asarray(sd, dtype=float) / np.sqrt(n)
    half = np.where(n >= 2, half, np.nan)
    return mean - half, mean + half


def n_needed(cv: np.ndarray, confidence: float, target: float, limit: int = 10**7) -> np.ndarray:
    """Smallest n >= 2 with t_{1-a/2,n-1} * cv / sqrt(n) <= target (float; NaN where cv is NaN/inf).

    The left side decreases in n, so the answer is found by bisection between
    a lower bound from the normal quantile and an upper bound from the t
    quantile at that lower bound. Values above ``limit`` are reported as inf.
    """
    cv = np.abs(np.asarray(cv, dtype=float))
    out = np.full(cv.shape, np.nan)
    ok = np.isfinite(cv)
    if not ok.any():
        return out
    c = cv[ok]
    z = stats.norm.ppf(0.5 + confidence / 2.0)

    def passes(n: np.ndarray) -> np.ndarray:
        return t_quantile(confidence, n - 1) * c / np.sqrt(n) <= target

    # below lo0 even the normal quantile fails (t > z), so the answer is >= lo0
    lo = np.maximum(2.0, np.floor((z * c / target) ** 2))
    good_lo = passes(lo)
    # hi passes: t_{hi-1} <= t_{lo-1} and sqrt(hi) >= t_{lo-1} c / target
    hi = np.maximum(lo + 1, np.ceil((t_quantile(confidence, lo - 1) * c / target) ** 2))
    hi = np.where(good_lo, lo, np.minimum(hi, float(limit)))
    lo = np.where(good_lo, lo - 1, lo)  # invariant: lo fails, hi passes (unless capped)
    while True:
        active = hi - lo > 1
        if not active.any():
            break
        mid = np.floor((lo + hi) / 2)
        pm = passes(mid)
        hi = np.where(active & pm, mid, hi)
        lo = np.where(active & ~pm, mid, lo)
    res = np.where(passes(hi), hi, np.inf)  # the cap was reached
    out[ok] = res
    return out


def welch(
    mean_x: ArrayLike,
    var_x: ArrayLike,
    n_x: ArrayLike,
    mean_y: ArrayLike,
    var_y: ArrayLike,
    n_y: ArrayLike,
    df_override: ArrayLike | None = None,
    known_var: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Welch's unequal-variance t-test of mean_x == mean_y: (t, df, two-sided p).

    t = (mx - my) / sqrt(vx/nx + vy/ny + known_var); df by Welch-Satterthwaite (``known_var``, the
    printed values' rounding term of :mod:`podnet.stats.rounding`, counts with infinite df), or
    ``df_override`` where that is finite (Hsu's min(n) - 1 for small unequal n).
    NaN when either n < 2 or the standard error is 0.
    """
    n_x = np.asarray(n_x, dtype=float)
    n_y = np.asarray(n_y, dtype=float)
    mean_x, mean_y = np.asarray(mean_x, dtype=float), np.asarray(mean_y, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.asarray(var_x, dtype=float) / n_x
        b = np.asarray(var_y, dtype=float) / n_y
        k = 0.0 if known_var is None else np.nan_to_num(np.asarray(known_var, dtype=float))
        se2 = a + b + k
        t = (mean_x - mean_y) / np.sqrt(se2)
        df = se2**2 / (a**2 / (n_x - 1) + b**2 / (n_y - 1))
        if df_override is not None:
            dfo = np.asarray(df_override, dtype=float)
            df = np.where(np.isfinite(dfo), dfo, df)
        p = 2.0 * stats.t.sf(np.abs(t), df)
    bad = (n_x < 2) | (n_y < 2) | ~(se2 > 0)
    return np.where(bad, np.nan, t), np.where(bad, np.nan, df), np.where(bad, np.nan, p)


def fieller(
    mean_x: ArrayLike,
    var_x: ArrayLike,
    n_x: ArrayLike,
    mean_y: ArrayLike,
    var_y: ArrayLike,
    n_y: ArrayLike,
    confidence: float,
    df_override: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fieller interval for mean_x / mean_y of two independent samples, Welch-style.

    ``df_override`` (where finite) replaces the Welch-Satterthwaite df below.

    With a = mean_x, b = mean_y, v11 = var_x/n_x, v22 = var_y/n_y, R = a/b,
    df = (v11 + R^2 v22)^2 / (v11^2/(n_x-1) + R^4 v22^2/(n_y-1)), t = t_{1-alpha/2, df},
    g = t^2 v22 / b^2, the limits are

        [R -/+ (t/|b|) sqrt(v11 (1 - g) + R^2 v22)] / (1 - g)      (g < 1)

    i.e. the roots of (b^2 - t^2 v22) r^2 - 2 a b r + (a^2 - t^2 v11) = 0.
    g >= 1 (b not distinguishable from 0): unbounded, limits NaN.
    Returns (low, high, g, df, status) with status 'ok', 'unbounded', 'zero variance', 'n < 2', 'undefined'.
    """
    a = np.asarray(mean_x, dtype=float)
    b = np.asarray(mean_y, dtype=float)
    nx = np.asarray(n_x, dtype=float)
    ny = np.asarray(n_y, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        v11 = np.asarray(var_x, dtype=float) / nx
        v22 = np.asarray(var_y, dtype=float) / ny
        r = a / b
        num = (v11 + r * r * v22) ** 2
        den = v11**2 / (nx - 1) + r**4 * v22**2 / (ny - 1)
        df = num / den
        if df_override is not None:
            dfo = np.asarray(df_override, dtype=float)
            df = np.where(np.isfinite(dfo), dfo, df)
        t = t_quantile(confidence, df)
        g = t * t * v22 / (b * b)
        disc = v11 * (1 - g) + r * r * v22
        half = t / np.abs(b) * np.sqrt(disc)
        low = (r - half) / (1 - g)
        high = (r + half) / (1 - g)
    status = np.full(a.shape, "ok", dtype=object)
    small = (nx < 2) | (ny < 2)
    zero = ~small & (v11 == 0) & (v22 == 0) & np.isfinite(r)
    unb = ~small & ~zero & (g >= 1)
    und = ~small & ~zero & ~unb & ~(np.isfinite(low) & np.isfinite(high))
    status[small] = "n < 2"
    status[zero] = "zero variance"
    status[unb] = "unbounded"
    status[und] = "undefined"
    low = np.where(zero, r, np.where(status == "ok", low, np.nan))
    high = np.where(zero, r, np.where(status == "ok", high, np.nan))
    g = np.where(small | zero, np.nan, g)
    df = np.where(small | zero, np.nan, df)
    return low, high, g, df, status


def small_unequal(n_x: ArrayLike, n_y: ArrayLike, welch_min_n: int) -> np.ndarray:
    """Two samples of unequal size where the smaller has fewer than ``welch_min_n`` values.

    There Welch's df overstates the information (type-I error up to 10-12 %
    at n = 10 vs 2, simulated in METHODS.md), so the conservative Hsu df
    min(n) - 1 is used instead.
    """
    n_x = np.asarray(n_x, dtype=float)
    n_y = np.asarray(n_y, dtype=float)
    return (n_x != n_y) & (np.minimum(n_x, n_y) < welch_min_n)


def hsu_df(n_x: ArrayLike, n_y: ArrayLike, use: ArrayLike) -> np.ndarray:
    """min(n_x, n_y) - 1 where ``use``, NaN elsewhere (meaning: keep Welch's df)."""
    d = np.minimum(np.asarray(n_x, dtype=float), np.asarray(n_y, dtype=float)) - 1.0
    return np.where(np.asarray(use, dtype=bool), d, np.nan)


def log_t_interval(
    mean_log: np.ndarray, sd_log: np.ndarray, n: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """exp of the t interval of the mean of log values: an interval for the geometric mean, inside (0, inf)."""
    lo, hi = t_interval(mean_log, sd_log, n, confidence)
    with np.errstate(over="ignore"):
        return np.exp(lo), np.exp(hi)


def clopper_pearson(total: ArrayLike, n: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson interval of a proportion from ``total`` successes in ``n`` trials.

    ``total`` may be fractional (the sum of per-run fractions): the beta
    quantiles are continuous in it. Limits are inside [0, 1]; NaN for n < 1.
    """
    x = np.asarray(total, dtype=float)
    n = np.asarray(n, dtype=float)
    a = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(x > 0, stats.beta.ppf(a, np.maximum(x, 1e-300), n - x + 1), 0.0)
        hi = np.where(x < n, stats.beta.ppf(1 - a, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    bad = ~(n >= 1) | ~np.isfinite(x)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def _adjust(p: np.ndarray, sorted_adjust) -> np.ndarray:
    """Apply ``sorted_adjust`` (ascending p-values -> adjusted, capped at 1) to the non-NaN
    entries of ``p``, in their original order; NaN entries stay NaN."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return out
    q = p[ok]
    order = np.argsort(q, kind="mergesort")
    res = np.empty(m)
    res[order] = np.minimum(sorted_adjust(q[order], m), 1.0)
    out[ok] = res
    return out


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries are ignored (and stay NaN)."""
    return _adjust(p, lambda q, m: np.maximum.accumulate((m - np.arange(m)) * q))


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (FDR); NaN entries are ignored."""
    return _adjust(p, lambda q, m: np.minimum.accumulate((q * m / np.arange(1, m + 1))[::-1])[::-1])


@lru_cache(maxsize=64)
def _inversion_cdf(n: int) -> np.ndarray:
    """CDF of the number of inversions of a uniform random permutation of n (Mahonian numbers)."""
    counts = np.array([1.0])
    for j in range(2, n + 1):
        # multiply the generating function by (1 + x + ... + x^(j-1))
        counts = np.convolve(counts, np.ones(j))
    return np.cumsum(counts) / counts.sum()


def kendall_trend(x2d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau-b of each row of ``x2d`` against its position (0, 1, ..., n-1), two-sided p.

    Rows are independent groups of equal size n, positions have no ties.
    p: exact null distribution when the row has no ties and n <= 33, else the
    normal approximation with the tie-corrected variance (as scipy.stats.kendalltau,
    method='auto'). A row whose values are all equal gives NaN.
    """
    x = np.asarray(x2d, dtype=float)
    k, n = x.shape
    if n < 2:
        return np.full(k, np.nan), np.full(k, np.nan)
    iu, ju = np.triu_indices(n, 1)
    s = np.empty(k)
    step = max(1, 4_000_000 // len(iu))  # bound the (rows x pairs) temporary
    for a in range(0, k, step):
        xa = x[a : a + step]
        s[a : a + step] = np.sign(xa[:, ju] - xa[:, iu]).sum(axis=1)  # concordant minus discordant
    tot = n * (n - 1) // 2
    xs = np.sort(x, axis=1)
    # tie groups: for each row, run lengths of equal sorted values
    xtie = np.zeros(k)
    x1 = np.zeros(k)
    eq = xs[:, 1:] == xs[:, :-1]
    has_tie = eq.any(axis=1)
    for r in np.nonzero(has_tie)[0]:
        _, cnt = np.unique(xs[r], return_counts=True)
        cnt = cnt[cnt > 1].astype(float)
        xtie[r] = (cnt * (cnt - 1) / 2).sum()
        x1[r] = (cnt * (cnt - 1) * (2 * cnt + 5)).sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / np.sqrt(tot - xtie) / np.sqrt(tot)
    tau = np.clip(tau, -1.0, 1.0)
    p = np.full(k, np.nan)
    dis = (tot - xtie - s) / 2  # discordant pairs (no ties in positions)
    exact = ~has_tie & ((n <= 33) | (np.minimum(dis, tot - dis) <= 1)) & (n <= 170)
    if exact.any():
        cdf = _inversion_cdf(n)
        c = np.minimum(dis[exact], tot - dis[exact]).astype(int)
        p[exact] = np.minimum(1.0, 2.0 * cdf[c])
    asym = ~exact & (xtie < tot)
    if asym.any():
        m = n * (n - 1.0)
        var = (m * (2 * n + 5) - x1[asym]) / 18.0
        z = s[asym] / np.sqrt(var)
        p[asym] = 2.0 * special.ndtr(-np.abs(z))
    allsame = xtie >= tot
    tau[allsame] = np.nan
    p[allsame] = np.nan
    return tau, p


def tukey_fences(q1: np.ndarray, q3: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Tukey fences [Q1 - k IQR, Q3 + k IQR]."""
    iqr = q3 - q1
    return q1 - k * iqr, q3 + k * iqr


def mad_fences(median: np.ndarray, mad: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Fences median -/+ k * 1.4826 * MAD (robust z-score |x - median| / (1.4826 MAD) > k)."""
    s = 1.4826 * mad
    return median - k * s, median + k * s
