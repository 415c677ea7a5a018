"""The seed's published table beside ours: one tidy row per (seed CNI / our variant, path, measure).

Every number comes from the seed's reference tables (:func:`podnet.report.vs_seed.mapping.published`)
and from the tables the stats stage wrote (``summary.csv``: our value and its interval;
``ratios.csv``: our ratio to the baseline path with the interval the findings state,
:func:`podnet.stats.precision.as_judged`). Nothing is estimated here: values are only looked up,
divided by the seed's own baseline (the seed publishes no interval) and ranked.

``rank_seed`` ranks the CNIs both sources have by the seed's numbers (1 = best, by each metric's
better direction from :func:`podnet.tools.metric_info`). Our order is not re-derived here: it is
the campaign's ``ranking.csv`` (:mod:`podnet.stats.ranking`: paired ratios of the same rounds, Holm
within each ranking or over every pair as ``stats.ranking.family`` says), whose tie group, letters
and order text each row carries; every order the seed states between two CNIs is judged by it in
:mod:`.orders`, and a group's ``ranking`` verdict is :func:`.orders.verdict` of its orders.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.stats.precision import as_judged
from podnet.tools import metric_info

from .mapping import Measure, SeedMapping
from .orders import orders_table, verdict

#: the columns of :func:`vs_seed_table`, in order
COLUMNS = [
    "seed",
    "path",
    "scenario",
    "seed_cni",
    "variant",
    "status",
    "seed_tool",
    "seed_test",
    "seed_metric",
    "tool",
    "test",
    "metric",
    "unit",
    "better",
    "seed_value",
    "seed_baseline",
    "seed_ratio",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "interval",
    "rank_seed",
    "group_ours",  # our tie group in ranking.csv (1 = best)
    "letters_ours",  # our letters in ranking.csv (sharing one: not ordered)
    "order_ours",  # ranking.csv's order of every variant of ours on this path and measure
    "n_ranked",
    "ranking",  # the group's verdict (orders.verdict)
    "note",  # where the seed's set-up changes the physics (report.vs_seed.notes)
]

#: row statuses: both sources have it; the seed CNI's counterpart was not run (or has no value)
#: here; the seed CNI or path has no counterpart here; a variant of ours the seed does not have
STATUSES = ("both", "not run here", "no counterpart", "no counterpart path", "not in seed")

#: a (path, measure) group's verdict on the ranking (see :func:`.orders.verdict`)
VERDICTS = (
    "agrees",
    "agrees where ordered",
    "inconclusive here",
    "mixed",
    "contradicts",
    "gap not reproduced",
    "seed ties only",
    "nothing to rank",
)

_KEY = ["tool", "test", "metric"]


def _ours(summary: pd.DataFrame) -> pd.DataFrame:
    s = summary
    if "source" in s.columns:
        s = s[s["source"].astype(str) == "measured"]
    return s


def _lookup(df: pd.DataFrame, **match: str) -> pd.Series | None:
    """The one row of ``df`` matching ``match`` (None if none); ValueError if several."""
    if df.empty:
        return None
    m = np.ones(len(df), dtype=bool)
    for k, v in match.items():
        m &= df[k].astype(str).to_numpy() == str(v)
    hit = df[m]
    if len(hit) > 1:
        raise ValueError(
            f"{len(hit)} rows match {match} (several directions/protocols/streams of one test): "
            "name a test that has one"
        )
    return None if hit.empty else hit.iloc[0]


def _scenario_ratios(ratios: pd.DataFrame, baseline: str) -> pd.DataFrame:
    if ratios.empty or "by" not in ratios.columns:
        return pd.DataFrame(columns=["variant", "treatment", *_KEY, "ratio", "ci_low", "ci_high", "interval"])
    r = ratios[(ratios["by"].astype(str) == "scenario") & (ratios["baseline"].astype(str) == baseline)]
    return as_judged(r.reset_index(drop=True))


def _row(m: SeedMapping, path: str, scenario: str, seed_measure: Measure, ours: Measure) -> dict:
    info = metric_info(ours.metric, ours.tool)
    return {
        "seed": m.seed,
        "path": path,
        "scenario": scenario,
        "seed_tool": seed_measure.tool,
        "seed_test": seed_measure.test,
        "seed_metric": seed_measure.metric,
        "tool": ours.tool,
        "test": ours.test,
        "metric": ours.metric,
        "better": info.better,
    }


def vs_seed_table(
    mapping: SeedMapping,
    published: pd.DataFrame,
    summary: pd.DataFrame,
    ratios: pd.DataFrame,
    ranking: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The tidy comparison (:data:`COLUMNS`): per seed path and measure, each seed CNI's published
    value and ratio to the seed's own baseline path beside our counterpart's value and ratio to our
    baseline with their intervals, the ranks in each source and whether the rankings agree.

    ``published`` is :func:`~podnet.report.vs_seed.mapping.published`; ``summary`` and ``ratios``
    are the stats stage's ``summary.csv`` and ``ratios.csv``, ``ranking`` its ``ranking.csv`` (our
    order; without it every order is ``inconclusive here``). Our variants the seed does not have get
    rows of their own (status ``not in seed``) so our full ranking is visible.
    """
    ours = _ours(summary)
    rat = _scenario_ratios(ratios, mapping.baseline)
    pub = published
    our_variants = sorted(set(ours["variant"].astype(str))) if len(ours) else []
    rows: list[dict] = []
    # the seed's own order of paths (its tables'), then any the mapping adds
    order = list(dict.fromkeys([*pub["path"], *mapping.scenarios]))
    for path in (p for p in order if p in mapping.scenarios):
        scenarios = mapping.scenarios[path]
        for sm, our_measures in mapping.measures.items():
            seed_rows = pub[
                (pub["path"] == path)
                & (pub["seed_tool"] == sm.tool)
                & (pub["seed_test"] == sm.test)
                & (pub["seed_metric"] == sm.metric)
            ]
            if seed_rows.empty:
                continue  # the seed did not publish this measure on this path
            base_rows = pub[
                (pub["path"] == mapping.seed_baseline)
                & (pub["seed_tool"] == sm.tool)
                & (pub["seed_test"] == sm.test)
                & (pub["seed_metric"] == sm.metric)
            ]
            seed_base = dict(zip(base_rows["seed_cni"], base_rows["seed_value"]))
            for om in our_measures:
                if not scenarios:  # the seed's path has no counterpart here: its figures alone
                    for _, s in seed_rows.iterrows():
                        rows.append(
                            {
                                **_row(mapping, path, "", sm, om),
                                "seed_cni": s["seed_cni"],
                                "variant": mapping.variant_of(s["seed_cni"]) or "",
                                "status": "no counterpart path",
                                "seed_value": s["seed_value"],
                                "seed_baseline": seed_base.get(s["seed_cni"], np.nan),
                            }
                        )
                    continue
                for scen in scenarios:
                    seen: set[str] = set()
                    for _, s in seed_rows.iterrows():
                        v = mapping.variant_of(s["seed_cni"])
                        row = {
                            **_row(mapping, path, scen, sm, om),
                            "seed_cni": s["seed_cni"],
                            "variant": v or "",
                            "seed_value": s["seed_value"],
                            "seed_baseline": seed_base.get(s["seed_cni"], np.nan),
                        }
                        if v is None:
                            row["status"] = "no counterpart"
                        else:
                            seen.add(v)
                            row.update(_our_numbers(ours, rat, v, scen, om, mapping.baseline))
                        rows.append(row)
                    for v in our_variants:
                        if v in seen or mapping.seed_cni_of(v) is not None:
                            continue
                        row = {**_row(mapping, path, scen, sm, om), "seed_cni": "", "variant": v}
                        row.update(_our_numbers(ours, rat, v, scen, om, mapping.baseline))
                        if row["status"] == "both":  # neither source has it otherwise: no row
                            rows.append({**row, "status": "not in seed"})
    out = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in out.columns:
            out[c] = np.nan
    if out.empty:
        return out[COLUMNS]
    out["seed_ratio"] = out["seed_value"] / out["seed_baseline"]
    out = _rank(out, mapping, ranking if ranking is not None else pd.DataFrame())
    return out[COLUMNS].reset_index(drop=True)


