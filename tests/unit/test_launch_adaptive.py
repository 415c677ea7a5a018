"""Adaptive sampling on the fake cluster: judged on the primary comparisons, within a wall-clock budget.

The clock is a fake one that each run advances by RUN_S seconds, so budgets are tested without sleeping.
Scenario values: host-host (the baseline) and pod-host are tight (CV 0.1 %); pod-pod is noisy (CV 20 %)
unless a test says otherwise, so only the pod-pod / host-host comparison misses a ±5 % target.
"""

from __future__ import annotations

import copy
import json
import logging
import random

import pytest

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds.adaptive import fmt_duration
from podnet.launch.rounds.results import RunTimes
from podnet.launch.rounds.runner import Launcher
from podnet.launch.spec.config import LaunchConfigError, from_mapping, parse_duration
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files
from podnet.stats import account
from tests.fakekube import FakeKube
from tests.unit.test_launch_runner import BASE, PING, iperf_json, nodes

RUN_S = 10.0
HOST_IP = "10.1.0.1"  # node n1's InternalIP: the host server's address


def adaptive_config(
    tmp_path, *, budget=None, max_repeats=6, target=0.05, primary_extra=None, min_to_stop=3, tools=None
):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    if tools is not None:
        c["launch"]["tools"] = copy.deepcopy(tools)
    c["stats"] = {
        "planning": {
            "target_rel_half_width": target,
            "min_repeats": 3,
            "max_repeats": max_repeats,
            "min_to_stop": min_to_stop,
        },
        "comparisons": [{"by": "scenario", "baseline": "host-host"}],
        "primary": [
            {"by": "scenario", "baseline": "host-host", "tests": ["iperf3:tcp"], **(primary_extra or {})}
        ],
    }
    c["launch"]["repeats"] = 3
    c["launch"]["adaptive"] = {"enabled": True}
    if budget is not None:
        c["launch"]["adaptive"]["budget"] = budget
    c["launch"]["scenarios"] = [
        {
            "name": "host-host",
            "client": {"kind": "host", "other_node_than": "server"},
            "server": {"kind": "host"},
        },
        {
            "name": "pod-host",
            "client": {"kind": "pod", "other_node_than": "server"},
            "server": {"kind": "host"},
        },
        {
            "name": "pod-pod",
            "client": {"kind": "pod", "other_node_than": "server"},
            "server": {"kind": "pod"},
        },
    ]
    return from_mapping(c)


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def responder(clock, cv_pod_pod=0.2, fail_pod_pod=False):
    rng = random.Random(7)

    def respond(pod, argv):
        clock.t += RUN_S
        if argv[0] != "iperf3":
            return ExecResult(rc=0, stdout=PING, stderr="")
        host_client, host_server = pod.startswith("client-host"), argv[2] == HOST_IP
        pod_pod = not host_client and not host_server
        if pod_pod and fail_pod_pod:
            return ExecResult(rc=1, stdout='{"start": {}, "error": "unable to connect to server"}', stderr="")
        cv = cv_pod_pod if pod_pod else 0.001
        return ExecResult(rc=0, stdout=iperf_json(9e9 * (1 + rng.gauss(0, cv))), stderr="")

    return respond


def run(cfg, clock, **kw):
    launcher = Launcher(cfg, FakeKube(nodes(), responder(clock, **kw)), clock=clock)
    return launcher, launcher.run()


def runs_per_case(res):
    return {(c.scenario, c.tool): c.ok for c in res.cases}


def the_account(cfg):
    files = sorted(cfg.raw_dir.glob("bridge/_adaptive/*.json"))
    assert len(files) == 1, files
    doc = json.loads(files[0].read_text())
    account.validate(doc)
    return files[0], doc


def item(doc, treatment):
    (it,) = [i for i in doc["items"] if i["treatment"] == treatment]
    return it


# -- budget parsing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,seconds",
    [("30m", 1800), ("1h30m", 5400), ("90s", 90), ("1.5h", 5400), ("2m 5s", 125), (45, 45), (0.5, 0.5)],
)
def test_budget_durations(value, seconds):
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", ["30", "m", "30x", "", "30 minutes", "-5m", 0, -3, True])
def test_bad_budgets_are_refused(value):
    with pytest.raises(LaunchConfigError):
        parse_duration(value)


def test_budget_in_the_config(tmp_path):
    assert adaptive_config(tmp_path, budget="1h30m").budget_s == 5400
    assert adaptive_config(tmp_path).budget_s is None  # no default: no time limit
    with pytest.raises(LaunchConfigError, match="budget"):
        adaptive_config(tmp_path, budget="thirty minutes")


