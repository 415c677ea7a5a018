"""ranking.csv that one weak variant cannot spoil (issue 44): set-apart variants, the order string
read off the letters, and the two words on pair rows (podnet.stats.ranking, podnet.stats.letters)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.stats import letters as L
from podnet.stats import ranking as R
from tests.stats_tables import rows, tidy

STATS = {
    "comparisons": [{"by": "variant", "baseline": "a"}],
    "ranking": {"measures": ["iperf3:tcp:throughput"]},
}


def campaign(centres: dict[str, float], n: int = 12, sd: float = 0.01, seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    common = np.exp(rng.normal(0.0, 0.3, n))
    return tidy(
        *[
            rows(c * common * np.exp(rng.normal(0.0, sd, n)), variant=v, launch_id="L1")
            for v, c in centres.items()
        ]
    )


def _split(t: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return t[t["row"] == "variant"].sort_values("position"), t[t["row"] == "pair"]


def test_groups_and_order_string_are_read_off_the_letters():
    order = ["a", "b", "c", "d"]
    ordered = {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")}
    lets = L.letters(order, ordered)
    assert lets == ["a", "a", "b", "c"]
    groups = L.groups_from_letters(order, lets, ordered)
    assert groups == L.tie_groups(order, ordered) == [1, 1, 2, 3]
    assert L.order_text(order, groups, lets) == "{a, b} > c > d"
    # not transitive: a > c ordered, b against neither: one block, and the string says the letters
    lets = L.letters(["a", "b", "c"], {("a", "c")})
    groups = L.groups_from_letters(["a", "b", "c"], lets, {("a", "c")})
    assert lets == ["a", "ab", "b"] and groups == [1, 1, 1]
    assert L.order_text(["a", "b", "c"], groups, lets) == "{a (a), b (ab), c (b)}"
    # a pair ordered against the point estimates' order never draws a boundary
    assert L.groups_from_letters(["a", "b"], ["a", "b"], {("b", "a")}) == [1, 1]
    assert L.tokens("a[27]b") == {"a", "[27]", "b"}


def test_the_table_order_string_agrees_with_its_letters_and_groups():
    t = R.ranking_table(campaign({"a": 10e9, "b": 8e9, "c": 6e9}), STATS)
    v, p = _split(t)
    assert v["order"].iloc[0] == "a > b > c" and list(v["letters"]) == ["a", "b", "c"]
    assert list(v["group"]) == L.groups_from_letters(list(v["variant"]), list(v["letters"]))
    # ordered pairs are exactly the different ones; each a precise interval on 12 pairs
    assert (p["different"].astype(bool) == (p["relation"] == "ordered")).all()
    assert p["different"].astype(bool).all() and p["precise"].astype(bool).all()
    assert v["different"].isna().all() and v["precise"].isna().all()  # asked of pairs only


def test_a_weak_variant_is_set_apart_from_groups_letters_and_holm():
    # a > b > c in 12 rounds; d ran in 3 of them only: not ranked, its pairs in no family
    t = campaign({"a": 10e9, "b": 8e9, "c": 6e9, "d": 7e9})
    t = t[(t["variant"] != "d") | (t["repeat"] <= 3)]
    out = R.ranking_table(t, STATS)
    v, p = _split(out)
    assert v["order"].iloc[0] == "a > b > c; not ranked: d (3 rounds)"
    d = v[v["variant"] == "d"].iloc[0]
    assert "not ranked: 3 rounds" in d["reason"] and pd.isna(d["group"])
    dp = p[(p["variant"] == "d") | (p["other"] == "d")]
    assert dp["p_holm"].isna().all() and dp["holm_family"].isna().all()
    assert not dp["different"].astype(bool).any() and not dp["precise"].astype(bool).any()
    rest = p[(p["variant"] != "d") & (p["other"] != "d")]
    assert set(rest["holm_family"]) == {3} and rest["different"].astype(bool).all()
    # the same ranking without d: the same groups and Holm p (d changed nothing)
    alone = R.ranking_table(t[t["variant"] != "d"], STATS)
    va, pa = _split(alone)
    assert list(va["group"]) == list(v["group"].dropna()) and va["order"].iloc[0] == "a > b > c"
    assert np.allclose(sorted(pa["p_holm"]), sorted(rest["p_holm"]))