def _our_numbers(
    ours: pd.DataFrame, rat: pd.DataFrame, variant: str, scenario: str, m: Measure, baseline: str
) -> dict:
    """Our value with its interval and our ratio to ``baseline`` with the judged interval."""
    s = _lookup(ours, variant=variant, scenario=scenario, tool=m.tool, test=m.test, metric=m.metric)
    if s is None or not np.isfinite(float(s.get("centre", s.get("mean", np.nan)))):
        return {"status": "not run here"}
    out = {
        "status": "both",
        "unit": s.get("unit", ""),
        "value": float(s.get("centre", s.get("mean"))),
        "ci_low": float(s.get("ci_low", np.nan)),
        "ci_high": float(s.get("ci_high", np.nan)),
        "n": int(s["n"]) if "n" in s and np.isfinite(float(s["n"])) else np.nan,
    }
    if scenario == baseline:
        out.update(ratio=1.0, ratio_ci_low=np.nan, ratio_ci_high=np.nan, interval="baseline")
        return out
    r = _lookup(rat, variant=variant, treatment=scenario, tool=m.tool, test=m.test, metric=m.metric)
    if r is not None:
        out.update(
            ratio=float(r["ratio"]),
            ratio_ci_low=float(r["ci_low"]),
            ratio_ci_high=float(r["ci_high"]),
            interval=str(r.get("interval", "") or "unpaired"),
        )
    return out


