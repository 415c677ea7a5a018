"""The declared primary hypotheses of ratios.csv and their multiplicity adjustment.

A ratio row is *primary* when it matches an entry of ``stats.primary``
(by, baseline, treatments, tool or tool:test, metrics; metrics default to the
tool's headline metrics from :func:`podnet.tools.headline_metrics`). Holm
and Benjamini-Hochberg run over the primary rows of one family
(``stats.multiple_comparisons.family`` columns, default the experiment) only.
Every other row is *exploratory*: its p-values stay unadjusted and it is never
called *different* nor *precise* (METHODS.md, "Two words: different and precise").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import core
from .kinds import tool_headline
from .planning import met, precise
from .settings import Settings

_NA = "\x00<NA>"


def _text(out: pd.DataFrame, col: str) -> pd.Series:
    return out[col].astype("string").fillna(_NA)


def tests_match(tool: pd.Series, test: pd.Series, specs: list[str]) -> np.ndarray:
    """Rows whose tool (spec ``tool``) or tool and test (spec ``tool:test``) is one of ``specs``."""
    hit = np.zeros(len(tool), dtype=bool)
    for spec in specs:
        t, _, name = str(spec).partition(":")
        m = (tool == t).to_numpy(dtype=bool)
        if name:
            m &= (test == name).to_numpy(dtype=bool)
        hit |= m
    return hit


def entry_mask(out: pd.DataFrame, p: Mapping[str, Any]) -> np.ndarray:
    """Which ratio rows one ``stats.primary`` entry declares."""
    if len(out) == 0:
        return np.zeros(0, dtype=bool)
    by, base, treat = _text(out, "by"), _text(out, "baseline"), _text(out, "treatment")
    tool, test, metric = _text(out, "tool"), _text(out, "test"), _text(out, "metric")
    m = ((by == p["by"]) & (base == str(p["baseline"]))).to_numpy(dtype=bool)
    if p.get("treatments"):
        m &= treat.isin([str(t) for t in p["treatments"]]).to_numpy(dtype=bool)
    if p.get("tests"):
        m &= tests_match(tool, test, list(p["tests"]))
    if p.get("metrics"):
        m &= metric.isin([str(x) for x in p["metrics"]]).to_numpy(dtype=bool)
    else:
        heads = {t: set(tool_headline(t)) for t in tool[m].unique()}
        m &= np.array([mt in heads.get(tl, ()) for tl, mt in zip(tool, metric)], dtype=bool)
    return m


def primary_mask(out: pd.DataFrame, primary: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Which ratio rows are declared primary."""
    mask = np.zeros(len(out), dtype=bool)
    for p in primary:
        mask |= entry_mask(out, p)
    return mask


def primary_targets(out: pd.DataFrame, primary: Sequence[Mapping[str, Any]], default: float) -> np.ndarray:
    """Each row's precision target: the smallest ``target_rel_half_width`` of the primary entries that
    declare it (``default``, stats.planning's, for entries without one); NaN for exploratory rows."""
    target = np.full(len(out), np.nan)
    for p in primary:
        m = entry_mask(out, p)
        t = float(p.get("target_rel_half_width", default))
        target[m] = np.fmin(target[m], t)
    return target


def judged(r: pd.DataFrame) -> pd.DataFrame:
    """The one interval each ratios.csv row is read by (index aligned with ``r``).

    ``interval`` is "paired" when the row has a paired interval of at least 2 pairs (then
    ``ratio``, ``low``, ``high``, ``n`` and ``p_adjusted`` are ``paired_ratio``,
    ``paired_ci_*``, ``n_pairs`` and ``paired_p_adjusted``), "unpaired" when it has only its
    primary interval (``ratio``, ``ci_*``, the smaller side's n, ``p_adjusted``), else "".
    ``stop_excludes_1``: what ``stats.planning.stop_when_different`` reads: a paired row's
    ``paired_stop_excludes_1`` (its 99.3 % Hodges-Lehmann interval excludes 1), an unpaired interval
    that excludes 1 (the stop's test, not the word *different*: METHODS.md, "Two words").
    """

    def col(c: str) -> np.ndarray:
        if c not in r.columns:
            return np.full(len(r), np.nan)
        return pd.to_numeric(r[c], errors="coerce").to_numpy(dtype=float)

    pl, ph, npairs = col("paired_ci_low"), col("paired_ci_high"), col("n_pairs")
    paired = np.isfinite(pl) & np.isfinite(ph) & (npairs >= 2)
    lo, hi = col("ci_low"), col("ci_high")
    unpaired = ~paired & np.isfinite(lo) & np.isfinite(hi)
    pdiff = (
        r["paired_stop_excludes_1"].astype("string").str.lower().eq("true").fillna(False).to_numpy(dtype=bool)
        if "paired_stop_excludes_1" in r.columns
        else (pl > 1.0) | (ph < 1.0)
    )
    with np.errstate(invalid="ignore"):
        return pd.DataFrame(
            {
                "interval": np.where(paired, "paired", np.where(unpaired, "unpaired", "")),
                "ratio": np.where(paired, col("paired_ratio"), col("ratio")),
                "low": np.where(paired, pl, lo),
                "high": np.where(paired, ph, hi),
                "n": np.where(paired, npairs, np.fmin(col("n_treatment"), col("n_baseline"))),
                "p_adjusted": np.where(paired, col("paired_p_adjusted"), col("p_adjusted")),
                "stop_excludes_1": np.where(paired, pdiff, (lo > 1.0) | (hi < 1.0)),
            },
            index=r.index,
        )


