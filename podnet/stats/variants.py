"""Variant-over-variant ratios by design: side by side (paired by round) or drift-normalised.

Pure, vectorised formulas (arrays in, arrays out; the last axis is the runs), no I/O. They are the
estimators a campaign's ``variants.csv`` states, and the ones ``benchmarks/sim_intervals.py
--drift`` checks for coverage under the launch-to-launch drift measured on this machine.

- ``side_by_side``: both variants up at once, one run of each per round; the log ratio of round
  k's two runs is one pair, and the interval is the paired t interval of the mean log ratio.
  Drift common to a round (the machine's load at that moment) cancels in each pair.
- ``normalised``: variants launched one after another (one cluster at a time, e.g. real clusters
  behind separate kubeconfigs); each launch measures the path and its host-host baseline in
  interleaved rounds, so each variant's path-over-host ratio is paired within its own launch, and
  the variant ratio is the ratio of those ratios. Its interval is Welch's on the two launches'
  mean log ratios (Hsu's min(n) - 1 df when the sizes differ and the smaller is below
  ``welch_min_n``, as METHODS.md does for every unpaired ratio). A launch-wide factor that
  scales path and baseline alike cancels; one that scales them differently does not, which the
  simulation shows.
- ``sequential``: the plain ratio of the path's means from two launches, no baseline: every
  launch-to-launch factor lands in it. Offered only to show what the other two designs remove.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from . import core

DESIGNS = ("side-by-side", "normalised", "sequential")


class RatioInterval(NamedTuple):
    """A ratio with its interval, the pairs (or smaller side) behind it and the two-sided p of ratio = 1."""

    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    p: np.ndarray


def _moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, variance with ddof 1, n) over the last axis, ignoring NaN."""
    n = np.sum(np.isfinite(x), axis=-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.nanmean(x, axis=-1) if x.shape[-1] else np.full(x.shape[:-1], np.nan)
        v = np.nansum((x - m[..., None]) ** 2, axis=-1) / (n - 1)
    return m, np.where(n >= 2, v, np.nan), n


def _log(x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a > 0, np.log(np.where(a > 0, a, 1.0)), np.nan)


def _interval(
    est: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float, n: np.ndarray
) -> RatioInterval:
    ok = np.isfinite(est) & np.isfinite(se) & (df > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = core.t_quantile(confidence, np.where(ok, df, np.nan)) * se
        p = np.where(ok & (se > 0), 2.0 * stats.t.sf(np.abs(est) / se, np.where(ok, df, np.nan)), np.nan)
        return RatioInterval(
            np.where(ok, np.exp(est), np.nan),
            np.where(ok, np.exp(est - half), np.nan),
            np.where(ok, np.exp(est + half), np.nan),
            n,
            p,
        )


def side_by_side(treatment: ArrayLike, baseline: ArrayLike, confidence: float = 0.95) -> RatioInterval:
    """Paired-by-round ratio treatment / baseline: ``treatment[..., k]`` and ``baseline[..., k]`` ran in round k.

    A round where either value is missing or not positive drops out (both sides of it).
    """
    d = _log(treatment) - _log(baseline)
    m, v, n = _moments(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(v / n)
    return _interval(m, se, n - 1, confidence, n)


def normalised(
    path_a: ArrayLike,
    host_a: ArrayLike,
    path_b: ArrayLike,
    host_b: ArrayLike,
    confidence: float = 0.95,
    welch_min_n: int = 5,
) -> RatioInterval:
    """Ratio of ratios (path_a / host_a) / (path_b / host_b), each side paired by round within its launch.

    ``path_x[..., k]`` and ``host_x[..., k]`` ran in round k of variant x's own launch; the two
    launches need not have the same number of rounds. ``n`` is the smaller side's pairs.
    """
    ma, va, na = _moments(_log(path_a) - _log(host_a))
    mb, vb, nb = _moments(_log(path_b) - _log(host_b))
    return _two_sample(ma, va, na, mb, vb, nb, confidence, welch_min_n)


def sequential(
    path_a: ArrayLike, path_b: ArrayLike, confidence: float = 0.95, welch_min_n: int = 5
) -> RatioInterval:
    """Ratio of the path's geometric means in two launches, no baseline (Welch on the log values)."""
    ma, va, na = _moments(_log(path_a))
    mb, vb, nb = _moments(_log(path_b))
    return _two_sample(ma, va, na, mb, vb, nb, confidence, welch_min_n)


def _two_sample(
    ma: np.ndarray,
    va: np.ndarray,
    na: np.ndarray,
    mb: np.ndarray,
    vb: np.ndarray,
    nb: np.ndarray,
    confidence: float,
    welch_min_n: int,
) -> RatioInterval:
    _, df, _ = core.welch(ma, va, na, mb, vb, nb)
    small = core.small_unequal(na, nb, welch_min_n)
    df = np.where(small, core.hsu_df(na, nb, small), df)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(va / na + vb / nb)
    return _interval(ma - mb, se, np.nan_to_num(df, nan=0.0), confidence, np.fmin(na, nb))
