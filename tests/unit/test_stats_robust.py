"""Robust paired intervals (podnet.stats.robust): known values, symmetry, a contaminated sample."""

import numpy as np
import pytest
from scipy import stats

from podnet.stats import robust
from podnet.stats.variants import side_by_side


def test_signed_rank_critical_values_are_the_tables():
    # two-sided 5 % critical values of the Wilcoxon signed-rank statistic (Hollander & Wolfe, table A.4)
    assert [robust.wilcoxon_rank(n) for n in (5, 6, 7, 8, 9, 10, 15, 20, 30)] == [
        -1,
        0,
        2,
        3,
        5,
        8,
        25,
        52,
        137,
    ]
    # the normal approximation above 200 pairs continues the exact values
    assert abs(robust.wilcoxon_rank(201) - robust.wilcoxon_rank(200)) < 300


def test_trimmed_mean_known_values():
    x = np.arange(1.0, 11.0)  # 1 ... 10, 20 % trimmed: g = 2, h = 6
    got = robust.trimmed_yuen(x, trim=0.2)
    assert got.estimate == pytest.approx(5.5)  # mean of 3 ... 8
    w = np.array([3, 3, 3, 4, 5, 6, 7, 8, 8, 8], dtype=float)  # winsorized at the same g
    se = np.sqrt(9 * w.var(ddof=1) / (6 * 5))
    q = stats.t.ppf(0.975, 5)
    assert (got.low, got.high) == pytest.approx((5.5 - q * se, 5.5 + q * se))
    assert got.estimate == pytest.approx(stats.trim_mean(x, 0.2))


def test_untrimmed_yuen_is_the_t_interval():
    rng = np.random.default_rng(1)
    x = rng.normal(0.1, 0.2, 15)
    a, b = robust.trimmed_yuen(x, trim=0.0), robust.mean_t(x)
    res = stats.ttest_1samp(x, 0.0)
    ci = res.confidence_interval(0.95)
    assert (a.low, a.high) == pytest.approx((ci.low, ci.high))
    assert (b.low, b.high) == pytest.approx((ci.low, ci.high))
    assert a.p == pytest.approx(res.pvalue) and b.p == pytest.approx(res.pvalue)


def test_hodges_lehmann_known_values():
    got = robust.hodges_lehmann(np.arange(1.0, 7.0))  # n = 6: k = 0, the interval is [min, max]
    assert got.estimate == pytest.approx(3.5)
    assert (got.low, got.high) == (1.0, 6.0)
    assert np.isnan(robust.hodges_lehmann(np.arange(1.0, 6.0)).low)  # n = 5 cannot reach 95 %


def test_hodges_lehmann_interval_inverts_the_signed_rank_test():
    rng = np.random.default_rng(2)
    x = rng.normal(0.3, 1.0, 12)
    got = robust.hodges_lehmann(x)
    eps = 1e-9
    p = lambda shift: stats.wilcoxon(x - shift, method="exact").pvalue  # noqa: E731
    assert p(got.low - eps) < 0.05 <= p(got.low + eps)
    assert p(got.high + eps) < 0.05 <= p(got.high - eps)


@pytest.mark.parametrize("method", robust.METHODS)
def test_symmetric_data_give_a_symmetric_interval_about_the_centre(method):
    half = np.array([0.01, 0.03, 0.04, 0.07, 0.11, 0.2, 0.5])
    x = 0.25 + np.concatenate([-half, half, [0.0]])
    got = robust.location(x, method=method)
    assert got.estimate == pytest.approx(0.25, abs=1e-9)
    assert got.estimate - got.low == pytest.approx(got.high - got.estimate, rel=1e-6)
    assert got.low < 0.25 < got.high


def test_a_contaminated_sample_swamps_the_mean_not_the_robust_intervals():
    # 20 rounds with a paired log-ratio sd of 0.03 around ln 0.9, two of them disturbed on one side (x3)
    rng = np.random.default_rng(3)
    d = np.log(0.9) + rng.normal(0.0, 0.03, 20)
    d[[1, 4]] += np.log(3.0)
    mean = robust.mean_t(d)
    assert (mean.high - mean.low) / 2 > 0.1  # ±10 % and more: not resolved at ±5 %
    for method in ("trimmed", "hodges-lehmann", "huber"):
        got = robust.location(d, method=method)
        assert (got.high - got.low) / 2 < 0.04, method
        assert got.low < np.log(0.9) < got.high, method


