"""plan() and cases_needing_more(): the adaptive-sampling decisions.

Reference: the relative half-width and n_needed recomputed by hand
(scipy.stats.ttest_1samp interval, a plain loop over n).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from podnet.stats import PLAN_COLUMNS, cases_needing_more, plan
from tests.stats_tables import one, rows, tidy


@pytest.fixture(autouse=True)
def headlines(monkeypatch):
    """The tools' headline metrics come from the adapters; pin them so these tests do not depend on them."""
    from podnet.tools import get

    monkeypatch.setattr(type(get("iperf3")), "headline", ("throughput", "rtt_avg"))


TIGHT = [100.0, 100.5, 99.8, 100.2]  # rel. half-width ~ 0.005
LOOSE = [100.0, 130.0, 80.0, 110.0]  # rel. half-width ~ 0.26


def hand_n_needed(x, target=0.05, conf=0.95):
    cv = np.std(x, ddof=1) / abs(np.mean(x))
    n = 2
    while stats.t.ppf(0.5 + conf / 2, n - 1) * cv / math.sqrt(n) > target:
        n += 1
    return n


def test_plan_against_hand():
    p = plan(tidy(rows(LOOSE)))
    assert list(p.columns) == PLAN_COLUMNS
    r = p.iloc[0]
    ci = stats.ttest_1samp(LOOSE, 0).confidence_interval(0.95)
    assert math.isclose(r["rel_half_width"], (ci.high - ci.low) / 2 / np.mean(LOOSE), rel_tol=1e-9)
    assert r["n_needed"] == hand_n_needed(LOOSE)
    assert not r["precise"] and r["headline"] and r["needs_more"]


def test_target_setting_changes_verdict():
    p = plan(tidy(rows(LOOSE)), {"planning": {"target_rel_half_width": 0.5}}).iloc[0]
    assert not p["precise"] and not p["needs_more"]  # within the width, but 4 values < min_to_stop
    p = plan(tidy(rows(LOOSE * 3)), {"planning": {"target_rel_half_width": 0.5}}).iloc[0]
    assert p["precise"] and not p["needs_more"]
    assert p["n_needed"] == hand_n_needed(LOOSE, 0.5)


def test_cases_needing_more():
    df = tidy(
        rows(TIGHT, variant="a"),  # met
        rows(LOOSE, variant="b"),  # not met
        rows(TIGHT[:2], variant="c"),  # below min_repeats
        rows(LOOSE, variant="d", scenario="s2"),  # not met, other scenario
        rows(TIGHT, variant="e", metric="rtt_avg", unit="s"),  # met on its headline metric...
        rows(
            LOOSE, variant="e", metric="loss", unit="fraction"
        ),  # ...a noisy non-headline metric does not count
    )
    got = cases_needing_more(df, None, ["variant", "scenario"])
    assert got == [
        {"variant": "b", "scenario": "pod-pod"},
        {"variant": "c", "scenario": "pod-pod"},
        {"variant": "d", "scenario": "s2"},
    ]


def test_cap_stops_sampling():
    rng = np.random.default_rng(2)
    noisy = 100 + 40 * rng.standard_normal(6)
    df = tidy(rows(noisy))
    assert cases_needing_more(df, None, ["variant"]) == [{"variant": "calico"}]
    assert cases_needing_more(df, {"planning": {"max_repeats": 6}}, ["variant"]) == []


def test_case_without_headline_metric_judged_by_minimum_only():
    assert cases_needing_more(tidy(rows([1.0, 5.0], metric="loss", unit="fraction")), None, ["variant"]) == [
        {"variant": "calico"}
    ]
    assert cases_needing_more(tidy(rows(LOOSE, metric="loss", unit="fraction")), None, ["variant"]) == []


def test_headline_metrics_come_from_the_adapter(monkeypatch):
    from podnet.tools import get

    df = tidy(rows(LOOSE, metric="throughput"))
    assert cases_needing_more(df, None, ["variant"]) == [{"variant": "calico"}]
    monkeypatch.setattr(type(get("iperf3")), "headline", ("latency",))  # throughput no longer headline
    assert cases_needing_more(df, None, ["variant"]) == []
    assert not plan(df)["headline"].any()


def test_headline_metrics_setting():
    df = tidy(rows(LOOSE, metric="loss", unit="fraction"))
    assert cases_needing_more(df, {"planning": {"headline_metrics": ["loss"]}}, ["variant"]) == [
        {"variant": "calico"}
    ]


def test_reference_rows_ignored_and_empty():
    df = tidy(rows(TIGHT), rows(LOOSE, source="reference", variant="b"))
    assert cases_needing_more(df, None, ["variant"]) == []
    assert cases_needing_more(tidy(), None, ["variant"]) == []
    assert len(plan(tidy())) == 0


def test_missing_values_in_case_columns_are_none():
    got = cases_needing_more(tidy(rows(LOOSE, test=None)), None, ["variant", "test"])
    assert got == [{"variant": "calico", "test": None}]


def test_unknown_case_column_rejected():
    with pytest.raises(ValueError):
        cases_needing_more(tidy(rows(TIGHT)), None, ["repeat"])


def test_plan_zero_mean_not_judged():
    r = one(plan(tidy(rows([-1.0, 1.0, -1.0, 1.0]))), variant="calico")
    assert not r["needs_more"] and "undefined" in r["plan_note"]


def test_cap_counts_runs_whose_value_is_nan():
    vals = [1.0, float("nan"), float("nan"), float("nan"), float("nan")]
    df = tidy(rows(vals))
    assert cases_needing_more(df, None, ["variant"]) == [{"variant": "calico"}]
    assert cases_needing_more(df, {"planning": {"max_repeats": 5}}, ["variant"]) == []
    r = plan(df).iloc[0]
    assert r["n"] == 1 and r["n_runs"] == 5


def test_infinite_values_dropped_like_nan():
    from podnet.stats import summarize

    r = summarize(tidy(rows([1.0, 2.0, float("inf"), 3.0]))).iloc[0]
    assert r["n"] == 3 and r["n_nan"] == 1 and r["mean"] == 2.0