def test_the_old_budget_key_is_refused_naming_its_new_place(tmp_path):
    """The adaptive stop's launch limits live in launch.adaptive; launch.budget is not ignored."""
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"].update(adaptive={"enabled": True}, budget="30m")
    with pytest.raises(LaunchConfigError, match=r"`launch.budget` moved to `launch.adaptive.budget`"):
        from_mapping(c)


def test_durations_are_written_as_people_read_them():
    assert [fmt_duration(s) for s in (45, 580, 1800, 3900, 3600)] == ["45s", "9m40s", "30m", "1h05m", "1h"]


def test_a_round_is_predicted_from_each_cases_own_run_times():
    t = RunTimes()
    t.add(("a", "x", "y"), 10)
    t.add(("a", "x", "y"), 20)
    t.add(("b", "x", "y"), 4)
    # a: its mean 15; b: 4; c never ran: the mean of all runs (34 / 3)
    assert t.predict([("a", "x", "y"), ("b", "x", "y"), ("c", "x", "y")]) == pytest.approx(15 + 4 + 34 / 3)


# -- the loop -----------------------------------------------------------------------------------------------
def test_only_the_cases_of_unmet_primary_comparisons_get_more_rounds(tmp_path, caplog):
    cfg = adaptive_config(tmp_path)
    caplog.set_level(logging.INFO, logger="podnet.launch")
    launcher, res = run(cfg, Clock())
    n = runs_per_case(res)
    # pod-pod / host-host stays wider than ±5 %: both of its cases run to max_repeats
    assert n[("pod-pod", "iperf3")] == 6 and n[("host-host", "iperf3")] == 6
    # pod-host / host-host met its target after the base rounds; ping is outside the primary family
    assert n[("pod-host", "iperf3")] == 3
    assert n[("host-host", "ping")] == n[("pod-host", "ping")] == n[("pod-pod", "ping")] == 3
    _, doc = the_account(cfg)
    assert doc["mode"] == "primary" and doc["stop"] == "max_repeats reached"
    pp, ph = item(doc, "pod-pod"), item(doc, "pod-host")
    assert (pp["status"], pp["reason"]) == ("unmet", "max_repeats reached")
    assert pp["rel_half_width"] > 0.05 and pp["n_needed"] > 6
    assert (ph["status"], ph["reason"]) == ("met", "met") and ph["rel_half_width"] <= 0.05
    # the judged interval is the statistics stage's, paired within the launch over the rounds both
    # sides ran (pod-host: its 3 against host-host's 6; a comparison with fewer than 2 pairs is unmet)
    assert pp["interval"] == "paired" and pp["n"] == 6 and ph["interval"] == "paired" and ph["n"] == 3
    assert doc["adaptive_rounds"] == 3 and doc["base_rounds"] == 3
    assert doc["runs_launched"] == res.launched == 6 * 3 + 3 * 2
    assert doc["fixed_protocol_runs"] == 6 * 10 and doc["cases"] == 6
    # one progress line per added round, in the documented form
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("adaptive round")]
    assert len(lines) == 3, lines
    assert lines[0].startswith(
        "adaptive round 4: 1 of 2 primary comparisons still miss ±5 % (worst pod-pod/host-host"
    )
    assert "used, no time budget, next round ~20s" in lines[0]
    # adaptive rounds stay interleaved: each added round runs host-host and pod-pod once, in config order
    from podnet.parse.raw import read_sidecar

    side = [read_sidecar(f) for f in find_raw_files(cfg.raw_dir)]
    added = sorted((s["round"], s["position"], s["scenario"], s["repeat"]) for s in side if s["round"] > 3)
    assert added == [(r, i + 1, sc, r) for r in (4, 5, 6) for i, sc in enumerate(["host-host", "pod-pod"])]
    # the numbers judged are the statistics stage's own (ratios.csv's paired interval)
    from podnet.stats import compare

    # (launch.adaptive.enabled: the stats stage states it at 1 - alpha/2, podnet.config.stages.stats_of)
    stats_view = {
        **(cfg.stats or {}),
        "paired": {**((cfg.stats or {}).get("paired") or {}), "adaptive": True},
    }
    ratios = compare(parse_experiment(cfg.raw_dir, "t").tidy, stats_view)
    r = ratios[
        (ratios["scenario"] == "pod-pod") & (ratios["tool"] == "iperf3") & (ratios["metric"] == "throughput")
    ]
    assert (pp["low"], pp["high"], pp["ratio"]) == pytest.approx(
        (r["paired_ci_low"].item(), r["paired_ci_high"].item(), r["paired_ratio"].item())
    )
    assert pp["rel_half_width"] == pytest.approx((pp["high"] - pp["low"]) / (2 * pp["ratio"]))
    assert {c.scenario: c.met_target for c in res.cases if c.tool == "iperf3"} == {
        "host-host": False,
        "pod-host": True,
        "pod-pod": False,
    }


