"""compare(): ratios, Fieller, bootstrap, paired, p-values, multiplicity, against independent references.

References: the Fieller limits as roots of the quadratic found by numpy.roots
(the code uses the closed form), the delta-method interval as g -> 0,
scipy.stats.ttest_ind(equal_var=False) for Welch (the code uses the hand formula),
scipy.stats.ttest_rel on the logs for a paired row's p, loop implementations of
Holm and Benjamini-Hochberg, scipy.stats.ttest_rel(...).confidence_interval on
the logs for the paired interval, a single scipy.stats.bootstrap call for the
bootstrap ratio.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from podnet.parse.tidy import GROUP_COLUMNS
from podnet.stats import RATIO_COLUMNS, compare, core, robust
from podnet.stats._data import key_text
from podnet.stats.bootstrap import group_seed
from podnet.stats.ratios import UNBOUNDED_NOTE
from tests.stats_tables import one, rows, tidy

REL = 1e-9
T = [9.05e9, 8.91e9, 9.12e9, 8.87e9, 9.20e9, 8.99e9, 9.03e9]  # treatment (cilium)
B = [9.41e9, 9.38e9, 9.52e9, 9.31e9, 9.47e9, 9.40e9]  # baseline (host), one repeat fewer
CMP = {"comparisons": [{"by": "variant", "baseline": "host"}]}
#: a signed metric (no adapter knows it): ratio of means, Fieller interval
SIGNED = {"metric": "offset", "unit": "s"}
BOOT = {"bootstrap": {"min_n": 3}}  # the bootstrap's own default starts at n = 40


def close(a, b, rel=REL):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=0.0)


def table(t=T, b=B, **kw):
    """Treatment (cilium) and baseline (host) of a signed metric, both from launch L1."""
    kw = {**SIGNED, "launch_id": "L1", **kw}
    return tidy(rows(t, variant="cilium", **kw), rows(b, variant="host", **kw))


@pytest.fixture(scope="module")
def basic():
    return compare(table(), CMP)


def fieller_by_roots(x, y, conf=0.95):
    """Limits as the real roots of (b^2 - t^2 v22) r^2 - 2ab r + (a^2 - t^2 v11) = 0, df at r = a/b."""
    x, y = np.asarray(x), np.asarray(y)
    a, b = x.mean(), y.mean()
    v11, v22 = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    r = a / b
    df = (v11 + r * r * v22) ** 2 / (v11**2 / (len(x) - 1) + r**4 * v22**2 / (len(y) - 1))
    t = stats.t.ppf(0.5 + conf / 2, df)
    roots = np.roots([b * b - t * t * v22, -2 * a * b, a * a - t * t * v11])
    return sorted(roots.real), t, v11, v22


def test_columns_and_identity(basic):
    assert list(basic.columns) == RATIO_COLUMNS
    assert len(basic) == 1
    r = basic.iloc[0]
    assert r["by"] == "variant" and r["baseline"] == "host" and r["treatment"] == "cilium"
    assert r["variant"] == "cilium" and r["scenario"] == "pod-pod" and r["metric"] == "offset"
    assert r["n_treatment"] == 7 and r["n_baseline"] == 6


def test_ratio_and_change(basic):
    r = basic.iloc[0]
    assert r["estimand"] == "ratio of means" and r["kind"] == "signed"
    assert close(r["ratio"], np.mean(T) / np.mean(B))
    assert close(r["change_pct"], (np.mean(T) / np.mean(B) - 1) * 100)
    assert np.isnan(r["overhead_pct"])  # a metric with no better direction has no overhead
    assert close(r["mean_treatment"], np.mean(T)) and close(r["sd_baseline"], np.std(B, ddof=1))


def test_fieller_against_quadratic_roots(basic):
    r = basic.iloc[0]
    (lo, hi), t, _, v22 = fieller_by_roots(T, B)
    assert r["ci_method"] == "fieller-welch" and r["ci_note"] == ""
    assert close(r["ci_low"], lo) and close(r["ci_high"], hi)
    assert close(r["fieller_g"], t * t * v22 / np.mean(B) ** 2)


def test_fieller_approaches_delta_method_for_small_g():
    rng = np.random.default_rng(11)
    x = 2.0 + 1e-4 * rng.standard_normal(50)
    y = 1.0 + 1e-4 * rng.standard_normal(40)
    lo, hi, g, df, status = core.fieller(x.mean(), x.var(ddof=1), 50, y.mean(), y.var(ddof=1), 40, 0.95)
    r = x.mean() / y.mean()
    se = abs(r) * math.sqrt(x.var(ddof=1) / 50 / x.mean() ** 2 + y.var(ddof=1) / 40 / y.mean() ** 2)
    t = stats.t.ppf(0.975, df)
    assert status == "ok" and g < 1e-7
    # half-widths agree to first order in g (and the centre shift is O(g) too)
    assert abs((hi - lo) / 2 - t * se) / (t * se) < 10 * g + 1e-9
    assert abs((hi + lo) / 2 - r) / r < 10 * g + 1e-12


def test_fieller_vectorised_against_roots_many_cases():
    rng = np.random.default_rng(4)
    for _ in range(25):
        nx, ny = rng.integers(2, 12, 2)
        x = rng.normal(rng.uniform(1, 5), rng.uniform(0.05, 1.0), nx)
        y = rng.normal(rng.uniform(2, 5), rng.uniform(0.05, 0.8), ny)
        lo, hi, g, _, status = core.fieller(x.mean(), x.var(ddof=1), nx, y.mean(), y.var(ddof=1), ny, 0.9)
        (rlo, rhi), t, _, v22 = fieller_by_roots(x, y, 0.9)
        if t * t * v22 / y.mean() ** 2 < 1:
            assert status == "ok" and close(lo, rlo, 1e-8) and close(hi, rhi, 1e-8)
        else:
            assert status == "unbounded" and np.isnan(lo)


def test_unbounded_when_baseline_mean_near_zero():
    out = compare(table(t=[1.0, 1.2, 0.9, 1.1], b=[0.02, -0.03, 0.05, -0.01]), {**CMP, **BOOT}).iloc[0]
    assert out["ci_note"] == UNBOUNDED_NOTE
    assert np.isnan(out["ci_low"]) and np.isnan(out["ci_high"])
    assert out["fieller_g"] >= 1
    assert close(out["ratio"], np.mean([1.0, 1.2, 0.9, 1.1]) / np.mean([0.02, -0.03, 0.05, -0.01]))
    assert np.isnan(out["boot_ci_low"]) and "not distinguishable from 0" in out["boot_note"]


def test_welch_p_against_ttest_ind(basic):
    # 7 against 6 repeats: not paired (require_same_repeats), so its one p is Welch's
    ref = stats.ttest_ind(T, B, equal_var=False)
    assert basic.iloc[0]["n_pairs"] == 0 or np.isnan(basic.iloc[0]["paired_ci_low"])
    assert close(basic.iloc[0]["p_value"], ref.pvalue) and basic.iloc[0]["p_test"] == "welch"


def test_a_paired_rows_one_p_is_the_paired_t_of_its_log_ratios():
    """Not Welch's on the same runs, not the Wilcoxon of its interval: the design picks the test."""
    t = [9.05e9, 8.91e9, 9.12e9, 8.87e9, 9.20e9, 8.99e9]
    out = compare(table(t=t, b=B), CMP).iloc[0]
    assert out["n_pairs"] == 6 and out["paired_interval_method"] == "hodges-lehmann"
    assert out["p_test"] == "t" and close(out["p_value"], stats.ttest_rel(np.log(t), np.log(B)).pvalue)
    assert not close(out["p_value"], stats.ttest_ind(t, B, equal_var=False).pvalue, rel=1e-3)
    assert "p_mannwhitney" not in out and "paired_p_value" not in out and "paired_p_adjusted" not in out


