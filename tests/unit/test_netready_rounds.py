"""Time to network between CNIs that can rank them (issue 44): ratios from a bootstrap over shared
rounds, no ratio below 4 runs a side, no p from a zero spread, no P99 interval from the pods of a
campaign, "different" only on the declared family (each CNI's P90 of each ranked time), and the
datapath's own time ranked beside the API-visible one. Synthetic rows: tests/netready_data.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.parse.tidy import coerce
from podnet.stats import core
from podnet.stats.netready import net_ready_table
from podnet.stats.netready_compare import net_ready_ratios
from tests.netready_data import pod_row, round_tidy

#: the ranked times: the API-visible one and the datapath's own
METRICS = ("net_ready_s", "first_reply_out_s")

BASE = {"comparisons": [{"by": "variant", "baseline": "macvlan"}], "bootstrap": {"resamples": 2000}}


def fixed_runs(variant: str, runs: int, scale: float = 1.0) -> pd.DataFrame:
    """Every run the same 20 pods (0.5 ... 1.45 s times ``scale``): nothing differs between runs."""
    values = scale * (0.5 + 0.05 * np.arange(20))
    rows = [
        pod_row(variant, r, p + 1, "net_ready_s", float(v), 20)
        for r in range(1, runs + 1)
        for p, v in enumerate(values)
    ]
    return coerce(pd.DataFrame(rows))


def by(r: pd.DataFrame, estimand: str, metric: str = "net_ready_s") -> pd.Series:
    return r[(r["estimand"] == estimand) & (r["metric"] == metric)].iloc[0]


def test_a_zero_spread_gives_no_p_and_no_interval():
    # identical sides whose runs are all alike: every resample gives the same ratio (old: [1, 1], p = 0)
    t = coerce(pd.concat([fixed_runs("macvlan", 6), fixed_runs("twin", 6)], ignore_index=True))
    r = net_ready_ratios(t, BASE)
    assert np.allclose(r["ratio"], 1.0)
    assert r["p_value"].isna().all() and r["ci_low"].isna().all() and r["ci_high"].isna().all()
    assert r["p_adjusted"].isna().all() and not r["different"].any()
    for e in ("p50", "p90"):
        assert "zero spread" in by(r, e)["note"]
    # a sure 2x with zero spread: the ratio as a point, still no p
    t = coerce(pd.concat([fixed_runs("macvlan", 6), fixed_runs("slow", 6, 2.0)], ignore_index=True))
    r = net_ready_ratios(t, BASE)
    assert np.allclose(r["ratio"], 2.0) and r["p_value"].isna().all() and not r["different"].any()
    # the interval itself: NaN, never a width-zero interval, never p = 0
    from podnet.stats.netready import log_t

    iv = log_t(np.array([1.0, 2.0]), np.array([[1.0] * 50, [2.0] * 50]), 6, 0.95)
    assert np.isnan(iv.low).all() and np.isnan(iv.high).all() and np.isnan(iv.p).all()
    one = net_ready_table(fixed_runs("macvlan", 6))
    assert one["ci_low"].isna().all() and one.set_index("estimand").loc["p50", "note"].endswith("no interval")


def test_fewer_than_4_runs_a_side_give_no_ratio_and_say_why():
    t = round_tidy({"macvlan": 1.0, "slow": 2.0}, runs=3, round_sd=0.05, pod_sd=0.1)
    r = net_ready_ratios(t, BASE)
    assert r["ratio"].isna().all() and r["p_value"].isna().all() and r["ci_low"].isna().all()
    assert len(r) == 3
    assert r["note"].str.contains("no ratio below 4 runs a side").all()
    assert not r["different"].any() and (r["value"] > r["baseline_value"]).all()  # each side's value stays
    four = net_ready_ratios(
        round_tidy({"macvlan": 1.0, "slow": 2.0}, runs=4, round_sd=0.05, pod_sd=0.1), BASE
    )
    assert four["ratio"].notna().all() and by(four, "p90")["p_value"] < 0.01


def test_shared_rounds_pair_the_runs():
    """Rounds that move both variants by 30 % (sd) and pods that barely differ: the ratio of 1.3 is
    sharp when the rounds are resampled jointly, lost when each side's runs are resampled alone."""
    t = round_tidy({"macvlan": 1.0, "slow": 1.3}, runs=6, round_sd=0.3, pod_sd=0.02)
    r = net_ready_ratios(t, BASE)
    p50 = by(r, "p50")
    assert 1.2 < p50["ci_low"] <= p50["ratio"] <= p50["ci_high"] < 1.4
    assert p50["ci_method"].startswith("paired t over 6 rounds") and p50["n_rounds"] == 6
    p90 = by(r, "p90")
    assert p90["p_value"] < 0.001 and p90["different"] and p90["m"] == 1
    # the same runs from two launches: no round is shared, so the sides are resampled on their own
    slow = t[t["variant"] == "slow"].assign(launch_id="L2")
    apart = net_ready_ratios(coerce(pd.concat([t[t["variant"] == "macvlan"], slow], ignore_index=True)), BASE)
    a50 = by(apart, "p50")
    assert (
        a50["n_rounds"] == 0
        and "not paired" in a50["note"]
        and a50["ratio"] == pytest.approx(p50["ratio"], rel=0.02)
    )
    assert np.log(a50["ci_high"] / a50["ci_low"]) > 5 * np.log(p50["ci_high"] / p50["ci_low"])
    assert by(apart, "p90")["p_value"] > 1e4 * p90["p_value"]


