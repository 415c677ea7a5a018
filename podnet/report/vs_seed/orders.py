"""Each order the seed states between two of its CNIs, judged by this campaign's ranking.

For every pair of seed CNIs on one seed path and measure whose counterparts ranking.csv
(:mod:`podnet.stats.ranking`) ranks on the mapped scenario and our measure, one row:

- the seed's order: ``>`` (its better CNI first) when the two published values differ by more than
  the tie margin (``report.vs_seed.seed_tie_margin``; the seed ran each cell once, 60 s, so a smaller
  difference is not an order), else ``tie``;
- ours: the paired ratio of the same rounds with its interval and Holm-adjusted p (over the
  ``holm_family`` pairs of ranking.csv's ``stats.ranking.family``), and its relation in the ranking
  (ordered, equivalent, inconclusive, too few pairs);
- ``status``: ``agrees`` (ordered here in the seed's order), ``contradicts`` (ordered here the other
  way: Holm-different the opposite way, nothing less), ``gap not reproduced`` (equivalent here within
  the ranking's margin while the seed's gap exceeds its tie margin: the seed's difference is not
  found, which is not the opposite order), ``tie`` (the seed cannot order them; ours is still
  shown), ``inconclusive here``.

Comparing two CNIs' own intervals would throw away the pairing: the ratio of the same rounds is
what the ranking judges, so this module only reads it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .mapping import SeedMapping

#: the columns of :func:`orders_table`
ORDER_COLUMNS = [
    "seed",
    "path",
    "scenario",
    "seed_tool",
    "seed_test",
    "seed_metric",
    "tool",
    "test",
    "metric",
    "better",
    "seed_a",  # the seed's better CNI (by its published value)
    "seed_b",
    "a",  # our counterparts of seed_a and seed_b
    "b",
    "seed_ratio",  # seed_a / seed_b, published values
    "seed_order",  # ">" | "tie"
    "ratio",  # a / b here: paired, same rounds (ranking.csv)
    "ci_low",
    "ci_high",
    "n_pairs",
    "p_holm",
    "holm_family",  # the pairs ranking.csv's Holm adjusted p_holm over (its stats.ranking.family)
    "relation",  # ranking.csv's: ordered | equivalent | inconclusive | too few pairs
    "ours",  # ">" (a ranked above b) | "<" | "~" (not ordered)
    "status",  # agrees | contradicts | tie | inconclusive here
    "note",  # where the seed's set-up changes the physics (report.vs_seed.notes)
]

#: the statuses of one seed order
STATUSES = ("agrees", "contradicts", "gap not reproduced", "tie", "inconclusive here")

_GROUP = ["path", "scenario", "seed_tool", "seed_test", "seed_metric", "tool", "test", "metric"]


def _ranking_pairs(ranking: pd.DataFrame, scenario: str, tool: str, test: str, metric: str) -> pd.DataFrame:
    if ranking is None or ranking.empty or "row" not in ranking.columns:
        return pd.DataFrame()
    r = ranking[
        (ranking["row"].astype(str) == "pair")
        & (ranking["scenario"].astype(str) == scenario)
        & (ranking["tool"].astype(str) == tool)
        & (ranking["test"].astype(str) == test)
        & (ranking["metric"].astype(str) == metric)
    ]
    keys = r[["protocol", "direction", "streams"]].astype(str).drop_duplicates()
    if len(keys) > 1:
        raise ValueError(
            f"ranking.csv has {len(keys)} directions/protocols/streams of {tool}:{test}:{metric} on "
            f"{scenario}: name a test that has one"
        )
    return r


def _judge(seed_order: str, relation: str, ours: str) -> str:
    if seed_order == "tie":
        return "tie"
    if relation == "ordered":
        return "agrees" if ours == ">" else "contradicts"
    if relation == "equivalent":
        return "gap not reproduced"
    return "inconclusive here"


def orders_table(vs: pd.DataFrame, ranking: pd.DataFrame, mapping: SeedMapping) -> pd.DataFrame:
    """:data:`ORDER_COLUMNS`: every pair of seed CNIs in one group of ``vs`` (the vs_seed table's
    rows with status ``both``) judged by the ranking's pair of their counterparts."""
    rows = []
    lim = np.log1p(mapping.tie_margin)
    both = vs[vs["status"] == "both"] if len(vs) else vs
    for _, g in both.groupby(_GROUP, sort=False):
        r0 = g.iloc[0]
        rp = _ranking_pairs(ranking, str(r0["scenario"]), str(r0["tool"]), str(r0["test"]), str(r0["metric"]))
        sign = -1.0 if str(r0["better"]) == "lower" else 1.0
        cnis = list(g.itertuples(index=False))
        note = mapping.note_for(str(r0["path"]), f"{r0['seed_tool']}:{r0['seed_test']}:{r0['seed_metric']}")
        for i, first in enumerate(cnis):
            for second in cnis[i + 1 :]:
                x, y = first, second
                if not (np.isfinite(x.seed_value) and np.isfinite(y.seed_value)):
                    continue
                if sign * (x.seed_value - y.seed_value) < 0:
                    x, y = y, x  # the seed's better CNI first
                seed_ratio = float(x.seed_value) / float(y.seed_value)
                row = {c: r0[c] for c in ("seed", *_GROUP, "better")}
                row.update(
                    seed_a=x.seed_cni,
                    seed_b=y.seed_cni,
                    a=x.variant,
                    b=y.variant,
                    seed_ratio=seed_ratio,
                    seed_order="tie" if abs(np.log(seed_ratio)) < lim else ">",
                    note=note,
                )
                row.update(_ours(rp, x.variant, y.variant))
                row["status"] = _judge(row["seed_order"], row["relation"], row["ours"])
                rows.append(row)
    return pd.DataFrame(rows, columns=ORDER_COLUMNS)


