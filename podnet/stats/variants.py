"""Variant-over-variant ratios by design: side by side (paired by round) or drift-normalised.

Pure, vectorised formulas (arrays in, arrays out; the last axis is the runs), no I/O. They are the
estimators a campaign's ``variants.csv`` states, and the ones ``benchmarks/sim_intervals.py
--drift`` checks for coverage under the launch-to-launch drift measured on this machine.

- ``side_by_side``: both variants up at once, one run of each per round; the log ratio of round
  k's two runs is one pair, and the interval is :func:`podnet.stats.robust.stated`'s
  (Hodges-Lehmann / Wilcoxon, at 1 - alpha/2 after an adaptive stop; METHODS.md).
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

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from . import core, family, onep, robust, rounding
from ._data import LAUNCH_COLUMN, ROUND_COLUMN, as_tidy, has_rounds, run_rounds, split_sources
from .family import variant_family
from .kinds import metric_facts, metric_resolution
from .settings import Settings

DESIGNS = ("side-by-side", "normalised", "sequential")


class RatioInterval(NamedTuple):
    """A ratio with its interval, the pairs (or smaller side) behind it and the two-sided p of ratio = 1;
    ``quantised``: the printed resolution widens the interval by more than 10 % (rounding.py)."""

    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    p: np.ndarray
    quantised: Any = False
    method: Any = (
        "t"  # side-by-side: hodges-lehmann | mean per row (robust.stated); normalised, sequential: t
    )
    level: float = np.nan  # the level the interval was computed at (NaN: the confidence asked for)
    p_t: Any = np.nan  # side-by-side: the paired t p of the mean log ratio (the comparison's one p)


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
    est: np.ndarray,
    data_var: np.ndarray,
    df: np.ndarray,
    confidence: float,
    n: np.ndarray,
    known: ArrayLike = 0.0,
    floor: ArrayLike = 0.0,
) -> RatioInterval:
    """exp of est -/+ t * se, se^2 = max(data_var, floor) + known (the rounding terms, rounding.py)."""
    se, df = rounding.combine(data_var, df, known, floor)
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
            ok & rounding.material(data_var, known, floor),
        )


class SideRounding(NamedTuple):
    """One side's rounding terms on the log scale (rounding.py): the common error of its mean log
    (``rounding.bias_variance``, a known variance) and its values' rounding noise q_rel^2 / 12 (the
    floor of their sample variance)."""

    known: np.ndarray
    floor: np.ndarray


def _side_rounding(logs: np.ndarray, quantum: ArrayLike) -> SideRounding:
    """:class:`SideRounding` of one side's log values, from the side's absolute quantum."""
    m, v, _ = _moments(logs)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q_rel = np.nan_to_num(np.nan_to_num(np.asarray(quantum, dtype=float)) / np.exp(m))
    return SideRounding(rounding.bias_variance(q_rel, np.sqrt(v)), q_rel**2 / 12.0)


def side_by_side(
    treatment: ArrayLike,
    baseline: ArrayLike,
    confidence: float = 0.95,
    *,
    quantum: tuple[ArrayLike, ArrayLike] = (0.0, 0.0),
    zero_sd: float = 1e-12,
    adaptive: bool = True,
) -> RatioInterval:
    """Paired-by-round ratio treatment / baseline: ``treatment[..., k]`` and ``baseline[..., k]`` ran in round k.

    The interval is :func:`podnet.stats.robust.stated` (METHODS.md, "Robust paired intervals"):
    Hodges-Lehmann with the exact Wilcoxon signed-rank interval at 1 - (1 - confidence) / 2 when
    ``adaptive`` (the number of rounds came from the launcher's stop; ``launch.adaptive.enabled``),
    at ``confidence`` for fixed rounds; the mean's t interval below 7 (6 at 95 %) pairs.
    A round where either value is missing or not positive drops out (both sides of it).
    ``quantum``: the step each side's values were printed with (in their unit; 0 = exact), whose
    rounding widens the interval (:mod:`podnet.stats.rounding`). A spread of the log ratios at most
    ``zero_sd`` times the largest |log value| (at least 1) is float noise and counts as 0.
    """
    lt, lb = _log(treatment), _log(baseline)
    d = lt - lb
    both = np.isfinite(d)
    _, v, n = _moments(d)
    with np.errstate(invalid="ignore"):
        scale = np.fmax(1.0, np.nanmax(np.abs(np.where(both, lt, np.nan)), axis=-1, initial=0.0))
    flat = np.sqrt(v) <= zero_sd * scale
    kt, ft = _side_rounding(np.where(both, lt, np.nan), quantum[0])
    kb, fb = _side_rounding(np.where(both, lb, np.nan), quantum[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        floor = (ft + fb) / n
    known = kt + kb
    if d.ndim <= 1 or both.all():
        return _stated(d[both] if d.ndim <= 1 else d, n, confidence, adaptive, known, floor, flat)
    out = [
        _stated(d[i][both[i]], n[i], confidence, adaptive, known[i], floor[i], flat[i])
        for i in np.ndindex(d.shape[:-1])
    ]
    shape = d.shape[:-1]
    cols = [np.reshape(np.array([o[j] for o in out], dtype=float), shape) for j in range(5)]
    return RatioInterval(
        *cols,
        np.reshape(np.array([o.quantised for o in out], dtype=bool), shape),
        np.reshape(np.array([str(o.method) for o in out], dtype=object), shape),
        robust.interval_level(confidence, adaptive),
        np.reshape(np.array([o.p_t for o in out], dtype=float), shape),
    )


def _stated(d, n, confidence, adaptive, known, floor, flat) -> RatioInterval:
    """:func:`side_by_side` of complete log ratios (NaN below 2 pairs)."""
    level = robust.interval_level(confidence, adaptive)
    if d.shape[-1] < 2:
        nan = np.full(d.shape[:-1], np.nan)
        return RatioInterval(nan, nan, nan, np.asarray(n), nan, False, "", level, nan)
    r = robust.stated(d, confidence, adaptive, known, floor, flat)
    ok = np.isfinite(r.estimate) & np.isfinite(r.low) & np.isfinite(r.high)
    e = np.where(ok, r.estimate, np.nan)
    return RatioInterval(
        np.exp(e),
        np.where(ok, np.exp(r.low), np.nan),
        np.where(ok, np.exp(r.high), np.nan),
        np.asarray(n),
        np.where(ok, r.p, np.nan),
        ok & r.quantised,
        r.method,
        r.level,
        np.where(ok, r.p_t, np.nan),
    )


def normalised(
    path_a: ArrayLike,
    host_a: ArrayLike,
    path_b: ArrayLike,
    host_b: ArrayLike,
    confidence: float = 0.95,
    welch_min_n: int = 5,
    *,
    quantum: tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike] = (0.0, 0.0, 0.0, 0.0),
) -> RatioInterval:
    """Ratio of ratios (path_a / host_a) / (path_b / host_b), each side paired by round within its launch.

    ``path_x[..., k]`` and ``host_x[..., k]`` ran in round k of variant x's own launch; the two
    launches need not have the same number of rounds. ``n`` is the smaller side's pairs.
    ``quantum``: the printed step of path_a, host_a, path_b, host_b (see :func:`side_by_side`).
    """
    sides = [_log(x) for x in (path_a, host_a, path_b, host_b)]
    terms = [_side_rounding(x, q) for x, q in zip(sides, quantum)]
    ma, va, na = _moments(sides[0] - sides[1])
    mb, vb, nb = _moments(sides[2] - sides[3])
    va, vb = np.fmax(va, terms[0].floor + terms[1].floor), np.fmax(vb, terms[2].floor + terms[3].floor)
    known = sum(t.known for t in terms)
    return _two_sample(ma, va, na, mb, vb, nb, confidence, welch_min_n, known)


def sequential(
    path_a: ArrayLike,
    path_b: ArrayLike,
    confidence: float = 0.95,
    welch_min_n: int = 5,
    *,
    quantum: tuple[ArrayLike, ArrayLike] = (0.0, 0.0),
) -> RatioInterval:
    """Ratio of the path's geometric means in two launches, no baseline (Welch on the log values)."""
    la, lb = _log(path_a), _log(path_b)
    ma, va, na = _moments(la)
    mb, vb, nb = _moments(lb)
    (ka, fa), (kb, fb) = _side_rounding(la, quantum[0]), _side_rounding(lb, quantum[1])
    return _two_sample(ma, np.fmax(va, fa), na, mb, np.fmax(vb, fb), nb, confidence, welch_min_n, ka + kb)


def _two_sample(
    ma: np.ndarray,
    va: np.ndarray,
    na: np.ndarray,
    mb: np.ndarray,
    vb: np.ndarray,
    nb: np.ndarray,
    confidence: float,
    welch_min_n: int,
    known: ArrayLike = 0.0,
) -> RatioInterval:
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = va / na, vb / nb
        df = (a + b) ** 2 / (a**2 / (na - 1) + b**2 / (nb - 1))  # Welch-Satterthwaite
    small = core.small_unequal(na, nb, welch_min_n)
    df = np.where(small, core.hsu_df(na, nb, small), df)
    return _interval(ma - mb, a + b, np.nan_to_num(df, nan=0.0), confidence, np.fmin(na, nb), known)


# -- variants.csv: every variant against its baseline variant, by every design the runs allow ------------

#: the path columns a variant ratio is taken within (one row per value of these and the metric)
PATH_COLUMNS = family.PATH_COLUMNS

VARIANT_COLUMNS = [
    "experiment",  # the treatment's runs' experiment (a stats.multiple_comparisons.family column)
    "variant",
    "baseline_variant",
    *PATH_COLUMNS,
    "design",  # side-by-side | normalised | sequential
    "preferred",  # the design this comparison is read by: side-by-side, else normalised, else sequential
    "normalised_by",  # normalised: the in-launch baseline scenario (e.g. host-host)
    "ratio",
    "ci_low",
    "ci_high",
    "rel_half_width",
    "n_pairs",  # side-by-side: pairs; normalised: the smaller launch's pairs; sequential: the smaller n
    "n_treatment",
    "n_baseline",
    "p_value",  # the comparison's one p (METHODS.md, "One comparison, one p"): the paired t (side-by-side), else Welch
    "p_test",  # t (side-by-side: the paired t of the mean log ratio) | welch (normalised, sequential)
    "interval_method",  # hodges-lehmann | mean (side-by-side, robust.stated) | welch (normalised, sequential)
    "interval_level",  # the interval's level: 1 - alpha/2 after an adaptive stop (side-by-side), else confidence
    "quantised",  # the tools' printed resolution widens the interval by more than 10 % (rounding.py)
    "role",  # primary (declared in stats.primary) | exploratory
    "family",  # the Holm family of a preferred primary row that is not sequential ("" otherwise)
    "m",  # p-values in the family
    "p_adjusted",  # Holm over the preferred rows of the primary family (never a sequential row)
    "p_note",  # why a family row's p-value could not be computed (it counts in Holm as p = 1)
    "target_rel_half_width",
    "different",  # family rows (preferred, primary, not sequential): p_adjusted < 1 - confidence (METHODS.md, "Two words")
    "precise",  # family rows: the interval meets its width target on min_to_stop pairs (stats.planning.precise)
    "verdict",  # family rows: different | equivalent (interval within 1 -/+ margin) | inconclusive
]


def _empty_variants() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in VARIANT_COLUMNS})


