"""One comparison, one p (issue 44; METHODS.md, "One comparison, one p").

On the under-load campaign cilium-vxlan's P99 over macvlan had Holm p 0.016 in variants.csv (paired
t), 0.070 in ratios.csv (Welch, while its ``different`` read a third p) and 0.0098 in the findings
(the exact Wilcoxon p). Here a small side-by-side campaign whose rounds drift together, so that
Welch's p on the runs and the paired t on the rounds disagree, must give one p and one Holm p for
each comparison in ratios.csv, variants.csv, the findings' sentence, the compare notebook's words,
the figure's marker, the gate and ranking.csv; and ``different`` is that Holm p below alpha, never
"the interval excludes 1".
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from podnet.report import explore, findings
from podnet.report.figures import data
from podnet.report.figures.plots import ratio_panels
from podnet.report.numbers import fmt_p
from podnet.stats import compare, gate, onep
from podnet.stats import ranking as R
from podnet.stats.precision import as_judged
from podnet.stats.variants import variant_table
from tests.stats_tables import one, rows, tidy

VCMP = [{"by": "variant", "baseline": "a"}]
#: b is 1.15x a in every round, c is a itself (the A/A row): a family of two
S = {"comparisons": VCMP, "primary": [{"by": "variant", "baseline": "a", "metrics": ["throughput"]}]}


def _campaign(n: int = 8, seed: int = 4) -> pd.DataFrame:
    """Variants a, b, c side by side in one launch: a round's drift (log sd 0.3) is shared by all."""
    rng = np.random.default_rng(seed)
    drift = 9e9 * rng.lognormal(0, 0.3, n)
    return tidy(
        rows(drift * rng.lognormal(0, 0.01, n), variant="a", launch_id="L"),
        rows(1.15 * drift * rng.lognormal(0, 0.01, n), variant="b", launch_id="L"),
        rows(drift * rng.lognormal(0, 0.01, n), variant="c", launch_id="L"),
    )


@pytest.fixture(scope="module")
def tables():
    t = _campaign()
    return t, compare(t, S), variant_table(t, S)


def test_the_welch_and_the_paired_p_disagree_here(tables):
    t, _, _ = tables
    a = t[t["variant"] == "a"]["value"].to_numpy(float)
    b = t[t["variant"] == "b"]["value"].to_numpy(float)
    assert stats.ttest_ind(np.log(b), np.log(a), equal_var=False).pvalue > 0.2  # drowned in the drift
    assert stats.ttest_rel(np.log(b), np.log(a)).pvalue < 1e-6  # the pairs keep the ratio


@pytest.mark.parametrize("variant", ["b", "c"])
def test_ratios_and_variants_state_one_p_one_holm_p_one_word(tables, variant):
    t, r, v = tables
    rr = one(r, treatment=variant)
    vv = one(v, variant=variant, design="side-by-side")
    assert rr["role"] == vv["role"] == "primary" and rr["m"] == vv["m"] == 2
    assert rr["p_test"] == vv["p_test"] == "t"
    a = t[t["variant"] == "a"]["value"].to_numpy(float)
    x = t[t["variant"] == variant]["value"].to_numpy(float)
    assert rr["p_value"] == pytest.approx(stats.ttest_rel(np.log(x), np.log(a)).pvalue, rel=1e-9)
    assert rr["p_value"] == pytest.approx(vv["p_value"], rel=1e-12)
    assert rr["p_adjusted"] == pytest.approx(vv["p_adjusted"], rel=1e-12)
    assert rr["family"] == vv["family"] == "primary:exp/variant"
    assert bool(rr["different"]) == bool(vv["different"]) == (vv["p_adjusted"] < 0.05)
    assert bool(rr["different"]) is (variant == "b")


def test_the_findings_sentence_and_the_compare_words_quote_that_p(tables):
    t, r, v = tables
    for variant in ("b", "c"):
        p = float(one(r, treatment=variant)["p_adjusted"])
        sentence = findings.sentence(as_judged(r).loc[one(r, treatment=variant).name])
        assert f"Holm-adjusted {fmt_p(p)})" in sentence
        assert sentence.endswith(("different, not precise.", "not shown different, not precise."))
        assert ("not shown different" in sentence) is (variant == "c")
    words = findings.variant_markdown(
        data.Tables(tidy=t, summary=pd.DataFrame(), ratios=r, failed=pd.DataFrame(), variants=v)
    )
    for variant in ("b", "c"):
        p = float(one(v, variant=variant, design="side-by-side")["p_adjusted"])
        line = next(x for x in words.splitlines() if x.startswith(f"- {variant} "))
        assert f"Holm-adjusted {fmt_p(p)}:" in line


def test_the_figure_fills_what_the_table_calls_different(tables):
    _, r, _ = tables
    (panel,) = ratio_panels(r, "scenario", "treatment", 0.05)
    filled = dict(zip(panel.rows["hue"], panel.rows["different"]))
    assert filled == {"b": True, "c": False}


def test_the_gate_carries_the_same_word(tables):
    _, r, _ = tables
    th = [
        {"by": "variant", "baseline": "a", "treatment": x, "metric": "throughput", "min": 0.5} for x in "bc"
    ]
    got = gate.check(r, th).set_index("treatment")["different"]
    assert got.to_dict() == {"b": True, "c": False}


