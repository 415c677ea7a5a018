"""summarize(): every statistic against an independent reference.

References used: numpy reductions (mean, std, median, percentile),
scipy.stats.ttest_1samp(...).confidence_interval (a different scipy route to
the t interval), a hand-written BCa (Efron & Tibshirani 14.3, 14.15) and a
hand percentile bootstrap drawing the same indices as scipy, a plain Python
loop for n_needed, scipy.stats.kendalltau for the drift test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from podnet.parse.tidy import GROUP_COLUMNS
from podnet.stats import SUMMARY_COLUMNS, core, summarize
from podnet.stats._data import key_text
from podnet.stats.bootstrap import group_seed
from tests.stats_tables import one, rows, tidy

REL = 1e-9
X = [9.41e9, 9.38e9, 9.52e9, 9.11e9, 9.47e9, 9.60e9, 9.33e9, 9.45e9, 9.02e9, 9.50e9]
SEED = 20240611
BOOT = {"bootstrap": {"min_n": 3}}  # the bootstrap's own default starts at n = 40
KEY = key_text(tidy(rows(X))[GROUP_COLUMNS].iloc[:1])[0]  # the group's random stream


def close(a, b, rel=REL):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=0.0)


@pytest.fixture(scope="module")
def basic():
    return summarize(tidy(rows(X)))


def test_columns_and_one_row(basic):
    assert list(basic.columns) == SUMMARY_COLUMNS
    assert len(basic) == 1
    assert basic["source"].iloc[0] == "measured"


def test_descriptive_against_numpy(basic):
    r = basic.iloc[0]
    x = np.array(X)
    assert r["n"] == 10 and r["n_nan"] == 0
    assert close(r["mean"], x.mean())
    assert close(r["sd"], x.std(ddof=1))
    assert close(r["median"], np.median(x))
    assert r["min"] == x.min() and r["max"] == x.max()
    assert close(r["cv"], x.std(ddof=1) / x.mean())
    assert close(r["se"], x.std(ddof=1) / math.sqrt(10))


def log_ci(x, conf=0.95):
    """exp of scipy's t interval of the mean of ln x (an independent route to the log-t interval)."""
    ci = stats.ttest_1samp(np.log(np.asarray(x)), 0.0).confidence_interval(conf)
    return math.exp(ci.low), math.exp(ci.high)


def test_positive_quantity_gets_log_t_interval_of_the_geometric_mean(basic):
    r = basic.iloc[0]
    lo, hi = log_ci(X)
    assert r["kind"] == "positive" and r["estimand"] == "geometric mean"
    assert close(r["gmean"], stats.gmean(X)) and r["centre"] == r["gmean"]
    assert close(r["ci_low"], lo) and close(r["ci_high"], hi)
    assert r["ci_method"] == "log-t"
    assert close(r["rel_half_width"], (hi - r["gmean"]) / r["gmean"])


def test_positive_interval_never_reaches_zero():
    # issue 9: a t interval on 3 noisy throughputs reached below 0
    vals = [1.0e9, 0.1e9, 2.5e9]
    t_low = stats.ttest_1samp(vals, 0.0).confidence_interval(0.95).low
    assert t_low < 0  # the old interval
    r = summarize(tidy(rows(vals))).iloc[0]
    assert r["ci_low"] > 0 and close(r["ci_low"], log_ci(vals)[0])


def test_signed_quantity_gets_t_interval():
    s = summarize(tidy(rows(X, metric="clock_offset", unit="s"))).iloc[0]
    ci = stats.ttest_1samp(np.array(X), 0.0).confidence_interval(0.95)
    assert s["kind"] == "signed" and s["ci_method"] == "t" and s["estimand"] == "mean"
    assert close(s["ci_low"], ci.low) and close(s["ci_high"], ci.high)


def test_t_interval_other_confidence():
    s = summarize(tidy(rows(X)), {"confidence": 0.9}).iloc[0]
    lo, hi = log_ci(X, 0.9)
    assert close(s["ci_low"], lo) and close(s["ci_high"], hi)


def test_loss_fraction_gets_clopper_pearson_inside_0_1():
    # issue 9: loss 0,0,1,0,0 got the t interval [-0.355, 0.755]
    s = summarize(tidy(rows([0, 0, 1, 0, 0], metric="loss", unit="fraction"))).iloc[0]
    assert s["kind"] == "proportion" and s["ci_method"] == "clopper-pearson"
    ref = stats.binomtest(1, 5).proportion_ci(0.95, method="exact")
    assert close(s["ci_low"], ref.low) and close(s["ci_high"], ref.high)
    assert 0 <= s["ci_low"] < s["ci_high"] <= 1


