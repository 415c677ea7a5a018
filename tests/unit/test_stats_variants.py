"""Variant-ratio estimators (podnet.stats.variants): the intervals the drift simulation checks."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from podnet.stats import compare
from podnet.stats.variants import normalised, printed_quantum, sequential, side_by_side
from tests.stats_tables import one, rows, tidy

DRIFT = np.array([1.0, 1.35, 0.75, 1.2, 0.85, 1.1, 0.95, 1.25])
NOISE = np.array([1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99])


def test_side_by_side_is_the_pipelines_paired_interval():
    # the same numbers through compare(): its paired interval (within one launch) is side_by_side's
    base = rows(10e9 * DRIFT, scenario="host-host", launch_id="L1")
    treat = rows(8.7e9 * DRIFT * NOISE, scenario="pod-pod", launch_id="L1")
    r = compare(tidy(base, treat), {"comparisons": [{"by": "scenario", "baseline": "host-host"}]})
    row = one(r, treatment="pod-pod", metric="throughput")
    # iperf3 prints 3 significant digits (the same quantum compare() reads); a bare mapping: fixed rounds
    q = (printed_quantum(tidy(treat)), printed_quantum(tidy(base)))
    got = side_by_side(8.7e9 * DRIFT * NOISE, 10e9 * DRIFT, adaptive=False, quantum=q)
    assert str(got.method) == row["paired_interval_method"]
    assert got.ratio == pytest.approx(row["paired_ratio"], rel=1e-12)
    assert (got.low, got.high) == pytest.approx((row["paired_ci_low"], row["paired_ci_high"]), rel=1e-12)
    assert got.n == 8


def test_side_by_side_drops_rounds_with_a_missing_side():
    t = np.array([9.0, np.nan, 8.0, 8.5])
    b = np.array([10.0, 10.0, 9.0, 0.0])  # round 2 lost its treatment, round 4 its baseline
    got = side_by_side(t, b)
    d = np.log([0.9, 8 / 9])
    assert got.n == 2 and got.ratio == pytest.approx(np.exp(d.mean()))


def test_normalised_removes_a_launch_wide_factor():
    rng = np.random.default_rng(3)
    host_a, host_b = 10 * rng.lognormal(0, 0.05, 12), 10 * rng.lognormal(0, 0.05, 9)
    path_a = 0.8 * host_a * rng.lognormal(0, 0.02, 12)
    path_b = 0.5 * host_b * rng.lognormal(0, 0.02, 9)
    # launch b ran on a machine 1.5x slower: every value of it scales, the ratio of ratios does not
    plain = normalised(path_a, host_a, path_b, host_b)
    slow = normalised(path_a, host_a, path_b / 1.5, host_b / 1.5)
    assert slow.ratio == pytest.approx(plain.ratio) and slow.low == pytest.approx(plain.low)
    assert plain.low < 1.6 < plain.high and plain.n == 9
    assert sequential(path_a, path_b / 1.5).ratio == pytest.approx(sequential(path_a, path_b).ratio * 1.5)


def test_normalised_is_welch_on_the_launches_log_ratios():
    rng = np.random.default_rng(4)
    pa, ha, pb, hb = (rng.lognormal(0, 0.1, n) for n in (7, 7, 6, 6))
    got = normalised(pa, ha, pb, hb, confidence=0.9)
    da, db = np.log(pa / ha), np.log(pb / hb)
    res = stats.ttest_ind(da, db, equal_var=False)
    ci = res.confidence_interval(0.9)
    assert got.p == pytest.approx(res.pvalue)
    assert (np.log(got.low), np.log(got.high)) == pytest.approx((ci.low, ci.high))


def test_small_unequal_launches_use_hsu_df():
    rng = np.random.default_rng(5)
    pa, ha, pb, hb = (rng.lognormal(0, 0.1, n) for n in (10, 10, 3, 3))
    got = normalised(pa, ha, pb, hb)
    da, db = np.log(pa / ha), np.log(pb / hb)
    se = np.sqrt(da.var(ddof=1) / 10 + db.var(ddof=1) / 3)
    half = stats.t.ppf(0.975, 2) * se
    assert np.log(got.high) - np.log(got.ratio) == pytest.approx(half)


def test_vectorised_over_experiments():
    rng = np.random.default_rng(6)
    t, b = rng.lognormal(0, 0.1, (5, 8)), rng.lognormal(0, 0.1, (5, 8))
    got = side_by_side(t, b)
    assert got.ratio.shape == (5,)
    for i in range(5):
        assert side_by_side(t[i], b[i]).low == pytest.approx(got.low[i])


# -- variants.csv ---------------------------------------------------------------------------------------
CMP = [{"by": "scenario", "baseline": "host-host"}, {"by": "variant", "baseline": "host-gw"}]
PRIMARY = [{"by": "scenario", "baseline": "host-host", "treatments": ["pod-pod"], "tests": ["iperf3:tcp"]}]


def launch(variant, launch_id, factor, path_ratio, rng, n=8):
    """One launch of a variant: host-host and pod-pod in the same rounds, scaled by the launch's drift."""
    host = 10e9 * factor * rng.lognormal(0, 0.03, n)
    pod = host * path_ratio * rng.lognormal(0, 0.03, n)
    common = dict(variant=variant, launch_id=launch_id)
    return rows(host, scenario="host-host", **common) + rows(pod, scenario="pod-pod", **common)


