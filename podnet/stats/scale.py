"""The cost of scale in numbers: each measure's slope per 1000 objects, its ratio at the largest point
to no objects, and the time a change takes.

- :func:`scale_curves`: per variant, path, tool, swept test and metric of a sweep over ``services``
  or ``network_policies`` (tidy ``sweep_param``), the least-squares line of the runs' values on the
  object count: ``slope_per_1000`` with its t interval (n - 2 degrees of freedom), the value at 0
  objects (``intercept``) and ``rel_slope_per_1000`` = slope / intercept. The runs are the
  observations; the rounds are not modelled (a round's drift shared by its points widens the
  interval, it does not bias the slope: the points' order alternates from round to round). Beside
  the line, the curve's two ends (:func:`end_ratio`): the median at 0 objects and at the largest
  point, and largest / 0 with its interval, paired by round (``podnet.stats.variants.side_by_side``)
  where at least 2 rounds ran both, else no interval (never Welch on runs of one round).
  Runs judged disturbed and kept are in neither (:func:`podnet.stats._data.split_sources`).
- :func:`effect_table`: per variant, probe and point (``service_effect_s``, ...; one value per
  change, ``scale.changes`` per set-up of the point: ``scale_probes.csv``, :mod:`podnet.parse.scale`),
  P50 and P90 with their distribution-free order-statistic intervals and P99 as a point with its n.
  The changes are clustered in set-ups (changes of one set-up share its moment), so P50's interval
  is taken over the set-ups, the independent draws (:func:`setup_median_interval`: the set-ups'
  medians, interpolated to 95 %; from 6 set-ups, below that the range of their medians and its
  coverage); the P90 interval (:func:`quantile_interval`) exists only from :func:`needed` (36 at
  95 %) changes counted as independent, a point's n divided by its design effect where its set-ups
  differ, and from at least 24 set-ups (:func:`effective_n`); ``note`` says so for each row it
  concerns. The first change that takes effect in a set-up of more than one comes right after
  the point's objects were created and may wait for their programming too: it is left out
  (``first_left_out``, their median ``first_p50``). ``icc`` (the share of the log times'
  variance between set-ups, one-way ANOVA) and ``design_effect`` say how far the changes of one
  set-up are alike, and ``note`` says so when the design effect is at least 1.25 and the F test
  finds the set-ups differ (METHODS.md "Scale points"). A set-up every run of which was judged
  disturbed and kept is in no quantile (``disturbed_left_out``).
  :func:`scale_effect` is that table from ``scale_probes.csv`` (or from a tidy table's scale runs'
  sidecars): the pipeline's ``scale_effect.csv``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import scipy.stats as sps

from podnet.parse.scale import COARSE, OLD_CONNECT_LIMIT, probe_table

from ._data import split_sources
from .sweeps import MedianInterval, median_interval
from .underload import pair_key
from .variants import side_by_side

#: the sweep parameters that count objects (:data:`podnet.launch.spec.scale.SWEPT`)
SCALE_PARAMS = ("services", "network_policies")
_CURVE_KEY = ["variant", "scenario", "tool", "sweep", "metric", "unit", "sweep_param"]
#: the curve's ends (:func:`end_ratio`)
END_COLUMNS = [
    "largest",
    "at_0",
    "at_largest",
    "ratio",
    "ratio_low",
    "ratio_high",
    "ratio_level",
    "ratio_n",
    "ratio_method",
    "ratio_p",  # the ratio's one p, the paired t of its log ratios, unadjusted: in no declared family
    "ratio_note",
]
CURVE_COLUMNS = [
    *_CURVE_KEY,
    "points",
    "n",
    "intercept",
    "slope_per_1000",
    "slope_low",
    "slope_high",
    "rel_slope_per_1000",
    "confidence",
    *END_COLUMNS,
]
_EFFECT_KEY = ["variant", "metric", "services", "network_policies"]
#: probe -> (the object kind it changes, what it times)
PROBES = {
    "service_effect_s": ("Service", "created"),
    "service_removed_s": ("Service", "removed"),
    "policy_effect_s": ("NetworkPolicy", "created"),
    "policy_removed_s": ("NetworkPolicy", "removed"),
}
#: the quantiles of scale_effect.csv besides the median (column prefix -> q): P90 with its interval,
#: P99 as a point with its n (an interval would need 368 independent changes; METHODS.md "Scale points")
TAILS = {"p90": 0.90, "p99": 0.99}
EFFECT_COLUMNS = [
    "variant",
    "kind",
    "change",
    "point",
    *_EFFECT_KEY[1:],
    "n",
    "setups",
    "p50",
    "p50_low",
    "p50_high",
    "p50_coverage",
    "p90",
    "p90_low",
    "p90_high",
    "p90_coverage",
    "p90_n_effective",  # the changes P90's interval counts: n / design effect where set-ups differ
    "p99",
    "icc",
    "design_effect",
    "first_left_out",
    "first_p50",
    "disturbed_left_out",  # set-ups left out: every run carrying them was disturbed (kept)
    "note",
]
#: a design effect from which ``note`` says the intervals are too narrow (when the F test finds the
#: set-ups differ at the row's level)
DEFF_NOTE = 1.25
#: the fewest set-ups a point's P90 interval is taken from (when they hold more than one change each):
#: from 6 set-ups of 6 changes the interval covered 89.1 % at ICC 0.3; what 12 x 3 publishes 92.5 %
#: (ICC 0.3) and 88.0 % (0.6), 12 x 6 61.9 % (0.6), each below the 93 % floor; 24 x 3 97.1-98.2 % at
#: ICC 0-0.6 (a removal: all 3 counted; benchmarks/sim_scale_probes.py, 2,000 experiments a cell;
#: METHODS.md "Scale points"). An effect probe's 24 x 3 keeps 2 a set-up: published 95 / 57 / 5 % at
#: ICC 0 / 0.3 / 0.6; 36 set-ups of 2 (one kept) always (config/campaigns/time-to-effect.yaml)
MIN_SETUPS = 24


def slope(x: np.ndarray, y: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(intercept, slope, low, high) of the least-squares line y = a + b x with the t interval of b;
    NaN where it cannot be had (fewer than 3 values, or fewer than 2 distinct x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    nan = float("nan")
    if len(x) < 3 or len(np.unique(x)) < 2:
        return nan, nan, nan, nan
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    a = float(ym - b * xm)
    resid = y - (a + b * x)
    s2 = float((resid**2).sum() / (len(x) - 2))
    se = math.sqrt(s2 / sxx)
    t = float(sps.t.ppf(0.5 + confidence / 2, len(x) - 2))
    return a, b, b - t * se, b + t * se


def _scalar(x: Any) -> Any:
    """The one value of a 0-d or 1-element array (a RatioInterval's field)."""
    return np.asarray(x, dtype=object).reshape(-1)[0]


def end_ratio(g: pd.DataFrame, confidence: float = 0.95, adaptive: bool = False) -> dict[str, Any]:
    """The ends of one curve's runs ``g`` (columns ``sweep_value``, ``value``, ``launch_id``,
    ``round_seq``, ``repeat``): the median at 0 objects and at the largest count, and largest / 0 with
    its interval (columns :data:`END_COLUMNS`). Paired by round (:func:`podnet.stats.underload.pair_key`;
    a pair's value is the median of its runs at that point) with ``variants.side_by_side`` when at
    least 2 rounds ran both ends; else no interval and ``ratio_note`` says how many rounds did (runs
    repeated within one round share its moment: Welch on them covered a round effect of sd 0.05 in
    75 % of cases), ``ratio`` then the ratio of the ends' medians. ``ratio_p``: its p, the paired t of the
    log ratios (METHODS.md, "One comparison, one p"), unadjusted: the curve is in no declared family,
    so it is never called different."""
    nan = float("nan")
    x = g["sweep_value"].astype(float)
    v = g["value"].astype(float)
    ok = np.isfinite(x) & np.isfinite(v)
    g, x, v = g[ok], x[ok], v[ok]
    out: dict[str, Any] = dict.fromkeys(END_COLUMNS, nan)
    out.update(ratio_method="", ratio_note="", ratio_n=0)
    largest = float(x.max()) if len(x) else nan
    out["largest"] = largest
    zero, top = v[x == 0], v[x == largest]
    out["at_0"] = float(zero.median()) if len(zero) else nan
    out["at_largest"] = float(top.median()) if len(top) else nan
    if not len(zero) or not (largest > 0):
        out["ratio_note"] = "no point at 0 objects" if not len(zero) else "no point above 0 objects"
        return out
    keys = pair_key(g)
    at0 = v[x == 0].groupby(keys[x == 0]).median()
    atl = v[x == largest].groupby(keys[x == largest]).median()
    both = pd.concat([atl.rename("top"), at0.rename("zero")], axis=1, join="inner")
    both = both[(both["top"] > 0) & (both["zero"] > 0)]
    if len(both) >= 2:
        top_v, zero_v = both["top"].to_numpy(float), both["zero"].to_numpy(float)
        iv = side_by_side(top_v, zero_v, confidence, adaptive=adaptive)
        out["ratio_method"] = f"paired by round ({_scalar(iv.method)})"
        out["ratio_level"] = float(iv.level)
    else:
        k = len(both)
        out["ratio_note"] = f"no interval: {k} round{'' if k == 1 else 's'} ran both ends (2 needed)"
        out["ratio"] = out["at_largest"] / out["at_0"] if out["at_0"] > 0 else nan
        out["ratio_n"] = k
        return out
    ratio, lo, hi = (float(_scalar(a)) for a in (iv.ratio, iv.low, iv.high))
    out.update(ratio=ratio, ratio_low=lo, ratio_high=hi, ratio_n=int(float(_scalar(iv.n))))
    out["ratio_p"] = float(_scalar(iv.p_t))
    return out


def scale_curves(tidy: pd.DataFrame, confidence: float = 0.95, adaptive: bool = False) -> pd.DataFrame:
    """One row per curve over an object count (columns :data:`CURVE_COLUMNS`), slopes per 1000
    objects and the ends' ratio (:func:`end_ratio`; ``adaptive``: the rounds stopped adaptively)."""
    if tidy.empty or "sweep_param" not in tidy:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    t = tidy[tidy["sweep_param"].astype(str).isin(SCALE_PARAMS)]
    if "source" in t:
        t = split_sources(t.reset_index(drop=True))[0]
    for col, default in (("launch_id", ""), ("round_seq", pd.NA), ("repeat", 1)):
        if col not in t:
            t = t.assign(**{col: default})
    rows = []
    for key, g in t.groupby(_CURVE_KEY, dropna=False, sort=True):
        x = g["sweep_value"].to_numpy(dtype=float) / 1000.0
        y = g["value"].to_numpy(dtype=float)
        ok = np.isfinite(x) & np.isfinite(y)
        a, b, lo, hi = slope(x[ok], y[ok], confidence)
        rows.append(
            {
                **dict(zip(_CURVE_KEY, key)),
                "points": int(len(np.unique(x[ok]))),
                "n": int(ok.sum()),
                "intercept": a,
                "slope_per_1000": b,
                "slope_low": lo,
                "slope_high": hi,
                "rel_slope_per_1000": b / a if a and math.isfinite(a) else float("nan"),
                "confidence": confidence,
                **end_ratio(g, confidence, adaptive),
            }
        )
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def quantile_interval(
    x: Any, q: float, confidence: float = 0.95, n_effective: float | None = None
) -> tuple[float, float, float, float]:
    """(estimate, low, high, coverage) of the ``q`` quantile: the order-statistic interval
    [x(l), x(u)] with P(l <= Bin(m, q) < u) >= ``confidence``, each tail at most (1 - confidence)/2,
    for m = n values; NaN bounds when there are too few for that. ``n_effective`` (at most n): the
    values count as that many independent ones (:func:`effective_n`): the ranks are those of
    m = floor(n_effective), scaled to n outwards (Kish's effective size for a proportion)."""
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)
    nan = float("nan")
    if n == 0:
        return nan, nan, nan, nan
    est = float(np.quantile(x, q))
    m = n if n_effective is None else min(n, int(math.floor(n_effective + 1e-9)))
    if m < 1:
        return est, nan, nan, nan
    tail = (1 - confidence) / 2
    cdf = sps.binom.cdf(np.arange(m + 1), m, q)  # cdf[j] = P(B <= j)
    lows = [j for j in range(1, m + 1) if cdf[j - 1] <= tail]  # P(B < l) <= tail
    highs = [j for j in range(1, m + 1) if 1 - cdf[j - 1] <= tail]  # P(B >= u) <= tail
    if not lows or not highs:
        return est, nan, nan, nan
    lo, hi = max(lows), min(highs)
    cover = float(cdf[hi - 1] - cdf[lo - 1])
    if m < n:
        lo, hi = max(1, math.floor(lo * n / m)), min(n, math.ceil(hi * n / m))
    return est, float(x[lo - 1]), float(x[hi - 1]), cover