def _lost_reason(out: pd.DataFrame, idx: np.ndarray) -> np.ndarray:
    """Why each of the family rows ``idx`` has no p_value (its interval's note, else a general one)."""
    note = (
        out["ci_note"].astype("string").fillna("").to_numpy(dtype=object)[idx] if "ci_note" in out else None
    )
    return np.array(
        [
            f"p-value undefined ({n}); counted in Holm as p = 1"
            if n
            else "p-value undefined; counted in Holm as p = 1"
            for n in (note if note is not None else [""] * len(idx))
        ],
        dtype=object,
    )


def adjust(out: pd.DataFrame, settings: Settings) -> None:
    """Add role, family, m, p_note, the adjusted p-value columns, different and precise to ``out``
    (in place).

    A primary row whose p-value cannot be computed (n < 2, a zero-width interval) stays in its
    family as p = 1 (conservative: never silently leaving it), and ``p_note`` says why. The two
    words (METHODS.md, "Two words: different and precise"), of the interval each row is judged by
    (:func:`judged`): ``different``, a primary row whose Holm-adjusted p is below alpha;
    ``precise``, a primary row whose interval meets :func:`podnet.stats.planning.precise`.
    """
    alpha = settings.alpha
    cols = list(settings.family)
    prim = primary_mask(out, settings.primary)
    out["role"] = np.where(prim, "primary", "exploratory")
    fam = np.full(len(out), "", dtype=object)
    m = np.full(len(out), np.nan)
    results = {
        dest: np.full(len(out), np.nan)
        for dest in ("p_adjusted", "p_adjusted_bh", "p_mannwhitney_adjusted", "paired_p_adjusted")
    }
    pnote = np.full(len(out), "", dtype=object)
    idx_prim = np.nonzero(prim)[0]
    if len(idx_prim):
        sub = out.iloc[idx_prim]
        labels = (
            sub[cols].astype("string").fillna("NA").agg("/".join, axis=1).to_numpy(dtype=object)
            if cols
            else np.full(len(sub), "all", dtype=object)
        )
        for label in pd.unique(labels):
            idx = idx_prim[labels == label]
            fam[idx] = f"primary:{label}"
            p = out["p_value"].to_numpy(dtype=float)[idx]
            lost = ~np.isfinite(p)
            pnote[idx[lost]] = _lost_reason(out, idx[lost])
            m[idx] = len(idx)
            results["p_adjusted"][idx] = core.holm(_as_one(p))
            results["p_adjusted_bh"][idx] = core.benjamini_hochberg(_as_one(p))
            results["p_mannwhitney_adjusted"][idx] = core.holm(
                _as_one(out["p_mannwhitney"].to_numpy(dtype=float)[idx])
            )
            pp = out["paired_p_value"].to_numpy(dtype=float)[idx]
            # rows without a paired interval are judged by the unpaired one: their paired p is none
            has_pair = (pd.to_numeric(out["n_pairs"], errors="coerce").to_numpy(dtype=float)[idx] >= 2) & (
                np.isfinite(pd.to_numeric(out["paired_ci_low"], errors="coerce").to_numpy(dtype=float)[idx])
            )
            pa = core.holm(np.where(has_pair, _as_one(pp), 1.0))
            results["paired_p_adjusted"][idx] = np.where(has_pair, pa, np.nan)
    out["family"] = fam
    out["p_note"] = pnote
    out["m"] = pd.array(np.where(np.isnan(m), np.nan, m), dtype="Float64").astype("Int64")
    for dest, res in results.items():
        out[dest] = res
    j = judged(out)
    # different by the interval the row is judged by (paired when it has one), as the findings and
    # the figures read it: an unpaired Welch p under a drifting machine is not it; no p: not different
    pj = np.where(prim, j["p_adjusted"].to_numpy(dtype=float), np.nan)
    out["different"] = prim & np.isfinite(pj) & (np.nan_to_num(pj, nan=1.0) < alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (j["high"] - j["low"]).to_numpy(dtype=float) / (2.0 * np.abs(j["ratio"].to_numpy(dtype=float)))
    target = primary_targets(out, settings.primary, settings.planning.target_rel_half_width)
    out["precise"] = prim & precise(rhw, target, j["n"], settings, j["low"], j["high"])


def _as_one(p: np.ndarray) -> np.ndarray:
    """A p-value that could not be computed counts as 1 (it stays in the family)."""
    return np.where(np.isfinite(p), p, 1.0)


def variant_family(df: pd.DataFrame, s: Settings, norm: str | None) -> None:
    """variants.csv's role, p_value / p_test of the family rows, p_adjusted (Holm over the preferred
    primary rows), target, different, precise and verdict (in place); ``_met``, the adaptive stop's
    rule (:func:`podnet.stats.planning.met`), for the side-by-side sampler.

    A side-by-side row of the family enters Holm with the paired t p of its mean log ratio
    (:attr:`podnet.stats.robust.Stated.p_t`) whatever its interval's method: the exact Wilcoxon p
    of fewer pairs than :func:`podnet.stats.robust.exact_reach` cannot pass Holm's first step, and
    switching to it from there made a row's power dip (METHODS.md, "The p of a declared family");
    ``p_value`` is then that p and ``p_test`` says ``t``.
    """
    default = s.planning.target_rel_half_width
    primary = s.primary
    by_scenario = df.assign(by="scenario", baseline=norm or "", treatment=df["scenario"])
    by_variant = df.assign(by="variant", baseline=df["baseline_variant"], treatment=df["variant"])
    target = np.fmin(
        primary_targets(by_scenario, [p for p in primary if p.get("by") == "scenario"], default),
        primary_targets(by_variant, [p for p in primary if p.get("by") == "variant"], default),
    )
    prim = np.isfinite(target)
    df["role"] = np.where(prim, "primary", "exploratory")
    df["target_rel_half_width"] = target
    # a sequential interval leaves out the launches' drift: it is shown, never judged
    fam = prim & df["preferred"].to_numpy(dtype=bool) & (df["design"].astype(str) != "sequential").to_numpy()
    side = df["design"].astype(str).to_numpy() == "side-by-side"
    pick = fam & side
    df["p_value"] = np.where(pick, df["_p_t"].to_numpy(dtype=float), df["p_value"].to_numpy(dtype=float))
    df["p_test"] = np.where(pick, "t", df["p_test"].to_numpy(dtype=object))
    # a p-value that cannot be computed stays in the family, as p = 1 (never silently dropped)
    p = df["p_value"].to_numpy(dtype=float)
    lost = fam & ~np.isfinite(p)
    df["p_note"] = np.where(
        lost,
        np.where(
            np.isfinite(df["ci_low"].to_numpy(dtype=float)),
            "zero-width interval: p-value undefined; counted in Holm as p = 1",
            "no interval: p-value undefined; counted in Holm as p = 1",
        ),
        "",
    )
    padj = np.full(len(df), np.nan)
    if fam.any():
        padj[fam] = core.holm(np.where(lost, 1.0, p)[fam])
    df["p_adjusted"] = padj
    alpha = s.alpha
    lo, hi = df["ci_low"].to_numpy(dtype=float), df["ci_high"].to_numpy(dtype=float)
    n = df["n_pairs"].to_numpy(dtype=float)
    stop_excl = df["_different"].to_numpy(dtype=object)
    with np.errstate(invalid="ignore"):
        excl = np.where(side, stop_excl == True, (lo > 1.0) | (hi < 1.0))  # noqa: E712 (object array)
    rhw = df["rel_half_width"].to_numpy(dtype=float)
    df["precise"] = fam & precise(rhw, target, n, s, lo, hi)
    df["_met"] = fam & met(rhw, target, n, s, lo, hi, different=excl.astype(bool))
    diff = fam & np.isfinite(padj) & (np.nan_to_num(padj, nan=1.0) < alpha)
    df["different"] = diff
    margin = s.planning.equivalence_margin
    with np.errstate(invalid="ignore"):
        within = (lo >= 1.0 - margin) & (hi <= 1.0 + margin) & (hi > lo)
    df["verdict"] = np.where(
        fam, np.where(diff, "different", np.where(within, "equivalent", "inconclusive")), ""
    )