def _rank(out: pd.DataFrame, m: SeedMapping, ranking: pd.DataFrame) -> pd.DataFrame:
    """The seed's ranks, our tie groups and letters from ranking.csv, each group's verdict and note."""
    out = out.copy()
    for c in ("rank_seed", "group_ours", "n_ranked"):
        out[c] = np.nan
    for c in ("letters_ours", "order_ours", "ranking", "note"):
        out[c] = ""
    group = ["path", "scenario", "seed_tool", "seed_test", "seed_metric", "tool", "test", "metric"]
    orders = orders_table(out, ranking, m)
    ours = _ranking_variants(ranking)
    for key, g in out.groupby(group, sort=False, dropna=False):
        r0 = g.iloc[0]
        out.loc[g.index, "note"] = m.note_for(
            str(r0["path"]), f"{r0['seed_tool']}:{r0['seed_test']}:{r0['seed_metric']}"
        )
        if not r0["scenario"]:
            out.loc[g.index, "ranking"] = "nothing to rank"
            continue
        # the seed's published values, as its orders (.orders) read them: one key for ranks and orders
        seed_key = g["seed_value"]
        sign = -1.0 if str(r0["better"]) == "lower" else 1.0
        common = (g["status"] == "both") & np.isfinite(seed_key.astype(float))
        out.loc[g[common].index, "rank_seed"] = (-sign * seed_key[common]).rank(method="min")
        out.loc[g.index, "n_ranked"] = int(common.sum())
        mine = ours.get((str(r0["scenario"]), str(r0["tool"]), str(r0["test"]), str(r0["metric"])))
        if mine is not None:
            for i, r in g.iterrows():
                if r["variant"] in mine.index and r["status"] in ("both", "not in seed"):
                    grp = pd.to_numeric(pd.Series([mine.loc[r["variant"], "group"]]), errors="coerce").iloc[0]
                    out.loc[i, "group_ours"] = float(grp)  # NaN: set apart, not ranked (few rounds)
                    let = mine.loc[r["variant"], "letters"]
                    out.loc[i, "letters_ours"] = "" if pd.isna(let) else str(let)
            out.loc[g.index, "order_ours"] = str(mine["order"].iloc[0])
        o = orders
        for c, v in zip(group, key):
            o = o[o[c].astype(str) == str(v)] if len(o) else o
        out.loc[g.index, "ranking"] = verdict(o["status"]) if int(common.sum()) >= 2 else "nothing to rank"
    return out


def _ranking_variants(ranking: pd.DataFrame) -> dict[tuple[str, str, str, str], pd.DataFrame]:
    """ranking.csv's variant rows per (scenario, tool, test, metric), indexed by variant."""
    if ranking is None or ranking.empty or "row" not in ranking.columns:
        return {}
    v = ranking[ranking["row"].astype(str) == "variant"]
    return {
        tuple(str(x) for x in k): g.set_index(g["variant"].astype(str))
        for k, g in v.groupby(["scenario", "tool", "test", "metric"], sort=False)
    }