def needed(q: float, confidence: float = 0.95) -> int:
    """The fewest values whose order statistics give the ``q`` quantile (q >= 0.5) a two-sided
    ``confidence`` interval: q^n <= (1 - confidence) / 2 (368 for P99 at 95 %; 6 for the median)."""
    return max(2, math.ceil(math.log((1 - confidence) / 2) / math.log(max(q, 1 - q))))


def setup_median_interval(values: Any, setups: Any, confidence: float = 0.95) -> MedianInterval:
    """P50 of changes clustered in ``setups`` (METHODS.md "Scale points"): ``median`` the changes'
    median; the interval is over the set-ups, the independent draws: the order-statistic interval
    [m(j), m(k-j+1)] of the k set-ups' medians (:func:`podnet.stats.sweeps.median_interval`),
    interpolated towards [m(j+1), m(k-j)] so that it covers ``confidence`` (Hettmansperger and
    Sheather 1986; ``coverage`` is then ``confidence``). A set-up's median of an even count of
    (positive) values is its middle two's geometric mean: times are skewed, their logs less so (the
    arithmetic mean of two lies above the median). With too few set-ups for ``confidence``
    (5 at 95 %) the range of their medians with its coverage; NaN bounds from fewer than 2."""
    v = np.asarray(values, dtype=float)
    med = float(np.median(v)) if len(v) else float("nan")
    logs = bool(len(v)) and bool((v > 0).all())  # an even count's middle: the two's geometric mean
    per = pd.Series(np.log(v) if logs else v).groupby(np.asarray(setups)).median().to_numpy(dtype=float)
    per = np.sort(np.exp(per) if logs else per)
    k = len(per)
    base = median_interval(per, confidence)._replace(median=med)
    if k < 2 or not base.coverage >= confidence:
        return base
    j = 1  # the exact interval's rank (median_interval's k)
    while j < k // 2 and 1 - 2 * float(sps.binom.cdf(j, k, 0.5)) >= confidence:
        j += 1
    outer, inner = base.coverage, 1 - 2 * float(sps.binom.cdf(j, k, 0.5))
    share = (outer - confidence) / (outer - inner) if outer > inner else 0.0
    lam = (k - j) * share / (j + (k - 2 * j) * share)
    low = lam * per[j] + (1 - lam) * per[j - 1]
    high = lam * per[k - j - 1] + (1 - lam) * per[k - j]
    return MedianInterval(med, float(low), float(high), float(confidence))


