"""Paired log-ratio intervals, only within one launch's interleaved rounds: runs pair by the round
they ran in (tidy ``round_seq``) where the table has it, else by repeat number."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from . import robust
from ._data import LAUNCH_COLUMN, ROUND_COLUMN, Groups


class Paired(NamedTuple):
    """Per pair of groups: pairs, ratio, interval, the paired t p of ratio 1 (the comparison's p:
    :attr:`podnet.stats.robust.Stated.p_t`, METHODS.md "One comparison, one p"), note, quantised,
    interval method (hodges-lehmann | mean | "") and its level."""

    n_pairs: np.ndarray
    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p: np.ndarray
    note: np.ndarray
    quantised: np.ndarray
    method: np.ndarray
    level: float


def _launches(g: Groups) -> np.ndarray | None:
    """The launch id of each value (aligned with ``g.values``), or None when the table has none."""
    if LAUNCH_COLUMN not in g.rows.columns:
        return None
    return g.rows[LAUNCH_COLUMN].astype("string").fillna("").to_numpy(dtype=object)


def _placements(g: Groups) -> np.ndarray | None:
    """Where each value's run ran (tidy ``placement``, aligned with ``g.values``; "" unknown), or None."""
    if "placement" not in g.rows.columns:
        return None
    return g.rows["placement"].astype("string").fillna("").to_numpy(dtype=object)


def _rounds(g: Groups, i: int) -> np.ndarray | None:
    """Group ``i``'s values' round_seq (aligned with its values), or None unless every one has it."""
    if ROUND_COLUMN not in g.rows.columns:
        return None
    r = pd.to_numeric(g.rows[ROUND_COLUMN].iloc[g.starts[i] : g.starts[i] + g.n[i]], errors="coerce")
    a = r.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return None if len(a) == 0 or np.isnan(a).any() else a


def paired(
    g: Groups,
    ti: np.ndarray,
    bi: np.ndarray,
    by: np.ndarray,
    confidence: float,
    require_same: bool,
    zero_sd: float,
    known_var: np.ndarray | None = None,
    floor_var: np.ndarray | None = None,
    adaptive: bool = False,
) -> Paired:
    """The paired log-ratio interval of each pair (:func:`podnet.stats.robust.stated`: Hodges-Lehmann
    with the Wilcoxon interval, at 1 - (1 - confidence) / 2 when ``adaptive``, the t interval of
    the mean below 7 pairs, widened by the printed resolution).

    Two runs that ran in different placements (tidy ``placement``, both known) are no pair: a pair's
    ratio is of one placement, never of two speeds (METHODS.md, "Placement").
    Runs pair by the launch round they ran in (``round_seq``) when both sides' values all carry
    it: a retried run that ran in a later round pairs with that round's runs, or with none (it is
    then left out and counted in the note; ``require_same`` does not apply). Otherwise they pair by
    repeat number, and ``require_same`` asks both sides to have the same repeats.
    ``known_var``: the rounding term of each pair (:mod:`podnet.stats.rounding`), a variance known
    without sampling error; ``floor_var``: the rounding noise a pair's log ratio carries
    (q_T^2 / 12 + q_B^2 / 12), the least its sample variance is taken to be.

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
    place = _placements(g)
    k = len(ti)
    n_pairs = np.zeros(k, dtype=int)
    sdd = np.full(k, np.nan)
    ratio, lo, hi, p = (np.full(k, np.nan) for _ in range(4))
    method = np.full(k, "", dtype=object)
    quantised = np.zeros(k, dtype=bool)
    level = robust.interval_level(confidence, adaptive)
    note = np.full(k, "", dtype=object)
    kv = np.zeros(k) if known_var is None else np.nan_to_num(np.asarray(known_var, dtype=float))
    fv = np.zeros(k) if floor_var is None else np.nan_to_num(np.asarray(floor_var, dtype=float))
    for i in range(k):
        # the launch is unknown for a pair whose values carry no launch id (imported outputs)
        known = launch is not None and any(
            launch[g.starts[j] : g.starts[j] + g.n[j]].astype(bool).any() for j in (ti[i], bi[i])
        )
        if not known and by[i] == "variant":
            note[i] = "no launch_id: variants come from separate launches, not paired"
            continue
        rt, rb = _rounds(g, ti[i]), _rounds(g, bi[i])
        by_round = rt is not None and rb is not None
        if not by_round:
            rt, rb = g.repeats_of(ti[i]), g.repeats_of(bi[i])
        what = "round_seq" if by_round else "repeat numbers"
        xt, xb = g.values_of(ti[i]), g.values_of(bi[i])
        if np.isnan(rt).any() or np.isnan(rb).any():
            note[i] = "repeat numbers missing: not paired"
            continue
        if len(np.unique(rt)) != len(rt) or len(np.unique(rb)) != len(rb):
            note[i] = f"duplicate {what}: not paired"
            continue
        common, it, ib = np.intersect1d(rt, rb, assume_unique=True, return_indices=True)
        if require_same and not by_round and (len(common) != len(rt) or len(common) != len(rb)):
            note[i] = "repeats differ between the sides: not paired"
            continue
        if known:
            lt = launch[g.starts[ti[i]] : g.starts[ti[i]] + g.n[ti[i]]][it]
            lb = launch[g.starts[bi[i]] : g.starts[bi[i]] + g.n[bi[i]]][ib]
            same = (lt == lb) & (lt != "")
            if require_same and not by_round and not same.all():
                note[i] = "repeats ran in different launches: not paired"
                continue
            it, ib = it[same], ib[same]
        mixed = 0
        if place is not None:  # a pair's two runs in different placements: left out (within placement)
            pt = place[g.starts[ti[i]] : g.starts[ti[i]] + g.n[ti[i]]][it]
            pb = place[g.starts[bi[i]] : g.starts[bi[i]] + g.n[bi[i]]][ib]
            keep = (pt == pb) | (pt == "") | (pb == "")
            mixed = int((~keep).sum())
            it, ib = it[keep], ib[keep]
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
        sd = d.std(ddof=1)
        scale = max(1.0, float(np.max(np.abs(la))), float(np.max(np.abs(lb_))))
        sdd[i] = 0.0 if sd <= zero_sd * scale else sd
        r = robust.stated(d, confidence, adaptive, kv[i], fv[i] / len(d), sdd[i] == 0)
        ratio[i], lo[i], hi[i], p[i] = np.exp(r.estimate), np.exp(r.low), np.exp(r.high), r.p_t
        method[i], quantised[i] = str(r.method), bool(r.quantised)
        if by_round and len(rt) + len(rb) > 2 * len(it):
            note[i] = f"{len(rt) + len(rb) - 2 * len(it)} run(s) without a partner of its round left out"
        elif sdd[i] + kv[i] + fv[i] > 0 and len(it) < max(len(rt), len(rb)):
            note[i] = f"{max(len(rt), len(rb)) - len(it)} unpaired repeats left out"
        if mixed:
            note[i] = f"{mixed} pair(s) whose runs ran in different placements left out" + (
                f"; {note[i]}" if note[i] else ""
            )
        if sdd[i] == 0 and kv[i] + fv[i] <= 0:
            note[i] = "per-repeat ratios equal (within rounding): zero-width interval, no p-value"
    return Paired(n_pairs, ratio, lo, hi, p, note, quantised, method, level)
