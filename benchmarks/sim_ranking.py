"""ranking.csv: coverage of the pair intervals it publishes, which pairs come out "different"
(ordered), how often the order string keeps a > b > c > d apart, and what one variant with few
rounds does to it (podnet/stats/METHODS.md, "ranking.csv"; printed, about a minute at the defaults).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_ranking.py [--campaigns 120] [--seed 44]

Each simulated campaign is one path and measure (iperf3 tcp throughput, higher is better) with
variants side by side in ``rounds`` rounds of one launch: a run's log value is the variant's level
+ R_r + e, R_r ~ N(0, ``ROUND_SD``) shared by every variant of round r (the machine's moment), e ~
N(0, ``run_sd``) its own (run sd 6 %, as issue 44's campaigns). True levels: ``a`` and its twin
``a2`` (an A/A pair, as the campaign's macvlan-aa) at 1, then ``b``, ``c``, ``d`` each ``gap``
below the one before; ``w`` (a weak variant, as flannel-vxlan's 3 rounds) lies between b and c
and ran only in the first ``WEAK_ROUNDS`` rounds. The table is
:func:`podnet.stats.ranking.ranking_table`'s, on a tidy table built as the parse stage builds it,
run twice: with the default ``stats.ranking.min_pairs`` (4: w is set apart, "not ranked: 3
rounds") and with ``min_pairs: 2`` (w ranked among the others, as before issue 44). Printed per
cell (Monte Carlo se of a share p over C campaigns: sqrt(p (1 - p) / C)):

- **coverage** of every published pair interval (``ci_low``, ``ci_high``) of the true ratio, over
  the ranked pairs and over w's pairs (3 rounds: the mean's t interval);
- **different**: the share of adjacent true gaps (a > b, b > c, c > d) whose pair is ordered
  (power), of campaigns with every gap ordered, and of A/A pairs (a, a2) ordered; ``false``: the
  share of campaigns with any order stated that is false (an A/A pair ordered, or a pair ordered
  the wrong way): Holm within the ranking holds it below 5 %;
- **precise**: the share of adjacent pairs whose interval meets the width target (±5 %) on at
  least ``min_to_stop`` pairs;
- **order**: the share of campaigns whose order string is ``{a, a2} > b > c > d`` (then ``; not
  ranked: w (3 rounds)``), and of those whose string is one brace (every variant in one group).
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np
import pandas as pd

from podnet.parse.tidy import frame
from podnet.stats import ranking

RUN_SD = 0.06
ROUND_SD = 0.05
GAPS = (1.15,)
ROUNDS = (6, 8, 10, 12)
WEAK_ROUNDS = 3
#: the true log level of each variant: a and a2 the same (A/A), then b, c, d each one gap lower; w
#: between b and c
LEVELS = {"a": 0.0, "a2": 0.0, "b": -1.0, "c": -2.0, "d": -3.0, "w": -1.5}
ADJACENT = (("a", "b"), ("b", "c"), ("c", "d"))
STATS = {"ranking": {"measures": ["iperf3:tcp:throughput"]}, "confidence": 0.95}


def campaign(rng: np.random.Generator, rounds: int, gap: float, run_sd: float = RUN_SD) -> pd.DataFrame:
    """One campaign's tidy rows: every variant in every round, ``w`` in the first :data:`WEAK_ROUNDS`."""
    step = np.log(gap)
    moment = rng.normal(0.0, ROUND_SD, rounds)
    rows = []
    for v, level in LEVELS.items():
        ran = WEAK_ROUNDS if v == "w" else rounds
        values = 10e9 * np.exp(level * step + moment[:ran] + rng.normal(0.0, run_sd, ran))
        for r, x in enumerate(values):
            rows.append(
                {
                    "experiment": "sim",
                    "variant": v,
                    "scenario": "pod-pod",
                    "tool": "iperf3",
                    "test": "tcp",
                    "protocol": "tcp",
                    "direction": "forward",
                    "streams": 1,
                    "metric": "throughput",
                    "unit": "bit/s",
                    "source": "measured",
                    "repeat": r + 1,
                    "value": float(x),
                    "run_id": f"{v}/{r}",
                    "raw_path": f"raw/{v}/{r}.json",
                }
            )
    t = frame(rows)
    t["launch_id"] = pd.array(["L"] * len(t), dtype="string")
    t["round_seq"] = pd.array(t["repeat"].astype(int) - 1, dtype="Int64")
    return t


class Cell(NamedTuple):
    """One design's rates over its campaigns (shares in 0..1)."""

    cover_ranked: float  # published intervals of the ranked pairs that hold the true ratio
    cover_weak: float  # the same for w's pairs (NaN: none published)
    weak_published: float  # share of w's pairs with an interval
    power: float  # adjacent gaps ordered (different)
    all_gaps: float  # campaigns with every adjacent gap ordered
    aa_different: float  # A/A pairs (a, a2) ordered
    false_order: float  # campaigns with any false order stated
    precise: float  # adjacent pairs precise
    full_order: float  # campaigns whose order string is {a, a2} > b > c > d
    one_brace: float  # campaigns whose order string is one group


def _true_log_ratio(a: str, b: str, gap: float) -> float:
    return (LEVELS[a] - LEVELS[b]) * np.log(gap)


