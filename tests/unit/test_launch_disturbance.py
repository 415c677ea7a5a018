"""Disturbed runs (podnet.launch.spec.disturbance): the foreign CPU share from real /proc/stat samples, the
judgement, the re-run in the same round (status disturbed: not done, not a value), the kept-and-flagged
run past the round's budget, round_seq in every sidecar and in the tidy table, disturbed_runs.csv and
the findings' sentence."""

from __future__ import annotations

import copy
import itertools
import math
import random
from pathlib import Path

import pandas as pd
import pytest
import yaml

from podnet.launch.campaign.sidebyside import launch_side_by_side
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.noise import interference as itf
from podnet.launch.rounds.runner import launch
from podnet.launch.rounds.state import scan
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.disturbance import DisturbanceRule, RerunBudget, derive_threshold, judge
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from podnet.report.disturbed import disturbed_sentence
from tests.fakekube import FakeKube
from tests.unit.test_launch_runner import BASE, iperf_json, nodes, ok_responder
from tests.unit.test_launch_sidebyside import cfg as sbs_cfg
from tests.unit.test_launch_sidebyside import kube as sbs_kube

SNAP = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "fixtures" / "procstat" / "snapshots.yaml").read_text()
)


def _ticks(text: str) -> tuple[int, ...]:
    return itf.parse_snapshot(text).total


# -- the share and the rule ----------------------------------------------------------------------------
def test_foreign_share_of_real_proc_stat_samples():
    b, a = _ticks(SNAP["before"]), _ticks(SNAP["after"])
    # 3 s of a 2-CPU machine: 602 ticks; idle 1 + iowait 0 -> 601 ticks busy or stolen (6.01 CPU s)
    out = itf.foreign_cpu((b, a), {"pods": 4.0, "daemons": 1.0, "launcher": 0.5}, clk_tck=100)
    assert out["machine_cpu_s"] == pytest.approx(6.02)
    assert out["busy_cpu_s"] == pytest.approx(6.01)
    assert out["cpu_s"] == pytest.approx(0.51)
    assert out["share"] == pytest.approx(0.51 / 6.02, abs=1e-4)
    assert (out["pods_cpu_s"], out["daemons_cpu_s"], out["launcher_cpu_s"]) == (4.0, 1.0, 0.5)
    # the same interval with the pods using less: the rest is foreign
    lazy = itf.foreign_cpu((b, a), {"pods": 1.0, "daemons": 1.0, "launcher": 0.5}, clk_tck=100)
    assert lazy["share"] == pytest.approx(3.51 / 6.02, abs=1e-4)
    assert itf.foreign_cpu((a, b), {"pods": 0.0}) is None  # counters going backwards: not one interval


def test_pods_cgroup_is_found_beside_the_daemons_and_read_with_the_machine(tmp_path):
    daemons = tmp_path / "cpuacct" / "podnet-daemons"
    pods = tmp_path / "cpuacct" / "podnet"
    daemons.mkdir(parents=True)
    pods.mkdir()
    (daemons / "cpuacct.usage").write_text("1000000000\n")
    (pods / "cpuacct.usage").write_text("3000000000\n")
    (tmp_path / "pids").mkdir()
    d = itf.Daemons.from_info(
        {
            "daemons": {"pid_dir": str(tmp_path / "pids")},
            "daemon_cgroup": {"cpu_usage_file": str(daemons / "cpuacct.usage")},
        }
    )
    assert d is not None and d.pods_usage == pods / "cpuacct.usage"
    before = d.read()
    assert before["pods"] == pytest.approx(3.0) and before["ticks"] is not None
    (pods / "cpuacct.usage").write_text("3500000000\n")
    after = {**d.read(), "ticks": tuple(x + (100 if i == 0 else 0) for i, x in enumerate(before["ticks"]))}
    out = itf.foreign_delta(before, after, 0.1)
    assert out["pods_cpu_s"] == pytest.approx(0.5) and out["daemons_cpu_s"] == 0.0
    assert out["machine_cpu_s"] == pytest.approx(100 / itf.CLK_TCK)
    no_pods = itf.pods_usage_file(tmp_path / "cpuacct" / "elsewhere" / "cpuacct.usage")
    assert no_pods is None