def test_adaptive_stops_when_every_primary_comparison_is_met(tmp_path):
    cfg = adaptive_config(tmp_path)
    clock = Clock()
    launcher, res = run(cfg, clock, cv_pod_pod=0.001)
    assert set(runs_per_case(res).values()) == {3}  # the base rounds only
    path, doc = the_account(cfg)
    assert res.adaptive_account == str(path)  # named in the manifest
    assert doc["stop"] == "all met" and doc["adaptive_rounds"] == 0
    assert [(i["status"], i["reason"]) for i in doc["items"]] == [("met", "met")] * 2
    assert doc["wall_s"] == pytest.approx(18 * RUN_S)


def test_no_round_starts_that_the_budget_cannot_hold(tmp_path, caplog):
    # base rounds: 6 cases x 3 x 10 s = 180 s; each added round (pod-pod, host-host) ~20 s
    cfg = adaptive_config(tmp_path, budget=215, max_repeats=30)
    caplog.set_level(logging.INFO, logger="podnet.launch")
    clock = Clock()
    launcher, res = run(cfg, clock)
    n = runs_per_case(res)
    assert n[("pod-pod", "iperf3")] == n[("host-host", "iperf3")] == 4  # 180 + 20 fits, 200 + 20 does not
    _, doc = the_account(cfg)
    assert doc["stop"] == "budget spent" and doc["budget_s"] == 215
    assert doc["wall_s"] == pytest.approx(200) and doc["wall_s"] <= doc["budget_s"]
    assert item(doc, "pod-pod")["reason"] == "budget spent"
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("adaptive round")]
    assert line.endswith("; 35s of 3m35s budget left, next round ~20s")
    assert any("budget spent: 3m20s of 3m35s used" in r.getMessage() for r in caplog.records)


def test_the_base_rounds_always_run_even_past_the_budget(tmp_path):
    cfg = adaptive_config(tmp_path, budget="1m")
    launcher, res = run(cfg, Clock())
    assert set(runs_per_case(res).values()) == {3}  # 180 s of base rounds, although the budget is 60 s
    _, doc = the_account(cfg)
    assert doc["stop"] == "budget spent" and doc["adaptive_rounds"] == 0
    assert item(doc, "pod-pod")["reason"] == "budget spent"


def test_failed_runs_are_the_reason_when_a_side_has_no_values(tmp_path):
    cfg = adaptive_config(tmp_path)
    launcher, res = run(cfg, Clock(), fail_pod_pod=True)
    n = runs_per_case(res)
    assert n[("pod-pod", "iperf3")] == 0 and n[("host-host", "iperf3")] == 3  # nothing to add for it
    _, doc = the_account(cfg)
    pp = item(doc, "pod-pod")
    assert (pp["status"], pp["reason"], pp["rel_half_width"], pp["metric"]) == (
        "unmet",
        "failed runs",
        None,
        "throughput",
    )
    assert doc["stop"] == "failed runs"


def test_a_comparison_is_met_only_from_min_to_stop_pairs(tmp_path):
    # tight from the base rounds on, but an interval of 3 pairs that happens to be narrow is not
    # trusted: rounds go on until min_to_stop pairs, then it is met (the simulation in
    # benchmarks/sim_intervals.py --stopping gives the coverage this buys)
    cfg = adaptive_config(tmp_path, max_repeats=12, min_to_stop=5)
    launcher, res = run(cfg, Clock(), cv_pod_pod=0.001)
    per_case = runs_per_case(res)
    assert {n for (_, tool), n in per_case.items() if tool == "iperf3"} == {5}
    assert {n for (_, tool), n in per_case.items() if tool == "ping"} == {3}  # outside the family
    _, doc = the_account(cfg)
    assert doc["stop"] == "all met" and {i["n"] for i in doc["items"]} == {5}


def test_the_default_min_to_stop_is_the_simulated_one():
    from podnet.stats.precision import min_to_stop
    from podnet.stats.settings import resolve

    assert min_to_stop(resolve(None)) == 10
    assert min_to_stop(resolve({"planning": {"min_repeats": 12}})) == 12