class Clustered(NamedTuple):
    """How far changes of one set-up are alike (:func:`icc`)."""

    icc: float
    design_effect: float
    #: the one-way ANOVA F test's p value against no set-up effect
    p: float


def icc(values: Any, groups: Any) -> Clustered:
    """The intra-class correlation of ``values`` (log seconds) clustered by ``groups`` (set-ups):
    the one-way ANOVA estimator (MSB - MSW) / (MSB + (m0 - 1) MSW), m0 the clusters' adjusted mean
    size, floored at 0; the design effect 1 + (mean size - 1) * icc; and the F test's p value. NaN
    with fewer than 2 groups or no group of 2 values."""
    nan = float("nan")
    df = pd.DataFrame({"v": np.asarray(values, dtype=float), "g": np.asarray(groups)})
    sizes = df.groupby("g")["v"].size()
    k, n = len(sizes), len(df)
    if k < 2 or n <= k:
        return Clustered(nan, nan, nan)
    means = df.groupby("g")["v"].transform("mean")
    msw = float(((df["v"] - means) ** 2).sum() / (n - k))
    msb = float((sizes * (df.groupby("g")["v"].mean() - df["v"].mean()) ** 2).sum() / (k - 1))
    m0 = (n - float((sizes**2).sum()) / n) / (k - 1)
    denom = msb + (m0 - 1) * msw
    r = max(0.0, (msb - msw) / denom) if denom > 0 else 0.0
    p = float(sps.f.sf(msb / msw, k - 1, n - k)) if msw > 0 else (0.0 if msb > 0 else 1.0)
    return Clustered(r, 1 + (n / k - 1) * r, p)