def judge(table: pd.DataFrame, gap: float) -> dict[str, float]:
    """What one campaign's ranking.csv states, against the truth."""
    p = table[table["row"] == "pair"]
    v, o = p["variant"].astype(str).to_numpy(), p["other"].astype(str).to_numpy()
    lo, hi = p["ci_low"].to_numpy(float), p["ci_high"].to_numpy(float)
    truth = np.exp([_true_log_ratio(a, b, gap) for a, b in zip(v, o)])
    shown = np.isfinite(lo) & np.isfinite(hi)
    hit = shown & (lo <= truth) & (truth <= hi)
    weak = (v == "w") | (o == "w")
    diff = p["different"].fillna(False).astype(bool).to_numpy()
    prec = p["precise"].fillna(False).astype(bool).to_numpy()
    # an ordered pair states variant > other by the metric (higher is better here)
    wrong = diff & ~(truth > 1.0)
    adj = np.array([(a, b) in ADJACENT for a, b in zip(v, o)])
    adj_diff = int(np.sum(adj & diff))
    aa = np.array([{a, b} == {"a", "a2"} for a, b in zip(v, o)])
    order = str(table[table["row"] == "variant"]["order"].iloc[0])
    head = order.split(";")[0].strip()
    groups = head.count(">") + 1
    return {
        "ranked_shown": float(np.sum(shown & ~weak)),
        "ranked_hit": float(np.sum(hit & ~weak)),
        "weak_shown": float(np.sum(shown & weak)),
        "weak_hit": float(np.sum(hit & weak)),
        "weak_pairs": float(np.sum(weak)),
        "adj_diff": float(adj_diff),
        "all_gaps": float(adj_diff == len(ADJACENT)),
        "aa_diff": float(np.sum(aa & diff)),
        "false": float(wrong.any()),
        "adj_precise": float(np.sum(adj & prec)),
        "full": float(head in ("{a, a2} > b > c > d", "{a2, a} > b > c > d")),
        "one_brace": float(groups == 1),
    }


def cell(rng: np.random.Generator, rounds: int, gap: float, campaigns: int, min_pairs: int) -> Cell:
    """One design's :class:`Cell` over ``campaigns`` simulated campaigns."""
    stats = {**STATS, "ranking": {**STATS["ranking"], "min_pairs": min_pairs}}
    tot: dict[str, float] = {}
    for _ in range(campaigns):
        for k, x in judge(ranking.ranking_table(campaign(rng, rounds, gap), stats), gap).items():
            tot[k] = tot.get(k, 0.0) + x
    c = float(campaigns)
    return Cell(
        cover_ranked=tot["ranked_hit"] / tot["ranked_shown"],
        cover_weak=tot["weak_hit"] / tot["weak_shown"] if tot["weak_shown"] else float("nan"),
        weak_published=tot["weak_shown"] / tot["weak_pairs"],
        power=tot["adj_diff"] / (len(ADJACENT) * c),
        all_gaps=tot["all_gaps"] / c,
        aa_different=tot["aa_diff"] / c,
        false_order=tot["false"] / c,
        precise=tot["adj_precise"] / (len(ADJACENT) * c),
        full_order=tot["full"] / c,
        one_brace=tot["one_brace"] / c,
    )


def _pct(x: float) -> str:
    return "    -" if not np.isfinite(x) else f"{100 * x:5.1f}"


def table(
    campaigns: int = 120,
    seed: int = 44,
    rounds: tuple[int, ...] = ROUNDS,
    gaps: tuple[float, ...] = GAPS,
    min_pairs: tuple[int, ...] = (4, 2),
) -> dict[tuple[float, int, int], Cell]:
    """Every cell, one printed line each; returned for the pipeline test."""
    rng = np.random.default_rng(seed)
    print(
        f"ranking: a = a2 (A/A) > b > c > d, each gap below the one before; w between b and c in"
        f" {WEAK_ROUNDS} rounds; run sd {RUN_SD:.0%}, round sd {ROUND_SD:.0%}; {campaigns} campaigns a cell;"
        " shares in %"
    )
    print(
        "   gap rounds min_pairs | covered: ranked  w's (published) | different: gaps  all gaps  A/A"
        "  false | precise gaps | order: {a, a2} > b > c > d  one brace"
    )
    out = {}
    for gap in gaps:
        for n in rounds:
            for mp in min_pairs:
                c = cell(rng, n, gap, campaigns, mp)
                out[(gap, n, mp)] = c
                print(
                    f"  {gap:4.2f} {n:6d} {mp:9d} | {_pct(c.cover_ranked):>15} {_pct(c.cover_weak)}"
                    f" ({_pct(c.weak_published)}) | {_pct(c.power):>15} {_pct(c.all_gaps):>9}"
                    f" {_pct(c.aa_different)} {_pct(c.false_order)} | {_pct(c.precise):>12} |"
                    f" {_pct(c.full_order):>26} {_pct(c.one_brace):>10}",
                    flush=True,
                )
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--campaigns", type=int, default=120)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--rounds", type=int, nargs="+", default=list(ROUNDS))
    ap.add_argument("--gap", type=float, nargs="+", default=list(GAPS))
    a = ap.parse_args()
    table(a.campaigns, a.seed, tuple(a.rounds), tuple(a.gap))