def _by_round(rows: pd.DataFrame) -> pd.Series:
    """Values indexed by the round their run ran in (:func:`podnet.stats._data.run_rounds`): by
    ``round_seq`` where the table has it for every row, else by ``repeat``; rows without a launch id
    or number are left out. A round label never equals a repeat label, so a side paired by
    round_seq never pairs with one paired by repeat."""
    by = ROUND_COLUMN if len(rows) and has_rounds(rows) else "repeat"
    label = run_rounds(rows, by)
    ok = label.notna().to_numpy(bool)
    s = pd.Series(rows.loc[ok, "value"].to_numpy(dtype=float), index=label[ok].to_numpy(dtype=object))
    return s[~s.index.duplicated(keep=False)]  # a (launch, round) seen twice pairs nothing


def _path_key(key: pd.DataFrame) -> pd.Series:
    """Each row's :data:`PATH_COLUMNS` (text, no missing values) joined by \\x1f, as one text per row
    (vectorised: a row-wise join cost seconds at 10,000 runs)."""
    cols = [key[c] for c in PATH_COLUMNS]
    return cols[0].str.cat(cols[1:], sep="\x1f").astype(object)


def _paired(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    common = a.index.intersection(b.index)
    return a.loc[common].to_numpy(dtype=float), b.loc[common].to_numpy(dtype=float)


def variant_table(
    tidy: pd.DataFrame, settings: Settings | Mapping[str, Any] | None = None, stop: bool = False
) -> pd.DataFrame:
    """variants.csv: each variant over the baseline variant of ``stats.comparisons`` (``by: variant``).

    For every path (scenario, tool, test, protocol, direction, streams, metric, unit) of a
    positive metric measured under both variants, one row per design the runs allow:
    *side-by-side* when runs of the two variants share launch id and repeat (one campaign
    round holding both), *normalised* when each variant's launch also measured the by-scenario
    baseline of ``stats.comparisons`` (e.g. host-host) in the same rounds, *sequential* always
    (two independent samples, drift included). ``preferred`` marks the design the comparison is
    read by; Holm runs over the preferred rows that ``stats.primary`` declares (by scenario: the
    path; by variant: the variant pair). Such a row is *different* when Holm rejects and *precise*
    when its interval meets its width target on at least ``min_to_stop`` pairs (METHODS.md, "Two
    words: different and precise"); ``verdict`` reads it as different, equivalent or inconclusive.
    ``stop``: add ``met``, the adaptive stop's rule (:func:`podnet.stats.planning.met`), for the
    side-by-side sampler. A
    sequential row (e.g. the in-launch baseline path itself, which has nothing to be normalised by)
    is never different nor precise: its interval leaves out the launch-to-launch drift (simulated
    coverage 13-31 %; an A/A campaign gave 0.95x and 0.93x host-host, intervals excluding 1).
    """
    s = Settings.of(settings)
    conf = s.confidence
    adaptive = s.paired.adaptive
    comps = list(s.comparisons)
    bases = [str(c["baseline"]) for c in comps if c.get("by") == "variant"]
    if not bases:
        return _empty_variants()
    norm = next((str(c["baseline"]) for c in comps if c.get("by") == "scenario"), None)
    measured = split_sources(as_tidy(tidy))[0]
    kind, _ = metric_facts(measured[["tool", "metric"]])
    m = measured.loc[(kind == "positive") & (measured["value"].to_numpy(dtype=float) > 0)]
    if m.empty:
        return _empty_variants()
    if LAUNCH_COLUMN not in m.columns:
        m = m.assign(**{LAUNCH_COLUMN: pd.Series(pd.NA, index=m.index, dtype="string")})
    key = m[PATH_COLUMNS].astype("string").fillna("")
    m = m.assign(_path=_path_key(key), _variant=m["variant"].astype("string").fillna(""))
    groups = {k: g for k, g in m.groupby(["_variant", "_path"], sort=False)}
    paths = key.drop_duplicates().assign(_path=_path_key)
    welch_min_n = s.small_n.welch_min_n
    # each side-by-side row's pairs, for the interval at the stop's level of the rows that stop on p
    pairs: dict[int, tuple[np.ndarray, np.ndarray, tuple[float, float]]] = {}
    # without a launch id no run pairs with another (_by_round): no side-by-side or normalised row,
    # and none of their per-group pairing is done (seconds at 10,000 imported runs)
    launched = bool((m[LAUNCH_COLUMN].astype("string").fillna("") != "").any())
    out: list[dict[str, Any]] = []
    for base in bases:
        ci, cmp = next(
            (i, c) for i, c in enumerate(comps) if c.get("by") == "variant" and str(c["baseline"]) == base
        )
        treats = [str(t) for t in cmp.get("treatments") or []] or sorted(
            v for v in m["_variant"].unique() if v != base
        )
        for v in treats:
            for _, p in paths.iterrows():
                gt, gb = groups.get((v, p["_path"])), groups.get((base, p["_path"]))
                if gt is None or gb is None:
                    continue
                row0 = {"variant": v, "baseline_variant": base, **{c: p[c] for c in PATH_COLUMNS}}
                row0["experiment"], row0["_comparison"] = _experiment(gt), ci
                row0["n_treatment"], row0["n_baseline"] = len(gt), len(gb)
                a, b = _paired(_by_round(gt), _by_round(gb)) if launched else (np.zeros(0), np.zeros(0))
                if len(a) >= 2:
                    q = (printed_quantum(gt), printed_quantum(gb))
                    iv = side_by_side(a, b, conf, quantum=q, adaptive=adaptive)
                    pairs[len(out)] = (a, b, q)
                    out.append(_row(row0, "side-by-side", iv, ""))
                if launched and norm is not None and p["scenario"] != norm:
                    hp = "\x1f".join([norm, *[p[c] for c in PATH_COLUMNS[1:]]])
                    ht, hb = groups.get((v, hp)), groups.get((base, hp))
                    if ht is not None and hb is not None:
                        pa, ha = _paired(_by_round(gt), _by_round(ht))
                        pb, hb_ = _paired(_by_round(gb), _by_round(hb))
                        if len(pa) >= 2 and len(pb) >= 2:
                            q = (
                                printed_quantum(gt),
                                printed_quantum(ht),
                                printed_quantum(gb),
                                printed_quantum(hb),
                            )
                            iv = normalised(pa, ha, pb, hb_, conf, welch_min_n, quantum=q)
                            out.append(_row(row0, "normalised", iv, norm))
                if len(gt) >= 2 and len(gb) >= 2:
                    iv = sequential(
                        gt["value"].to_numpy(float),
                        gb["value"].to_numpy(float),
                        conf,
                        welch_min_n,
                        quantum=(printed_quantum(gt), printed_quantum(gb)),
                    )
                    out.append(_row(row0, "sequential", iv, ""))
    if not out:
        return _empty_variants()
    df = pd.DataFrame(out)
    rank = df["design"].map({d: i for i, d in enumerate(DESIGNS)})
    best = rank.groupby([df["variant"], df["baseline_variant"], *[df[c] for c in PATH_COLUMNS]]).transform(
        "min"
    )
    df["preferred"] = rank == best
    df["interval_level"] = df["interval_level"].fillna(conf)

    def at_stop_level(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The interval a row that stopped on its p states (family.variant_family), of those rows only."""
        ivs = [
            side_by_side(*pairs[i][:2], robust.DIFFERENT_LEVEL, quantum=pairs[i][2], adaptive=False)
            for i in rows
        ]
        return np.array([float(iv.low) for iv in ivs]), np.array([float(iv.high) for iv in ivs])

    variant_family(df, s, norm, at_stop_level)
    return df[VARIANT_COLUMNS + ["_met"]].rename(columns={"_met": "met"}) if stop else df[VARIANT_COLUMNS]


def _experiment(rows: pd.DataFrame) -> str:
    """The experiment of a group's runs (their names joined by "+" when they come from several)."""
    return "+".join(dict.fromkeys(rows["experiment"].astype("string").fillna("").astype(str)))


def printed_quantum(rows: pd.DataFrame) -> float:
    """The step a group's tool printed its values with, at their size (0 when none is declared)."""
    step, digits = metric_resolution(rows[["tool", "metric"]].iloc[:1])
    gm = float(np.exp(np.mean(np.log(rows["value"].to_numpy(dtype=float)))))
    return float(rounding.relative_quantum(step, digits, np.array([gm]))[0] * gm)


def _row(row0: dict[str, Any], design: str, iv: RatioInterval, norm: str) -> dict[str, Any]:
    ratio, lo, hi = float(iv.ratio), float(iv.low), float(iv.high)
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (hi - lo) / (2 * ratio) if ratio else np.nan
    return {
        **row0,
        "design": design,
        "normalised_by": norm,
        "ratio": ratio,
        "ci_low": lo,
        "ci_high": hi,
        "rel_half_width": rhw,
        "n_pairs": int(iv.n),
        # the comparison's one p, of its design (METHODS.md, "One comparison, one p")
        "p_value": float(iv.p_t) if design == "side-by-side" else float(iv.p),
        "p_test": onep.PAIRED_T if design == "side-by-side" else onep.WELCH,
        "interval_method": str(iv.method) if design == "side-by-side" else "welch",
        "interval_level": float(iv.level) if design == "side-by-side" else np.nan,
        "quantised": bool(np.all(iv.quantised)),
    }
