"""ranking.csv: per path and measure, the variants (e.g. CNIs) in order, with tie groups.

Pure functions of the tidy table (no I/O). Every pair of variants measured on a path, adjacent in
the order or not, gets the paired side-by-side ratio of the same rounds
(:func:`podnet.stats.variants.side_by_side`; runs paired by ``(launch_id, round_seq)`` where the
tidy table has ``round_seq``, else by ``(launch_id, repeat)``). Holm runs over the pairs of each
ranking (``stats.ranking.family: ranking``, the default) or over every pair of the whole table
(``family: campaign``); ``holm_family`` says over how many pairs each p was adjusted. A pair's p,
the one it states and Holm reads, is the paired t p of its mean log ratio (``Stated.p_t``, every
paired comparison's one p, METHODS.md "One comparison, one p": the exact Wilcoxon p of its interval
cannot go below 2/2^n, so 10 pairs at 8 rounds could order nothing). A pair's relation is

- ``ordered``: its Holm-adjusted p is below ``1 - confidence``; the better one by the metric's
  direction (:func:`podnet.stats.kinds.metric_facts`: lower is better for latencies and CPU costs,
  higher for throughput and rates) is ranked above the other;
- ``equivalent``: not ordered, and its interval lies within ±margin (both ends within
  ``[1 / (1 + m), 1 + m]``, so the words hold whichever way the ratio is read);
- ``inconclusive``: neither; ``too few pairs``: fewer than 2 common rounds, or a variant set apart.

A pair row also says the two words of METHODS.md ("Two words: different and precise"):
``different`` (in a Holm family and Holm rejects: exactly ``ordered``) and ``precise`` (its
interval within ``stats.planning.target_rel_half_width`` on at least ``min_to_stop`` pairs).

The order is by a least-squares score of the pairs' mean log ratios (each variant's geometric mean
on the rounds it shares with the others). The letters (a compact letter display: the maximal sets
of variants no two of which are ordered, :mod:`podnet.stats.letters`) give the tie groups and the
order string: a boundary only where no letter spans it (A ~ B, B ~ C, A > C: one block {A, B, C},
letters a, ab, b, written ``{A (a), B (ab), C (b)}``). A variant with fewer than
``stats.ranking.min_pairs`` rounds is set apart ("not ranked: N rounds"). METHODS.md says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from . import onep
from ._data import ROUND_COLUMN, disturbed_mask, has_rounds, run_rounds, split_sources, write_csv
from .kinds import metric_facts
from .letters import groups_from_letters, letters, order_text, tie_groups  # noqa: F401 - tie_groups: its home was here
from .planning import precise
from .robust import interval_level
from .settings import Settings
from .variants import printed_quantum, side_by_side

#: the columns naming one ranking (a path and one measure of it)
KEY = ["scenario", "tool", "test", "protocol", "direction", "streams", "metric", "unit"]

COLUMNS = [
    "row",  # variant: one variant's place in a ranking | pair: two variants | none: nothing ranked
    *KEY,
    "better",  # higher | lower (the metric's better direction)
    "variant",  # variant row: the variant; pair row: the one ranked higher by the point estimate
    "other",  # variant row: the reference variant; pair row: the one ranked lower
    "position",  # variant row: 1 = best by the point estimate
    "group",  # variant row: tie group, 1 = best; every pair across two groups is ordered
    "letters",  # variant row: compact letter display; two variants sharing a letter are not ordered
    "rank_best",  # variant row: 1 + the variants ordered above it
    "rank_worst",  # variant row: the variants minus those ordered below it
    "ratio",  # pair: variant / other; variant row: variant / reference (paired, same rounds)
    "ci_low",
    "ci_high",
    "interval_level",  # the interval's level: 1 - alpha/2 after an adaptive stop (robust.interval_level)
    "n_pairs",  # common rounds behind the ratio
    "p_value",  # the pair's one p, the paired t of its mean log ratio (METHODS.md, "One comparison, one p"); variant row: its pair's with the reference
    "p_holm",  # Holm over the pair's family (a pair without p counts as p = 1)
    "holm_family",  # pair: the pairs p_holm was adjusted over (its ranking's, or the table's)
    "relation",  # pair: ordered | equivalent | inconclusive | too few pairs; variant row: reference or ""
    "different",  # pair: in a Holm family and p_holm < 1 - confidence (METHODS.md, "Two words"); else empty
    "precise",  # pair: its interval meets stats.planning's width target on min_to_stop pairs; else empty
    "within_margin",  # the interval lies within ±margin
    "margin",
    "order",  # the ranking in words, read off the letters: groups joined by ">", a group's members in braces
    "reason",  # why a row has no ratio, or why nothing is ranked
]

RELATIONS = ("ordered", "equivalent", "inconclusive", "too few pairs")


class Measure(NamedTuple):
    """One measure as ``tool:test:metric``."""

    tool: str
    test: str
    metric: str

    @classmethod
    def parse(cls, text: str) -> Measure:
        parts = str(text).split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"measure {text!r}: expected tool:test:metric")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.tool}:{self.test}:{self.metric}"


@dataclass(frozen=True)
class RankingSettings:
    """``stats.ranking`` with its defaults, and what it needs of the rest of ``stats``."""

    measures: tuple[Measure, ...]
    scenarios: tuple[str, ...]  # empty: every scenario
    margin: float
    confidence: float
    reference: str | None  # the baseline variant of stats.comparisons (by: variant), if any
    adaptive: bool = False  # rounds from the launcher's adaptive stop (stats.paired.adaptive)
    family: str = "ranking"  # Holm's family: "ranking" (each path x measure) or "campaign" (every pair)
    min_pairs: int = 4  # a variant with fewer rounds in common with any other is set apart
    target: float = 0.05  # stats.planning.target_rel_half_width: a pair's precise
    settings: Any = None  # the stats Settings (precise reads min_to_stop from them)


def settings_of(
    stats: Mapping[str, Any] | None, default_measures: Sequence[str] = ()
) -> RankingSettings | None:
    """The ranking settings of a config's ``stats`` mapping; without ``stats.ranking.measures``,
    ``default_measures`` when given (report.vs_seed's measures), else None: no ranking."""
    s = Settings.of(stats)
    r = s.ranking
    margin = r.equivalence_margin
    if not margin > 0:
        raise ValueError("stats.ranking.equivalence_margin must be > 0")
    measures = list(r.measures) or list(dict.fromkeys(default_measures))
    if not measures:
        return None
    ref = next((str(c["baseline"]) for c in s.comparisons if c.get("by") == "variant"), None)
    return RankingSettings(
        measures=tuple(Measure.parse(m) for m in measures),
        scenarios=r.scenarios,
        margin=margin,
        confidence=s.confidence,
        reference=ref,
        adaptive=s.paired.adaptive,
        family=r.family,
        min_pairs=r.min_pairs,
        target=s.planning.target_rel_half_width,
        settings=s,
    )


class Pair(NamedTuple):
    """The paired ratio a / b of two variants on one path and measure."""

    a: str
    b: str
    ratio: float
    low: float
    high: float
    n: int
    p: float  # the interval's own p (Wilcoxon from 6 pairs, t below)
    mean_log: float  # mean log ratio of the common rounds (defined from 1 round on)
    p_t: float = float("nan")  # the paired t p of the mean log ratio: what a pair enters Holm with


def _rounds(g: pd.DataFrame, by: str) -> pd.Series:
    """Values indexed by the round their run ran in (:func:`podnet.stats._data.run_rounds`, numbered
    ``by``); a run of no known launch is left out, and a round seen twice pairs nothing."""
    label = run_rounds(g, by)
    ok = label.notna().to_numpy(bool)
    s = pd.Series(g.loc[ok, "value"].to_numpy(dtype=float), index=label[ok].to_numpy(dtype=object))
    return s[~s.index.duplicated(keep=False)]


def round_key(a: pd.DataFrame, b: pd.DataFrame) -> str:
    """``round_seq`` when both groups carry it on every run, else ``repeat`` (older raw files)."""
    return ROUND_COLUMN if has_rounds(a) and has_rounds(b) else "repeat"


def pair(
    a: pd.DataFrame,
    b: pd.DataFrame,
    confidence: float = 0.95,
    names: tuple[str, str] = ("", ""),
    adaptive: bool = False,
) -> Pair:
    """The paired ratio of variant ``a``'s runs over ``b``'s (tidy rows of one path and measure), with
    the interval variants.csv states (its printed resolution; the stop level after adaptive rounds)."""
    by = round_key(a, b)
    sa, sb = _rounds(a, by), _rounds(b, by)
    common = sa.index.intersection(sb.index)
    x, y = sa.loc[common].to_numpy(dtype=float), sb.loc[common].to_numpy(dtype=float)
    ok = (x > 0) & (y > 0)
    x, y = x[ok], y[ok]
    mean_log = float(np.mean(np.log(x) - np.log(y))) if len(x) else np.nan
    if len(x) < 2:
        return Pair(*names, np.nan, np.nan, np.nan, len(x), np.nan, mean_log, np.nan)
    iv = side_by_side(x, y, confidence, quantum=(printed_quantum(a), printed_quantum(b)), adaptive=adaptive)
    return Pair(
        *names,
        float(iv.ratio),
        float(iv.low),
        float(iv.high),
        int(iv.n),
        float(iv.p),
        mean_log,
        float(iv.p_t),
    )


def within_margin(low: float, high: float, margin: float) -> bool:
    """The interval [low, high] lies within ±margin read either way (never a zero-width interval)."""
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low < high):
        return False
    lim = np.log1p(margin)
    return bool(max(abs(np.log(low)), abs(np.log(high))) <= lim)


