"""ratios.csv: treatment / baseline ratios of means for the configured comparisons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from podnet.tidy import GROUP_COLUMNS

from . import bootstrap, core
from ._data import Groups, as_tidy, group_moments, make_groups, split_sources
from .settings import resolve

UNBOUNDED_NOTE = "unbounded: baseline mean not distinguishable from 0"

RATIO_COLUMNS = (
    ["comparison", "by", "baseline", "treatment"]
    + GROUP_COLUMNS  # the `by` column holds the treatment's value
    + [
        "n_treatment",
        "n_baseline",
        "mean_treatment",
        "mean_baseline",
        "sd_treatment",
        "sd_baseline",
        "ratio",  # mean_treatment / mean_baseline
        "overhead_pct",  # (ratio - 1) * 100
        "ci_low",  # primary: Fieller interval, Welch-style variances
        "ci_high",
        "ci_method",
        "ci_note",
        "fieller_g",
        "fieller_df",
        "boot_ci_low",
        "boot_ci_high",
        "boot_method",
        "boot_note",
        "n_pairs",  # repeats paired across the two sides
        "paired_ratio",  # exp(mean log(treatment_k / baseline_k))
        "paired_ci_low",
        "paired_ci_high",
        "paired_p_value",
        "paired_note",
        "p_value",  # Welch t-test, two-sided
        "p_mannwhitney",  # Mann-Whitney U, two-sided
        "p_adjusted",  # Holm over the family, Welch p
        "p_adjusted_bh",  # Benjamini-Hochberg over the family, Welch p
        "p_mannwhitney_adjusted",  # Holm, Mann-Whitney p
        "paired_p_adjusted",  # Holm, paired p
        "significant",  # p_adjusted < 1 - confidence
    ]
)

_NA_SENTINEL = "\x00<NA>"


def _match_pairs(keys: pd.DataFrame, comparisons: list[Mapping[str, Any]]) -> pd.DataFrame:
    """(comparison, by, baseline, treatment, ti, bi) rows: group indices of treatment and baseline."""
    kk = keys.astype("string").fillna(_NA_SENTINEL)
    kk["_gi"] = np.arange(len(kk))
    frames = []
    for ci, spec in enumerate(comparisons):
        by = spec["by"]
        baseline = str(spec["baseline"])
        other = [c for c in GROUP_COLUMNS if c != by]
        sel = kk
        if spec.get("metrics"):
            sel = sel[sel["metric"].isin([str(m) for m in spec["metrics"]])]
        base = sel[sel[by] == baseline]
        treat = sel[(sel[by] != baseline) & (sel[by] != _NA_SENTINEL)]
        if spec.get("treatments"):
            treat = treat[treat[by].isin([str(t) for t in spec["treatments"]])]
        if len(base) == 0 or len(treat) == 0:
            continue
        m = treat[other + [by, "_gi"]].merge(base[other + ["_gi"]], on=other, suffixes=("_t", "_b"))
        frames.append(
            pd.DataFrame(
                {
                    "comparison": ci,
                    "by": by,
                    "baseline": baseline,
                    "treatment": m[by].to_numpy(dtype=object),
                    "ti": m["_gi_t"].to_numpy(dtype=int),
                    "bi": m["_gi_b"].to_numpy(dtype=int),
                }
            )
        )
    if not frames:
        return pd.DataFrame({"comparison": [], "by": [], "baseline": [], "treatment": [], "ti": [], "bi": []})
    return pd.concat(frames, ignore_index=True)


def _ties(x: np.ndarray, y: np.ndarray) -> bool:
    z = np.sort(np.concatenate([x, y]))
    return bool(np.any(z[1:] == z[:-1]))


def _mannwhitney(g: Groups, ti: np.ndarray, bi: np.ndarray) -> np.ndarray:
    """Two-sided Mann-Whitney p per pair (scipy, method 'auto'), batched by (sizes, ties)."""
    p = np.full(len(ti), np.nan)
    ok = (g.n[ti] >= 2) & (g.n[bi] >= 2)
    if not ok.any():
        return p
    idx = np.nonzero(ok)[0]
    ties = np.array([_ties(g.values_of(ti[i]), g.values_of(bi[i])) for i in idx])
    key = pd.DataFrame({"i": idx, "nt": g.n[ti[idx]], "nb": g.n[bi[idx]], "ties": ties})
    for _, part in key.groupby(["nt", "nb", "ties"]):
        rows = part["i"].to_numpy()
        x = g.stacked(ti[rows])
        y = g.stacked(bi[rows])
        with np.errstate(all="ignore"):
            res = stats.mannwhitneyu(x, y, alternative="two-sided", axis=1)
        p[rows] = np.asarray(res.pvalue, dtype=float).reshape(-1)
    return p


def _paired(g: Groups, ti: np.ndarray, bi: np.ndarray, confidence: float, require_same: bool):
    """Paired-by-repeat log-ratio t interval per pair."""
    k = len(ti)
    n_pairs = np.zeros(k, dtype=int)
    dbar = np.full(k, np.nan)
    sdd = np.full(k, np.nan)
    note = np.full(k, "", dtype=object)
    for i in range(k):
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
        n_pairs[i] = len(common)
        if len(common) < 2:
            note[i] = "fewer than 2 pairs"
            continue
        a, b = xt[it], xb[ib]
        if np.any(a <= 0) or np.any(b <= 0):
            note[i] = "non-positive values: log ratio undefined"
            continue
        d = np.log(a) - np.log(b)
        dbar[i] = d.mean()
        sdd[i] = 0.0 if np.all(d == d[0]) else d.std(ddof=1)
        if sdd[i] > 0 and len(common) < max(len(rt), len(rb)):
            note[i] = f"{max(len(rt), len(rb)) - len(common)} unpaired repeats left out"
        elif sdd[i] == 0:
            note[i] = "zero variance of log ratios: zero-width interval, no p"
    # vectorised over pairs: t quantiles and p-values
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


def _adjust(out: pd.DataFrame, family: list[str], alpha: float) -> None:
    for col, dest, fn in (
        ("p_value", "p_adjusted", core.holm),
        ("p_value", "p_adjusted_bh", core.benjamini_hochberg),
        ("p_mannwhitney", "p_mannwhitney_adjusted", core.holm),
        ("paired_p_value", "paired_p_adjusted", core.holm),
    ):
        res = np.full(len(out), np.nan)
        if len(out):
            fam = (
                out[family].astype("string").fillna(_NA_SENTINEL) if family else pd.DataFrame(index=out.index)
            )
            groups = fam.groupby(family, dropna=False).indices if family else {None: np.arange(len(out))}
            p = out[col].to_numpy(dtype=float)
            for idx in groups.values():
                res[idx] = fn(p[idx])
        out[dest] = res
    sig = pd.array(out["p_adjusted"].to_numpy(dtype=float) < alpha, dtype="boolean")
    sig[np.isnan(out["p_adjusted"].to_numpy(dtype=float))] = pd.NA
    out["significant"] = sig


def compare(tidy: pd.DataFrame, settings: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Treatment / baseline ratios of means for ``settings["comparisons"]`` (ratios.csv).

    Each comparison ``{by, baseline, treatments?, metrics?}`` pairs every
    treatment group with the baseline group that agrees on all other
    GROUP_COLUMNS. Only measured rows are used.
    """
    s = resolve(settings)
    conf = s["confidence"]
    tidy = as_tidy(tidy)
    measured, _ = split_sources(tidy)
    if len(measured) == 0 or not s["comparisons"]:
        return _empty()
    g = make_groups(measured)
    pairs = _match_pairs(g.keys, s["comparisons"])
    if len(pairs) == 0:
        return _empty()
    ti = pairs["ti"].to_numpy(dtype=int)
    bi = pairs["bi"].to_numpy(dtype=int)
    mean, sd = group_moments(g)
    nt, nb = g.n[ti], g.n[bi]
    mt, mb = mean[ti], mean[bi]
    st, sb = sd[ti], sd[bi]
    out = pairs[["comparison", "by", "baseline", "treatment"]].copy()
    keys = g.keys.iloc[ti].reset_index(drop=True)
    for c in GROUP_COLUMNS:
        out[c] = keys[c].to_numpy()
    out["n_treatment"], out["n_baseline"] = nt, nb
    out["mean_treatment"], out["mean_baseline"] = mt, mb
    out["sd_treatment"], out["sd_baseline"] = st, sb
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(mb != 0, mt / mb, np.nan)
    out["ratio"] = ratio
    out["overhead_pct"] = (ratio - 1.0) * 100.0

    lo, hi, gg, df, status = core.fieller(mt, st**2, nt, mb, sb**2, nb, conf)
    note = np.full(len(out), "", dtype=object)
    note[status == "n < 2"] = "n < 2 on a side: no interval"
    note[status == "zero variance"] = "zero variance on both sides: zero-width interval"
    note[status == "unbounded"] = UNBOUNDED_NOTE
    note[status == "undefined"] = "interval undefined"
    note[(mb == 0) & (status != "n < 2")] = "baseline mean is 0: no ratio"
    bad = mb == 0
    lo, hi = np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
    out["ci_low"], out["ci_high"] = lo, hi
    out["ci_method"] = np.where(status == "n < 2", "", "fieller-welch")
    out["ci_note"] = note
    out["fieller_g"], out["fieller_df"] = gg, df

    # bootstrap of the ratio of means, x and y resampled independently
    b = s["bootstrap"]
    bmin = int(b["min_n"])
    blo = np.full(len(out), np.nan)
    bhi = np.full(len(out), np.nan)
    bmethod = np.full(len(out), "", dtype=object)
    bnote = np.full(len(out), "", dtype=object)
    small = (nt < bmin) | (nb < bmin)
    bnote[small] = f"n < {bmin} on a side"
    degenerate = ~small & (st == 0) & (sb == 0)
    bnote[degenerate] = "zero variance on both sides: bootstrap distribution degenerate"
    unb = ~small & ~degenerate & ((status == "unbounded") | bad)
    bnote[unb] = "baseline mean not distinguishable from 0: bootstrap of the ratio not meaningful"
    todo = ~small & ~degenerate & ~unb
    if todo.any():
        key = pd.DataFrame({"i": np.nonzero(todo)[0], "nt": nt[todo], "nb": nb[todo]})
        for _, part in key.groupby(["nt", "nb"]):
            rows = part["i"].to_numpy()
            l_, h_, m_ = bootstrap.ratio_intervals(
                g.stacked(ti[rows]),
                g.stacked(bi[rows]),
                conf,
                int(b["resamples"]),
                int(b["seed"]),
                int(b["batch"]),
                b["method"],
            )
            blo[rows], bhi[rows], bmethod[rows] = l_, h_, m_
        bnote[todo & (bmethod == "")] = "bootstrap interval undefined"
    out["boot_ci_low"], out["boot_ci_high"] = blo, bhi
    out["boot_method"], out["boot_note"] = bmethod, bnote

    n_pairs, pr, plo, phi, pp, pnote = _paired(g, ti, bi, conf, bool(s["paired"]["require_same_repeats"]))
    out["n_pairs"] = n_pairs
    out["paired_ratio"], out["paired_ci_low"], out["paired_ci_high"] = pr, plo, phi
    out["paired_p_value"], out["paired_note"] = pp, pnote

    _, _, p = core.welch(mt, st**2, nt, mb, sb**2, nb)
    out["p_value"] = p
    out["p_mannwhitney"] = _mannwhitney(g, ti, bi)
    _adjust(out, list(s["multiple_comparisons"]["family"]), 1.0 - conf)
    return out[RATIO_COLUMNS]


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in RATIO_COLUMNS})
