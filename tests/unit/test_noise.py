"""podnet.stats.noise: the cluster's per-run CV against the interleaved floor's, per path and over paths."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from podnet.launch.spec import plan
from podnet.report import noise_text
from podnet.stats import noise

FLOOR = "floor-netns-veth"


def rows(variant, scenario, tool, test, metric, unit, values, launch="L1"):
    return [
        {
            "experiment": "e",
            "variant": variant,
            "scenario": scenario,
            "tool": tool,
            "test": test,
            "protocol": "tcp" if tool == "iperf3" else "icmp",
            "direction": "forward" if tool == "iperf3" else "roundtrip",
            "streams": 1,
            "repeat": i + 1,
            "run_id": f"{variant}/{scenario}/{tool}-{test}/r{i + 1:03d}",
            "metric": metric,
            "value": v,
            "unit": unit,
            "source": "measured",
            "launch_id": launch,
        }
        for i, v in enumerate(values)
    ]


A = [9.0e9, 10.0e9, 11.5e9, 10.2e9]
B = [5.0e9, 5.1e9, 4.6e9]
F = [22.0e9, 23.1e9, 22.4e9, 21.9e9, 22.8e9]


def tidy(floor_launch="L1"):
    r = rows("bridge", "pod-pod", "iperf3", "tcp", "throughput", "bit/s", A)
    r += rows("bridge", "host-host", "iperf3", "tcp", "throughput", "bit/s", B)
    r += rows("bridge", "pod-pod", "iperf3", "tcp", "retransmits", "count", [1, 50, 3])  # not headline
    r += rows("bridge", FLOOR, "iperf3", "tcp", "throughput", "bit/s", F, launch=floor_launch)
    r += rows("bridge", "pod-pod", "ping", "plain", "rtt_avg", "s", [1e-4, 1.1e-4, 0.9e-4])  # no ping floor
    return pd.DataFrame(r)


def cv(x):
    return statistics.stdev(x) / statistics.fmean(x)


def test_per_path_and_median_rows_against_the_same_launchs_floor():
    t = noise.noise_table(tidy(), {("iperf3", "tcp"): 4.0})
    assert set(t["metric"]) == {"throughput"} and set(t["tool"]) == {"iperf3"}  # headline, floor exists
    path = t[t["level"] == "path"].set_index("scenario")
    assert path.loc["pod-pod", "cv"] == pytest.approx(cv(A)) and path.loc["host-host", "cv"] == pytest.approx(
        cv(B)
    )
    assert np.allclose(path["floor_cv"], cv(F)) and (path["floor_n"] == 5).all()
    assert path.loc["pod-pod", "cv_ratio"] == pytest.approx(cv(A) / cv(F))
    med = t[t["level"] == "median"].iloc[0]
    assert med["groups"] == 2 and med["n"] == 7 and med["test_length_s"] == 4.0
    assert med["cv"] == pytest.approx(statistics.median([cv(A), cv(B)]))
    pooled = ((3 * cv(A) ** 2 + 2 * cv(B) ** 2) / 5) ** 0.5
    assert med["pooled_cv"] == pytest.approx(pooled)
    assert med["floor_source"] == "same launch"
    # the interval: F quantiles on the squared ratio, with the paths' and the floor's df
    lo, hi = noise.ratio_interval(pooled / cv(F), 5, 4)
    assert (med["ci_low"], med["ci_high"]) == pytest.approx((lo, hi))
    assert lo == pytest.approx(pooled / cv(F) / np.sqrt(stats.f.ppf(0.975, 5, 4)))
    assert med["meets"] == (med["cv_ratio"] <= 1.25)


def test_verdict_follows_the_interval_not_the_point():
    t = noise.noise_table(tidy())
    for _, r in t.iterrows():
        want = "within" if r["ci_high"] <= 1.25 else "above" if r["ci_low"] > 1.25 else "inconclusive"
        assert r["verdict"] == want
    assert (t["verdict"] == "above").any()  # cv(A) is ~10x the floor's: above even at n = 4 vs 5


def test_a_floor_from_another_launch_is_not_used_but_podnet_floors_is_named_as_separate():
    assert noise.noise_table(tidy(floor_launch="L0")).empty
    standalone = pd.DataFrame(
        rows("floor", "netns-veth", "iperf3", "tcp", "throughput", "bit/s", F, launch="")
    )
    t = noise.noise_table(pd.concat([tidy(floor_launch="L0"), standalone]))
    assert set(t["floor_source"]) == {"separate session (podnet floor)"} and set(t["variant"]) == {"bridge"}
    assert t["floor_cv"].iloc[0] == pytest.approx(cv(F))


def test_interval_covers_at_the_nominal_rate():
    """Equal CVs (ratio 1): the 95 % interval holds 1 in 93-97 % of 2,000 simulated launches (n = 10 each)."""
    rng = np.random.default_rng(2026)
    hits = 0
    for _ in range(2000):
        a = rng.normal(10, 0.5, 10)
        b = rng.normal(20, 1.0, 10)
        lo, hi = noise.ratio_interval(cv(list(a)) / cv(list(b)), 9, 9)
        hits += lo <= 1 <= hi
    assert 0.93 <= hits / 2000 <= 0.97


def test_empty_and_sentences():
    assert list(noise.noise_table(pd.DataFrame()).columns) == noise.NOISE_COLUMNS
    assert "not measured" in noise_text.markdown(pd.DataFrame())
    t = noise.noise_table(tidy(), {("iperf3", "tcp"): 4.0})
    (s,) = noise_text.sentences(t)
    med = t[t["level"] == "median"].iloc[0]
    assert f"{med['cv']:.3f}" in s and f"{med['floor_cv']:.3f}" in s and "4-s tests" in s
    phrase = {
        "within": "within the target",
        "above": "above the target",
        "inconclusive": "inconclusive against the target",
    }
    assert "median over 2 paths" in s and phrase[med["verdict"]] in s
    shown = noise_text.display_table(t)
    assert len(shown) == 3 and shown["<= 1.25x"].isin(["yes", "no"]).all()


def test_test_lengths_come_from_the_config():
    from tests.unit.test_launch_runner import BASE

    c = {**BASE, "launch": {**BASE["launch"], "defaults": {"duration": 3, "omit": 1}}}
    lengths = plan.test_lengths(c)
    assert lengths[("iperf3", "tcp")] == 4.0  # -t 3 -O 1
    assert lengths[("ping", "plain")] > 0
    assert plan.test_lengths({"experiment": "x"}) == {}


def test_primary_paths_are_flagged_and_get_their_own_median():
    primary = [
        {"by": "scenario", "baseline": "host-host", "treatments": ["pod-pod"], "tests": ["qperf:tcp_lat"]},
        {"by": "scenario", "baseline": "host-host", "treatments": ["pod-pod"], "tests": ["iperf3:tcp"]},
    ]
    assert noise.primary_paths(primary, "iperf3", "tcp") == {"pod-pod", "host-host"}
    assert noise.primary_paths(primary, "ping", "plain") == set()
    assert noise.primary_paths([{"by": "scenario", "baseline": "host-host"}], "ping", "plain") is None
    extra = pd.DataFrame(
        rows("bridge", "pod-svc", "iperf3", "tcp", "throughput", "bit/s", [1e9, 1.3e9, 0.8e9])
    )
    t = noise.noise_table(pd.concat([tidy(), extra]), primary=primary)
    path = t[t["level"] == "path"].set_index("scenario")
    assert list(path["primary"].sort_index()) == [True, True, False]  # host-host, pod-pod, pod-svc
    prim = t[t["level"] == "median-primary"].iloc[0]
    assert prim["groups"] == 2 and prim["cv"] == pytest.approx(statistics.median([cv(A), cv(B)]))
    assert t[t["level"] == "median"].iloc[0]["groups"] == 3
    (s,) = noise_text.sentences(t)
    assert "Over the 2 primary paths" in s
    assert "pod-pod (primary)" in set(noise_text.display_table(t)["path"])


def test_a_label_that_starts_with_an_acronym_keeps_its_capitals():
    # the embedded-cluster report read "ping plain rTT (mean)"
    r = rows("bridge", "pod-pod", "ping", "plain", "rtt_median", "s", [1e-4, 1.2e-4, 0.9e-4, 1.1e-4])
    r += rows("bridge", FLOOR, "ping", "plain", "rtt_median", "s", [2e-5, 2.4e-5, 1.8e-5, 2.2e-5])
    (s,) = noise_text.sentences(noise.noise_table(pd.DataFrame(r)))
    assert "RTT (median)" in s and "rTT" not in s
