"""H's robust paired interval, wired into every paired ratio the tables and launchers state
(podnet.stats.robust.stated via variants.side_by_side, paired.paired, family.judged, planning.met)."""

import numpy as np
import pytest
from scipy import stats

from podnet.config.stages import stats_of
from podnet.stats import compare, robust
from podnet.stats.planning import met
from podnet.stats.settings import adaptive_rounds, resolve
from podnet.stats.variants import side_by_side, variant_table
from tests.stats_tables import one, rows, side_by_side_rows, tidy

VCMP = [{"by": "variant", "baseline": "a"}]
PRIM = [{"by": "variant", "baseline": "a"}]
US = 1e-6


def _pairs(n, ratio=0.9, sd=0.05, seed=7):
    rng = np.random.default_rng(seed)
    b = 9e9 * rng.lognormal(0, 0.1, n)
    return b * ratio * rng.lognormal(0, sd, n), b


def test_side_by_side_is_hodges_lehmann_at_97_5_after_an_adaptive_stop():
    t, b = _pairs(14)
    got = side_by_side(t, b)
    ref = robust.side_by_side(t, b)  # H's rule without a printed resolution: the same interval
    assert (got.method, got.level) == ("hodges-lehmann", 0.975)
    assert got.ratio == pytest.approx(ref.ratio) and got.low == pytest.approx(ref.low)
    assert got.high == pytest.approx(ref.high)
    assert got.p == pytest.approx(stats.wilcoxon(np.log(t) - np.log(b)).pvalue)
    fixed = side_by_side(t, b, adaptive=False)
    assert fixed.level == 0.95 and fixed.high - fixed.low < got.high - got.low
    few = side_by_side(t[:6], b[:6])  # no Wilcoxon interval at 97.5 % on 6 pairs: the mean's t
    assert few.method == "mean"
    d = np.log(t[:6] / b[:6])
    half = stats.t.ppf(0.9875, 5) * d.std(ddof=1) / np.sqrt(6)
    assert few.low == pytest.approx(np.exp(d.mean() - half))


def test_one_disturbed_round_barely_moves_the_interval():
    t, b = _pairs(20, sd=0.03)
    t2 = t.copy()
    t2[3] *= 4.0  # a round run while the machine had other work
    clean, hit = side_by_side(t, b), side_by_side(t2, b)
    width = lambda iv: np.log(iv.high / iv.low)  # noqa: E731
    assert width(hit) < 1.5 * width(clean)
    assert abs(np.log(hit.ratio / clean.ratio)) < 0.02


def test_quantised_values_never_give_a_zero_width_hodges_lehmann_interval():
    n = 12
    b = np.full(n, 20 * US)
    got = side_by_side(b * 1.05, b, quantum=(US, US))  # 21 against 20 us, printed equal every round
    assert got.method == "mean" and bool(got.quantised)  # a lattice: A's t interval with its rounding
    assert got.low < got.ratio < got.high
    # the rounding alone: +/- z_0.9875 sqrt(V_T + V_B + floor / n), V = q^2/12 per side at sigma 0
    r = (US / 21e-6) ** 2 / 12 + (US / 20e-6) ** 2 / 12
    z = stats.norm.ppf(0.9875)
    assert np.log(got.high / got.ratio) == pytest.approx(z * np.sqrt(r * (1 + 1 / n)), rel=1e-3)
    assert np.isfinite(got.p) and got.p > 1e-10  # the normal test against the rounding, not 1e-125
    plain = side_by_side(b * 1.05, b)  # no resolution declared: zero width, no p (A's rule kept)
    assert plain.low == plain.high and np.isnan(plain.p)