def relation(p_holm: float, low: float, high: float, n: int, margin: float, alpha: float) -> str:
    """ordered | equivalent | inconclusive | too few pairs (see the module docstring)."""
    if n < 2:
        return "too few pairs"
    if np.isfinite(p_holm) and p_holm < alpha:
        return "ordered"
    if within_margin(low, high, margin):
        return "equivalent"
    return "inconclusive"


def scores(names: Sequence[str], pairs: Sequence[Pair]) -> np.ndarray:
    """Least-squares log scores s with s_a - s_b ~ mean log ratio of each pair (weight: its rounds),
    summing to 0; NaN for a variant in no pair with a common round."""
    idx = {v: i for i, v in enumerate(names)}
    rows, rhs, w = [], [], []
    for p in pairs:
        if p.n < 1 or not np.isfinite(p.mean_log):
            continue
        r = np.zeros(len(names))
        r[idx[p.a]], r[idx[p.b]] = 1.0, -1.0
        rows.append(r)
        rhs.append(p.mean_log)
        w.append(np.sqrt(p.n))
    if not rows:
        return np.full(len(names), np.nan)
    A = np.array(rows) * np.array(w)[:, None]
    linked = np.any(np.array(rows) != 0, axis=0)
    A = np.vstack([A, np.ones(len(names))])
    y = np.r_[np.array(rhs) * np.array(w), 0.0]
    s = np.linalg.lstsq(A, y, rcond=None)[0]
    return np.where(linked, s, np.nan)