def test_the_compare_notebooks_ratios_are_the_same(tables, tmp_path):
    t, r, _ = tables
    t.to_parquet(tmp_path / "tidy.parquet", index=False)
    nb = explore.side_by_side([tmp_path], by="variant", baseline="a", settings=S)
    for variant in ("b", "c"):
        x, y = one(nb, treatment=variant), one(r, treatment=variant)
        assert (x["p_value"], x["p_adjusted"], bool(x["different"])) == pytest.approx(
            (y["p_value"], y["p_adjusted"], bool(y["different"]))
        )


@pytest.mark.parametrize("variant", ["b", "c"])
def test_a_ranking_pair_and_row_state_the_same_p_as_variants_csv(tables, variant):
    t, _, v = tables
    out = R.ranking_table(t, {**S, "ranking": {"measures": ["iperf3:tcp:throughput"]}})
    pair = out[(out["row"] == "pair") & (out[["variant", "other"]].isin(["a", variant]).all(axis=1))].iloc[0]
    row = out[(out["row"] == "variant") & (out["variant"] == variant)].iloc[0]
    p = float(one(v, variant=variant, design="side-by-side")["p_value"])
    assert float(pair["p_value"]) == pytest.approx(p, rel=1e-12)
    assert float(row["p_value"]) == pytest.approx(p, rel=1e-12)  # was the interval's Wilcoxon p
    assert bool(pair["different"]) == (float(pair["p_holm"]) < 0.05)


def test_a_row_outside_the_family_states_its_p_unadjusted_and_is_never_different():
    t = _campaign()
    r = compare(t, {"comparisons": VCMP})  # nothing declared
    b = one(r, treatment="b")
    assert b["role"] == "exploratory" and np.isnan(b["p_adjusted"]) and not b["different"]
    assert b["p_test"] == "t" and b["p_value"] < 1e-6  # its one p, shown as such
    sentence = findings.sentence(as_judged(r).loc[b.name])
    assert f"unadjusted {fmt_p(b['p_value'])}" in sentence and "exploratory" in sentence


def test_a_normalised_variant_comparison_has_one_p_in_both_tables():
    """Variants launched one after the other, each with host-host in its rounds: ratios.csv's row
    between the variants is of the two launches' runs, its p the normalised design's of variants.csv."""
    rng = np.random.default_rng(2)
    n = 8
    out = []
    for v, launch, factor, path in (("a", "L1", 1.0, 0.8), ("b", "L2", 1.4, 0.7)):
        drift = factor * 9e9 * rng.lognormal(0, 0.05, n)
        out.append(rows(drift * rng.lognormal(0, 0.01, n), variant=v, scenario="host-host", launch_id=launch))
        out.append(
            rows(path * drift * rng.lognormal(0, 0.01, n), variant=v, scenario="pod-pod", launch_id=launch)
        )
    t = tidy(*out)
    cfg = {
        "comparisons": [{"by": "scenario", "baseline": "host-host"}, *VCMP],
        "primary": [{"by": "variant", "baseline": "a", "metrics": ["throughput"]}],
    }
    r, v = compare(t, cfg), variant_table(t, cfg)
    pod = one(r, by="variant", scenario="pod-pod")
    norm = one(v, scenario="pod-pod", preferred=True)
    assert norm["design"] == "normalised" and norm["p_test"] == "welch"
    assert pod["p_value"] == pytest.approx(norm["p_value"]) and pod["p_adjusted"] == pytest.approx(
        norm["p_adjusted"]
    )
    assert bool(pod["different"]) == bool(norm["different"]) and "drift-normalised" in pod["p_note"]
    # host-host between two launches: sequential only, shown, in no family, and it says so
    hh = one(r, by="variant", scenario="host-host")
    assert (
        hh["role"] == "primary" and hh["family"] == "" and np.isnan(hh["p_adjusted"]) and not hh["different"]
    )
    assert "sequential" in hh["p_note"]


def test_holm_counts_a_missing_p_as_one_and_only_a_family_row_can_be_different():
    h = onep.holm([0.01, np.nan, 0.04, 0.001], ["f", "f", "", "g"])
    assert h.p_adjusted[0] == pytest.approx(0.02) and h.p_adjusted[1] == 1.0 and np.isnan(h.p_adjusted[2])
    assert (
        list(h.m[[0, 1, 3]]) == [2, 2, 1] and np.isnan(h.m[2]) and list(h.lost) == [False, True, False, False]
    )
    d = onep.different(h.p_adjusted, [True, True, False, True], 0.05)
    assert list(d) == [True, False, False, True]
    p, test = onep.design_p([True, False], [0.01, 0.02], [0.3, 0.4])
    assert list(p) == [0.01, 0.4] and list(test) == ["t", "welch"]


def test_no_table_keeps_another_p_or_the_interval_word():
    from podnet.stats.ratios import RATIO_COLUMNS
    from podnet.stats.scale import CURVE_COLUMNS
    from podnet.stats.variants import VARIANT_COLUMNS

    for cols in (RATIO_COLUMNS, VARIANT_COLUMNS, CURVE_COLUMNS):
        extra = [c for c in cols if re.search(r"p_mannwhitney|_bh$|paired_p|excludes|differs", c)]
        assert not extra, extra