def test_count_interval_clipped_at_zero():
    s = summarize(tidy(rows([0, 0, 9, 0], metric="retransmits", unit="count"))).iloc[0]
    ci = stats.ttest_1samp([0, 0, 9, 0], 0.0).confidence_interval(0.95)
    assert ci.low < 0 and s["ci_low"] == 0.0 and close(s["ci_high"], ci.high)
    assert s["ci_method"] == "t, clipped at 0"


def _hand_bca(x: np.ndarray, seed: int, resamples: int, batch: int, conf: float):
    """BCa from the textbook formulas, with the indices scipy draws (one integers() call per batch)."""
    rng = np.random.default_rng(group_seed(seed, KEY))
    n = len(x)
    means = []
    for k in range(0, resamples, batch):
        idx = rng.integers(0, n, (min(batch, resamples - k), n))
        means.append(x[idx].mean(axis=1))
    dist = np.concatenate(means)
    theta = x.mean()
    z0 = special.ndtri(((dist < theta).sum() + (dist <= theta).sum()) / (2 * len(dist)))
    jack = np.array([np.delete(x, i).mean() for i in range(n)])
    u = jack.mean() - jack
    a = (u**3).sum() / (6 * ((u**2).sum()) ** 1.5)
    alpha = (1 - conf) / 2
    out = []
    for z in (special.ndtri(alpha), special.ndtri(1 - alpha)):
        q = special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))
        out.append(np.quantile(dist, q))
    pct = np.quantile(dist, [alpha, 1 - alpha])
    return out, pct


def test_bootstrap_bca_against_hand_formula():
    r = summarize(tidy(rows(X)), BOOT).iloc[0]
    (lo, hi), _ = _hand_bca(np.array(X), SEED, 10000, 2000, 0.95)
    assert r["boot_method"] == "BCa" and r["boot_note"] == ""
    assert close(r["boot_ci_low"], lo) and close(r["boot_ci_high"], hi)


def test_bootstrap_percentile_against_manual_resampling():
    s = summarize(
        tidy(rows(X)), {"bootstrap": {"method": "percentile", "resamples": 3000, "batch": 1000, "min_n": 3}}
    ).iloc[0]
    _, (lo, hi) = _hand_bca(np.array(X), SEED, 3000, 1000, 0.95)
    assert s["boot_method"] == "percentile"
    assert close(s["boot_ci_low"], lo) and close(s["boot_ci_high"], hi)


def test_bootstrap_deterministic_and_independent_of_other_groups():
    rng = np.random.default_rng(5)
    others = [rows(9e9 * (1 + 0.05 * rng.standard_normal(10)), scenario=f"s{i}") for i in range(7)]
    alone = summarize(tidy(rows(X)), BOOT)
    again = summarize(tidy(rows(X)), BOOT)
    crowd = summarize(tidy(rows(X), *others), BOOT)
    pd.testing.assert_frame_equal(alone, again)
    r = one(crowd, scenario="pod-pod")
    assert r["boot_ci_low"] == alone["boot_ci_low"].iloc[0]
    assert r["boot_ci_high"] == alone["boot_ci_high"].iloc[0]
    # and a different seed gives different numbers (the seed is used)
    other_seed = summarize(tidy(rows(X)), {"bootstrap": {"seed": 1, "min_n": 3}}).iloc[0]
    assert other_seed["boot_ci_low"] != alone["boot_ci_low"].iloc[0]


def test_bootstrap_matches_scipy_single_call():
    res = stats.bootstrap(
        (np.array(X),),
        np.mean,
        n_resamples=10000,
        batch=2000,
        method="BCa",
        rng=np.random.default_rng(group_seed(SEED, KEY)),
    )
    r = summarize(tidy(rows(X)), BOOT).iloc[0]
    assert close(r["boot_ci_low"], res.confidence_interval.low)
    assert close(r["boot_ci_high"], res.confidence_interval.high)