def test_a_per_comparison_target_is_used(tmp_path):
    # a 50 % target on the primary entry: the noisy comparison meets it after the base rounds
    cfg = adaptive_config(tmp_path, primary_extra={"target_rel_half_width": 0.5})
    launcher, res = run(cfg, Clock())
    assert set(runs_per_case(res).values()) == {3}
    _, doc = the_account(cfg)
    assert {i["target_rel_half_width"] for i in doc["items"]} == {0.5} and doc["stop"] == "all met"


def test_without_primary_each_case_is_judged(tmp_path):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["stats"] = {
        "planning": {"target_rel_half_width": 0.05, "min_repeats": 3, "max_repeats": 5, "min_to_stop": 3}
    }
    c["launch"]["adaptive"] = {"enabled": True}
    c["launch"]["tools"].pop("ping")
    clock = Clock()
    launcher, res = run(from_mapping(c), clock)
    # host-host (host client, host server) is tight; pod-pod is noisy: only it gets more
    assert runs_per_case(res) == {("host-host", "iperf3"): 3, ("pod-pod", "iperf3"): 5}
    _, doc = the_account(from_mapping(c))
    assert doc["mode"] == "cases"
    assert {(i["scenario"], i["status"], i["reason"]) for i in doc["items"]} == {
        ("host-host", "met", "met"),
        ("pod-pod", "unmet", "max_repeats reached"),
    }


# -- the account and what reads it ------------------------------------------------------------------------
def test_the_account_is_not_parsed_as_tool_output(tmp_path):
    cfg = adaptive_config(tmp_path)
    run(cfg, Clock(), cv_pod_pod=0.001)
    path, _ = the_account(cfg)
    assert path.parent.name == "_adaptive"
    assert path not in find_raw_files(cfg.raw_dir)
    parsed = parse_experiment(cfg.raw_dir, "t")
    assert len(parsed.failed) == 0 and parsed.tidy["run_id"].nunique() == 18


def test_findings_say_what_was_resolved_and_why(tmp_path):
    from podnet.report import findings
    from podnet.report.figures.data import Tables

    cfg = adaptive_config(tmp_path, budget=215, max_repeats=30)
    run(cfg, Clock())
    path, doc = the_account(cfg)
    csv = account.write_csv([path], tmp_path / "adaptive.csv")
    acc = account.read_accounts([path])
    assert len(acc) == 2 and set(acc["reason"]) == {"met", "budget spent"}
    import pandas as pd

    text = findings.adaptive_markdown(pd.read_csv(csv))
    assert "1 of 2 primary comparisons reached their precision target (±5 %" in text
    assert "1 did not: budget spent (1)." in text
    assert (
        f"{doc['runs_launched']} runs in 3m20s of a 3m35s budget; a fixed 10-repeat protocol: 60 runs" in text
    )
    pp = item(doc, "pod-pod")
    want = f"- pod-pod / host-host, iperf3 tcp throughput (receiver): ±{pp['rel_half_width'] * 100:.0f} % with n = 4"
    assert want in text and f"budget spent; needs ~{int(pp['n_needed'])} repeats at this noise" in text
    empty = pd.DataFrame()
    assert findings.adaptive_markdown(empty) == ""
    md = findings.markdown(Tables(empty, empty, empty, empty, adaptive=pd.read_csv(csv)))
    assert "budget spent" in md


