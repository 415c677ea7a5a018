"""ranking.csv (podnet.stats.ranking): orders only from Holm-significant paired ratios, equivalence
within a margin, tie groups and letters when relations are not transitive, missing pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.stats import ranking as R
from tests.stats_tables import one, rows, tidy

STATS = {
    "comparisons": [{"by": "variant", "baseline": "a"}],
    "ranking": {"measures": ["iperf3:tcp:throughput"]},
}


def _round_effect(n: int, seed: int = 1) -> np.ndarray:
    """A machine-load factor common to every variant of a round (cancels in the pairs)."""
    return np.exp(np.random.default_rng(seed).normal(0.0, 0.3, n))


def campaign(centres: dict[str, float], n: int = 10, sd: float = 0.01, seed: int = 2, **over) -> pd.DataFrame:
    """Every variant side by side in ``n`` rounds of one launch: value = centre x round x noise."""
    rng = np.random.default_rng(seed)
    common = _round_effect(n, seed)
    parts = []
    for v, c in centres.items():
        vals = c * common * np.exp(rng.normal(0.0, sd, n))
        parts.append(rows(vals, variant=v, launch_id="L1", **over))
    return tidy(*parts)


def pairs(t: pd.DataFrame) -> pd.DataFrame:
    return t[t["row"] == "pair"]


def variants(t: pd.DataFrame) -> pd.DataFrame:
    return t[t["row"] == "variant"].sort_values("position")


def test_clear_order_higher_is_better():
    t = R.ranking_table(campaign({"a": 10e9, "b": 8e9, "c": 6e9}), STATS)
    assert list(t.columns) == R.COLUMNS
    v = variants(t)
    assert list(v["variant"]) == ["a", "b", "c"]
    assert list(v["group"]) == [1, 2, 3] and list(v["letters"]) == ["a", "b", "c"]
    assert set(pairs(t)["relation"]) == {"ordered"}
    assert v["order"].iloc[0] == "a > b > c"
    ac = one(pairs(t), variant="a", other="c")  # the non-adjacent pair has its own paired ratio
    assert ac["ratio"] == pytest.approx(10 / 6, rel=0.02) and ac["n_pairs"] == 10
    # each variant over the reference (stats.comparisons by: variant), with the paired interval
    c = one(v, variant="c")
    assert c["other"] == "a" and c["ci_low"] < c["ratio"] < c["ci_high"]
    assert c["ratio"] == pytest.approx(0.6, rel=0.02)


def test_lower_is_better_for_latency():
    t = R.ranking_table(
        campaign(
            {"a": 60e-6, "b": 80e-6},
            tool="netperf",
            test="TCP_RR",
            metric="latency_p50",
            unit="s",
            direction="roundtrip",
        ),
        {"ranking": {"measures": ["netperf:TCP_RR:latency_p50"]}},
    )
    v = variants(t)
    assert list(v["variant"]) == ["a", "b"] and set(v["better"]) == {"lower"}
    p = one(pairs(t), variant="a", other="b")
    assert p["relation"] == "ordered" and p["ratio"] == pytest.approx(0.75, rel=0.02)


def test_cpu_cost_is_lower_is_better():
    t = R.ranking_table(
        campaign({"a": 2e-10, "b": 1e-10}, metric="machine_cpu_per_bit", unit="s/bit"),
        {"ranking": {"measures": ["iperf3:tcp:machine_cpu_per_bit"]}},
    )
    assert list(variants(t)["variant"]) == ["b", "a"]


def test_equivalent_within_margin_and_inconclusive_outside():
    t = R.ranking_table(campaign({"a": 10e9, "b": 10e9}, n=20, sd=0.01), STATS)
    p = pairs(t).iloc[0]
    assert p["relation"] == "equivalent" and bool(p["within_margin"])
    assert list(variants(t)["group"]) == [1, 1]
    assert variants(t)["order"].iloc[0].startswith("{")
    # noisy and few rounds: neither ordered nor inside ±5 %
    t = R.ranking_table(campaign({"a": 10e9, "b": 10.5e9}, n=3, sd=0.1), STATS)
    assert pairs(t).iloc[0]["relation"] == "inconclusive"
    # a tiny margin: the same runs are inconclusive, not equivalent
    tight = {**STATS, "ranking": {**STATS["ranking"], "equivalence_margin": 0.001}}
    t = R.ranking_table(campaign({"a": 10e9, "b": 10e9}, n=20, sd=0.01), tight)
    assert pairs(t).iloc[0]["relation"] == "inconclusive"
    # a real difference smaller than the margin is an order (and says it is within the margin)
    t = R.ranking_table(campaign({"a": 10e9, "b": 10.1e9}, n=20, sd=0.002), STATS)
    p = pairs(t).iloc[0]
    assert p["relation"] == "ordered" and bool(p["within_margin"]) and p["variant"] == "b"


def test_within_margin_read_either_way_and_never_zero_width():
    assert R.within_margin(0.96, 1.04, 0.05)
    assert not R.within_margin(0.95, 1.01, 0.05)  # 1/0.95 = 1.0526 > 1.05
    assert not R.within_margin(1.0, 1.0, 0.05)
    assert not R.within_margin(np.nan, 1.0, 0.05)


def test_non_transitive_relations_letters_and_one_block():
    # a > c ordered, a ~ b and b ~ c not: b sits between them with a spread of its own
    n = 12
    common = _round_effect(n, 5)
    wobble = np.exp(0.3 * np.array([1, -1] * (n // 2)))
    t = tidy(
        rows(10e9 * common, variant="a", launch_id="L1"),
        rows(9e9 * common * wobble, variant="b", launch_id="L1"),
        rows(8e9 * common * np.exp(0.01 * np.array([1, -1] * (n // 2))), variant="c", launch_id="L1"),
    )
    out = R.ranking_table(t, STATS)
    rel = {(r.variant, r.other): r.relation for r in pairs(out).itertuples()}
    assert rel[("a", "c")] == "ordered"
    assert rel.get(("a", "b"), rel.get(("b", "a"))) == "inconclusive"
    assert rel.get(("b", "c"), rel.get(("c", "b"))) == "inconclusive"
    v = variants(out).set_index("variant")
    assert set(v["group"]) == {1}  # no boundary: not every pair across one is ordered
    assert v.loc["a", "letters"] == "a" and v.loc["c", "letters"] == "b" and v.loc["b", "letters"] == "ab"
    assert (v.loc["a", "rank_best"], v.loc["a", "rank_worst"]) == (1, 2)
    assert (v.loc["c", "rank_best"], v.loc["c", "rank_worst"]) == (2, 3)


def test_tie_groups_and_letters_directly():
    order = ["a", "b", "c", "d"]
    ordered = {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")}
    assert R.tie_groups(order, ordered) == [1, 1, 2, 3]
    assert R.letters(order, ordered) == ["a", "a", "b", "c"]
    assert R.order_text(order, [1, 1, 2, 3]) == "{a, b} > c > d"
    # a and b tie, c sits apart from a only: a | c ordered, b ~ c
    assert R.letters(["a", "b", "c"], {("a", "c")}) == ["a", "ab", "b"]
    assert R.tie_groups(["a", "b", "c"], {("a", "c")}) == [1, 1, 1]


def _twelve_paths() -> list[pd.DataFrame]:
    """12 paths of two variants, 6 rounds each: on p0 a is 4 % above b at p = 0.0103, elsewhere
    a and b are equal (p = 1)."""
    n = 6
    wob = 0.04 * np.sqrt(5) / 4.0 * np.array([1, -1] * 3)  # t = 4 on 5 df: p = 0.0103
    parts = []
    for k in range(12):
        common = _round_effect(n, 100 + k)
        shift = 0.04 if k == 0 else 0.0
        parts.append(rows(1e9 * common * np.exp(shift + wob), variant="a", scenario=f"p{k}", launch_id="L1"))
        parts.append(rows(1e9 * common, variant="b", scenario=f"p{k}", launch_id="L1"))
    return parts


def _family(family: str) -> dict:
    return {**STATS, "ranking": {**STATS["ranking"], "family": family}}


def test_holm_over_every_pair_of_the_table_with_family_campaign():
    # one pair at p = 0.01 alone is ordered; among 12 paths' pairs (the others at p = 1) Holm
    # multiplies it by 12 and it is not
    parts = _twelve_paths()
    t = R.ranking_table(tidy(*parts), _family("campaign"))
    p0 = pairs(t)[pairs(t)["scenario"] == "p0"].iloc[0]
    assert p0["p_value"] == pytest.approx(0.0103, abs=2e-4)
    assert p0["p_holm"] == pytest.approx(12 * p0["p_value"], rel=1e-6) and p0["relation"] != "ordered"
    assert set(pairs(t)["holm_family"]) == {12}
    assert "Holm over all 12" in R.summary(t)
    alone = R.ranking_table(tidy(*parts[:2]), _family("campaign"))
    assert pairs(alone).iloc[0]["relation"] == "ordered"


def test_holm_within_each_ranking_by_default():
    # the same table: each path x measure is its own family (here 1 pair), so p0's pair is ordered
    # where campaign-wide Holm over 12 is not
    t = R.ranking_table(tidy(*_twelve_paths()), STATS)
    assert R.settings_of(STATS).family == "ranking"
    p0 = pairs(t)[pairs(t)["scenario"] == "p0"].iloc[0]
    assert p0["p_holm"] == pytest.approx(p0["p_value"], rel=1e-9) and p0["relation"] == "ordered"
    assert set(pairs(t)["holm_family"]) == {1}
    assert pairs(t)["relation"].value_counts()["ordered"] == 1  # the equal paths stay unordered
    assert variants(t)["holm_family"].isna().all()  # variant rows belong to no family
    assert "Holm within each ranking (families of 1 pair)" in R.summary(t)


def test_holm_family_sizes_per_ranking():
    # three variants on one path (3 pairs), two on another (1 pair); a pair without a common round
    # is not tested and is in no family
    t = pd.concat(
        [
            campaign({"a": 10e9, "b": 8e9, "c": 6e9}, scenario="x"),
            campaign({"a": 10e9, "b": 8e9}, scenario="y", seed=5),
            tidy(rows([7e9, 7.1e9, 6.9e9], variant="d", scenario="y", launch_id="L9")),
        ],
        ignore_index=True,
    )
    out = R.ranking_table(t, STATS)
    p = pairs(out)
    assert set(p[p["scenario"] == "x"]["holm_family"]) == {3}
    y = p[p["scenario"] == "y"]
    tested = y[y["n_pairs"] >= 2]
    assert set(tested["holm_family"]) == {1} and y[y["n_pairs"] < 2]["holm_family"].isna().all()
    assert "families of 1-3 pairs" in R.summary(out)
    whole = R.ranking_table(t, _family("campaign"))
    assert set(pairs(whole).dropna(subset=["holm_family"])["holm_family"]) == {4}


def test_unknown_family():
    with pytest.raises(ValueError):
        R.ranking_table(tidy(*_twelve_paths()[:2]), _family("everything"))


def test_a_and_a_never_ordered():
    t = R.ranking_table(campaign({"a": 1e9, "a2": 1e9}, n=30, sd=0.03, seed=9), STATS)
    assert pairs(t).iloc[0]["relation"] in ("equivalent", "inconclusive")


def test_missing_pairs():
    # c ran in other launches: no common round with a or b; b shares only one round with a
    t = campaign({"a": 10e9, "b": 8e9}, n=6)
    t.loc[(t["variant"] == "b") & (t["repeat"] > 1), "launch_id"] = "L2"
    t = pd.concat([t, tidy(rows([7e9, 7.1e9, 6.9e9], variant="c", launch_id="L3"))], ignore_index=True)
    out = R.ranking_table(t, STATS)
    p = pairs(out)
    ab = p[(p["variant"].isin(["a", "b"])) & (p["other"].isin(["a", "b"]))].iloc[0]
    assert ab["relation"] == "too few pairs" and ab["n_pairs"] == 1 and "1 common round" in ab["reason"]
    assert np.isnan(ab["p_holm"])
    c = p[(p["variant"] == "c") | (p["other"] == "c")]
    assert set(c["relation"]) == {"too few pairs"} and set(c["n_pairs"]) == {0}
    v = variants(out)
    # c shares no round with the others while they share one: set apart, placed last, in no group
    c_row = v[v["variant"] == "c"].iloc[0]
    assert (
        v["variant"].iloc[-1] == "c" and pd.isna(c_row["group"]) and "not ranked: 0 rounds" in c_row["reason"]
    )
    assert set(v[v["variant"] != "c"]["group"]) == {1} and v["order"].iloc[0].endswith(
        "; not ranked: c (0 rounds)"
    )


def test_a_variant_with_few_rounds_is_set_apart_and_cannot_merge_the_others_groups():
    # a > b > c, clearly apart in 10 rounds; d ran in 3 of them only, between b and c
    t = campaign({"a": 10e9, "b": 8e9, "c": 6e9, "d": 7e9}, n=10)
    t = t[(t["variant"] != "d") | (t["repeat"] <= 3)]
    out = R.ranking_table(t, STATS)
    v = variants(out)
    assert list(v["variant"]) == ["a", "b", "c", "d"] and list(v["group"])[:3] == [1, 2, 3]
    assert v["order"].iloc[0] == "a > b > c; not ranked: d (3 rounds)"
    d = v[v["variant"] == "d"].iloc[0]
    assert pd.isna(d["group"]) and (pd.isna(d["letters"]) or d["letters"] == "")
    p = pairs(out)
    dp = p[(p["variant"] == "d") | (p["other"] == "d")]
    assert set(dp["relation"]) == {"too few pairs"} and dp["p_holm"].isna().all()
    assert set(p[(p["variant"] != "d") & (p["other"] != "d")]["holm_family"]) == {3}  # d's pairs left out
    # every variant with as few rounds: ranked as usual (the relations say inconclusive)
    few = R.ranking_table(campaign({"a": 10e9, "b": 8e9}, n=3), STATS)
    assert variants(few)["group"].notna().all()


def test_pairs_by_round_seq_when_present():
    # repeats are numbered per variant and a retried run of b ran in round 3: by repeat it would
    # pair with a's round 2 run; round_seq pairs it with its own time
    t = campaign({"a": 10e9, "b": 8e9}, n=4)
    t["round_seq"] = pd.array(list(t["repeat"] - 1), dtype="Int64")
    assert R.round_key(t[t["variant"] == "a"], t[t["variant"] == "b"]) == "round_seq"
    t.loc[(t["variant"] == "b") & (t["repeat"] == 4), "round_seq"] = pd.NA
    assert R.round_key(t[t["variant"] == "a"], t[t["variant"] == "b"]) == "repeat"


def test_no_ranking_without_config_or_second_variant():
    t = campaign({"a": 1e9, "b": 2e9})
    none = R.ranking_table(t, {})
    assert list(none["row"]) == ["none"] and "not configured" in none["reason"].iloc[0]
    assert R.settings_of({"ranking": {"equivalence_margin": 0.1}}) is None  # no measures: no ranking
    # report.vs_seed's measures stand in when stats.ranking names none
    assert R.settings_of({}, ["iperf3:tcp:throughput"]).measures == (
        R.Measure("iperf3", "tcp", "throughput"),
    )
    assert len(R.ranking_table(t, {}, ["iperf3:tcp:throughput"])) == 3
    solo = R.ranking_table(campaign({"a": 1e9}), STATS)
    assert list(solo["row"]) == ["none"] and "fewer than two variants" in solo["reason"].iloc[0]


def test_scenarios_filter_and_reference_rows_ignored():
    t = pd.concat(
        [campaign({"a": 1e9, "b": 2e9}), campaign({"a": 1e9, "b": 2e9}, scenario="host-host")],
        ignore_index=True,
    )
    ref = tidy(rows([5e9], variant="a", source="reference", launch_id="L1"))
    s = {**STATS, "ranking": {**STATS["ranking"], "scenarios": ["host-host"]}}
    out = R.ranking_table(pd.concat([t, ref], ignore_index=True), s)
    assert set(out["scenario"]) == {"host-host"}
    assert list(variants(out)["variant"]) == ["b", "a"]


def test_bad_margin():
    with pytest.raises(ValueError):
        R.settings_of({"ranking": {"equivalence_margin": 0}})