def test_n_needed_against_hand_iteration():
    target, conf = 0.05, 0.95

    def hand(cv):
        n = 2
        while stats.t.ppf(0.5 + conf / 2, n - 1) * cv / math.sqrt(n) > target:
            n += 1
        return n

    for cv in [0.0, 0.004, 0.02, 0.0437, 0.1, 0.25, 0.9]:
        assert core.n_needed(np.array([cv]), conf, target)[0] == hand(cv), cv
    r = summarize(tidy(rows(X))).iloc[0]
    assert r["n_needed"] == hand(np.std(X, ddof=1) / np.mean(X))
    assert bool(r["precise"]) is True  # 10 values: min_to_stop reached


def test_not_precise_when_noisy():
    noisy = [1.0, 2.0, 1.5, 0.7]
    r = summarize(tidy(rows(noisy))).iloc[0]
    assert bool(r["precise"]) is False
    assert r["n_needed"] > 4


def test_tukey_outliers_against_hand_fences():
    x = np.array([10.0, 10.2, 9.9, 10.1, 10.0, 14.0, 10.05, 6.0])
    r = summarize(tidy(rows(x))).iloc[0]
    q1, q3 = np.percentile(x, [25, 75])
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    assert r["n_outliers"] == int(((x < lo) | (x > hi)).sum()) == 2
    assert close(r["outlier_low"], lo) and close(r["outlier_high"], hi)
    assert r["n"] == 8  # flagged, not dropped
    assert close(r["mean"], x.mean())


def test_mad_outliers_against_hand_rule():
    x = np.array([10.0, 10.2, 9.9, 10.1, 10.0, 11.0, 10.05, 6.0])
    r = summarize(tidy(rows(x)), {"outliers": {"rule": "mad", "k": 3.5}}).iloc[0]
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    z = np.abs(x - med) / (1.4826 * mad)
    assert r["n_outliers"] == int((z > 3.5).sum()) == 2
    assert r["outlier_rule"] == "mad k=3.5"


def test_outliers_not_judged_below_min_n():
    r = summarize(tidy(rows([1.0, 1.0, 50.0]))).iloc[0]
    assert pd.isna(r["n_outliers"])


def test_drift_against_kendalltau():
    x = np.array([100.0, 101.0, 103.0, 102.5, 104.0, 106.0, 105.0, 107.0])
    r = summarize(tidy(rows(x, repeats=[1, 2, 3, 4, 5, 6, 7, 8]))).iloc[0]
    ref = stats.kendalltau(np.arange(8), x)
    assert close(r["drift_tau"], ref.statistic) and close(r["drift_p"], ref.pvalue)
    assert bool(r["drift"]) is True
    assert close(r["drift_rel_change"], (x[4:].mean() - x[:4].mean()) / x.mean())


def test_drift_uses_repeat_order_not_row_order():
    x = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    reps = [6, 5, 4, 3, 2, 1]  # rows given in reverse repeat order: values fall with repeat
    r = summarize(tidy(rows(x, repeats=reps))).iloc[0]
    assert close(r["drift_tau"], -1.0, 1e-12)
    assert r["first_repeat"] == 1 and r["last_repeat"] == 6


def test_drift_with_ties_against_kendalltau():
    x = np.array([5.0, 5.0, 6.0, 5.0, 7.0, 7.0, 8.0])
    r = summarize(tidy(rows(x))).iloc[0]
    ref = stats.kendalltau(np.arange(7), x)
    assert close(r["drift_tau"], ref.statistic) and close(r["drift_p"], ref.pvalue)


def test_kendall_trend_many_sizes_against_scipy():
    rng = np.random.default_rng(3)
    for n in (5, 9, 20, 40):
        x = np.vstack([rng.standard_normal((6, n)), rng.integers(0, 3, (6, n)).astype(float)])
        tau, p = core.kendall_trend(x)
        for i, row in enumerate(x):
            ref = stats.kendalltau(np.arange(n), row)
            assert close(tau[i], ref.statistic, 1e-12) or abs(tau[i] - ref.statistic) < 1e-15
            assert close(p[i], ref.pvalue)


def test_no_drift_test_below_min_n():
    r = summarize(tidy(rows([1.0, 2.0, 3.0, 4.0]))).iloc[0]
    assert pd.isna(r["drift"]) and np.isnan(r["drift_p"])


# ---- edge cases -----------------------------------------------------------