def _select(tidy: pd.DataFrame, rs: RankingSettings) -> pd.DataFrame:
    """Measured, positive, non-swept rows of the configured scenarios and measures."""
    # measured rows only: no reference value, no run judged disturbed and kept (stats' one rule)
    t = split_sources(tidy)[0] if "source" in tidy.columns else tidy[~disturbed_mask(tidy)]
    if "sweep" in t.columns:
        t = t[t["sweep"].astype("string").fillna("") == ""]
    t = t[np.isfinite(pd.to_numeric(t["value"], errors="coerce").to_numpy(dtype=float))]
    if rs.scenarios:
        t = t[t["scenario"].astype(str).isin(rs.scenarios)]
    keys = set(rs.measures)
    m = [Measure(str(a), str(b), str(c)) in keys for a, b, c in zip(t["tool"], t["test"], t["metric"])]
    t = t[np.asarray(m, dtype=bool)]
    if t.empty:
        return t
    kind, better = metric_facts(t[["tool", "metric"]])
    t = t.assign(better=better)
    return t[(kind == "positive") & np.isin(better, ["higher", "lower"])]


def _none(reason: str) -> pd.DataFrame:
    return pd.DataFrame(
        [{c: (reason if c == "reason" else "none" if c == "row" else np.nan) for c in COLUMNS}]
    )


