"""The adaptive stop rule both samplers share (podnet.launch.rounds.stop): open, met, why, pure."""

from __future__ import annotations

import json

from podnet.launch.campaign.account import SideBySideAccount, VariantJudged
from podnet.launch.rounds import stop as rule
from podnet.launch.rounds.account import Account, Ended, Judged
from podnet.stats import resolve
from podnet.stats.planning import met

A = ("pod-pod", "iperf3", "tcp")
B = ("host-host", "iperf3", "tcp")
C = ("pod-host", "iperf3", "tcp")


def comp(*cases, met=False, rhw=0.1, note="", more_helps=True):
    return rule.Comparison(
        cases=cases, met=met, rel_half_width=rhw, target_rel_half_width=0.05, note=note, more_helps=more_helps
    )


def always(_):
    return True


def never(_):
    return False


def test_an_unmet_comparison_opens_its_cases_until_one_is_capped():
    r = rule.StopRule(max_repeats=12)
    step = r.step([comp(A, B), comp(C, B, met=True)], always, never)
    assert step.stop == "" and step.cases == {A, B} and len(step.unmet) == 1
    # one of its cases at the cap: the comparison closes, the stop names the cap
    capped = r.step([comp(A, B)], always, lambda k: k == B)
    assert capped.stop == rule.MAX_REPEATS and not capped.cases
    # a case that cannot run (no cap reached): failed runs
    assert r.step([comp(A, B)], lambda k: k != A, never).stop == rule.FAILED_RUNS
    assert r.capped(3, 12) and not r.capped(3, 11)


def test_nothing_judged_and_all_met_are_ends_of_their_own():
    r = rule.StopRule(max_repeats=12)
    assert r.step([], always, never).stop == rule.NOTHING_TO_JUDGE
    assert r.step([comp(A, B, met=True)], always, never).stop == rule.ALL_MET


def test_min_to_stop_keeps_a_narrow_interval_open():
    s = resolve({"planning": {"min_repeats": 3, "min_to_stop": 10}})
    narrow = bool(met(0.01, 0.05, 4, s))  # narrow enough, but on 4 pairs
    assert not narrow and bool(met(0.01, 0.05, 10, s))
    step = rule.StopRule(12).step([comp(A, B, met=narrow, rhw=0.01)], always, never)
    assert step.stop == "" and step.cases == {A, B}


def test_stop_when_different_closes_a_wide_interval_whose_p_is_below_the_stop_level():
    on = resolve({"planning": {"min_repeats": 3, "min_to_stop": 4, "stop_when_different": True}})
    off = resolve({"planning": {"min_repeats": 3, "min_to_stop": 4, "stop_when_different": False}})
    wide = {"rel_half_width": 0.2, "target": 0.05, "n": 6, "p": 0.001}
    assert bool(met(**wide, settings=on)) and not bool(met(**wide, settings=off))
    r = rule.StopRule(12)
    assert (
        r.step([comp(A, B, met=bool(met(**wide, settings=on)), rhw=0.2)], always, never).stop == rule.ALL_MET
    )
    assert r.step([comp(A, B, met=bool(met(**wide, settings=off)), rhw=0.2)], always, never).stop == ""


def test_the_budget_and_max_runs_end_the_loop():
    r = rule.StopRule(12, budget_s=100.0, max_runs=20)
    assert not r.over_budget(60, 40) and r.over_budget(60, 41)
    assert not r.over_runs(18, 2) and r.over_runs(18, 3)
    unlimited = rule.StopRule(12)
    assert not unlimited.over_budget(1e9, 1e9) and not unlimited.over_runs(10**6, 10**6)
    c = comp(A, B)
    assert rule.reason(c, stop=rule.BUDGET_SPENT, runnable=True, capped=False) == "budget spent"


