"""Seeded bootstrap intervals on top of :func:`scipy.stats.bootstrap`, one random stream per group.

Every group (or pair of groups, for a ratio) is resampled with its own
generator, seeded from the configured seed and the group's key
(:func:`group_seed`). A group's interval therefore depends only on its own
values, its key, the seed and the number of resamples: adding or removing
other groups cannot change it, not even in the last digit.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

from .settings import Bootstrap


def expanded_tail(n: int, confidence: float) -> float:
    """One tail's share for an *expanded* percentile interval over ``n`` resampled units
    (Hesterberg 2015, "What teachers should know about the bootstrap", section 4.1): the percentile
    bootstrap is as narrow as a z interval with divisor n, so over few units it under-covers; taking
    the tails at Phi(-sqrt(n/(n-1)) t_{n-1}) instead of (1 - confidence)/2 widens it as a t interval
    with divisor n - 1 would be. n <= 1: the nominal tail."""
    a = (1.0 - confidence) / 2.0
    if n <= 1:
        return a
    return float(stats.norm.cdf(-np.sqrt(n / (n - 1.0)) * stats.t.ppf(1.0 - a, n - 1)))


def expanded_p(p: np.ndarray | float, n: int) -> np.ndarray:
    """A two-sided percentile-bootstrap p over ``n`` units on the scale of :func:`expanded_tail`:
    the ``1 - confidence`` whose expanded interval has ``p / 2`` in a tail, so the expanded 95 %
    interval excludes the null about when this p < 0.05. n <= 1: p unchanged."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    if n <= 1:
        return p
    z = stats.norm.isf(p / 2.0)
    return np.clip(2.0 * stats.t.sf(z / np.sqrt(n / (n - 1.0)), n - 1), 0.0, 1.0)


def group_seed(seed: int, key: str) -> np.random.SeedSequence:
    """The random stream of the group with key text ``key`` under the configured ``seed``."""
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.SeedSequence([int(seed), *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _ratio_of_means(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mean(x, axis=axis) / np.mean(y, axis=axis)


def _percentile_ci(dist: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval from bootstrap distributions (rows), scipy's 'percentile' rule."""
    alpha = (1.0 - confidence) / 2.0
    q = stats.quantile(dist, np.array([alpha, 1.0 - alpha]), axis=-1)
    return q[..., 0], q[..., 1]


def one(
    samples: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    confidence: float,
    resamples: int,
    rng: np.random.SeedSequence,
    batch: int,
    method: str = "BCa",
) -> tuple[float, float, str]:
    """Bootstrap interval of ``statistic`` of one group's 1-D ``samples``: (low, high, method used).

    BCa where it is defined (finite limits and the observed statistic strictly
    inside the bootstrap distribution), else the percentile interval of the
    same bootstrap distribution; ("", NaN, NaN) when neither is defined.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            res = stats.bootstrap(
                samples,
                statistic,
                vectorized=True,
                paired=False,
                axis=-1,
                confidence_level=confidence,
                n_resamples=resamples,
                batch=batch,
                method="BCa" if method == "BCa" else "percentile",
                rng=np.random.default_rng(rng),
            )
            dist = np.asarray(res.bootstrap_distribution, dtype=float)
            lo = float(res.confidence_interval.low)
            hi = float(res.confidence_interval.high)
            used = "BCa" if method == "BCa" else "percentile"
            if method == "BCa":
                theta = float(statistic(*samples, axis=-1))
                frac = (np.count_nonzero(dist < theta) + np.count_nonzero(dist <= theta)) / (2.0 * dist.size)
                if not (np.isfinite(lo) and np.isfinite(hi)) or frac <= 0 or frac >= 1:
                    lo, hi = (float(v) for v in _percentile_ci(dist, confidence))
                    used = "percentile"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return np.nan, np.nan, ""
    return lo, hi, used


def intervals(
    samples: Sequence[tuple[np.ndarray, ...]],
    keys: Sequence[str],
    statistic: Callable[..., np.ndarray],
    confidence: float,
    resamples: int,
    seed: int,
    batch: int,
    method: str = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, method) for each group's ``samples``, each with its own stream (:func:`group_seed`)."""
    k = len(samples)
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    used = np.full(k, "", dtype=object)
    for i, (smp, key) in enumerate(zip(samples, keys)):
        low[i], high[i], used[i] = one(
            smp, statistic, confidence, resamples, group_seed(seed, key), batch, method
        )
    return low, high, used


def mean_intervals(
    rows: Sequence[np.ndarray], keys: Sequence[str], confidence: float, b: Bootstrap
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of the mean of each group (``rows[i]`` with key ``keys[i]``), ``stats.bootstrap`` ``b``."""
    return intervals([(r,) for r in rows], keys, _mean, confidence, b.resamples, b.seed, b.batch, b.method)


def ratio_intervals(
    x: Sequence[np.ndarray], y: Sequence[np.ndarray], keys: Sequence[str], confidence: float, b: Bootstrap
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of mean(x)/mean(y), x and y resampled independently, pair by pair."""
    return intervals(
        list(zip(x, y)), keys, _ratio_of_means, confidence, b.resamples, b.seed, b.batch, b.method
    )
