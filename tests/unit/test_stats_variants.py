"""Variant-ratio estimators (podnet.stats.variants): the intervals the drift simulation checks."""

import numpy as np
import pytest
from scipy import stats

from podnet.stats import compare
from podnet.stats.variants import normalised, sequential, side_by_side
from tests.stats_tables import one, rows, tidy

DRIFT = np.array([1.0, 1.35, 0.75, 1.2, 0.85, 1.1, 0.95, 1.25])
NOISE = np.array([1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99])


def test_side_by_side_is_the_pipelines_paired_interval():
    # the same numbers through compare(): its paired interval (within one launch) is side_by_side's
    base = rows(10e9 * DRIFT, scenario="host-host", launch_id="L1")
    treat = rows(8.7e9 * DRIFT * NOISE, scenario="pod-pod", launch_id="L1")
    r = compare(tidy(base, treat), {"comparisons": [{"by": "scenario", "baseline": "host-host"}]})
    row = one(r, treatment="pod-pod", metric="throughput")
    got = side_by_side(8.7e9 * DRIFT * NOISE, 10e9 * DRIFT)
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