def test_fewer_than_2_pairs_stays_open_with_its_reason():
    assert rule.too_few_pairs(1) and rule.too_few_pairs(None) and not rule.too_few_pairs(2)
    short = comp(A, B, rhw=0.01, note="fewer than 2 pairs (1) within the launch's rounds")
    step = rule.StopRule(12).step([short], always, never)
    assert step.stop == "" and step.cases == {A, B}
    why = rule.reason(short, stop=rule.MAX_REPEATS, runnable=True, capped=True)
    assert short.too_few_pairs and why == "fewer than 2 pairs"


def test_a_comparison_no_round_can_help_is_never_open():
    failed = comp(A, B, rhw=None, more_helps=False)
    step = rule.StopRule(12).step([failed], always, never)
    assert step.stop == rule.FAILED_RUNS and not step.cases
    assert rule.reason(failed, stop=step.stop, runnable=True, capped=False) == "failed runs"
    # a case's headline without an interval is not put down to failed runs while it can still run
    why = rule.reason(failed, stop=rule.MAX_REPEATS, runnable=True, capped=True, no_interval_is_failure=False)
    assert why == "max_repeats reached"
    assert rule.reason(comp(A, B), stop="", runnable=True, capped=False, interrupted=True) == "interrupted"
    assert rule.reason(comp(A, B, met=True), stop="", runnable=False, capped=True) == "met"


def test_the_judging_settings_state_the_adaptive_level():
    s = resolve({})
    judged = rule.adaptive_settings(s, [], require_same_repeats=False)
    assert judged["paired"]["adaptive"] is True and judged["paired"]["require_same_repeats"] is False
    assert judged["comparisons"] == [] and s["paired"]["adaptive"] is None  # the stats stage's own view


def test_the_accounts_serialize_at_the_edge_in_their_key_order():
    item = Judged(
        source="declared", by="scenario", baseline="host-host", treatment="pod-pod", scenario="pod-pod",
        tool="iperf3", test="tcp", metric="throughput", rel_half_width=None, target_rel_half_width=0.05,
        met=False, cases=(A, B), more_helps=False,
    )  # fmt: skip
    doc = Ended(item, "failed runs").to_json()
    assert list(doc)[:4] == ["scenario", "tool", "test", "metric"] and doc["cases"] == [list(A), list(B)]
    assert (doc["status"], doc["reason"]) == ("unmet", "failed runs") and "met" not in doc
    assert "ratio" not in doc and list(doc)[-2:] == ["status", "reason"]
    ratio = Judged(**{**item.__dict__, "source": "ratio", "ratio": 0.9, "n": 6.0})
    assert list(ratio.to_json())[:3] == ["by", "baseline", "treatment"] and ratio.to_json()["ratio"] == 0.9
    acc = Account(
        podnet_adaptive=1, experiment="e", variant="v", launch_id="l", started="s", ended="t",
        mode="primary", target_rel_half_width=0.05, max_repeats=12, budget_s=None, max_runs=None,
        wall_s=1.0, base_rounds=3, adaptive_rounds=0, stop="failed runs", cases=2, runs_launched=6,
        runs_recorded=6, fixed_repeats=10, fixed_protocol_runs=20, items=(Ended(item, "failed runs"),),
    )  # fmt: skip
    out = json.loads(json.dumps(acc.to_json()))
    assert list(out)[0] == "podnet_adaptive" and list(out)[-1] == "items" and acc.met == 0
    unpaired = VariantJudged(
        variant="b", baseline_variant="a", cases=(A,), metric="throughput", rel_half_width=None,
        target_rel_half_width=0.05, n_pairs=0, met=False, note="fewer than 2 pairs of its rounds",
    )  # fmt: skip
    assert list(unpaired.to_json()) == [
        "variant", "baseline_variant", "case", "metric", "rel_half_width", "target_rel_half_width",
        "n_pairs", "met", "note",
    ]  # fmt: skip
    sbs = SideBySideAccount(
        launch_id="l", experiment="e", variants=["a", "b"], design="side-by-side", added_rounds=0,
        stop="budget spent", runs_launched=12, min_to_stop=4, max_repeats=12, budget_s=70.0,
        items=(unpaired,),
    )  # fmt: skip
    assert sbs.to_json()["items"] == [unpaired.to_json()] and unpaired.case == A