@pytest.mark.parametrize("method", robust.METHODS)
def test_rows_are_independent(method):
    rng = np.random.default_rng(4)
    x = rng.standard_t(3, (4, 17))
    whole = robust.location(x, method=method)
    for i, row in enumerate(x):
        one = robust.location(row, method=method)
        for a, b in zip(whole, one):
            assert a[i] == pytest.approx(float(b), nan_ok=True)


def test_paired_ratio_drops_missing_rounds_and_matches_side_by_side_for_the_mean():
    t = np.array([9.0, np.nan, 8.0, 8.5, 9.2, 8.8])
    b = np.array([10.0, 10.0, 9.0, 0.0, 10.1, 9.7])
    got = robust.paired_ratio(t, b, method="mean")
    ref = side_by_side(t, b, adaptive=False)  # 4 pairs at 95 %: the mean's t interval
    assert got.n == 4 == ref.n and ref.method == "mean"
    for a, c in zip(got[:5], ref[:5]):
        assert float(a) == pytest.approx(float(c))
    same = robust.paired_ratio([2.0, 3.0, 4.0], [2.0, 3.0, 4.0], method="mean")
    assert same.ratio == 1.0 and same.low == same.high == 1.0  # zero spread: zero width, no p
    assert np.isnan(same.p)


def test_incomplete_rows_are_refused():
    with pytest.raises(ValueError, match="complete"):
        robust.trimmed_yuen(np.array([[0.1, np.nan, 0.2]]))
    with pytest.raises(ValueError, match="unknown method"):
        robust.location([0.1, 0.2, 0.3], method="median")


def test_the_stated_interval_is_hodges_lehmann_at_the_stop_level():
    assert robust.stop_level(0.95) == pytest.approx(0.975)
    assert robust.min_pairs(0.95) == 6 and robust.min_pairs(0.975) == 7
    rng = np.random.default_rng(5)
    b = 10 * rng.lognormal(0, 0.05, 12)
    t = 0.8 * b * rng.lognormal(0, 0.05, 12)
    got = robust.side_by_side(t, b)
    ref = robust.hodges_lehmann(np.log(t) - np.log(b), 0.975)
    assert got.method == "hodges-lehmann" and got.level == pytest.approx(0.975)
    got3 = (float(np.log(got.low)), float(np.log(got.ratio)), float(np.log(got.high)))
    assert got3 == pytest.approx((float(ref.low), float(ref.estimate), float(ref.high)))
    fixed = robust.side_by_side(t, b, adaptive=False)
    assert got.low < fixed.low < fixed.high < got.high  # the stop's interval is the wider one
    few = robust.side_by_side(t[:6], b[:6])  # 6 pairs: no Wilcoxon interval at 97.5 %: the t interval
    ref = robust.mean_t(np.log(t[:6]) - np.log(b[:6]), 0.975)
    assert few.method == "mean" and np.log(few.low) == pytest.approx(ref.low)


def test_a_difference_stop_reads_the_paired_t_p_at_the_stop_level():
    from podnet.stats import onep

    rng = np.random.default_rng(6)
    b = 10 * rng.lognormal(0, 0.02, 12)
    assert robust.DIFFERENT_LEVEL > robust.stop_level(0.95)
    assert onep.STOP_P == pytest.approx(1 - robust.DIFFERENT_LEVEL)

    def p_t(t):
        return float(robust.stated(np.log(t) - np.log(b)).p_t)

    clear, same = p_t(1.2 * b * rng.lognormal(0, 0.02, 12)), p_t(b * rng.lognormal(0, 0.02, 12))
    assert bool(onep.stops_as_different(clear)) and not bool(onep.stops_as_different(same))
    # a 97.5 % interval that just excludes 1 is not yet a difference stop
    d = np.log(1.018) + 0.03 * np.array([-1.2, -0.9, -0.6, -0.3, -0.1, 0.0, 0.1, 0.3, 0.6, 0.9, 1.2, 0.05])
    t = b * np.exp(d)
    r = robust.side_by_side(t, b)
    assert r.low > 1.0 and not bool(onep.stops_as_different(p_t(t)))
    assert not bool(onep.stops_as_different(np.nan))  # no p: no stop