def _holm_loop(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj


def _bh_loop(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        adj[i] = min(1.0, running)
    return adj


def test_holm_and_bh_against_loops():
    p = [0.01, 0.04, 0.03, 0.005, 0.5, 0.04, 0.2]
    assert np.allclose(core.holm(np.array(p)), _holm_loop(p), rtol=REL, atol=0)
    assert np.allclose(core.benjamini_hochberg(np.array(p)), _bh_loop(p), rtol=REL, atol=0)
    # textbook values: Holm of (0.01, 0.04, 0.03, 0.005) = (0.03, 0.06, 0.06, 0.02)
    assert np.allclose(
        core.holm(np.array([0.01, 0.04, 0.03, 0.005])), [0.03, 0.06, 0.06, 0.02], rtol=REL, atol=0
    )
    # NaN ignored and not counted
    h = core.holm(np.array([0.01, np.nan, 0.02]))
    assert np.isnan(h[1]) and close(h[0], 0.02) and close(h[2], 0.02)


def test_adjustment_across_one_experiment_per_family():
    rng = np.random.default_rng(8)
    lists = []
    for v in ["a", "b", "c"]:
        for sc, shift in [("cilium", 0.02), ("calico", 0.0), ("host", 0.0)]:
            lists.append(rows(1e9 * (1 + shift + 0.01 * rng.standard_normal(6)), variant=v, scenario=sc))
    # a second experiment forms its own family
    lists.append(rows([1.0, 1.1, 1.2, 1.05], scenario="cilium", experiment="other"))
    lists.append(rows([2.0, 2.1, 2.2, 2.05], scenario="host", experiment="other"))
    # only the declared primary rows are adjusted; the rtt rows below stay exploratory
    lists.append(rows([1e-3, 1.1e-3, 1.2e-3], scenario="cilium", metric="rtt_avg", unit="s"))
    lists.append(rows([1e-3, 1.0e-3, 0.9e-3], scenario="host", metric="rtt_avg", unit="s"))
    sc = {"comparisons": [{"by": "scenario", "baseline": "host"}]}
    prim = {"primary": [{"by": "scenario", "baseline": "host", "metrics": ["throughput"]}]}
    out = compare(tidy(*lists), {**sc, **prim})
    expl = out[out["metric"] == "rtt_avg"]
    assert (expl["role"] == "exploratory").all() and expl["p_adjusted"].isna().all()
    assert expl["p_value"].notna().all() and (expl["family"] == "").all() and not expl["different"].any()
    out = out[out["metric"] == "throughput"]
    assert (out["role"] == "primary").all()
    exp = out[out["experiment"] == "exp"]
    assert (exp["m"] == 6).all() and (exp["family"] == "primary:exp/scenario").all()
    assert len(exp) == 6 and (exp["p_test"] == "t").all()  # one launch's rounds: paired
    p = exp["p_value"].tolist()
    assert np.allclose(exp["p_adjusted"], _holm_loop(p), rtol=REL, atol=0)
    other = one(out, experiment="other")
    assert close(other["p_adjusted"], other["p_value"]) and other["m"] == 1  # a family of one
    assert (exp["different"].astype(bool) == (exp["p_adjusted"] < 0.05)).all()


def test_paired_interval_against_ttest_rel():
    t = [9.05e9, 8.91e9, 9.12e9, 8.87e9, 9.20e9, 8.99e9]
    out = compare(table(t=t, b=B), CMP).iloc[0]
    lt, lb = np.log(t), np.log(B)
    # fixed rounds (a bare stats mapping), 6 pairs: Hodges-Lehmann with the exact Wilcoxon interval
    ref = robust.side_by_side(t, B, 0.95, adaptive=False)
    assert out["n_pairs"] == 6 and out["paired_note"] == ""
    assert (out["paired_interval_method"], out["paired_interval_level"]) == ("hodges-lehmann", 0.95)
    assert close(out["paired_ratio"], ref.ratio)
    assert close(out["paired_ci_low"], ref.low) and close(out["paired_ci_high"], ref.high)
    assert close(out["p_value"], stats.ttest_rel(lt, lb).pvalue) and out["p_test"] == "t"
    # 5 pairs: no Wilcoxon interval at 95 %, the paired t interval of the mean
    five = compare(table(t=t[:5], b=B[:5]), CMP).iloc[0]
    tt = stats.ttest_rel(lt[:5], lb[:5])
    assert five["paired_interval_method"] == "mean"
    assert close(five["paired_ratio"], math.exp(np.mean(lt[:5] - lb[:5])))
    assert close(five["paired_ci_low"], math.exp(tt.confidence_interval(0.95).low))
    assert close(five["p_value"], tt.pvalue)


def test_paired_pairs_by_repeat_number_not_row_order():
    t = [1.0, 2.0, 3.0, 4.0]
    b = [1.1, 2.1, 3.2, 3.9]
    df = tidy(
        rows(t, variant="cilium", repeats=[1, 2, 3, 4], launch_id="L1"),
        rows(b[::-1], variant="host", repeats=[4, 3, 2, 1], launch_id="L1"),
    )
    out = compare(df, CMP).iloc[0]
    assert close(out["paired_ratio"], math.exp(np.mean(np.log(t) - np.log(b))))


def test_paired_requires_same_repeats_by_default(basic):
    r = basic.iloc[0]  # treatment has repeat 7, baseline not
    assert np.isnan(r["paired_ci_low"]) and "differ" in r["paired_note"]
    loose = compare(table(), {**CMP, "paired": {"require_same_repeats": False}}).iloc[0]
    assert loose["n_pairs"] == 6 and "1 unpaired" in loose["paired_note"]
    assert close(loose["paired_ci_low"], robust.side_by_side(T[:6], B, adaptive=False).low)


def test_bootstrap_ratio_against_single_scipy_call_and_deterministic():
    basic = compare(table(), {**CMP, **BOOT})
    g = tidy(rows(T, variant="cilium", **SIGNED), rows(B, variant="host", **SIGNED))[GROUP_COLUMNS]
    key = key_text(g.iloc[[0]])[0] + "\x1e" + key_text(g.iloc[[len(T)]])[0]
    res = stats.bootstrap(
        (np.array(T), np.array(B)),
        lambda x, y, axis=-1: np.mean(x, axis=axis) / np.mean(y, axis=axis),
        n_resamples=10000,
        batch=2000,
        method="BCa",
        rng=np.random.default_rng(group_seed(20240611, key)),
    )
    r = basic.iloc[0]
    assert r["boot_method"] == "BCa"
    assert close(r["boot_ci_low"], res.confidence_interval.low)
    assert close(r["boot_ci_high"], res.confidence_interval.high)
    again = compare(table(), {**CMP, **BOOT})
    pd.testing.assert_frame_equal(basic, again)
    crowd = compare(
        tidy(*[rows(T, variant=v, **SIGNED) for v in ("a", "b", "z")]).pipe(
            lambda d: pd.concat([d, table()], ignore_index=True)
        ),
        {**CMP, **BOOT},
    )
    c = one(crowd, treatment="cilium")
    assert c["boot_ci_low"] == r["boot_ci_low"] and c["boot_ci_high"] == r["boot_ci_high"]


def test_n1_on_one_side_ratio_but_no_interval_or_p():
    out = compare(table(t=[9.0e9], b=B), CMP).iloc[0]
    assert close(out["ratio"], 9.0e9 / np.mean(B))
    for c in ("ci_low", "ci_high", "boot_ci_low", "paired_ci_low", "p_value", "p_adjusted"):
        assert np.isnan(out[c]), c
    assert "n < 2" in out["ci_note"] and not out["different"] and not out["precise"]


def test_n2_each_side():
    t, b = [10.0, 12.0], [5.0, 5.5]
    out = compare(table(t=t, b=b), CMP).iloc[0]
    (lo, hi), *_ = fieller_by_roots(t, b)
    assert close(out["ci_low"], lo) and close(out["ci_high"], hi)
    # two rounds of one launch: two pairs, so its one p is the paired t of the log ratios
    assert out["p_test"] == "t" and close(out["p_value"], stats.ttest_rel(np.log(t), np.log(b)).pvalue)
    assert np.isnan(out["boot_ci_low"]) and out["boot_note"].startswith("n < 40 on a side")
    apart = compare(
        tidy(
            rows(t, variant="cilium", launch_id="L1", **SIGNED),
            rows(b, variant="host", launch_id="L2", **SIGNED),
        ),
        CMP,
    ).iloc[0]
    assert apart["p_test"] == "welch" and close(
        apart["p_value"], stats.ttest_ind(t, b, equal_var=False).pvalue
    )


def test_zero_variance_both_sides():
    out = compare(table(t=[2.0] * 4, b=[1.0] * 4), {**CMP, **BOOT}).iloc[0]
    assert out["ratio"] == 2.0 and out["ci_low"] == out["ci_high"] == 2.0
    assert "zero variance" in out["ci_note"] and np.isnan(out["p_value"])
    assert np.isnan(out["boot_ci_low"]) and "degenerate" in out["boot_note"]


def test_zero_variance_one_side_uses_other_side_df():
    t, b = [2.0, 2.2, 1.9, 2.1], [1.0, 1.0, 1.0, 1.0]
    out = compare(table(t=t, b=b), CMP).iloc[0]
    v11 = np.var(t, ddof=1) / 4
    tq = stats.t.ppf(0.975, 3)
    assert close(out["ci_low"], (np.mean(t) - tq * math.sqrt(v11)) / 1.0)
    assert close(out["df"], 3.0) and out["small_n_note"] == ""


def test_small_unequal_n_uses_conservative_df():
    # issue 9: Welch's type-I error reaches 10-12 % at n = 10 vs 2; Hsu's min(n) - 1 keeps it <= 5 %
    t, b = [2.0, 2.2, 1.9, 2.1, 2.0, 2.3, 1.8, 2.2, 2.1, 1.9], [1.0, 1.02]
    out = compare(table(t=t, b=b), CMP).iloc[0]
    assert out["ci_method"] == "fieller-hsu" and out["df"] == 1.0 and "10 vs 2" in out["small_n_note"]
    (lo, hi), *_ = fieller_by_roots(t, b)
    assert out["ci_low"] < lo and out["ci_high"] > hi  # wider than Welch's


def test_nan_values_dropped():
    out = compare(table(t=T + [float("nan")], b=B), CMP).iloc[0]
    assert out["n_treatment"] == 7 and close(out["ratio"], np.mean(T) / np.mean(B))


def test_matching_by_scenario_with_filters():
    lists = [
        rows([10.0, 11.0, 10.5], scenario="pod-pod"),
        rows([8.0, 8.5, 8.2], scenario="pod-svc"),
        rows([7.0, 7.5, 7.2], scenario="node-node"),
        rows([1.0, 1.1, 1.2], scenario="pod-svc", metric="rtt_avg", unit="s"),
        rows([1.0, 1.1, 1.2], scenario="pod-svc", streams=8),  # no baseline with streams=8
    ]
    out = compare(
        tidy(*lists),
        {
            "comparisons": [
                {
                    "by": "scenario",
                    "baseline": "pod-pod",
                    "treatments": ["pod-svc"],
                    "metrics": ["throughput"],
                }
            ]
        },
    )
    assert len(out) == 1
    r = out.iloc[0]
    assert r["scenario"] == "pod-svc" and r["treatment"] == "pod-svc" and r["baseline"] == "pod-pod"
    assert r["estimand"] == "ratio of geometric means"
    assert close(r["ratio"], stats.gmean([8.0, 8.5, 8.2]) / stats.gmean([10.0, 11.0, 10.5]))


def test_missing_group_values_match_each_other():
    df = tidy(
        rows([1.0, 1.1, 1.2], variant="cilium", test=None), rows([2.0, 2.1, 2.2], variant="host", test=None)
    )
    out = compare(df, CMP)
    assert len(out) == 1 and pd.isna(out.iloc[0]["test"])


def test_reference_rows_excluded():
    df = tidy(
        rows(T, variant="cilium"), rows(B, variant="host"), rows([1.0], variant="host", source="reference")
    )
    out = compare(df, CMP).iloc[0]
    assert out["n_baseline"] == 6 and close(out["mean_baseline"], np.mean(B))
    only_ref = tidy(rows(T, variant="cilium"), rows([1.0, 2.0], variant="host", source="reference"))
    with pytest.raises(ValueError, match="no measured rows"):  # a baseline of reference rows only
        compare(only_ref, CMP)


def test_empty_and_no_comparisons():
    assert list(compare(tidy(), CMP).columns) == RATIO_COLUMNS
    assert len(compare(table(), {})) == 0
    with pytest.raises(ValueError, match="no measured rows have variant 'nope'"):
        compare(table(), {"comparisons": [{"by": "variant", "baseline": "nope"}]})


def test_bad_comparison_rejected():
    with pytest.raises(ValueError):
        compare(table(), {"comparisons": [{"by": "tool", "baseline": "x"}]})


# ---- issue 9: interval semantics ---------------------------------------------


def test_positive_metric_ratio_of_geometric_means_against_welch_on_logs():
    # two launches: no round pairs the variants, so the comparison's one p is Welch's on the logs
    out = compare(
        tidy(
            rows(T, variant="cilium", launch_id="L1", metric="throughput", unit="bit/s"),
            rows(B, variant="host", launch_id="L2", metric="throughput", unit="bit/s"),
        ),
        CMP,
    ).iloc[0]
    assert out["estimand"] == "ratio of geometric means" and out["ci_method"] == "log-welch"
    lt, lb = np.log(T), np.log(B)
    ref = stats.ttest_ind(lt, lb, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert close(out["ratio"], math.exp(lt.mean() - lb.mean()))
    assert close(out["ci_low"], math.exp(ci.low)) and close(out["ci_high"], math.exp(ci.high))
    assert close(out["p_value"], ref.pvalue) and out["p_test"] == "welch"


def test_a_variant_rows_p_is_its_side_by_side_design_even_when_this_table_does_not_pair_it():
    """7 against 6 repeats of one launch: ratios.csv's own pairing needs the same repeats, variants.csv
    pairs the 6 common rounds; the comparison has one p, the side-by-side design's, and says so."""
    from podnet.stats.variants import variant_table

    t = table(metric="throughput", unit="bit/s")
    out = compare(t, CMP).iloc[0]
    v = one(variant_table(t, CMP), design="side-by-side")
    assert np.isnan(out["paired_ci_low"]) and v["n_pairs"] == 6
    assert out["p_test"] == "t" and close(out["p_value"], v["p_value"])
    assert "side-by-side design" in out["p_note"]


def test_overhead_sign_means_worse_for_every_metric():
    thr = compare(table(t=[8.0, 8.1, 7.9], b=[10.0, 10.1, 9.9], metric="throughput", unit="bit/s"), CMP)
    rtt = compare(table(t=[1.2e-3, 1.21e-3, 1.19e-3], b=[1e-3, 1.01e-3, 0.99e-3], metric="rtt_avg"), CMP)
    thr, rtt = thr.iloc[0], rtt.iloc[0]
    assert (
        thr["better"] == "higher"
        and thr["ratio"] < 1
        and close(thr["overhead_pct"], (1 - thr["ratio"]) * 100)
    )
    assert (
        rtt["better"] == "lower" and rtt["ratio"] > 1 and close(rtt["overhead_pct"], (rtt["ratio"] - 1) * 100)
    )
    assert thr["overhead_pct"] > 0 and rtt["overhead_pct"] > 0  # both worse than the baseline
    assert thr["change_pct"] < 0 < rtt["change_pct"]


def test_equal_per_repeat_ratios_give_no_paired_p_value():
    # issue 9: a paired p of 7e-45 from rounding noise in the log differences
    b = [1.23e9, 2.34e9, 3.45e9, 0.98e9, 1.11e9]
    t = [x * 0.93 for x in b]
    d = np.log(t) - np.log(b)
    assert 0 < d.std(ddof=1) < 1e-14  # rounding noise only (sd 1.9e-15)
    assert stats.ttest_rel(np.log(t), np.log(b)).pvalue < 1e-20  # what a naive paired t-test says
    out = compare(table(t=t, b=b), CMP).iloc[0]
    assert np.isnan(out["p_value"]) and out["p_test"] == "t" and "equal" in out["paired_note"]
    assert close(out["paired_ratio"], 0.93) and out["paired_ci_low"] == out["paired_ci_high"]


def test_never_paired_across_launches():
    t, b = [9.05e9, 8.91e9, 9.12e9], [9.41e9, 9.38e9, 9.52e9]
    two = tidy(rows(t, variant="cilium", launch_id="L1"), rows(b, variant="host", launch_id="L2"))
    out = compare(two, CMP).iloc[0]
    assert np.isnan(out["paired_ci_low"]) and "different launches" in out["paired_note"]
    # no launch ids: two variants are two launches, never paired
    none = compare(tidy(rows(t, variant="cilium"), rows(b, variant="host")), CMP).iloc[0]
    assert np.isnan(out["paired_ratio"]) and "separate launches" in none["paired_note"]
    # scenarios of one variant without launch ids: one launch's interleaved rounds
    sc = compare(
        tidy(rows(t, scenario="pod-pod"), rows(b, scenario="host-host")),
        {"comparisons": [{"by": "scenario", "baseline": "host-host"}]},
    ).iloc[0]
    assert sc["n_pairs"] == 3 and np.isfinite(sc["paired_ci_low"])
    # an empty launch_id (imported outputs; the tidy table always has the column) means unknown
    sc_empty = compare(
        tidy(rows(t, scenario="pod-pod", launch_id=""), rows(b, scenario="host-host", launch_id="")),
        {"comparisons": [{"by": "scenario", "baseline": "host-host"}]},
    ).iloc[0]
    assert sc_empty["n_pairs"] == 3 and sc_empty["paired_ratio"] == sc["paired_ratio"]
    none_empty = compare(
        tidy(rows(t, variant="cilium", launch_id=""), rows(b, variant="host", launch_id="")), CMP
    ).iloc[0]
    assert np.isnan(none_empty["paired_ratio"]) and "separate launches" in none_empty["paired_note"]


def test_primary_metrics_default_to_the_tools_headline(monkeypatch):
    from podnet.tools import get

    monkeypatch.setattr(type(get("iperf3")), "headline", ("throughput",))
    t = tidy(
        rows([9.0, 9.1, 8.9], scenario="pod-pod"),
        rows([10.0, 10.1, 9.9], scenario="host-host"),
        rows([1.0, 1.1, 0.9], scenario="pod-pod", metric="sender_throughput"),
        rows([1.2, 1.1, 1.3], scenario="host-host", metric="sender_throughput"),
        rows([5.0, 5.1, 4.9], scenario="pod-pod", test="udp"),
        rows([5.2, 5.1, 5.3], scenario="host-host", test="udp"),
    )
    cmp = [{"by": "scenario", "baseline": "host-host"}]
    prim = [{"by": "scenario", "baseline": "host-host", "treatments": ["pod-pod"], "tests": ["iperf3:tcp"]}]
    out = compare(t, {"comparisons": cmp, "primary": prim})
    role = dict(zip(zip(out["test"], out["metric"]), out["role"]))
    assert role == {
        ("tcp", "throughput"): "primary",
        ("tcp", "sender_throughput"): "exploratory",
        ("udp", "throughput"): "exploratory",
    }
    p = one(out, role="primary")
    assert p["m"] == 1 and close(p["p_adjusted"], p["p_value"])
    with pytest.raises(ValueError, match="not one of stats.comparisons"):
        compare(t, {"comparisons": cmp, "primary": [{"by": "variant", "baseline": "host"}]})


def test_different_follows_the_paired_interval_on_a_two_speed_machine():
    # the machine runs each round at 10 or 18 (a host's two speeds); the treatment is 0.9x in its round
    speeds = np.array([10.0, 18.0] * 5) * 1e9
    rng = np.random.default_rng(3)
    t = speeds * 0.9 * (1 + 0.005 * rng.standard_normal(10))
    prim = {"primary": [{"by": "variant", "baseline": "host", "metrics": ["throughput"]}]}
    df = tidy(
        rows(t, variant="cilium", repeats=list(range(1, 11)), launch_id="L1"),
        rows(speeds, variant="host", repeats=list(range(1, 11)), launch_id="L1"),
    )
    r = compare(df, {**CMP, **prim}).iloc[0]
    assert r["role"] == "primary" and r["n_pairs"] == 10
    # the unpaired Welch p drowns in the two speeds; the design is paired, so the paired t is its p
    assert stats.ttest_ind(t, speeds, equal_var=False).pvalue > 0.05
    assert r["p_test"] == "t" and r["p_adjusted"] < 0.05 and r["paired_ci_high"] < 1
    assert bool(r["different"]) and bool(r["precise"])  # read by the interval it is judged by