def _cluster(root: Path, k: int, daemons_ns: int, pods_ns: int) -> itf.Daemons:
    d, pods, pids = (
        root / "cpuacct" / f"podnet{k}-daemons",
        root / "cpuacct" / f"podnet{k}",
        root / f"pids{k}",
    )
    for x in (d, pods, pids):
        x.mkdir(parents=True, exist_ok=True)
    (d / "cpuacct.usage").write_text(f"{daemons_ns}\n")
    (pods / "cpuacct.usage").write_text(f"{pods_ns}\n")
    info = {"daemons": {"pid_dir": str(pids)}, "daemon_cgroup": {"cpu_usage_file": str(d / "cpuacct.usage")}}
    out = itf.Daemons.from_info(info)
    assert out is not None
    return out


def test_side_by_side_counts_the_other_clusters_as_the_experiments_own_work(tmp_path):
    """5 clusters side by side: the idle clusters' daemons and pods are not other work on the machine."""
    mine, other = _cluster(tmp_path, 0, 10**9, 3 * 10**9), _cluster(tmp_path, 1, 2 * 10**9, 10**9)
    a, b = itf.Interference(None, None, None, 5.0), itf.Interference(None, None, None, 5.0)
    a.daemons, b.daemons = mine, other
    twin = itf.Interference(None, None, None, 5.0)
    twin.daemons = itf.Daemons(mine.pid_dir, mine.cgroup_usage, mine.pods_usage)  # A/A: the same cluster
    itf.link_neighbours([a, b, twin, None])
    assert a.neighbours == [other] and b.neighbours == [mine] and twin.neighbours == [other]
    before = a.read()
    assert before is not None and before["neighbours"] == pytest.approx(3.0)
    (tmp_path / "cpuacct" / "podnet1-daemons" / "cpuacct.usage").write_text(f"{int(2.4e9)}\n")
    (tmp_path / "cpuacct" / "podnet1" / "cpuacct.usage").write_text(f"{int(1.2e9)}\n")
    after = {**a.read(), "ticks": tuple(x + (200 if i == 0 else 0) for i, x in enumerate(before["ticks"]))}
    out = itf.foreign_delta(before, after, 0.0)
    assert out["neighbour_clusters_cpu_s"] == pytest.approx(0.6)
    assert out["cpu_s"] == pytest.approx(200 / itf.CLK_TCK - 0.6)  # the neighbours' 0.6 s is not foreign
    solo = itf.foreign_delta({k: v for k, v in before.items() if k != "neighbours"}, after, 0.0)
    assert "neighbour_clusters_cpu_s" not in solo and solo["cpu_s"] == pytest.approx(200 / itf.CLK_TCK)


def test_judgement_and_the_rounds_rerun_budget():
    rule = DisturbanceRule(enabled=True, threshold=0.2, max_reruns_per_round=2)
    assert judge({"foreign": {"cpu_s": 1.2, "share": 0.3}}, rule).disturbed
    assert not judge({"foreign": {"cpu_s": 0.2, "share": 0.05}}, rule).disturbed
    assert not judge({"foreign": {"cpu_s": 0.2, "share": 0.2}}, rule).disturbed  # at the threshold: quiet
    assert judge({"busy": 0.9, "nodes": {}}, rule) is None  # no foreign record (real cluster): not judged
    assert judge(None, rule) is None
    assert judge({"foreign": {"cpu_s": 9, "share": 0.9}}, DisturbanceRule(enabled=False)) is None
    budget = RerunBudget(rule)
    assert [budget.take() for _ in range(3)] == [True, True, False]
    budget.new_round()
    assert budget.take()
    assert DisturbanceRule.from_config(None) == DisturbanceRule()
    assert DisturbanceRule.from_config({"threshold": 0.5}).threshold == 0.5


