"""ratios.csv: treatment / baseline ratios of means for the configured comparisons."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.parse.tidy import GROUP_COLUMNS

from . import bootstrap, core, family, onep, robust, rounding
from . import cache as cache_mod
from ._data import (
    LAUNCH_COLUMN,
    ROUND_COLUMN,
    Groups,
    as_tidy,
    group_moments,
    key_text,
    log_moments,
    make_groups,
    split_sources,
)
from .kinds import metric_facts
from .paired import Paired, paired
from .settings import Settings
from .variants import variant_table

UNBOUNDED_NOTE = "unbounded: baseline mean not distinguishable from 0"


RATIO_COLUMNS = (
    ["comparison", "by", "baseline", "treatment"]
    + GROUP_COLUMNS  # the `by` column holds the treatment's value
    + [
        "role",  # primary (declared in stats.primary) | exploratory
        "family",  # the primary family adjusted together ("" for exploratory rows)
        "m",  # p-values in the family (Holm / BH divide by it)
        "kind",  # positive | proportion | count | signed
        "better",  # higher | lower | "" (podnet.tools.metric_info)
        "estimand",  # ratio of geometric means | ratio of means
        "n_treatment",
        "n_baseline",
        "mean_treatment",
        "mean_baseline",
        "sd_treatment",
        "sd_baseline",
        "ratio",  # the estimand's estimate
        "change_pct",  # (ratio - 1) * 100: the treatment's value relative to the baseline's
        "overhead_pct",  # how much worse the treatment is, in %: positive = worse (by `better`)
        "ci_low",  # primary interval (log-welch | log-hsu | fieller-welch | fieller-hsu)
        "ci_high",
        "ci_method",
        "ci_note",
        "df",  # degrees of freedom of the primary interval and of p_value
        "small_n_note",  # small unequal n: the conservative df was used
        "fieller_g",
        "boot_ci_low",
        "boot_ci_high",
        "boot_method",
        "boot_note",
        "n_pairs",  # repeats paired across the two sides (same launch, same repeat)
        "paired_ratio",  # exp(Hodges-Lehmann of log(treatment_k / baseline_k)); mean below 7 pairs
        "paired_ci_low",
        "paired_ci_high",
        "paired_note",
        "paired_interval_method",  # hodges-lehmann | mean (podnet.stats.robust.stated)
        "paired_interval_level",  # 1 - alpha/2 after an adaptive stop (stats.paired.adaptive), else confidence
        "quantised",  # the tools' printed resolution widens an interval of the row by more than 10 %
        "p_value",  # the comparison's one p (METHODS.md, "One comparison, one p"): paired t of the log ratios when paired, else Welch (Hsu)
        "p_test",  # t (paired: >= 2 pairs with a paired interval) | welch (unpaired)
        "p_adjusted",  # Holm of p_value over the primary family (primary rows only)
        "p_note",  # why a primary row's p-value could not be computed (it counts in Holm as p = 1), or whence it came
        "different",  # primary rows: p_adjusted < 1 - confidence (METHODS.md, "Two words")
        "precise",  # primary rows: the judged interval meets its width target on min_to_stop pairs (stats.planning.precise)
    ]
)

_NA_SENTINEL = "\x00<NA>"


def _match_pairs(keys: pd.DataFrame, comparisons: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
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
        if not (kk[by] == baseline).any():
            have = sorted(set(kk[by]) - {_NA_SENTINEL})
            raise ValueError(
                f"comparison {by}={baseline!r}: no measured rows have {by} {baseline!r} "
                f"(measured {by} values: {', '.join(have[:20]) or 'none'})"
            )
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


def _log_ratio(lt, vt, nt, lb, vb, nb, dfo, conf, known):
    """Ratio of geometric means: exp of the Welch (Hsu) t interval of mean(ln x) - mean(ln y), its
    standard error widened by the printed values' rounding (``known``: podnet.stats.rounding)."""
    two = (nt >= 2) & (nb >= 2)
    _, df, p = core.welch(lt, vt, nt, lb, vb, nb, dfo, known)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        se2 = vt / nt + vb / nb + known
        half = core.t_quantile(conf, df) * np.sqrt(se2)
        ratio = np.exp(lt - lb)
        zero = two & (se2 == 0)
        lo = np.where(zero, ratio, np.exp(lt - lb - half))
        hi = np.where(zero, ratio, np.exp(lt - lb + half))
    return ratio, np.where(two, lo, np.nan), np.where(two, hi, np.nan), df, p, zero


