"""A test declared ``every_round`` (launch.tools.<tool>.tests[].every_round) runs in every adaptive
round too, in a single launch and side by side, and the round's predicted time counts it
(podnet.launch.rounds.everyround; issue 44: netready beside the under-load family)."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import pytest
import yaml

from podnet.launch.campaign.sidebyside import SideBySide
from podnet.launch.rounds.everyround import Joined, declared, join
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.parse.raw import find_raw_files, read_sidecar
from tests.launch_configs import HOST_HOST, IPERF3_PING, experiment, pod_pod
from tests.unit import test_launch_adaptive as single
from tests.unit import test_launch_sidebyside as sbs

REPO = Path(__file__).resolve().parents[2]
PING_EVERY = copy.deepcopy(IPERF3_PING)
PING_EVERY["ping"]["tests"][0]["every_round"] = True


def tools_with(every_round: object) -> dict:
    t = copy.deepcopy(IPERF3_PING)
    t["ping"]["tests"][0]["every_round"] = every_round
    return t


# -- the config ---------------------------------------------------------------------------------------------
def test_the_schema_takes_every_round_on_a_test_and_the_spec_carries_it():
    cfg = from_mapping(experiment([HOST_HOST, pod_pod()], tools_with(True)))
    flags = {(c.test.tool, c.test.name): c.test.every_round for c in cfg.cases}
    assert flags == {("iperf3", "tcp"): False, ("ping", "plain"): True}
    assert declared(cfg.cases) == [("host-host", "ping", "plain"), ("pod-pod", "ping", "plain")]
    # absent: false; every point of a load sweep carries it
    loaded = {"netperf": {"tests": [{"name": "rr", "every_round": True, "load": {"streams": [0, 8]}}]}}
    cfg = from_mapping(experiment([pod_pod()], loaded))
    assert [c.test.every_round for c in cfg.cases] == [True, True]
    assert not any(c.test.every_round for c in from_mapping(experiment([pod_pod()], IPERF3_PING)).cases)


@pytest.mark.parametrize("value", ["yes", 1, None, {"rounds": "all"}])
def test_the_schema_refuses_an_every_round_that_is_not_a_boolean(value):
    with pytest.raises(LaunchConfigError, match="every_round"):
        from_mapping(experiment([pod_pod()], tools_with(value)))


def test_every_round_is_a_test_key_not_a_tool_or_launch_key():
    bad = copy.deepcopy(IPERF3_PING)
    bad["ping"]["every_round"] = True
    with pytest.raises(LaunchConfigError, match="every_round"):
        from_mapping(experiment([pod_pod()], bad))
    with pytest.raises(LaunchConfigError, match="every_round"):
        from_mapping(experiment([pod_pod()], IPERF3_PING, every_round=True))


def test_the_under_load_campaign_runs_netready_in_every_round():
    doc = yaml.safe_load((REPO / "config" / "campaigns" / "under-load.yaml").read_text())
    (burst,) = doc["launch"]["tools"]["netready"]["tests"]
    assert burst["every_round"] is True
    assert not any(t.get("every_round") for t in doc["launch"]["tools"]["netperf"]["tests"])


def test_join_adds_the_declared_cases_that_can_run_in_the_launchs_order():
    cases = from_mapping(experiment([HOST_HOST, pod_pod()], PING_EVERY)).cases
    iperf_pp, ping_hh, ping_pp = (
        ("pod-pod", "iperf3", "tcp"),
        ("host-host", "ping", "plain"),
        ("pod-pod", "ping", "plain"),
    )
    assert join(cases, [iperf_pp], lambda k: True) == [ping_hh, iperf_pp, ping_pp]
    assert join(cases, [iperf_pp], lambda k: k != ping_hh) == [iperf_pp, ping_pp]  # capped or not runnable
    assert join(cases, [], lambda k: True) == [ping_hh, ping_pp]
    joined = Joined.of(cases, ["a", "b"])
    joined.record({"a": [iperf_pp, ping_pp], "b": [ping_hh, ping_pp]})
    assert joined.to_json() == [
        {"case": list(ping_hh), "joined": {"a": 0, "b": 1}, "of": 1},
        {"case": list(ping_pp), "joined": {"a": 1, "b": 1}, "of": 1},
    ]


# -- a single launch ----------------------------------------------------------------------------------------
def test_a_single_launchs_adaptive_rounds_run_the_every_round_cases_too(tmp_path):
    cfg = single.adaptive_config(tmp_path, tools=PING_EVERY)
    launcher, res = single.run(cfg, single.Clock())
    n = single.runs_per_case(res)
    # pod-pod / host-host stays wider than ±5 %: 3 base + 3 added rounds, and ping joins every one
    assert n[("pod-pod", "iperf3")] == n[("host-host", "iperf3")] == 6
    assert n[("pod-host", "iperf3")] == 3  # met after the base rounds: not every_round
    assert n[("host-host", "ping")] == n[("pod-host", "ping")] == n[("pod-pod", "ping")] == 6
    _, doc = single.the_account(cfg)
    assert doc["adaptive_rounds"] == 3 and doc["stop"] == "max_repeats reached"
    assert doc["runs_launched"] == res.launched == 6 * 3 + 5 * 3
    assert doc["every_round"] == [
        {"case": [sc, "ping", "plain"], "joined": {"bridge": 3}, "of": 3}
        for sc in ("host-host", "pod-host", "pod-pod")
    ]
    # the added rounds stay interleaved: each runs its cases once, ping with them (config order)
    side = [read_sidecar(f) for f in find_raw_files(cfg.raw_dir)]
    added = sorted((s["round"], s["position"], s["scenario"], s["tool"]) for s in side if s["round"] > 3)
    want = [
        ("host-host", "iperf3"),
        ("host-host", "ping"),
        ("pod-host", "ping"),
        ("pod-pod", "iperf3"),
        ("pod-pod", "ping"),
    ]
    assert added == [(r, i + 1, sc, tool) for r in (4, 5, 6) for i, (sc, tool) in enumerate(want)]


def test_without_the_key_the_adaptive_rounds_leave_the_test_out(tmp_path):
    cfg = single.adaptive_config(tmp_path)
    _, res = single.run(cfg, single.Clock())
    n = single.runs_per_case(res)
    assert n[("pod-pod", "iperf3")] == 6 and n[("pod-pod", "ping")] == 3
    assert single.the_account(cfg)[1]["every_round"] == []


@pytest.mark.parametrize(("budget", "added"), [(215, 0), (235, 1)])
def test_a_single_launchs_budget_counts_the_every_round_cases(tmp_path, budget, added):
    # base rounds: 6 cases x 3 x 10 s = 180 s; an added round: iperf3 pod-pod and host-host (20 s) and
    # the 3 ping cases (30 s) = 50 s. Predicted without ping (20 s) a round would start at 215 and end
    # at 230, past the budget
    cfg = single.adaptive_config(tmp_path, budget=budget, max_repeats=30, tools=PING_EVERY)
    clock = single.Clock()
    _, res = single.run(cfg, clock)
    _, doc = single.the_account(cfg)
    assert doc["stop"] == "budget spent" and doc["adaptive_rounds"] == added
    assert doc["wall_s"] == pytest.approx(180 + 50 * added) and doc["wall_s"] <= budget
    assert single.runs_per_case(res)[("pod-pod", "ping")] == 3 + added


# -- side by side -------------------------------------------------------------------------------------------
EVERY = {
    "iperf3": {"tests": [{"name": "tcp"}, {"name": "bulk", "every_round": True, "params": {"streams": 2}}]}
}


def _side_by_side(tmp_path, noises, budget=None, tools=EVERY):
    """Variants a, b, c (a the baseline) side by side with their run noise, adaptive to ``budget``."""
    rng = random.Random(11)
    clock = sbs.Clock()
    adaptive = {"enabled": True, **({"budget": budget} if budget else {})}
    cfgs = [sbs.cfg(tmp_path, v, adaptive=adaptive, tools=tools) for v in noises]
    kubes = [
        sbs.kube([], v, (lambda s: lambda: 9 * math.exp(rng.gauss(0, s)))(s), clock)
        for v, s in noises.items()
    ]
    SideBySide(cfgs, kubes, clock=clock).run()
    doc = json.loads(next((cfgs[0].raw_dir / "_side_by_side").glob("*.json")).read_text())
    runs: dict[tuple[str, str, str], int] = {}
    for f in find_raw_files(cfgs[0].raw_dir):
        s = read_sidecar(f)
        key = (s["variant"], s["scenario"], s["test"])
        runs[key] = runs.get(key, 0) + 1
    return doc, runs, clock


def test_side_by_side_every_variant_runs_the_every_round_case_in_each_added_round(tmp_path):
    # b is noisy (its comparisons stay unmet to the cap of 12); c is as quiet as a (met at min_to_stop 4)
    doc, runs, _ = _side_by_side(tmp_path, {"a": 0.002, "b": 0.2, "c": 0.002})
    assert doc["stop"].startswith("max_repeats reached") and doc["added_rounds"] == 9
    for sc in ("host-host", "pod-pod"):
        assert runs[("a", sc, "tcp")] == runs[("b", sc, "tcp")] == 12
        assert runs[("c", sc, "tcp")] == 4  # met: c sits out the primary case ...
        # ... but runs the every-round case in every added round, as a and b do
        assert runs[("a", sc, "bulk")] == runs[("b", sc, "bulk")] == runs[("c", sc, "bulk")] == 12
    assert doc["every_round"] == [
        {"case": [sc, "iperf3", "bulk"], "joined": {"a": 9, "b": 9, "c": 9}, "of": 9}
        for sc in ("host-host", "pod-pod")
    ]


def test_side_by_side_without_the_key_the_test_stays_at_the_base_rounds(tmp_path):
    plain = copy.deepcopy(EVERY)
    del plain["iperf3"]["tests"][1]["every_round"]
    doc, runs, _ = _side_by_side(tmp_path, {"a": 0.002, "b": 0.2}, tools=plain)
    assert doc["added_rounds"] == 9 and runs[("a", "pod-pod", "tcp")] == 12
    assert runs[("a", "pod-pod", "bulk")] == runs[("b", "pod-pod", "bulk")] == 3
    assert doc["every_round"] == []


@pytest.mark.parametrize(("budget", "added"), [(150, 0), (165, 1)])
def test_side_by_side_the_budget_counts_the_every_round_case(tmp_path, budget, added):
    # base rounds: 3 x 2 scenarios x 2 tests x 2 variants x 5 s = 120 s; an added round: tcp in 2
    # scenarios x 2 variants (20 s) and the every-round bulk likewise (20 s) = 40 s. Predicted without
    # bulk (20 s) a round would start at 150 and end at 160, past the budget
    doc, runs, clock = _side_by_side(tmp_path, {"a": 0.2, "b": 0.2}, budget=f"{budget}s")
    assert doc["stop"] == "budget spent" and doc["added_rounds"] == added
    assert clock.t == 120 + 40 * added <= budget
    assert runs[("b", "pod-pod", "bulk")] == 3 + added