def ranking_table(
    tidy: pd.DataFrame, stats: Mapping[str, Any] | None, default_measures: Sequence[str] = ()
) -> pd.DataFrame:
    """ranking.csv (:data:`COLUMNS`) of a tidy table under the config's ``stats`` mapping; one
    ``none`` row saying why when ``stats.ranking`` names no measure (and no ``default_measures``,
    see :func:`settings_of`) or nothing has two variants."""
    rs = settings_of(stats, default_measures)
    if rs is None:
        return _none("stats.ranking.measures is not configured")
    t = _select(tidy, rs)
    if t.empty:
        return _none("no measured value of the configured measures and scenarios")
    t = t.assign(**{c: t[c].astype("string").fillna("") for c in [*KEY, "variant"]})
    rows: list[dict[str, Any]] = []
    for key, g in t.groupby(KEY, sort=False):
        rows += _one_ranking(dict(zip(KEY, key)), g, rs)
    if not any(r["row"] == "pair" for r in rows):
        return _none("fewer than two variants on every configured path and measure: nothing to rank")
    df = pd.DataFrame(rows, columns=[*COLUMNS, "apart", "apart_rounds"])  # the last two: internal
    for c in ("letters", "order", "relation", "reason", "other", "different", "precise"):
        df[c] = df[c].astype(object)
    _holm(df, rs)
    for c in ("position", "group", "rank_best", "rank_worst", "n_pairs", "holm_family"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    return df[COLUMNS].reset_index(drop=True)


def _one_ranking(key: dict[str, str], g: pd.DataFrame, rs: RankingSettings) -> list[dict[str, Any]]:
    """The variant rows and pair rows of one path and measure (relations filled in by :func:`_holm`)."""
    better = str(g["better"].iloc[0])
    sign = 1.0 if better == "higher" else -1.0
    level = interval_level(rs.confidence, rs.adaptive)
    base = {**key, "better": better, "margin": rs.margin, "interval_level": level}
    names = sorted(g["variant"].unique())
    if len(names) < 2:
        return [
            {
                **base,
                "row": "variant",
                "variant": names[0],
                "position": 1,
                "group": 1,
                "letters": "a",
                "rank_best": 1,
                "rank_worst": 1,
                "reason": "one variant only on this path and measure",
            }
        ]
    by = {v: x for v, x in g.groupby("variant", sort=False)}
    pairs = [
        pair(by[a], by[b], rs.confidence, (a, b), rs.adaptive)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]
    # a variant with fewer rounds in common with any other than min_pairs, while others have more,
    # is set apart: ranked after the rest, in no group, letter or Holm family
    rounds = {v: max(p.n for p in pairs if v in (p.a, p.b)) for v in names}
    most = max(rounds.values())
    apart = {v for v in names if rounds[v] < rs.min_pairs and rounds[v] < most}
    s = scores(names, pairs)
    key_of = {v: (v in apart, -sign * s[i] if np.isfinite(s[i]) else np.inf, v) for i, v in enumerate(names)}
    order = sorted(names, key=lambda v: key_of[v])
    pos = {v: i for i, v in enumerate(order)}
    out = []
    for p in pairs:
        est = p.mean_log if np.isfinite(p.mean_log) else 0.0
        flip = sign * est < 0 or (sign * est == 0 and pos[p.a] > pos[p.b])
        a, b = (p.b, p.a) if flip else (p.a, p.b)
        r, lo, hi = (1 / p.ratio, 1 / p.high, 1 / p.low) if flip else (p.ratio, p.low, p.high)
        reason = "" if p.n >= 2 else f"{p.n} common round{'s' if p.n != 1 else ''}: no interval"
        if p.n >= 2 and not np.isfinite(p.p_t):
            reason = "no test: the paired log ratios have no spread (quantised values?)"
        if {a, b} & apart:
            few = ", ".join(f"{v}: {rounds[v]} rounds" for v in (a, b) if v in apart)
            reason = (
                f"not ranked ({few}, fewer than stats.ranking.min_pairs {rs.min_pairs}): in no Holm family"
            )
        out.append(
            {
                **base,
                "row": "pair",
                "variant": a,
                "other": b,
                "ratio": r,
                "ci_low": lo,
                "ci_high": hi,
                "n_pairs": p.n,
                # the comparison's one p, the paired t (METHODS.md, "One comparison, one p"); a
                # pair set apart states it unadjusted
                "p_value": p.p_t,
                "reason": reason,
                "apart": bool({a, b} & apart),
            }
        )
    ref = rs.reference if rs.reference in names else order[0]
    for v in order:
        row = {**base, "row": "variant", "variant": v, "other": ref, "position": pos[v] + 1}
        if v == ref:
            row.update(ratio=1.0, relation="reference", n_pairs=len(by[v]))
        else:
            p = next(x for x in pairs if {x.a, x.b} == {v, ref})
            inv = p.a != v
            row.update(
                ratio=1 / p.ratio if inv else p.ratio,
                ci_low=1 / p.high if inv else p.low,
                ci_high=1 / p.low if inv else p.high,
                n_pairs=p.n,
                p_value=p.p_t,
                reason="" if p.n >= 2 else f"{p.n} common rounds with {ref}: no interval",
            )
        if v in apart:
            why = f"not ranked: {rounds[v]} rounds (stats.ranking.min_pairs {rs.min_pairs})"
            row.update(apart=True, apart_rounds=rounds[v], reason=why)
        out.append(row)
    return out


def families(df: pd.DataFrame, family: str) -> np.ndarray:
    """Each row's Holm family as a label: the tested pair rows (2 or more common rounds) of one
    ranking (``family="ranking"``) or of the whole table (``"campaign"``); -1 for a row in none."""
    if family not in ("ranking", "campaign"):
        raise ValueError(f"stats.ranking.family {family!r}: expected ranking or campaign")
    n = pd.to_numeric(df["n_pairs"], errors="coerce").fillna(0).to_numpy(dtype=float)
    apart = df["apart"].fillna(False).astype(bool).to_numpy() if "apart" in df else np.zeros(len(df), bool)
    tested = (df["row"] == "pair").to_numpy() & (n >= 2) & ~apart  # untested p = 1; set apart: none
    if family == "campaign":
        label = np.zeros(len(df), dtype=int)
    else:
        label = df[KEY].astype("string").fillna("").agg("\x1f".join, axis=1).factorize()[0]
    return np.where(tested, label, -1)


def _holm(df: pd.DataFrame, rs: RankingSettings) -> None:
    """Holm over each family of pairs (:func:`families`), relations, then each ranking's groups,
    letters and rank range (in place)."""
    alpha = 1.0 - rs.confidence
    is_pair = (df["row"] == "pair").to_numpy()
    n = pd.to_numeric(df["n_pairs"], errors="coerce").fillna(0).to_numpy(dtype=float)
    p = pd.to_numeric(df["p_value"], errors="coerce").to_numpy(dtype=float)
    fam = families(df, rs.family)
    padj, size, _ = onep.holm(p, np.where(fam >= 0, fam.astype(str), ""))
    df["p_holm"] = padj
    df["holm_family"] = size
    lo, hi = (pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) for c in ("ci_low", "ci_high"))
    df["within_margin"] = [within_margin(a, b, rs.margin) for a, b in zip(lo, hi)]
    rel = [relation(q, a, b, int(k), rs.margin, alpha) for q, a, b, k in zip(padj, lo, hi, n)]
    apart = df["apart"].fillna(False).astype(bool).to_numpy()
    rel = ["too few pairs" if x else r for r, x in zip(rel, apart)]
    df["relation"] = np.where(is_pair, rel, df["relation"].fillna("").astype(object))
    tested = fam >= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (hi - lo) / (2.0 * pd.to_numeric(df["ratio"], errors="coerce").to_numpy(dtype=float))
    diff = onep.different(padj, tested, alpha)
    prec = tested & precise(rhw, rs.target, n, rs.settings, lo, hi)
    df["different"] = pd.array(np.where(is_pair, diff, False), dtype="boolean")
    df["precise"] = pd.array(np.where(is_pair, prec, False), dtype="boolean")
    df.loc[~is_pair, ["different", "precise"]] = pd.NA
    for _, g in df.groupby(KEY, sort=False, dropna=False):
        allv = g[g["row"] == "variant"].sort_values("position")
        out_v = allv[allv["apart"].fillna(False).astype(bool)]
        v = allv.drop(out_v.index)
        few = [f"{x} ({int(k)} rounds)" for x, k in zip(out_v["variant"].astype(str), out_v["apart_rounds"])]
        note = "; not ranked: " + ", ".join(few) if few else ""
        if len(v) < 2:
            df.loc[g.index, "order"] = (str(v["variant"].iloc[0]) if len(v) else "") + note
            continue
        pr = g[(g["row"] == "pair") & (g["relation"] == "ordered")]
        ordered = set(zip(pr["variant"].astype(str), pr["other"].astype(str)))
        order = list(v["variant"].astype(str))
        lets = letters(order, ordered)
        groups = groups_from_letters(order, lets, ordered)
        df.loc[v.index, "group"] = groups
        df.loc[v.index, "letters"] = lets
        df.loc[v.index, "rank_best"] = [1 + sum((u, x) in ordered for u in order) for x in order]
        df.loc[v.index, "rank_worst"] = [len(order) - sum((x, u) in ordered for u in order) for x in order]
        df.loc[g.index, "order"] = order_text(order, groups, lets) + note