def compare(
    tidy: pd.DataFrame,
    settings: Settings | Mapping[str, Any] | None = None,
    groups: Groups | None = None,
    cache: Path | None = None,
    variants: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Treatment / baseline ratios for ``settings.comparisons`` (ratios.csv).

    Each comparison ``{by, baseline, treatments?, metrics?}`` pairs every
    treatment group with the baseline group that agrees on all other
    GROUP_COLUMNS. Only measured rows are used; a baseline that no measured
    row has is an error. The estimand follows the metric's kind (METHODS.md):
    the ratio of geometric means for positive quantities, else the ratio of means.
    ``groups``: the measured rows already grouped (the pipeline groups once). ``cache`` (a pickle
    path): a pair whose two groups did not change since the last call reuses its bootstrap and
    paired columns (:func:`podnet.stats.cache.cached_values`); the table is the same without it.
    Each row's ``p_value`` is its comparison's one p (METHODS.md, "One comparison, one p"); a row
    between variants is judged by its comparison's row of ``variants`` (variants.csv of the same
    tidy table and settings; computed here when not given: :func:`podnet.stats.family.from_variants`).
    """
    s = Settings.of(settings)
    conf = s.confidence
    zsd = s.small_n.zero_rel_sd
    if not s.comparisons:
        return _empty()
    g = groups if groups is not None else make_groups(split_sources(as_tidy(tidy))[0])
    if len(g) == 0:
        return _empty()
    pairs = _match_pairs(g.keys, s.comparisons)
    if len(pairs) == 0:
        return _empty()
    ti = pairs["ti"].to_numpy(dtype=int)
    bi = pairs["bi"].to_numpy(dtype=int)
    mean, sd = group_moments(g, zsd)
    lmean, lsd, pos = log_moments(g, zsd)
    nt, nb = g.n[ti], g.n[bi]
    mt, mb = mean[ti], mean[bi]
    st, sb = sd[ti], sd[bi]
    out = pairs[["comparison", "by", "baseline", "treatment"]].copy()
    keys = g.keys.iloc[ti].reset_index(drop=True)
    for c in GROUP_COLUMNS:
        out[c] = keys[c].to_numpy()
    kind, better = metric_facts(keys)
    out["kind"], out["better"] = kind, better
    out["n_treatment"], out["n_baseline"] = nt, nb
    out["mean_treatment"], out["mean_baseline"] = mt, mb
    out["sd_treatment"], out["sd_baseline"] = st, sb

    two = (nt >= 2) & (nb >= 2)
    small = core.small_unequal(nt, nb, s.small_n.welch_min_n) & two
    dfo = core.hsu_df(nt, nb, small)
    out["small_n_note"] = [
        f"unequal small n ({a} vs {b}): conservative df = min(n) - 1 (Hsu)" if f else ""
        for a, b, f in zip(nt, nb, small)
    ]
    logr = (kind == "positive") & pos[ti] & pos[bi]
    # ratio of means: Fieller with Welch (or Hsu) df; non-negative kinds cannot go below 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio_a = np.where(mb != 0, mt / mb, np.nan)
    lo_a, hi_a, gg, df_a, status = core.fieller(mt, st**2, nt, mb, sb**2, nb, conf, dfo)
    lo_a = np.where((kind != "signed") & (lo_a < 0), 0.0, lo_a)
    _, _, p_a = core.welch(mt, st**2, nt, mb, sb**2, nb, dfo)
    vq, fl = rounding.group_terms(g, lmean, lsd)  # what each group's printed resolution leaves unknown
    lv = np.fmax(lsd**2, fl)  # a sample variance below the printed values' own rounding noise is luck
    ratio_l, lo_l, hi_l, df_l, p_l, zero_l = _log_ratio(
        lmean[ti], lv[ti], nt, lmean[bi], lv[bi], nb, dfo, conf, vq[ti] + vq[bi]
    )

    ratio = np.where(logr, ratio_l, ratio_a)
    out["estimand"] = np.where(logr, "ratio of geometric means", "ratio of means")
    out["ratio"] = ratio
    out["change_pct"] = (ratio - 1.0) * 100.0
    out["overhead_pct"] = np.where(
        better == "higher", (1.0 - ratio) * 100.0, np.where(better == "lower", (ratio - 1.0) * 100.0, np.nan)
    )
    note = np.full(len(out), "", dtype=object)
    note[status == "n < 2"] = "n < 2 on a side: no interval"
    note[status == "zero variance"] = "zero variance on both sides: zero-width interval"
    note[status == "unbounded"] = UNBOUNDED_NOTE
    note[status == "undefined"] = "interval undefined"
    note[(mb == 0) & (status != "n < 2")] = "baseline mean is 0: no ratio"
    note[logr & two] = ""
    note[logr & zero_l] = "zero variance on both sides: zero-width interval"
    bad = (mb == 0) & ~logr
    out["ci_low"] = np.where(logr, lo_l, np.where(bad, np.nan, lo_a))
    out["ci_high"] = np.where(logr, hi_l, np.where(bad, np.nan, hi_a))
    out["ci_method"] = [
        "" if not t else ("log-" if lg else "fieller-") + ("hsu" if sm else "welch")
        for t, lg, sm in zip(two, logr, small)
    ]
    out["ci_note"] = note
    out["df"] = np.where(logr, df_l, df_a)
    out["fieller_g"] = np.where(logr, np.nan, gg)

    unbounded = (status == "unbounded") | bad
    by = out["by"].to_numpy(dtype=object)
    if cache is None:
        boot, pr_ = _bootstrap(g, ti, bi, st, sb, unbounded, s), _paired(g, ti, bi, by, vq, fl, s)
    else:
        boot, pr_ = _cached_pair_columns(g, ti, bi, by, st, sb, unbounded, vq, fl, s, Path(cache))
    out["boot_ci_low"], out["boot_ci_high"], out["boot_method"], out["boot_note"] = boot
    out["n_pairs"] = pr_.n_pairs
    out["paired_ratio"], out["paired_ci_low"], out["paired_ci_high"] = pr_.ratio, pr_.low, pr_.high
    out["paired_note"] = pr_.note
    has = np.isfinite(pr_.low)
    out["paired_interval_method"] = np.where(has, pr_.method, "")
    out["paired_interval_level"] = np.where(has, pr_.level, np.nan)
    pquant = pr_.quantised

    with np.errstate(invalid="ignore", divide="ignore"):
        raw = lsd[ti] ** 2 / nt + lsd[bi] ** 2 / nb
        unpaired_q = rounding.material(raw, vq[ti] + vq[bi], lv[ti] / nt + lv[bi] / nb)
    out["quantised"] = (logr & two & unpaired_q) | pquant
    # the comparison's one p, of the design that ran: paired by round, or two samples
    out["p_value"], out["p_test"] = onep.design_p(family.is_paired(out), pr_.p, np.where(logr, p_l, p_a))
    if variants is None and (out["by"] == "variant").any():
        variants = variant_table(tidy, s)
    family.adjust(out, s, variants)
    _p_stop_paired(out, g, ti, bi, by, vq, fl, s)
    return out[RATIO_COLUMNS]


def _p_stop_paired(out: pd.DataFrame, g: Groups, ti, bi, by, vq, fl, s: Settings) -> None:
    """A primary row the adaptive stop ended on its p (:func:`podnet.stats.family.stopped_on_p`)
    states its paired interval at the stop's level, :data:`podnet.stats.robust.DIFFERENT_LEVEL`, in
    place (``paired_interval_level`` says so), as variants.csv does (``family._p_stop_interval``).
    A row between variants does so when its comparison's variants.csv row stopped on its p (the
    same rounds: ``_stopped_on_p``, :func:`podnet.stats.family.from_variants`); any other row by
    its own paired interval."""
    if out.empty or not (s.paired.adaptive and s.planning.stop_when_different):
        return
    sj = family.stop_judgement(out, s)
    primary = (out["role"] == "primary").to_numpy(dtype=bool)
    eligible = primary & (sj.judged["interval"] == "paired").to_numpy(dtype=bool)
    on_p = family.stopped_on_p(s, sj.met, out["precise"].astype(bool).to_numpy(dtype=bool), eligible)
    if "_stopped_on_p" in out.columns:
        by_variant = (out["by"].astype("string") == "variant").fillna(False).to_numpy(dtype=bool)
        on_p = np.where(by_variant, eligible & out["_stopped_on_p"].to_numpy(dtype=bool), on_p)
    idx = np.flatnonzero(on_p)
    if not idx.size:
        return
    zsd, known, floor = s.small_n.zero_rel_sd, vq[ti[idx]] + vq[bi[idx]], fl[ti[idx]] + fl[bi[idx]]
    pr = paired(
        g, ti[idx], bi[idx], by[idx], robust.DIFFERENT_LEVEL, s.paired.require_same_repeats, zsd, known, floor
    )
    ok = np.isfinite(pr.low) & np.isfinite(pr.high)
    rows = out.index[idx[ok]]
    out.loc[rows, "paired_ci_low"], out.loc[rows, "paired_ci_high"] = pr.low[ok], pr.high[ok]
    out.loc[rows, "paired_interval_level"] = robust.DIFFERENT_LEVEL


def _bootstrap(g: Groups, ti, bi, st, sb, unbounded, s: Settings) -> tuple[np.ndarray, ...]:
    """Bootstrap interval of the ratio of means (low, high, method, note), each pair with its own
    random stream."""
    b = s.bootstrap
    bmin = b.min_n
    nt, nb = g.n[ti], g.n[bi]
    k = len(ti)
    blo = np.full(k, np.nan)
    bhi = np.full(k, np.nan)
    bmethod = np.full(k, "", dtype=object)
    bnote = np.full(k, "", dtype=object)
    small = (nt < bmin) | (nb < bmin)
    bnote[small] = f"n < {bmin} on a side: bootstrap intervals under-cover below this (METHODS.md)"
    degenerate = ~small & (st == 0) & (sb == 0)
    bnote[degenerate] = "zero variance on both sides: bootstrap distribution degenerate"
    unb = ~small & ~degenerate & unbounded
    bnote[unb] = "baseline mean not distinguishable from 0: bootstrap of the ratio not meaningful"
    todo = np.nonzero(~small & ~degenerate & ~unb)[0]
    if len(todo):
        kt = key_text(g.keys.iloc[ti[todo]])
        kb = key_text(g.keys.iloc[bi[todo]])
        l_, h_, m_ = bootstrap.ratio_intervals(
            [g.values_of(ti[i]) for i in todo],
            [g.values_of(bi[i]) for i in todo],
            [a + "\x1e" + c for a, c in zip(kt, kb)],
            s.confidence,
            b,
        )
        blo[todo], bhi[todo], bmethod[todo] = l_, h_, m_
        bnote[todo[m_ == ""]] = "bootstrap interval undefined"
    return blo, bhi, bmethod, bnote


def _paired(g: Groups, ti, bi, by, vq, fl, s: Settings) -> Paired:
    """The paired log-ratio interval of each pair (:func:`podnet.stats.paired.paired`)."""
    zsd = s.small_n.zero_rel_sd
    known, floor = vq[ti] + vq[bi], fl[ti] + fl[bi]
    return paired(
        g, ti, bi, by, s.confidence, s.paired.require_same_repeats, zsd, known, floor, s.paired.adaptive
    )


#: the per-pair values kept in the cache: the bootstrap's four, then the paired interval's
_BOOT_DTYPES = (float, float, object, object)
_PAIRED_FIELDS = [f for f in Paired._fields if f != "level"]
_PAIRED_DTYPES = (int, float, float, float, float, object, bool, object)


def _cached_pair_columns(g: Groups, ti, bi, by, st, sb, unbounded, vq, fl, s: Settings, path: Path):
    """(:func:`_bootstrap`, :func:`_paired`) with each pair's values reused from ``path`` while its two
    groups (values, repeats, run ids, launch ids, rounds, keys, printed resolution), its ``by``
    and the settings and code are unchanged: what both compute for a pair depends on nothing else."""
    h = cache_mod.group_hashes(g, cache_mod.salt(s.mapping))
    extra = cache_mod.row_column_digest(g, [LAUNCH_COLUMN, ROUND_COLUMN])
    # the printed resolution's terms too (podnet.tools' code, not in the salt, decides them)
    res = [f"{float(a)!r} {float(b)!r}" for a, b in zip(vq, fl)]
    keys = np.array(
        [
            hashlib.sha256(
                "\x1f".join((h[t], h[b], extra[t], extra[b], res[t], res[b], str(w))).encode()
            ).hexdigest()
            for t, b, w in zip(ti, bi, by)
        ],
        dtype=object,
    )

    def compute(idx: np.ndarray) -> list[tuple[Any, ...]]:
        boot = _bootstrap(g, ti[idx], bi[idx], st[idx], sb[idx], unbounded[idx], s)
        pr = _paired(g, ti[idx], bi[idx], by[idx], vq, fl, s)
        cols = [*boot, *(getattr(pr, f) for f in _PAIRED_FIELDS)]
        return [tuple(c[i] for c in cols) for i in range(len(idx))]

    rows, _ = cache_mod.cached_values(keys, compute, path)
    cols = [np.array([r[j] for r in rows], dtype=d) for j, d in enumerate(_BOOT_DTYPES + _PAIRED_DTYPES)]
    boot, pr = cols[:4], cols[4:]
    level = robust.interval_level(s.confidence, s.paired.adaptive)
    return tuple(boot), Paired(*pr, level)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in RATIO_COLUMNS})