def test_n1_has_no_interval():
    r = summarize(tidy(rows([5.0]))).iloc[0]
    assert r["n"] == 1 and r["mean"] == 5.0
    assert np.isnan(r["sd"]) and np.isnan(r["ci_low"]) and np.isnan(r["ci_high"])
    assert r["ci_method"] == "" and "n < 2" in r["ci_note"]
    assert np.isnan(r["boot_ci_low"]) and r["boot_note"].startswith("n < 40")
    assert pd.isna(r["n_needed"]) and bool(r["precise"]) is False


def test_n2_t_interval_uses_one_degree_of_freedom():
    r = summarize(tidy(rows([10.0, 12.0], metric="offset", unit="s"))).iloc[0]
    half = 12.706204736174703 * math.sqrt(2.0) / math.sqrt(2.0)  # t_{0.975,1} * sd / sqrt(n)
    assert close(r["ci_low"], 11.0 - half) and close(r["ci_high"], 11.0 + half)
    assert np.isnan(r["boot_ci_low"]) and r["boot_note"].startswith("n < 40")


def test_zero_variance():
    # a metric whose tool declares no printed resolution: equal values, a zero-width interval, said
    r = summarize(tidy(rows([0.1] * 6, tool="iperf3", metric="jitter", unit="s")), BOOT).iloc[0]
    assert r["ci_low"] == r["ci_high"] == 0.1
    assert "zero variance" in r["ci_note"] and not r["quantised"]
    # iperf3 prints throughput with 3 significant digits: equal values leave the rounding unknown
    r = summarize(tidy(rows([0.1] * 6)), BOOT).iloc[0]
    assert r["sd"] == 0.0 and r["mean"] == 0.1 and r["centre"] == 0.1
    # one common uniform rounding error of +-0.0005 (variance (0.001 / 0.1)^2 / 12 on the log scale),
    # and the sample variance taken as at least each value's own rounding noise (the same, over n = 6)
    k = 0.01**2 / 12
    df = (k + k / 6) ** 2 / ((k / 6) ** 2 / 5)
    half = stats.t.ppf(0.975, df) * np.sqrt(k + k / 6)
    assert r["ci_low"] == pytest.approx(0.1 * np.exp(-half)) and r["ci_high"] == pytest.approx(
        0.1 * np.exp(half)
    )
    assert r["quantised"] and "printed resolution alone" in r["ci_note"]
    assert np.isnan(r["boot_ci_low"]) and "degenerate" in r["boot_note"]
    assert r["n_needed"] == 2 and bool(r["precise"]) is False  # narrow, but 6 values < min_to_stop
    assert r["n_outliers"] == 0


def test_nan_values_dropped_and_counted():
    vals = X[:6] + [float("nan"), float("nan")]
    r = summarize(tidy(rows(vals))).iloc[0]
    assert r["n"] == 6 and r["n_nan"] == 2
    assert close(r["mean"], np.mean(X[:6]))
    assert close(r["ci_low"], log_ci(X[:6])[0])


def test_all_nan_group():
    r = summarize(tidy(rows([float("nan")] * 3))).iloc[0]
    assert r["n"] == 0 and r["n_nan"] == 3 and np.isnan(r["mean"])


def test_empty_input():
    s = summarize(tidy())
    assert len(s) == 0 and list(s.columns) == SUMMARY_COLUMNS
    s2 = summarize(pd.DataFrame())
    assert len(s2) == 0


def test_reference_rows_kept_apart():
    t = tidy(
        rows(X),
        rows([9.9e9], source="reference", repeat=None),
        rows([1.0, 2.0], source="reference", scenario="ref-only"),
    )
    s = summarize(t)
    meas = one(s, source="measured")
    assert meas["n"] == 10 and close(meas["mean"], np.mean(X))  # reference value not mixed in
    ref = one(s, source="reference", scenario="pod-pod")
    assert ref["n"] == 1 and ref["mean"] == 9.9e9
    only = one(s, scenario="ref-only")
    assert only["source"] == "reference" and only["mean"] == 1.5
    assert np.isnan(only["ci_low"]) and only["ci_method"] == "" and "reference" in only["ci_note"]
    assert pd.isna(only["precise"]) and pd.isna(only["n_needed"])


def test_groups_split_on_every_group_column():
    t = tidy(rows(X), rows(X[:3], streams=4), rows(X[:4], direction="reverse"), rows(X[:5], test=None))
    s = summarize(t)
    assert sorted(s["n"].tolist()) == [3, 4, 5, 10]


def test_unknown_setting_rejected():
    with pytest.raises(ValueError):
        summarize(tidy(rows(X)), {"confidnce": 0.9})
