"""The seed's published table beside ours: one tidy row per (seed CNI / our variant, path, measure).

Every number comes from the seed's reference tables (:func:`podnet.report.vs_seed.mapping.published`)
and from the tables the stats stage wrote (``summary.csv``: our value and its interval;
``ratios.csv``: our ratio to the baseline path with the interval the findings state,
:func:`podnet.stats.precision.as_judged`). Nothing is estimated here: values are only looked up,
divided by the seed's own baseline (the seed publishes no interval) and ranked.

Ranks are computed among the CNIs both sources have (``rank_seed``, ``rank_ours``: 1 = best, by
each metric's better direction from :func:`podnet.tools.metric_info`), on the ratio to the baseline
path (each variant's own host-host, which takes out launch-to-launch drift; on the baseline path
itself, on the value). ``rank_ours_all`` ranks every variant of ours. Whether two of our CNIs are
ordered at all is read conservatively: their ratio intervals must not overlap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.stats.precision import as_judged
from podnet.tools import metric_info

from .mapping import Measure, SeedMapping

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
    "rank_ours",
    "rank_ours_all",
    "n_ranked",
    "rank_agrees",
    "ranking",
]

#: row statuses: both sources have it; the seed CNI's counterpart was not run (or has no value)
#: here; the seed CNI or path has no counterpart here; a variant of ours the seed does not have
STATUSES = ("both", "not run here", "no counterpart", "no counterpart path", "not in seed")

#: a (path, measure) group's verdict on the ranking (see :func:`_verdict`)
VERDICTS = ("agrees", "same order, not resolved", "differs, not resolved", "disagrees", "nothing to rank")

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
    mapping: SeedMapping, published: pd.DataFrame, summary: pd.DataFrame, ratios: pd.DataFrame
) -> pd.DataFrame:
    """The tidy comparison (:data:`COLUMNS`): per seed path and measure, each seed CNI's published
    value and ratio to the seed's own baseline path beside our counterpart's value and ratio to our
    baseline with their intervals, the ranks in each source and whether the rankings agree.

    ``published`` is :func:`~podnet.report.vs_seed.mapping.published`; ``summary`` and ``ratios``
    are the stats stage's ``summary.csv`` and ``ratios.csv``. Our variants the seed does not have
    get rows of their own (status ``not in seed``) so our full ranking is visible.
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
    out = _rank(out, mapping)
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


def _rank(out: pd.DataFrame, m: SeedMapping) -> pd.DataFrame:
    """Ranks within each (path, scenario, measure) group and the group's verdict."""
    out = out.copy()
    for c in ("rank_seed", "rank_ours", "rank_ours_all", "n_ranked"):
        out[c] = np.nan
    out["rank_agrees"] = pd.array([pd.NA] * len(out), dtype="boolean")
    out["ranking"] = ""
    group = ["path", "scenario", "seed_tool", "seed_test", "seed_metric", "tool", "test", "metric"]
    for _, g in out.groupby(group, sort=False, dropna=False):
        if not g["scenario"].iloc[0]:
            out.loc[g.index, "ranking"] = "nothing to rank"
            continue
        on_value = g["path"].iloc[0] == m.seed_baseline
        seed_key = g["seed_value"] if on_value else g["seed_ratio"]
        our_key = g["value"] if on_value else g["ratio"]
        sign = -1.0 if str(g["better"].iloc[0]) == "lower" else 1.0
        mine = g["status"].isin(["both", "not in seed"]) & np.isfinite(our_key.astype(float))
        out.loc[g[mine].index, "rank_ours_all"] = (-sign * our_key[mine]).rank(method="min")
        common = (
            (g["status"] == "both") & np.isfinite(seed_key.astype(float)) & np.isfinite(our_key.astype(float))
        )
        idx = g[common].index
        out.loc[idx, "rank_seed"] = (-sign * seed_key[common]).rank(method="min")
        out.loc[idx, "rank_ours"] = (-sign * our_key[common]).rank(method="min")
        out.loc[g.index, "n_ranked"] = len(idx)
        if len(idx) >= 2:
            out.loc[idx, "rank_agrees"] = out.loc[idx, "rank_seed"] == out.loc[idx, "rank_ours"]
        out.loc[g.index, "ranking"] = _verdict(pairs(out.loc[idx], on_value))
    return out


def pairs(g: pd.DataFrame, on_value: bool = False) -> pd.DataFrame:
    """Every pair of CNIs both sources have in one group of :func:`vs_seed_table`, the seed's better
    one as ``a``: the seed's order (``seed``: ``>`` a is better, ``=`` tie), ours (``>``, ``<``), and whether ours is resolved
    (the two intervals do not overlap), with ``status`` agrees / disagrees / same order, not
    resolved / differs, not resolved / seed tie."""
    sign = -1.0 if len(g) and str(g["better"].iloc[0]) == "lower" else 1.0
    key, lo, hi = ("value", "ci_low", "ci_high") if on_value else ("ratio", "ratio_ci_low", "ratio_ci_high")
    seed_key = "seed_value" if on_value else "seed_ratio"
    recs = []
    rows = list(g.itertuples(index=False))
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if sign * (getattr(a, seed_key) - getattr(b, seed_key)) < 0:
                a, b = b, a  # the seed's better CNI first: its order always reads "a > b"
            ds = sign * (getattr(a, seed_key) - getattr(b, seed_key))
            do = sign * (getattr(a, key) - getattr(b, key))
            al, ah, bl, bh = (float(getattr(x, y)) for x in (a, b) for y in (lo, hi))
            overlap = not (np.isfinite([al, ah, bl, bh]).all()) or not (ah < bl or bh < al)
            same = np.sign(ds) == np.sign(do)
            if ds == 0:
                status = "seed tie"
            elif same:
                status = "same order, not resolved" if overlap else "agrees"
            else:
                status = "differs, not resolved" if overlap else "disagrees"
            recs.append(
                {
                    "a": a.variant,
                    "b": b.variant,
                    "seed_a": a.seed_cni,
                    "seed_b": b.seed_cni,
                    "seed": ">" if ds > 0 else "<" if ds < 0 else "=",
                    "ours": ">" if do > 0 else "<" if do < 0 else "=",
                    "resolved": not overlap,
                    "status": status,
                }
            )
    return pd.DataFrame(recs, columns=["a", "b", "seed_a", "seed_b", "seed", "ours", "resolved", "status"])


def _verdict(p: pd.DataFrame) -> str:
    """A group's verdict from its pairs: ``disagrees`` when any resolved pair is in the other order,
    ``agrees`` when every pair is resolved in the seed's order, ``same order, not resolved`` when
    the order is the seed's but some pair is not resolved, ``differs, not resolved`` when some pair
    is in the other order without being resolved; ``nothing to rank`` with fewer than two CNIs."""
    p = p[p["status"] != "seed tie"] if len(p) else p
    if p.empty:
        return "nothing to rank"
    st = set(p["status"])
    if "disagrees" in st:
        return "disagrees"
    if st == {"agrees"}:
        return "agrees"
    if "differs, not resolved" in st:
        return "differs, not resolved"
    return "same order, not resolved"
