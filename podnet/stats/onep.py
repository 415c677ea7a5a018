"""One comparison, one p (METHODS.md, "One comparison, one p"; issue 44).

Every comparison the tables state has one p-value, the test of the design that ran, and at most one
Holm-adjusted p, over the declared family it belongs to; *different* is that adjusted p below alpha
and nothing else (never "its interval excludes 1"). This module computes them; every table that
carries ``different`` (ratios.csv, variants.csv, ranking.csv, net_ready_ratios.csv) calls it, and
every reader (the findings, the figures, the gate, the notebooks) reads the written column with
:func:`word`.

- :func:`design_p`: a paired comparison's p is the paired t of its per-round log ratios
  (:attr:`podnet.stats.robust.Stated.p_t`), an unpaired one's the Welch (Hsu) t of its two
  samples; which one is chosen by the design (are the rows paired?), never by which is smaller.
- :func:`holm`: Holm within each family, a p that could not be computed counted as 1 (it stays in
  its family and is counted in ``m``).
- :func:`different`: a family row whose Holm-adjusted p is below alpha.
- :func:`stops_as_different`: the adaptive stop's test (``stats.planning.stop_when_different``):
  the same p, unadjusted, below :data:`STOP_P` / m (m: its family's size) at a look. A reason to
  stop sampling, never the word.
- :func:`word`: a boolean column as written, or as read back from a CSV file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import core
from .robust import DIFFERENT_LEVEL

#: the tests a p can come from: the paired t of the log ratios, Welch's (or Hsu's) t of two samples
PAIRED_T, WELCH = "t", "welch"
#: the adaptive stop's per-look level: the launcher looks after every round from min_to_stop pairs
#: on (up to 51 looks to a cap of 60); the paired t p below 0.007 at any look stops 3.5 / 4.9 % of
#: A/A comparisons (normal noise, caps 30 / 60; 2.1 / 3.5 % with t3 noise), as METHODS.md says
STOP_P = 1.0 - DIFFERENT_LEVEL


def design_p(paired: ArrayLike, p_paired: ArrayLike, p_unpaired: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(p, test) of each comparison: the paired t p where ``paired`` (its runs pair by round), else
    the unpaired (Welch) p. NaN stays NaN: a p that cannot be computed is not replaced by the other."""
    pr = np.asarray(paired, dtype=bool)
    p = np.where(pr, np.asarray(p_paired, dtype=float), np.asarray(p_unpaired, dtype=float))
    return p, np.where(pr, PAIRED_T, WELCH).astype(object)


class Holm(NamedTuple):
    """Per row: the Holm-adjusted p (NaN outside every family), the family's size, and whether the
    row's own p was missing (counted as 1)."""

    p_adjusted: np.ndarray
    m: np.ndarray
    lost: np.ndarray


def holm(p: ArrayLike, family: ArrayLike) -> Holm:
    """Holm over each family: ``family`` labels each row ("" or None: in no family). A p that could
    not be computed counts as 1, so no row leaves its family silently."""
    q = np.asarray(p, dtype=float)
    lab = np.array(["" if x is None or (isinstance(x, float) and np.isnan(x)) else str(x) for x in family])
    padj, m = np.full(len(q), np.nan), np.full(len(q), np.nan)
    inside = lab != ""
    for f in pd.unique(lab[inside]):
        idx = np.nonzero(lab == f)[0]
        padj[idx] = core.holm(np.where(np.isfinite(q[idx]), q[idx], 1.0))
        m[idx] = len(idx)
    return Holm(padj, m, inside & ~np.isfinite(q))


def different(p_adjusted: ArrayLike, in_family: ArrayLike, alpha: float) -> np.ndarray:
    """*different* (METHODS.md, "Two words"): a row of a declared family whose Holm-adjusted p is
    below ``alpha``; a row without a p, or outside every family, is not."""
    pa = np.asarray(p_adjusted, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.asarray(in_family, dtype=bool) & np.isfinite(pa) & (np.nan_to_num(pa, nan=1.0) < alpha)


def stops_as_different(p: ArrayLike, m: ArrayLike | None = None) -> np.ndarray:
    """The adaptive stop's second reason (``stop_when_different``): the comparison's p (its one p,
    unadjusted: the stop looks at one comparison at a time, round after round) below :data:`STOP_P`
    / m, ``m`` the size of its declared family (1 outside one). Not *different*, which Holm decides
    over the finished table. The division keeps the family's A/A rate: at STOP_P alone an A/A row
    that stopped on p (1.7-4.0 % of them) is always Holm-different (0.007 < 0.05 / m for m <= 7),
    and an all-A/A family of 4 had a row called different in 8-14 % of campaigns; at STOP_P / m
    3.4-7.5 % (benchmarks/sim_adaptive_stop.py)."""
    pv = np.nan_to_num(np.asarray(p, dtype=float), nan=1.0)
    size = np.ones_like(pv) if m is None else np.fmax(np.nan_to_num(np.asarray(m, dtype=float), nan=1.0), 1.0)
    with np.errstate(invalid="ignore"):
        return pv < STOP_P / size


def word(row: pd.Series | Mapping[str, Any], col: str = "different") -> bool:
    """A row's ``different`` (or ``precise``) as a table wrote it: bool in memory, text when read back
    from CSV, NA or absent: False."""
    x = row.get(col, False)
    if x is None or x is pd.NA or (isinstance(x, float) and np.isnan(x)):
        return False
    return str(x).lower() == "true"