def test_a_later_launch_replaces_the_earlier_account_in_the_findings(tmp_path):
    import pandas as pd

    a = {
        "podnet_adaptive": 1, "experiment": "t", "variant": "v", "launch_id": "1", "ended": "2026-01-01T00:00:00Z",
        "mode": "primary", "stop": "budget spent", "runs_launched": 10, "fixed_repeats": 10,
        "fixed_protocol_runs": 20, "wall_s": 60.0, "budget_s": 60.0,
        "items": [{"by": "scenario", "baseline": "b", "treatment": "x", "scenario": "x", "tool": "iperf3",
                   "test": "tcp", "metric": "throughput", "rel_half_width": 0.2, "target_rel_half_width": 0.05,
                   "n": 3, "n_needed": 40, "status": "unmet", "reason": "budget spent"}],
    }  # fmt: skip
    b = copy.deepcopy(a) | {"launch_id": "2", "ended": "2026-01-02T00:00:00Z", "stop": "all met"}
    b["items"] = [b["items"][0] | {"rel_half_width": 0.04, "status": "met", "reason": "met"}]
    for d in (a, b):
        (tmp_path / f"{d['launch_id']}.json").write_text(json.dumps(d))
    acc = account.read_accounts(sorted(tmp_path.glob("*.json")))
    assert list(account.latest(acc)["launch_id"].astype(str)) == ["2"]
    assert "1 of 1 primary comparisons reached their precision target (±5 %" in (
        __import__("podnet.report.findings", fromlist=["x"]).adaptive_markdown(pd.DataFrame(acc))
    )
    bad = copy.deepcopy(a)
    bad["items"][0]["reason"] = "bad luck"
    (tmp_path / "3.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="reason"):
        account.read_accounts([tmp_path / "3.json"])


def test_overlapping_primary_entries_take_the_smallest_target():
    import pandas as pd

    from podnet.stats.family import primary_targets

    rows = pd.DataFrame(
        {
            "by": ["scenario"] * 3,
            "baseline": ["host-host"] * 3,
            "treatment": ["a", "b", "c"],
            "tool": ["iperf3", "iperf3", "ping"],
            "test": ["tcp", "tcp", "plain"],
            "metric": ["throughput", "throughput", "rtt_avg"],
        }
    )
    primary = [
        {"by": "scenario", "baseline": "host-host", "tests": ["iperf3"], "target_rel_half_width": 0.1},
        {"by": "scenario", "baseline": "host-host", "treatments": ["b"]},  # the planning default
    ]
    got = primary_targets(rows, primary, 0.05)
    assert got[:2].tolist() == [0.1, 0.05] and pd.isna(got[2])  # c's ping is not primary


def test_other_comparisons_do_not_stop_the_judgement(tmp_path):
    # an exploratory comparison against pod-pod, whose runs the primary family (pod-host only) does not hold
    cfg = adaptive_config(tmp_path, primary_extra={"treatments": ["pod-host"]})
    cfg.stats["comparisons"].append({"by": "scenario", "baseline": "pod-pod"})
    launcher, res = run(cfg, Clock())
    assert not res.error and set(runs_per_case(res).values()) == {3}
    _, doc = the_account(cfg)
    assert [(i["treatment"], i["status"]) for i in doc["items"]] == [("pod-host", "met")]
    assert doc["stop"] == "all met"


def test_an_interrupted_launch_still_writes_its_account(tmp_path):
    from podnet.launch.cluster.signals import Interrupted

    cfg = adaptive_config(tmp_path)
    clock = Clock()
    inner = responder(clock)
    calls = {"n": 0}

    def interrupting(pod, argv):
        calls["n"] += 1
        if calls["n"] == 20:  # in the first added round (the base rounds are 18 runs)
            raise Interrupted("SIGINT")
        return inner(pod, argv)

    launcher = Launcher(cfg, FakeKube(nodes(), interrupting), clock=clock)
    res = launcher.run()
    assert res.interrupted
    _, doc = the_account(cfg)
    assert doc["stop"] == "interrupted" and doc["adaptive_rounds"] == 1
    assert (item(doc, "pod-pod")["reason"], item(doc, "pod-host")["reason"]) == ("interrupted", "met")


def test_a_headline_metric_the_test_never_reports_is_no_comparison(tmp_path, monkeypatch):
    """qperf's headline metrics are latency and throughput, but its tcp_lat test reports only a
    latency: the account listed 'throughput ... failed runs' for every tcp_lat path (measured on the
    embedded cluster). A headline metric no run of the test reports is not judged."""
    from podnet.stats import kinds

    real = kinds.tool_headline
    monkeypatch.setattr(kinds, "tool_headline", lambda tool: [*real(tool), "never_reported"])
    cfg = adaptive_config(tmp_path, primary_extra={"target_rel_half_width": 0.5})
    run(cfg, Clock())
    _, doc = the_account(cfg)
    assert doc["items"] and {i["metric"] for i in doc["items"]} == {"throughput"}
    assert doc["stop"] == "all met"


def test_the_adaptive_judge_states_the_interval_for_a_stop(tmp_path):
    # the launcher's rounds come from its own stop: it judges the paired interval at 1 - alpha/2
    # (Hodges-Lehmann / Wilcoxon, podnet.stats.robust), whatever the stats mapping says
    cfg = adaptive_config(tmp_path, max_repeats=12, min_to_stop=5)
    launcher, _ = run(cfg, Clock(), cv_pod_pod=0.001)
    assert launcher.sampler is not None
    assert launcher.sampler.judged["paired"]["adaptive"] is True
    assert launcher.sampler.settings["paired"]["adaptive"] is None  # the stats stage's own view
