"""Paired-by-repeat log-ratio intervals, only within one launch's interleaved rounds."""

from __future__ import annotations

import numpy as np
from scipy import stats

from . import core
from ._data import LAUNCH_COLUMN, Groups


def _launches(g: Groups) -> np.ndarray | None:
    """The launch id of each value (aligned with ``g.values``), or None when the table has none."""
    if LAUNCH_COLUMN not in g.rows.columns:
        return None
    return g.rows[LAUNCH_COLUMN].astype("string").fillna("").to_numpy(dtype=object)


def paired(
    g: Groups,
    ti: np.ndarray,
    bi: np.ndarray,
    by: np.ndarray,
    confidence: float,
    require_same: bool,
    zero_sd: float,
) -> tuple[np.ndarray, ...]:
    """(n_pairs, ratio, low, high, p, note) of the paired log-ratio t interval of each pair.

    When the values carry launch ids (tidy ``launch_id``, from the sidecar's
    ``launch.id``), repeat k of the two sides is a pair only when both ran in
    the same launch. Without them (imported outputs), the launch is not
    known: the sides of a variant comparison come from separate launches (a
    launch runs one variant) and are never paired; sides that share
    experiment and variant are taken to be one launch's interleaved rounds.
    Per-repeat ratios equal up to rounding (sd of the log ratios at most
    ``zero_sd`` times the largest |ln value|) have zero variance and no p-value.
    """
    launch = _launches(g)
    k = len(ti)
    n_pairs = np.zeros(k, dtype=int)
    dbar = np.full(k, np.nan)
    sdd = np.full(k, np.nan)
    note = np.full(k, "", dtype=object)
    for i in range(k):
        # the launch is unknown for a pair whose values carry no launch id (imported outputs)
        known = launch is not None and any(
            launch[g.starts[j] : g.starts[j] + g.n[j]].astype(bool).any() for j in (ti[i], bi[i])
        )
        if not known and by[i] == "variant":
            note[i] = "no launch_id: variants come from separate launches, not paired"
            continue
        rt, rb = g.repeats_of(ti[i]), g.repeats_of(bi[i])
        xt, xb = g.values_of(ti[i]), g.values_of(bi[i])
        if np.isnan(rt).any() or np.isnan(rb).any():
            note[i] = "repeat numbers missing: not paired"
            continue
        if len(np.unique(rt)) != len(rt) or len(np.unique(rb)) != len(rb):
            note[i] = "duplicate repeat numbers: not paired"
            continue
        common, it, ib = np.intersect1d(rt, rb, assume_unique=True, return_indices=True)
        if require_same and (len(common) != len(rt) or len(common) != len(rb)):
            note[i] = "repeats differ between the sides: not paired"
            continue
        if known:
            lt = launch[g.starts[ti[i]] : g.starts[ti[i]] + g.n[ti[i]]][it]
            lb = launch[g.starts[bi[i]] : g.starts[bi[i]] + g.n[bi[i]]][ib]
            same = (lt == lb) & (lt != "")
            if require_same and not same.all():
                note[i] = "repeats ran in different launches: not paired"
                continue
            it, ib = it[same], ib[same]
        n_pairs[i] = len(it)
        if len(it) < 2:
            note[i] = "fewer than 2 pairs within one launch"
            continue
        a, b = xt[it], xb[ib]
        if np.any(a <= 0) or np.any(b <= 0):
            note[i] = "non-positive values: log ratio undefined"
            continue
        la, lb_ = np.log(a), np.log(b)
        d = la - lb_
        dbar[i] = d.mean()
        sd = d.std(ddof=1)
        scale = max(1.0, float(np.max(np.abs(la))), float(np.max(np.abs(lb_))))
        sdd[i] = 0.0 if sd <= zero_sd * scale else sd
        if sdd[i] > 0 and len(it) < max(len(rt), len(rb)):
            note[i] = f"{max(len(rt), len(rb)) - len(it)} unpaired repeats left out"
        elif sdd[i] == 0:
            note[i] = "per-repeat ratios equal (within rounding): zero-width interval, no p-value"
    done = ~np.isnan(dbar)
    m = n_pairs.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = core.t_quantile(confidence, np.where(done, m - 1, np.nan)) * sdd / np.sqrt(m)
        tstat = np.abs(dbar) / (sdd / np.sqrt(m))
        pv = 2.0 * stats.t.sf(tstat, np.where(done, m - 1, np.nan))
        ratio = np.where(done, np.exp(dbar), np.nan)
        lo = np.where(done, np.exp(dbar - half), np.nan)
        hi = np.where(done, np.exp(dbar + half), np.nan)
    p = np.where(done & (sdd > 0), pv, np.nan)
    return n_pairs, ratio, lo, hi, p, note