def effective_n(n: int, setups: int, c: Clustered, confidence: float = 0.95) -> float:
    """The changes a point's tail interval counts as independent: none (0) from fewer than
    :data:`MIN_SETUPS` set-ups of more than one change each (too few to judge whether they differ),
    else ``n`` / design effect where the set-ups differ (the one-way F test at 1 - ``confidence``,
    the design effect at least :data:`DEFF_NOTE`), else ``n``."""
    if setups < min(n, MIN_SETUPS):
        return 0.0
    clustered = np.isfinite(c.design_effect) and c.design_effect >= DEFF_NOTE and c.p < 1 - confidence
    return n / c.design_effect if clustered else float(n)


def _effect_note(
    late: float,
    n: int,
    p50_cover: float,
    p90: tuple,
    n_eff: float,
    setups: int,
    c: Clustered,
    confidence: float,
) -> str:
    """What a row's times and intervals lack: times late by up to ``late`` s (a reach seen by
    attempts that waited for each other: :data:`podnet.parse.scale.COARSE`),
    a median interval below ``confidence`` (too few set-ups: it is over set-ups), no P90 interval (and
    of how many changes), P99 a point, changes of one set-up that correlate (P90's effective n)."""
    words = []
    if late > 0:
        words.append(
            f"each time is late by up to {late:g} s (where the path dropped SYNs before the change, each "
            f"probe attempt waited the {late:g} s connect limit): the quantiles and intervals are of that "
            "upper bound"
        )
    if n < 2:
        words.append(f"{n} change: no interval")
    elif setups < 2:
        words.append(f"P50 has no interval: {n} changes of 1 set-up (its interval is over set-ups)")
    elif not p50_cover >= confidence:
        of = " of the set-ups' medians" if n > setups else ""
        words.append(
            f"P50 interval is the range{of}, coverage {p50_cover:.1%} ({setups} set-ups; "
            f"{confidence:.0%} needs {needed(0.5, confidence)})"
        )
    if n >= 1 and not np.isfinite(p90[1]):
        need = f"{confidence:.0%} needs {needed(0.9, confidence)} changes"
        if n_eff == 0:
            why = f"{n} changes in {setups} set-ups ({need} in at least {MIN_SETUPS} set-ups)"
        elif n_eff < n:
            why = f"{n} changes counting as {n_eff:.3g} independent ({need})"
        else:
            why = f"{n} changes ({need})"
        words.append(f"P90 has no interval: {why}")
    if n >= 1:
        words.append(f"P99 is a point of {n} changes, no interval ({needed(0.99, confidence)} needed)")
    if np.isfinite(c.design_effect) and c.design_effect >= DEFF_NOTE and c.p < 1 - confidence:
        p90_counts = f"; P90 counts them as {n_eff:.3g}" if 0 < n_eff < n else ""
        words.append(
            f"changes of one set-up correlate (design effect {c.design_effect:.2g}, F test p = "
            f"{c.p:.2g}){p90_counts}"
        )
    return "; ".join(words)


