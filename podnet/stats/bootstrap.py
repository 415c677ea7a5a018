"""Seeded, batched bootstrap intervals on top of :func:`scipy.stats.bootstrap`.

Many groups of equal size are bootstrapped in one vectorised call: the data
are a 2-D array (groups x n) and scipy draws one matrix of resampling indices
that every row shares. A fresh generator seeded with the configured seed is
used for every call, so a group's interval depends only on its own values,
the seed, the number of resamples and the batch size -- not on which other
groups happen to be in the table.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats

#: elements (groups x resamples-per-batch x n) materialised at once
_MEMORY_ELEMENTS = 4_000_000


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


def batched(
    samples: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    confidence: float,
    resamples: int,
    seed: int,
    batch: int,
    method: str = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of ``statistic`` for each row of the 2-D ``samples``.

    Returns (low, high, method) where method is ``"BCa"`` or ``"percentile"``
    per row: BCa where it is defined (finite limits and the observed statistic
    strictly inside the bootstrap distribution), the percentile interval of the
    same bootstrap distribution otherwise.
    """
    k = samples[0].shape[0]
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    used = np.full(k, "", dtype=object)
    if k == 0:
        return low, high, used
    width = sum(s.shape[1] for s in samples)
    step = max(1, _MEMORY_ELEMENTS // max(1, width * min(batch, resamples)))
    for start in range(0, k, step):
        sl = slice(start, min(k, start + step))
        data = tuple(s[sl] for s in samples)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                res = stats.bootstrap(
                    data,
                    statistic,
                    vectorized=True,
                    paired=False,
                    axis=-1,
                    confidence_level=confidence,
                    n_resamples=resamples,
                    batch=batch,
                    method="BCa" if method == "BCa" else "percentile",
                    rng=np.random.default_rng(seed),
                )
        dist = np.asarray(res.bootstrap_distribution)
        lo = np.asarray(res.confidence_interval.low, dtype=float).reshape(-1)
        hi = np.asarray(res.confidence_interval.high, dtype=float).reshape(-1)
        m = np.full(lo.shape, "BCa" if method == "BCa" else "percentile", dtype=object)
        if method == "BCa":
            with np.errstate(all="ignore"):
                theta = statistic(*data, axis=-1)[:, None]
                below = np.count_nonzero(dist < theta, axis=-1) + np.count_nonzero(dist <= theta, axis=-1)
            frac = below / (2.0 * dist.shape[-1])
            bad = ~(np.isfinite(lo) & np.isfinite(hi)) | (frac <= 0) | (frac >= 1)
            if bad.any():
                plo, phi = _percentile_ci(dist[bad], confidence)
                lo[bad] = plo
                hi[bad] = phi
                m[bad] = "percentile"
        undefined = ~(np.isfinite(lo) & np.isfinite(hi))
        lo[undefined] = np.nan
        hi[undefined] = np.nan
        m[undefined] = ""
        low[sl], high[sl], used[sl] = lo, hi, m
    return low, high, used


def mean_intervals(
    rows: np.ndarray, confidence: float, resamples: int, seed: int, batch: int, method: str = "BCa"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of the mean of each row of a 2-D array (groups x n)."""
    return batched((rows,), _mean, confidence, resamples, seed, batch, method)


def ratio_intervals(
    x: np.ndarray,
    y: np.ndarray,
    confidence: float,
    resamples: int,
    seed: int,
    batch: int,
    method: str = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bootstrap interval of mean(x)/mean(y), x and y resampled independently, row by row."""
    return batched((x, y), _ratio_of_means, confidence, resamples, seed, batch, method)
