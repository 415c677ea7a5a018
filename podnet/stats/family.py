"""The declared primary hypotheses of ratios.csv and their multiplicity adjustment.

A ratio row is *primary* when it matches an entry of ``stats.primary``
(by, baseline, treatments, tool or tool:test, metrics; metrics default to the
tool's headline metrics from :func:`podnet.tools.headline_metrics`). Holm
and Benjamini-Hochberg run over the primary rows of one family
(``stats.multiple_comparisons.family`` columns, default the experiment) only.
Every other row is *exploratory*: its p-values stay unadjusted and it is never
called significant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import core
from .kinds import tool_headline

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


def primary_mask(out: pd.DataFrame, primary: list[Mapping[str, Any]]) -> np.ndarray:
    """Which ratio rows are declared primary."""
    mask = np.zeros(len(out), dtype=bool)
    for p in primary:
        mask |= entry_mask(out, p)
    return mask


def primary_targets(out: pd.DataFrame, primary: list[Mapping[str, Any]], default: float) -> np.ndarray:
    """Each row's precision target: the smallest ``target_rel_half_width`` of the primary entries that
    declare it (``default``, stats.planning's, for entries without one); NaN for exploratory rows."""
    target = np.full(len(out), np.nan)
    for p in primary:
        m = entry_mask(out, p)
        t = float(p.get("target_rel_half_width", default))
        target[m] = np.fmin(target[m], t)
    return target


def adjust(out: pd.DataFrame, settings: Mapping[str, Any]) -> None:
    """Add role, family, m and the adjusted p-value columns to ``out`` (in place)."""
    alpha = 1.0 - float(settings["confidence"])
    cols = list(settings["multiple_comparisons"]["family"])
    prim = primary_mask(out, list(settings["primary"]))
    out["role"] = np.where(prim, "primary", "exploratory")
    fam = np.full(len(out), "", dtype=object)
    m = np.full(len(out), np.nan)
    results = {
        dest: np.full(len(out), np.nan)
        for dest in ("p_adjusted", "p_adjusted_bh", "p_mannwhitney_adjusted", "paired_p_adjusted")
    }
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
            m[idx] = np.count_nonzero(~np.isnan(p))
            results["p_adjusted"][idx] = core.holm(p)
            results["p_adjusted_bh"][idx] = core.benjamini_hochberg(p)
            results["p_mannwhitney_adjusted"][idx] = core.holm(
                out["p_mannwhitney"].to_numpy(dtype=float)[idx]
            )
            results["paired_p_adjusted"][idx] = core.holm(out["paired_p_value"].to_numpy(dtype=float)[idx])
    out["family"] = fam
    out["m"] = pd.array(np.where(np.isnan(m), np.nan, m), dtype="Float64").astype("Int64")
    for dest, res in results.items():
        out[dest] = res
    sig = pd.array(results["p_adjusted"] < alpha, dtype="boolean")
    sig[np.isnan(results["p_adjusted"])] = pd.NA
    out["significant"] = sig