def _ours(rp: pd.DataFrame, a: str, b: str) -> dict:
    """Our pair a / b from the ranking's pair rows (stored better-first: inverted when needed)."""
    hit = rp[(rp["variant"] == a) & (rp["other"] == b)] if len(rp) else rp
    inv = False
    if not len(hit) and len(rp):
        hit, inv = rp[(rp["variant"] == b) & (rp["other"] == a)], True
    if not len(hit):
        return {"relation": "not ranked", "ours": "~", "n_pairs": 0}
    q = hit.iloc[0]
    ratio, lo, hi = (float(q[c]) for c in ("ratio", "ci_low", "ci_high"))
    rel = str(q["relation"])
    return {
        "ratio": 1 / ratio if inv else ratio,
        "ci_low": 1 / hi if inv else lo,
        "ci_high": 1 / lo if inv else hi,
        "n_pairs": int(q["n_pairs"]) if np.isfinite(float(q["n_pairs"])) else 0,
        "p_holm": float(q["p_holm"]),
        "holm_family": float(q.get("holm_family", np.nan)),
        "relation": rel,
        "ours": ("<" if inv else ">") if rel == "ordered" else "~",
    }


def verdict(statuses: pd.Series | list[str]) -> str:
    """One (path, measure) group's verdict from its orders' statuses, so that one pair cannot
    speak for the group: ``agrees`` when every order the seed states (not a tie) agrees, ``agrees
    where ordered`` when some agree and none contradicts, ``mixed`` when some agree and some
    contradict, ``contradicts`` when some contradict and none agrees, ``gap not reproduced`` when
    the only orders decided here are equivalences against a seed gap, ``inconclusive here`` when none is
    decided here (ordered or equivalent), ``seed ties only`` when the seed orders none of them, ``nothing to rank`` without a
    pair."""
    st = list(statuses)
    if not st:
        return "nothing to rank"
    stated = [s for s in st if s != "tie"]
    if not stated:
        return "seed ties only"
    agree, contra = stated.count("agrees"), stated.count("contradicts")
    if agree and contra:
        return "mixed"
    if contra:
        return "contradicts"
    if agree == len(stated):
        return "agrees"
    if agree:
        return "agrees where ordered"
    if "gap not reproduced" in stated:
        return "gap not reproduced"
    return "inconclusive here"


#: the columns a reader needs of :func:`orders_table` (the notebook shows these)
SHOWN = ["path", "scenario", "metric", "seed_a", "seed_b", "seed_ratio", "seed_order", "a", "b", "ratio"]
SHOWN += ["ci_low", "ci_high", "n_pairs", "p_holm", "holm_family", "relation", "status", "note"]


def shown(orders: pd.DataFrame) -> pd.DataFrame:
    """The orders' columns a reader needs (:data:`SHOWN`)."""
    return orders[[c for c in SHOWN if c in orders.columns]]