def test_variant_table_separate_launches_normalised_beside_sequential():
    from podnet.stats.variants import variant_table

    rng = np.random.default_rng(12)  # a seed whose 95 % interval covers (1 in 20 would not)
    # vxlan's launch ran on a machine 1.4x faster: the sequential ratio carries that, the normalised not
    t = tidy(launch("host-gw", "L1", 1.0, 0.9, rng), launch("vxlan", "L2", 1.4, 0.6, rng))
    v = variant_table(t, {"comparisons": CMP, "primary": PRIMARY})
    pod = v[v["scenario"] == "pod-pod"]
    assert set(pod["design"]) == {"normalised", "sequential"}
    nrm = one(pod, design="normalised")
    seq = one(pod, design="sequential")
    assert nrm["ci_low"] < 0.6 / 0.9 < nrm["ci_high"] and nrm["rel_half_width"] < 0.05
    assert seq["ci_low"] > 0.6 / 0.9 * 1.2  # the launch factor, not the CNI
    assert bool(nrm["preferred"]) and not bool(seq["preferred"]) and nrm["normalised_by"] == "host-host"
    # narrow enough, but on 8 pairs: below min_to_stop (10) it is not precise, as the launcher's stop;
    # different all the same (the two questions are independent)
    assert nrm["role"] == "primary" and not bool(nrm["precise"]) and bool(nrm["different"])
    assert nrm["verdict"] == "different"
    v5 = variant_table(t, {"comparisons": CMP, "primary": PRIMARY, "planning": {"min_to_stop": 5}})
    assert bool(one(v5[v5["scenario"] == "pod-pod"], design="normalised")["precise"])
    assert np.isnan(seq["p_adjusted"])  # only the preferred row enters the family
    host = v[v["scenario"] == "host-host"]
    assert list(host["design"]) == ["sequential"] and list(host["role"]) == ["exploratory"]


def test_variant_table_side_by_side_when_rounds_hold_both_variants():
    from podnet.stats.variants import variant_table

    rng = np.random.default_rng(9)
    drift = np.array([1.0, 1.4, 0.7, 1.2, 0.8, 1.1])  # both variants of a round feel it
    a = rows(10e9 * drift * rng.lognormal(0, 0.01, 6), variant="host-gw", launch_id="C1")
    b = rows(6e9 * drift * rng.lognormal(0, 0.01, 6), variant="vxlan", launch_id="C1")
    v = variant_table(tidy(a, b), {"comparisons": CMP, "primary": PRIMARY, "planning": {"min_to_stop": 6}})
    sbs = one(v, design="side-by-side")
    assert sbs["n_pairs"] == 6 and sbs["ci_low"] < 0.6 < sbs["ci_high"] < 0.62
    assert bool(sbs["preferred"]) and bool(sbs["precise"])
    seq = one(v, design="sequential")
    assert seq["rel_half_width"] > 5 * sbs["rel_half_width"]