def _late(g: pd.DataFrame, metric: str) -> float:
    """The most a group's times may be late by (``late_up_to_s``; the old connect limit,
    :data:`~podnet.parse.scale.OLD_CONNECT_LIMIT`, on :data:`~podnet.parse.scale.COARSE` probes of a
    table without the column or values in it: scale_probes.csv written before 2026-11-27)."""
    late = pd.to_numeric(g["late_up_to_s"], errors="coerce") if "late_up_to_s" in g.columns else None
    if late is None or late.isna().all():
        return OLD_CONNECT_LIMIT if metric in COARSE else 0.0
    return float(late.max())


def _quiet_apart(g: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """(the changes of set-ups not disturbed, how many set-ups were left out): a set-up every run of
    which was judged disturbed and kept (``scale_probes.csv`` ``disturbed``) was timed while the
    machine was busy with other work, so its changes are not a value (as a disturbed run is not)."""
    if "disturbed" not in g.columns:
        return g, 0
    bad = g["disturbed"].fillna(False).astype(bool)
    return g[~bad], int(g.loc[bad, "setup"].nunique())


def _disturbed_note(left_out: int) -> str:
    """The note's words for set-ups left out as disturbed (empty when none)."""
    if not left_out:
        return ""
    s = "" if left_out == 1 else "s"
    return (
        f"{left_out} set-up{s} left out: every run carrying {'it' if left_out == 1 else 'them'} was "
        "disturbed (the machine busy with other work; disturbed_runs.csv)"
    )


def _first_apart(g: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, left out): a change taking effect (``*_effect_s``) that was a set-up's first of more
    than one is left out (it may wait for the point's fillers' programming too)."""
    if "change_no" not in g.columns or not str(g["metric"].iloc[0]).endswith("_effect_s"):
        return g, g.iloc[0:0]
    first = (g["change_no"].astype(int) == 0) & (g["changes"].astype(int) > 1)
    return g[~first], g[first]


def effect_table(effects: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """One row per variant, probe and point (columns :data:`EFFECT_COLUMNS`) from
    :func:`podnet.parse.scale.effect_rows` (``scale_probes.csv``): ``kind`` and ``change`` name the
    probe (:data:`PROBES`), ``point`` is the count of that kind the point holds."""
    if effects.empty:
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    if "setup" not in effects.columns:  # one value per set-up
        effects = effects.assign(setup=np.arange(len(effects)).astype(str))
    rows = []
    for key, g in effects.groupby(_EFFECT_KEY, dropna=False, sort=True):
        k = dict(zip(_EFFECT_KEY, key))
        kind, change = PROBES.get(str(k["metric"]), ("", ""))
        g, disturbed = _quiet_apart(g)
        g, first = _first_apart(g)
        g = g[np.isfinite(g["value"].astype(float))]
        v = g["value"].to_numpy(dtype=float)
        med = setup_median_interval(v, g["setup"].astype(str).to_numpy(), confidence)
        ok = v > 0
        c = icc(np.log(v[ok]), g["setup"].astype(str).to_numpy()[ok])
        setups = int(g["setup"].nunique())
        n_eff = effective_n(len(v), setups, c, confidence)
        p90 = quantile_interval(v, TAILS["p90"], confidence, n_eff)
        count = k["network_policies"] if kind == "NetworkPolicy" else k["services"]
        row = {
            **k,
            "kind": kind,
            "change": change,
            "point": count,
            "n": len(v),
            "setups": int(g["setup"].nunique()),
            "p50": med.median,
            "p50_low": med.low,
            "p50_high": med.high,
            "p50_coverage": med.coverage,
        }
        est, lo, hi, cover = p90
        row.update(p90=est, p90_low=lo, p90_high=hi, p90_coverage=cover, p90_n_effective=n_eff)
        row["p99"] = float(np.quantile(v, TAILS["p99"])) if len(v) else float("nan")
        first_v = first["value"].astype(float)
        row.update(
            icc=c.icc,
            design_effect=c.design_effect,
            first_left_out=len(first),
            first_p50=float(first_v.median()) if len(first) else float("nan"),
            disturbed_left_out=disturbed,
            note="; ".join(
                w
                for w in (
                    _effect_note(
                        _late(g, str(k["metric"])), len(v), med.coverage, p90, n_eff, setups, c, confidence
                    ),
                    _disturbed_note(disturbed),
                )
                if w
            ),
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def scale_effect(
    tidy: pd.DataFrame, confidence: float = 0.95, probes: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`effect_table` of ``probes`` (``scale_probes.csv``, written by the parse stage), or, when
    None, of the probes recorded in the sidecars of ``tidy``'s scale runs
    (:func:`podnet.parse.scale.probe_table`): scale_effect.csv, no rows without a scale sweep.
    ValueError when a scale run's sidecar cannot be read where the tidy ``raw_path`` says."""
    return effect_table(probe_table(tidy) if probes is None else probes, confidence)
