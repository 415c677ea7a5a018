"""Time to network between variants (net_ready_ratios.csv): each variant's net_ready_s P50, P90 and
P99 over the baseline variant's, the interval from a bootstrap over the shared rounds, its p and
Holm over the declared family (each treatment's P90). A clear difference is "different", equal
variants are not, too few runs give no ratio with the reason, disturbed runs are left out, and the
interval covers a known ratio. Synthetic per-pod rows: tests/netready_data.py; the round pairing,
zero spreads and the family: test_netready_rounds.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet import stats
from podnet.parse.tidy import coerce
from podnet.stats import core
from podnet.stats.netready import MIN_RUNS
from podnet.stats.netready_compare import (
    NET_READY_RATIO_COLUMNS,
    net_ready_ratios,
    percentile_ratio,
    variant_pairs,
)
from podnet.stats.settings import Settings
from tests.netready_data import pod_tidy

BASE = {"comparisons": [{"by": "variant", "baseline": "macvlan"}], "bootstrap": {"resamples": 2000}}


def both(*parts: pd.DataFrame) -> pd.DataFrame:
    return coerce(pd.concat(parts, ignore_index=True))


def test_a_clear_difference_is_different_and_the_ratio_is_of_the_rounds_percentiles():
    """Paired by round, each side's value is the geometric mean over the rounds of its round's
    percentile, and the ratio their quotient (the geometric mean of the rounds' ratios)."""
    t = pod_tidy({"macvlan": 1.0, "slow": 2.0}, runs=6)
    r = net_ready_ratios(t, BASE)
    assert list(r.columns) == NET_READY_RATIO_COLUMNS
    assert list(r["estimand"]) == ["p50", "p90", "p99"] and set(r["variant"]) == {"slow"}
    assert set(r["baseline_variant"]) == {"macvlan"} and set(r["metric"]) == {"net_ready_s"}
    ready = t[t["metric"] == "net_ready_s"]
    for _, row in r.iterrows():
        q = row["quantile"]
        per_round = ready.groupby(["variant", "round_seq"])["value"].quantile(q)
        tv, bv = (float(np.exp(np.log(per_round[v]).mean())) for v in ("slow", "macvlan"))
        assert row["value"] == pytest.approx(tv) and row["baseline_value"] == pytest.approx(bv)
        assert row["ratio"] == pytest.approx(tv / bv)
        sizes = (
            row["n_runs"],
            row["n_runs_baseline"],
            row["n_rounds"],
            row["n_pods"],
            row["n_pods_baseline"],
        )
        assert sizes == (6, 6, 6, 120, 120)
        assert (row["mode"], row["concurrency"]) == ("burst", 20)
    e = r.set_index("estimand")
    for name in ("p50", "p90"):
        assert e.loc[name, "ci_low"] < e.loc[name, "ratio"] < e.loc[name, "ci_high"]
        assert e.loc[name, "ci_method"].startswith("paired t over 6 rounds")
    assert (
        e.loc["p50", "ci_low"] > 1.2
        and e.loc["p50", "role"] == "exploratory"
        and not e.loc["p50", "different"]
    )
    p90 = e.loc["p90"]
    assert p90["role"] == "primary" and p90["m"] == 1 and p90["different"]
    assert p90["p_adjusted"] < 0.01 and p90["p_adjusted"] >= p90["p_value"]
    assert np.isnan(e.loc["p99", "ci_low"]) and "a point, no interval" in e.loc["p99", "note"]
    # the same table again: the same numbers (one seeded stream per group and pair)
    pd.testing.assert_frame_equal(r, net_ready_ratios(t, BASE))


def test_equal_variants_are_not_different():
    # two draws of one process under two names: an interval around 1
    a = pod_tidy({"macvlan": 1.0}, runs=6, seed=3)
    b = pod_tidy({"twin": 1.0}, runs=6, seed=4)
    r = net_ready_ratios(both(a, b), BASE)
    assert len(r) == 3 and set(r["variant"]) == {"twin"}
    shown = r[r["estimand"] != "p99"]
    assert (shown["ci_low"] < 1).all() and (shown["ci_high"] > 1).all()
    assert not r["different"].any() and (shown["p_value"] > 0.05).all()


def test_fewer_runs_than_min_runs_give_no_ratio_and_say_why():
    t = both(pod_tidy({"macvlan": 1.0}, runs=MIN_RUNS - 1), pod_tidy({"slow": 2.0}, runs=6, seed=2))
    r = net_ready_ratios(t, BASE)
    assert len(r) == 3
    assert r["ci_low"].isna().all() and r["ci_high"].isna().all() and r["ci_method"].eq("").all()
    assert r["p_value"].isna().all() and r["p_adjusted"].isna().all() and r["ratio"].isna().all()
    assert not r["different"].any()
    assert r["note"].str.contains(f"no ratio below {MIN_RUNS} runs a side").all()
    assert (r["n_runs_baseline"] == MIN_RUNS - 1).all()
    assert r.set_index("estimand").loc["p90", "m"] == 1  # in the family, as p = 1
    assert r.set_index("estimand").loc["p50", "value"] > 1.5  # each side's value is still given


def test_disturbed_runs_are_left_out():
    clean = pod_tidy({"macvlan": 1.0, "slow": 2.0}, runs=6)
    hit = pod_tidy({"slow": 50.0}, runs=1, seed=11)
    hit = hit.assign(disturbed=True, repeat=99, run_id=hit["run_id"].str.replace("r001", "r099"))
    r = net_ready_ratios(both(clean, hit), BASE)
    assert (r["n_runs"] == 6).all()
    pd.testing.assert_frame_equal(r, net_ready_ratios(clean, BASE))


def test_holm_runs_over_every_treatments_p90():
    t = pod_tidy({"macvlan": 1.0, "slow": 2.0, "same": 1.0}, runs=6)
    r = net_ready_ratios(t, BASE)
    assert len(r) == 6 and list(r["variant"]) == ["same"] * 3 + ["slow"] * 3
    fam = r[r["role"] == "primary"]
    assert list(fam["estimand"]) == ["p90", "p90"] and (fam["m"] == 2).all()
    assert np.allclose(fam["p_adjusted"], core.holm(fam["p_value"].to_numpy(dtype=float)))
    assert fam["p_value"].between(0, 1).all()
    assert list(r["different"]) == list((r["role"] == "primary") & (r["p_adjusted"] < 0.05))
    assert list(fam["different"]) == [False, True]


def test_the_baseline_is_the_variants_tables_and_treatments_may_be_named():
    by_scenario = {"by": "scenario", "baseline": "host-host"}
    s = Settings.of({"comparisons": [by_scenario, {"by": "variant", "baseline": "m", "treatments": ["c"]}]})
    assert variant_pairs(s, ["a", "c", "m"]) == [("c", "m")]
    s = Settings.of({"comparisons": [{"by": "variant", "baseline": "m"}]})
    assert variant_pairs(s, ["m", "c", "a"]) == [("a", "m"), ("c", "m")]
    two = pod_tidy({"m": 1.0, "c": 2.0}, runs=3)
    assert net_ready_ratios(two).empty  # no by: variant comparison declared
    declared = {"comparisons": [{"by": "variant", "baseline": "m"}]}
    one = net_ready_ratios(pod_tidy({"m": 1.0}, runs=3), declared)
    assert one.empty and list(one.columns) == NET_READY_RATIO_COLUMNS


def test_the_ratio_interval_covers_a_known_ratio():
    """Treatment runs are the baseline's process with every time 1.5x: each percentile's true ratio
    is 1.5. 12 runs a side of 10 pods; nominal 95 %, about 0.91 expected of a bootstrap over 12
    clusters (METHODS.md); 200 replications."""
    rng = np.random.default_rng(5)

    def side(scale: float) -> list[np.ndarray]:
        return [scale * rng.lognormal(0.0, 0.2) * rng.lognormal(0.0, 0.3, size=10) for _ in range(12)]

    reps, hits = 200, 0
    for _ in range(reps):
        iv = percentile_ratio(side(1.5), side(1.0), np.array([0.5]), 0.95, 500, rng)
        hits += bool(iv.low[0] <= 1.5 <= iv.high[0])
    assert hits / reps >= 0.83, hits / reps


def test_the_stats_stage_writes_net_ready_ratios_csv(tmp_path):
    path = tmp_path / "tidy.parquet"
    pod_tidy({"macvlan": 1.0, "slow": 2.0}, runs=4, pods=5).to_parquet(path)
    settings = {**BASE, "bootstrap": {"resamples": 200}}
    paths = stats.run(path, tmp_path / "out", settings, cache=False)
    written = pd.read_csv(paths["net_ready_ratios"])
    assert list(written.columns) == NET_READY_RATIO_COLUMNS and len(written) == 3
    assert written["different"].dtype == bool and set(written["variant"]) == {"slow"}
    assert len(pd.read_csv(paths["net_ready"])) == 2 * 3  # two variants, P50/P90/P99


def test_the_expanded_percentile_tails_and_p_agree():
    """Hesterberg's expanded tails: 0.012 % at 4 runs, 2.5 % in the limit; the expanded p of a
    resampled distribution whose tail is exactly the expanded tail is the nominal 5 %."""
    from podnet.stats.bootstrap import expanded_p, expanded_tail

    assert expanded_tail(4, 0.95) == pytest.approx(0.000120, rel=0.02)
    assert expanded_tail(6, 0.95) == pytest.approx(0.00243, rel=0.02)
    assert expanded_tail(10_000, 0.95) == pytest.approx(0.025, rel=0.01)
    assert expanded_tail(1, 0.95) == pytest.approx(0.025)
    for n in (3, 4, 10, 40):
        assert float(expanded_p(2 * expanded_tail(n, 0.95), n)) == pytest.approx(0.05, rel=1e-6)
        assert float(expanded_p(0.05, n)) > 0.05  # a plain 5 % is less after expansion