def test_aa_variants_contain_one():
    from podnet.stats.variants import variant_table

    rng = np.random.default_rng(10)
    t = tidy(launch("host-gw", "L1", 1.0, 0.8, rng), launch("host-gw-b", "L2", 0.7, 0.8, rng))
    v = variant_table(t, {"comparisons": CMP, "primary": PRIMARY})
    nrm = one(v, design="normalised")
    assert nrm["ci_low"] < 1 < nrm["ci_high"] and not bool(nrm["different"])


def test_a_sequential_row_is_shown_but_never_different_nor_precise():
    """A/A with a launch-to-launch factor of 0.7: host-host's own variant ratio can only be
    sequential, its interval excludes 1 (the drift), and it must not count as a finding."""
    from podnet.stats.variants import variant_table

    rng = np.random.default_rng(10)
    t = tidy(launch("host-gw", "L1", 1.0, 0.8, rng), launch("host-gw-b", "L2", 0.7, 0.8, rng))
    broad = [{"by": "variant", "baseline": "host-gw"}]  # every path of the variant pair is primary
    v = variant_table(t, {"comparisons": CMP, "primary": broad})
    host = one(v[v["scenario"] == "host-host"], design="sequential")
    assert host["ci_high"] < 1 and host["role"] == "primary" and bool(host["preferred"])
    assert not bool(host["precise"]) and not bool(host["different"]) and np.isnan(host["p_adjusted"])
    nrm = one(v[v["scenario"] == "pod-pod"], design="normalised")
    assert (
        nrm["ci_low"] < 1 < nrm["ci_high"] and not bool(nrm["different"]) and np.isfinite(nrm["p_adjusted"])
    )


def test_no_variant_comparison_no_rows():
    from podnet.stats.variants import VARIANT_COLUMNS, variant_table

    rng = np.random.default_rng(11)
    v = variant_table(tidy(launch("a", "L1", 1, 0.8, rng)), {"comparisons": CMP[:1]})
    assert v.empty and list(v.columns) == VARIANT_COLUMNS


def test_the_findings_say_each_variant_ratio_with_its_design():
    from podnet.report.figures.data import Tables
    from podnet.report.findings import variant_markdown
    from podnet.stats.variants import variant_table

    rng = np.random.default_rng(12)
    t = tidy(launch("host-gw", "L1", 1.0, 0.9, rng), launch("vxlan", "L2", 1.4, 0.6, rng))
    v = variant_table(t, {"comparisons": CMP, "primary": PRIMARY, "planning": {"min_to_stop": 8}})
    empty = pd.DataFrame()
    text = variant_markdown(Tables(tidy=empty, summary=empty, ratios=empty, failed=empty, variants=v))
    assert text.startswith("- vxlan pod-pod iperf3 tcp throughput (receiver) is 0.6")
    assert "x host-gw [" in text and "each launch normalised by its own host-host" in text
    assert (
        "(target ±5 %), different, precise" in text and "sequential" not in text
    )  # the preferred design only
    assert "No variant ratio" in variant_markdown(
        Tables(tidy=empty, summary=empty, ratios=empty, failed=empty)
    )


def test_path_key_is_the_row_wise_join_of_the_path_columns():
    """variants.csv's path key, vectorised (issue 31): the same text per row as joining each row."""
    from podnet.stats import variants

    key = pd.DataFrame({c: [f"{c}-1", "", f"{c}-3", "x\x1ey"] for c in variants.PATH_COLUMNS}, dtype="string")
    assert list(variants._path_key(key)) == list(key.agg("\x1f".join, axis=1))
    assert variants._path_key(key).dtype == object