def test_the_family_is_each_treatments_p90_of_each_ranked_time():
    t = round_tidy(
        {"macvlan": 1.0, "same": 1.0, "slow": 1.5},
        runs=6,
        round_sd=0.1,
        run_sd=0.03,
        pod_sd=0.1,
        metrics=METRICS,
    )
    r = net_ready_ratios(t, BASE)
    assert set(r["metric"]) == set(METRICS) and len(r) == 2 * 2 * 3  # the datapath's time beside the API's
    from podnet.stats.netready_compare import METRICS as ranked

    assert ranked == METRICS
    prim = r[r["role"] == "primary"]
    assert set(prim["estimand"]) == {"p90"} and len(prim) == 4 and (prim["m"] == 4).all()
    assert np.allclose(prim["p_adjusted"], core.holm(prim["p_value"].to_numpy(dtype=float)))
    assert list(prim["different"]) == list(prim["p_adjusted"] < 0.05)
    assert prim.loc[prim["variant"] == "slow", "different"].all()
    assert not prim.loc[prim["variant"] == "same", "different"].any()
    rest = r[r["role"] == "exploratory"]
    assert rest["p_adjusted"].isna().all() and not rest["different"].any() and (rest["m"] == 0).all()
    # an A/A P50 whose unadjusted interval happens to exclude 1 would still not be "different"
    assert rest.loc[rest["estimand"] == "p50", "p_value"].notna().all()


def test_a_variants_own_p90_and_p99_are_points_and_its_p50_has_the_interval():
    t = round_tidy({"macvlan": 1.0}, runs=4, round_sd=0.1, pod_sd=0.2, metrics=METRICS)
    u = net_ready_table(t).set_index(["metric", "estimand"])
    for m in METRICS:
        assert u.loc[(m, "p50"), "ci_low"] < u.loc[(m, "p50"), "value"] < u.loc[(m, "p50"), "ci_high"]
        for e in ("p90", "p99"):
            x = u.loc[(m, e)]
            assert np.isnan(x["ci_low"]) and np.isnan(x["ci_high"]) and x["ci_method"] == ""
            assert f"{e.upper()}: a point" in x["note"]
    assert net_ready_table(round_tidy({"macvlan": 1.0}, runs=3))["ci_low"].isna().all()
    # between variants the P90 has its interval, the P99 of 80 pods a side is a point
    two = round_tidy({"macvlan": 1.0, "slow": 1.5}, runs=4, round_sd=0.1, pod_sd=0.2, metrics=METRICS)
    r = net_ready_ratios(two, BASE)
    assert by(r, "p90")["ci_low"] < by(r, "p90")["ratio"] < by(r, "p90")["ci_high"]
    assert np.isnan(by(r, "p99")["ci_low"]) and "500 pods" in by(r, "p99")["note"]


def test_paired_ratio_is_the_paired_t_of_the_rounds_log_percentile_ratios():
    """Paired by round, the ratio, interval and p of a fixed tiny campaign are the paired t of each
    round's log percentile ratio (t_3 over 4 rounds); the round-paired bootstrap of the pooled pods'
    percentile it replaced gave another ratio and a narrower interval."""
    from scipy import stats as st

    from podnet.stats.netready_compare import percentile_ratio

    base = [np.array([1.0, 1.1, 1.2, 1.4, 2.0]) * f for f in (1.0, 1.3, 0.9, 1.1)]
    treat = [np.array([1.2, 1.3, 1.5, 1.6, 2.6]) * f for f in (1.1, 1.2, 1.0, 1.0)]
    qs = np.array([0.5, 0.9])
    d = np.log(np.array([np.quantile(t, qs) / np.quantile(b, qs) for t, b in zip(treat, base)]))
    se, t3 = d.std(axis=0, ddof=1) / 2.0, st.t.ppf(0.975, 3)
    iv = percentile_ratio(treat, base, qs, 0.95, 200, np.random.default_rng(1), paired=True)
    assert iv.ratio == pytest.approx(np.exp(d.mean(axis=0)))
    assert iv.low == pytest.approx(np.exp(d.mean(axis=0) - t3 * se))
    assert iv.high == pytest.approx(np.exp(d.mean(axis=0) + t3 * se))
    assert iv.p == pytest.approx(2 * st.t.sf(np.abs(d.mean(axis=0)) / se, 3))
    # a round one side sat out is left out of both
    iv5 = percentile_ratio(
        [*treat, np.zeros(0)], [*base, base[0]], qs, 0.95, 200, np.random.default_rng(1), True
    )
    assert iv5.ratio == pytest.approx(iv.ratio) and iv5.p == pytest.approx(iv.p)


def test_equal_variants_whose_runs_spread_more_than_their_pods_are_covered():
    """The under-load bursts' measured noise (pods log sd 0.07, runs 0.12, rounds 0.05), 9 rounds of
    20 pods, A/A: the P90 interval covers 1 in about 95 % (the round-paired bootstrap of the pooled
    pods' P90: 90 %; benchmarks/sim_netready.py). 400 campaigns, one seed."""
    from podnet.stats.netready_compare import percentile_ratio

    rng = np.random.default_rng(44)
    hits, reps = 0, 400
    for _ in range(reps):
        shared = rng.normal(0.0, 0.05, 9)

        def side() -> list[np.ndarray]:
            level = shared + rng.normal(0.0, 0.12, 9)
            return list(np.exp(level[:, None] + rng.normal(0.0, 0.07, (9, 20))))

        iv = percentile_ratio(side(), side(), np.array([0.9]), 0.95, 1000, rng, paired=True)
        hits += bool(iv.low[0] <= 1.0 <= iv.high[0])
    assert hits / reps >= 0.93, hits / reps