def test_rounding_adds_in_quadrature_to_a_spread_above_it():
    rng = np.random.default_rng(2)
    b = 20 * US * np.exp(rng.normal(0, 0.03, 15))
    t = 1.1 * b * np.exp(rng.normal(0, 0.03, 15))
    tq, bq = np.round(t / US) * US, np.round(b / US) * US
    with_q, without = side_by_side(tq, bq, quantum=(US, US)), side_by_side(tq, bq)
    # whole us at 20 us is a lattice against a 3 % spread: the mean's t interval, not the median's
    assert (with_q.method, without.method) == ("mean", "hodges-lehmann")
    fine = side_by_side(t, b, quantum=(1e-9, 1e-9))  # a resolution far below the spread: HL, as without
    assert fine.method == "hodges-lehmann" and fine.low == pytest.approx(side_by_side(t, b).low, rel=1e-6)


def test_stats_learn_the_stop_from_the_launch_config():
    assert stats_of({"launch": {"adaptive": {"enabled": True}}})["paired"]["adaptive"] is True
    assert stats_of({"launch": {}})["paired"]["adaptive"] is False
    kept = stats_of({"launch": {"adaptive": {"enabled": True}}, "stats": {"paired": {"adaptive": False}}})
    assert kept["paired"]["adaptive"] is False
    assert adaptive_rounds(resolve()) is False  # a bare stats mapping: fixed rounds
    assert adaptive_rounds(resolve(stats_of({"launch": {"adaptive": {"enabled": True}}})))


_sbs = side_by_side_rows


@pytest.mark.parametrize("adaptive,level", [(True, 0.975), (False, 0.95)])
def test_both_tables_state_the_method_and_level(adaptive, level):
    s = {"comparisons": VCMP, "primary": PRIM, "paired": {"adaptive": adaptive}}
    t = _sbs(12, 0.8, 0.02)
    v = variant_table(t, s)
    sbs = one(v, design="side-by-side")
    assert (sbs["interval_method"], sbs["interval_level"]) == ("hodges-lehmann", level)
    assert set(v.loc[v["design"] != "side-by-side", "interval_method"]) == {"welch"}
    assert set(v.loc[v["design"] != "side-by-side", "interval_level"]) == {0.95}
    r = compare(t, s).iloc[0]
    assert (r["paired_interval_method"], r["paired_interval_level"]) == ("hodges-lehmann", level)
    # the same pairs, the same rule: both tables state one interval
    assert r["paired_ci_low"] == pytest.approx(sbs["ci_low"]) and r["paired_ci_high"] == pytest.approx(
        sbs["ci_high"]
    )
    # one interval and one p in both tables (METHODS.md, "One comparison, one p"): the paired t, not
    # the exact Wilcoxon of the interval (2 / 2**12 for 12 pairs of one sign)
    assert sbs["p_test"] == "t" and sbs["p_value"] < 1e-6
    assert r["p_test"] == "t" and r["p_value"] == pytest.approx(sbs["p_value"])


def test_stop_when_different_reads_the_one_p_at_the_stop_level():
    # ratio 0.98 at sd 0.02 on 10 pairs: the 97.5 % interval excludes 1, the p is not below 0.007
    d = np.array([-0.04, -0.005, -0.035, 0.007, -0.03, -0.015, -0.045, -0.01, -0.025, 0.009])
    st = robust.stated(d)
    assert st.high < 0 and 0.007 < st.p_t < 0.05
    s = resolve({"planning": {"stop_when_different": True}})
    # the comparison's p, not its interval, makes the stop
    assert not met([0.2], 0.05, [10], s, low=[0.9], high=[0.99], p=[float(st.p_t)])[0]
    assert met([0.2], 0.05, [10], s, low=[0.9], high=[1.5], p=[0.001])[0]
    assert not met([0.2], 0.05, [9], s, low=[0.9], high=[1.5], p=[0.001])[0]  # below min_to_stop
    t = tidy(
        rows(9e9 * np.ones(10), variant="a", launch_id="L"),
        rows(9e9 * np.exp(d), variant="b", launch_id="L"),
    )
    cfg = {"comparisons": VCMP, "primary": PRIM, "planning": {"stop_when_different": True}}
    r = compare(t, {**cfg, "paired": {"adaptive": True}}).iloc[0]
    assert r["paired_ci_high"] < 1 and r["p_value"] == pytest.approx(
        float(st.p_t), rel=1e-3
    )  # + rounding terms
    assert "paired_stop_excludes_1" not in r
