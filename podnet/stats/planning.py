"""How many repeats each group needs, and which cases the adaptive launcher should repeat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from podnet.parse.tidy import GROUP_COLUMNS

from . import core, onep
from ._data import Groups, as_tidy, group_moments, make_groups, split_sources
from .kinds import is_headline
from .settings import Settings

PLAN_COLUMNS = GROUP_COLUMNS + [
    "n",  # values used
    "n_runs",  # runs seen, including those whose value is NaN (the cap counts these)
    "mean",
    "cv",
    "rel_half_width",
    "target_rel_half_width",
    "n_needed",
    "precise",  # METHODS.md, "Two words": 0 < rel_half_width <= target on at least min_to_stop values
    "headline",  # a headline metric of its tool (or in planning.headline_metrics when set)
    "needs_more",  # headline and n < max_repeats and (n < min_repeats or rel_half_width > target)
    "plan_note",
]


def min_to_stop(settings: Settings | Mapping[str, Any]) -> int:
    """The fewest pairs (values) on which a primary comparison may be called met (resolved settings).

    ``max(min_repeats, min_to_stop)`` of ``stats.planning``. Stopping at the first interval that
    is narrow enough favours samples whose spread happened to be low; the simulation in
    ``benchmarks/sim_intervals.py --stopping`` gives the coverage of each choice.
    """
    return Settings.of(settings).planning.fewest_to_stop


def precise(
    rel_half_width: ArrayLike,
    target: ArrayLike,
    n: ArrayLike,
    settings: Settings | Mapping[str, Any],
    low: ArrayLike | None = None,
    high: ArrayLike | None = None,
) -> np.ndarray:
    """*Precise* (METHODS.md, "Two words: different and precise"): the interval's relative half-width
    is above 0 and at most its ``target`` and it rests on at least :func:`min_to_stop` pairs
    (values). NaN half-widths and n are never precise, and neither is an interval of width zero
    (``low`` == ``high``, values equal within rounding: no spread was measured, so no precision)."""
    p = Settings.of(settings).planning
    rhw = np.nan_to_num(np.asarray(rel_half_width, dtype=float), nan=np.inf)
    ok_n = np.nan_to_num(np.asarray(n, dtype=float)) >= p.fewest_to_stop
    narrow = (rhw <= np.asarray(target, dtype=float)) & (rhw > 0)
    if low is not None and high is not None:
        with np.errstate(invalid="ignore"):
            ok_n = ok_n & ~(np.asarray(high, dtype=float) - np.asarray(low, dtype=float) <= 0)
    return np.asarray(ok_n & narrow, dtype=bool)


def met(
    rel_half_width: ArrayLike,
    target: ArrayLike,
    n: ArrayLike,
    settings: Settings | Mapping[str, Any],
    low: ArrayLike | None = None,
    high: ArrayLike | None = None,
    p: ArrayLike | None = None,
    m: ArrayLike | None = None,
) -> np.ndarray:
    """The adaptive launchers' stop for one comparison (resolved ``settings``): :func:`precise`, or
    with ``stats.planning.stop_when_different`` its p (``p``: the comparison's one p, the p_value the
    tables state) below :data:`podnet.stats.onep.STOP_P` / ``m`` (its family's size; 1 when not
    given) on at least :func:`min_to_stop` pairs
    (:func:`podnet.stats.onep.stops_as_different`). That second test is the stop's, not the tables'
    word *different* (Holm over the family, which a round-by-round stop does not run); never an
    interval of width zero.
    """
    pl = Settings.of(settings).planning
    ok = precise(rel_half_width, target, n, settings, low, high)
    if not pl.stop_when_different or p is None:
        return ok
    ok_n = np.nan_to_num(np.asarray(n, dtype=float)) >= pl.fewest_to_stop
    if low is not None and high is not None:
        lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        with np.errstate(invalid="ignore"):
            ok_n = ok_n & (hi - lo > 0)
    return np.asarray(ok | (ok_n & onep.stops_as_different(p, m)), dtype=bool)


def plan(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None, groups: Groups | None = None
) -> pd.DataFrame:
    """For each measured group: n, n_needed and whether the target half-width is met (planning.csv).

    The relative half-width is that of the primary t interval of the mean,
    ``t_{1-a/2,n-1} * cv / sqrt(n)``; n_needed is the smallest n for which the
    observed CV would meet the target. Groups whose relative half-width is
    undefined (n < 2 or mean 0) are judged only by n < min_repeats.
    ``groups``: the measured rows already grouped (the pipeline groups once).
    """
    s = Settings.of(settings)
    p = s.planning
    conf = s.confidence
    target = p.target_rel_half_width
    nmin, cap = p.min_repeats, p.max_repeats
    g = groups if groups is not None else make_groups(split_sources(as_tidy(tidy))[0])
    if len(g.values) == 0 and len(g) == 0:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in PLAN_COLUMNS})
    mean, sd = group_moments(g)
    n = g.n
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = np.where(n >= 2, sd / np.abs(mean), np.nan)
        rhw = core.t_quantile(conf, n - 1) * cv / np.sqrt(n)
    nn = core.n_needed(cv, conf, target)
    narrow = np.nan_to_num(rhw, nan=np.inf) <= target
    headline = is_headline(g.keys, p.headline_metrics)
    undefined = ~np.isfinite(rhw)
    runs = n + g.n_nan
    needs = (runs < cap) & ((n < nmin) | (~narrow & ~undefined))
    note = np.full(len(n), "", dtype=object)
    note[runs >= cap] = "max_repeats reached"
    note[(n < nmin) & (runs < cap)] = f"fewer than {nmin} values"
    note[(n >= nmin) & undefined & (runs < cap)] = "relative half-width undefined (mean 0): not judged"
    out = g.keys.copy()
    out["n"] = n
    out["n_runs"] = runs
    out["mean"] = mean
    out["cv"] = cv
    out["rel_half_width"] = rhw
    out["target_rel_half_width"] = target
    out["n_needed"] = pd.array(np.where(np.isfinite(nn), nn, np.nan), dtype="Float64").astype("Int64")
    out["precise"] = precise(rhw, target, n, s)
    out["headline"] = headline
    out["needs_more"] = needs & headline
    out["plan_note"] = note
    return out[PLAN_COLUMNS]


def cases_needing_more(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None, case_columns: Sequence[str]
) -> list[dict]:
    """Cases (distinct values of ``case_columns``) that should get another interleaved repeat.

    A case needs more when it has fewer than ``min_repeats`` measured values
    for some metric, or when one of its headline metrics (the tool's, from
    :func:`podnet.tools.headline_metrics`, unless ``planning.headline_metrics``
    lists them) has a relative CI half-width above the target;
    never once its n has reached ``max_repeats``. A case with no headline
    metric is judged by the minimum only. Returns one dict per case
    (``case_columns`` -> value, missing values as None), in sorted order.
    """
    case_columns = list(case_columns)
    unknown = [c for c in case_columns if c not in GROUP_COLUMNS]
    if unknown:
        raise ValueError(f"case_columns must be GROUP_COLUMNS, not {unknown}")
    s = Settings.of(settings)
    pl = plan(tidy, s)
    if len(pl) == 0:
        return []
    nmin, cap = s.planning.min_repeats, s.planning.max_repeats
    pl = pl.copy()
    pl["_more"] = pl["needs_more"] | ((pl["n"] < nmin) & (pl["n_runs"] < cap))
    # cases with headline metrics: judged by those only; others by the minimum only
    has_headline = pl.groupby(case_columns, dropna=False)["headline"].transform("any")
    relevant = pl["headline"] | ~has_headline
    pl["_more"] = pl["_more"] & relevant
    # a case at the cap for its largest group gets no more
    pl["_ncase"] = pl.groupby(case_columns, dropna=False)["n_runs"].transform("max")
    pl["_more"] = pl["_more"] & (pl["_ncase"] < cap)
    more = pl.groupby(case_columns, dropna=False, sort=True)["_more"].any()
    out = []
    for key, flag in more.items():
        if not flag:
            continue
        key = key if isinstance(key, tuple) else (key,)
        out.append(
            {
                c: (None if pd.isna(v) else (v.item() if hasattr(v, "item") else v))
                for c, v in zip(case_columns, key)
            }
        )
    return out