def test_threshold_from_quiet_runs():
    rng = random.Random(3)
    quiet = [abs(rng.gauss(0.02, 0.03)) for _ in range(400)]
    thr = derive_threshold(quiet)
    q99 = sorted(quiet)[int(0.99 * 399)]
    assert q99 + 0.05 - 0.01 <= thr <= q99 + 0.05 + 0.01
    assert sum(x > thr for x in quiet) <= 4  # about 1 in 100 quiet runs at most
    with pytest.raises(ValueError):
        derive_threshold([])


# -- the launcher -----------------------------------------------------------------------------------------
def _scripted_foreign(monkeypatch, shares):
    """Each run's interference record gets the next of ``shares`` as its foreign share."""
    it = iter(shares)
    original = itf.Interference.finish

    def finish(self, probe, client, server, ran=True, **kw):
        out = original(self, probe, client, server, ran, **kw)
        share = next(it, 0.0)
        out["foreign"] = {"cpu_s": round(share * 2, 3), "share": share}
        return out

    monkeypatch.setattr(itf.Interference, "finish", finish)


def _config(tmp_path, **disturbance):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"]["disturbance"] = {"threshold": 0.2, **disturbance}
    return from_mapping(c)


def test_a_disturbed_run_is_rerun_in_its_round_then_kept_flagged_past_the_budget(tmp_path, monkeypatch):
    cfg = _config(tmp_path, max_reruns_per_round=1)
    # round 0: first run disturbed (re-run), its re-run disturbed again (budget spent: kept);
    # round 1: the first run disturbed again (a fresh budget: re-run), the rest quiet
    _scripted_foreign(monkeypatch, [0.6, 0.5, 0.0, 0.0, 0.0, 0.7, 0.0, 0.0, 0.0, 0.0])
    res = launch(cfg, kube=FakeKube(nodes(), ok_responder), manifest=tmp_path / "m.json")
    assert (res.launched, res.ok, res.failed, res.disturbed, res.disturbed_kept) == (10, 8, 0, 2, 1)
    side = {f.relative_to(cfg.raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}
    first = side["bridge/host-host/iperf3-tcp/r001.json"]
    again = side["bridge/host-host/iperf3-tcp/r001.a2.json"]
    assert first["status"] == "disturbed" and "re-run in the same round" in first["error"]
    assert first["disturbance"] == {"share": 0.6, "threshold": 0.2, "action": "re-run", "round_seq": 0}
    assert again["status"] == "ok" and again["disturbed"] is True
    assert again["disturbance"]["action"] == "kept"
    assert first["round_seq"] == again["round_seq"] == 0  # the re-run ran in the same round
    r2 = side["bridge/host-host/iperf3-tcp/r002.json"]
    assert r2["status"] == "disturbed" and r2["round_seq"] == 1
    assert side["bridge/host-host/iperf3-tcp/r002.a2.json"]["disturbed"] is False
    assert {m["round_seq"] for k, m in side.items() if "/r001" in k} == {0}
    assert {m["round_seq"] for k, m in side.items() if "/r002" in k} == {1}
    # not a failure, not done: the repeat is done by its ok attempt, nothing is missing
    st = scan(cfg.raw_dir, "bridge", cfg.cases)[("host-host", "iperf3", "tcp")]
    assert st.ok_repeats() == {1, 2} and st.failures(1) == st.failures(2) == 0
    assert launch(cfg, kube=FakeKube(nodes(), ok_responder)).launched == 0
    # parse: the disturbed attempts are no value and no failure; the kept one is flagged
    parsed = parse_experiment(cfg.raw_dir, experiment="t")
    tidy = parsed.tidy
    assert not tidy["raw_path"].str.endswith("host-host/iperf3-tcp/r001.json").any()
    assert not tidy["raw_path"].str.contains("host-host/iperf3-tcp/r002.json", regex=False).any()
    flagged = tidy[tidy["disturbed"]]
    assert set(flagged["run_id"]) == {"bridge/host-host/iperf3-tcp/r001.a2"}
    assert str(tidy["round_seq"].dtype) == "Int64" and set(tidy["round_seq"].dropna()) == {0, 1}
    assert parsed.failed.empty
    d = parsed.disturbed
    assert sorted(d["action"]) == ["kept", "re-run", "re-run"]
    assert d.set_index("action").loc["kept", "share"] == 0.5
    sentence = disturbed_sentence(d, tidy)
    assert sentence.startswith("3 runs were disturbed") and "2 re-run" in sentence and "1 kept" in sentence


def test_a_disturbed_run_is_not_judged_when_the_rule_is_off(tmp_path, monkeypatch):
    cfg = _config(tmp_path, enabled=False)
    _scripted_foreign(monkeypatch, itertools.repeat(0.9))
    res = launch(cfg, kube=FakeKube(nodes(), ok_responder))
    assert (res.launched, res.ok, res.disturbed) == (8, 8, 0)
    assert all("disturbed" not in read_sidecar(f) for f in find_raw_files(cfg.raw_dir))


def test_a_retry_pass_is_a_round_of_its_own(tmp_path):
    cfg = _config(tmp_path)
    calls = {"n": 0}

    def flaky(pod, argv):
        if argv[0] == "iperf3" or "iperf3" in argv:
            calls["n"] += 1
            if calls["n"] == 1:
                return ExecResult(rc=1, stdout="", stderr="iperf3: error - unable to connect")
        return ok_responder(pod, [a for a in argv if a in ("iperf3",)] or argv)

    launch(cfg, kube=FakeKube(nodes(), flaky))
    side = {f.relative_to(cfg.raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}
    failed = [m for m in side.values() if m["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["round_seq"] == 0
    retried = side["bridge/host-host/iperf3-tcp/r001.a2.json"]
    assert retried["status"] == "ok" and retried["round_seq"] == 2  # after rounds 0 and 1


def test_side_by_side_variants_share_each_rounds_ordinal(tmp_path):
    rng = random.Random(2)
    order: list[str] = []
    a, b = sbs_cfg(tmp_path, "a"), sbs_cfg(tmp_path, "b")
    ka = sbs_kube(order, "a", lambda: 9 * math.exp(rng.gauss(0, 0.03)))
    kb = sbs_kube(order, "b", lambda: 6 * math.exp(rng.gauss(0, 0.03)))
    launch_side_by_side([a, b], kubes=[ka, kb])
    tidy = parse_experiment(a.raw_dir, experiment="t").tidy
    seqs = tidy.drop_duplicates("run_id").groupby(["repeat", "variant"])["round_seq"].unique()
    assert {(r, v): list(s) for (r, v), s in seqs.items()} == {
        (r, v): [r - 1] for r in (1, 2, 3) for v in ("a", "b")
    }


def test_old_sidecars_have_no_round_seq_and_are_not_flagged(tmp_path):
    from podnet.parse.raw import write_raw

    raw = tmp_path / "raw"
    write_raw(
        raw / "v" / "s" / "iperf3-tcp" / "r001.json", iperf_json(5e9), {"variant": "v", "scenario": "s"}
    )
    parsed = parse_experiment(raw, experiment="t")
    assert parsed.tidy["round_seq"].isna().all() and not parsed.tidy["disturbed"].any()
    assert parsed.disturbed.empty
    assert disturbed_sentence(parsed.disturbed, parsed.tidy) == ""
    assert disturbed_sentence(pd.DataFrame(), parsed.tidy.assign(round_seq=0)).startswith("No run was judged")