def holm_words(table: pd.DataFrame) -> str:
    """How Holm was run, from the pair rows' ``holm_family``: ``"Holm over all 255"`` when one
    family holds every tested pair, else ``"Holm within each ranking (families of 3-10 pairs)"``."""
    p = table[table["row"] == "pair"] if "row" in table.columns else table
    sizes = pd.to_numeric(p.get("holm_family", pd.Series(dtype=float)), errors="coerce").dropna()
    tested = int(pd.to_numeric(p.get("p_holm", pd.Series(dtype=float)), errors="coerce").notna().sum())
    if sizes.empty:
        return "Holm over all" if not tested else f"Holm over all {tested}"
    lo, hi = int(sizes.min()), int(sizes.max())
    if hi >= tested:  # one family holds every tested pair (campaign, or a single ranking)
        return f"Holm over all {tested}"
    span = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return f"Holm within each ranking (families of {span} pair{'s' if hi != 1 else ''})"


def summary(table: pd.DataFrame) -> str:
    """One line: how many rankings, pairs and of them ordered / equivalent / inconclusive."""
    p = table[table["row"] == "pair"]
    if p.empty:
        return f"no ranking: {table['reason'].iloc[0] if len(table) else 'empty table'}"
    n_rank = len(p.drop_duplicates(KEY))
    counts = p["relation"].value_counts()
    parts = ", ".join(f"{int(counts.get(r, 0))} {r}" for r in RELATIONS)
    return f"{n_rank} rankings, {len(p)} pairs ({holm_words(table)}): {parts}"


def write(table: pd.DataFrame, path: str | Path) -> Path:
    """Write ranking.csv atomically (a half-written file never has the final name)."""
    return write_csv(table, path)
