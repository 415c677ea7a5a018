"""Where a run's processes ran (podnet.launch.noise.cpus), and what the stages do with it: the tidy
``placement``, the summary's ``placements`` / ``placement_split``, pairs only within one placement,
the report's sentence (issue 43)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from podnet.launch.noise import cpus
from podnet.launch.spec.plan import pinned_argv
from podnet.report.placement import placement_sentence
from podnet.stats import summarize
from podnet.stats._data import as_tidy, make_groups
from podnet.stats.paired import paired


def test_a_side_is_the_cpu_that_did_most_of_its_work_or_none_when_it_moved():
    s = cpus.side((0, 0), (2_900_000_000, 100_000_000))  # ns: 2.9 s on CPU 0, 0.1 s on CPU 1
    assert s.cpu == 0 and s.share == pytest.approx(0.9667, abs=1e-4) and s.cpu_s == pytest.approx((2.9, 0.1))
    moved = cpus.side((0, 0), (1_500_000_000, 1_500_000_000))
    assert moved.cpu is None and moved.share == 0.5
    idle = cpus.side((5, 5), (5, 6))  # 1 ns: too little work to say where
    assert idle.cpu is None and idle.share is None
    assert cpus.side((1, 2), (0, 3)) is None  # a counter went backwards: two different cgroups
    assert cpus.side(None, (1, 2)) is None and cpus.side((1,), (1, 2)) is None


def test_the_label_names_client_and_server_cpus_with_a_question_mark_for_a_side_that_moved():
    on0, on1 = cpus.Side((1.0, 0.0), 0, 1.0), cpus.Side((0.0, 1.0), 1, 1.0)
    moved = cpus.Side((0.5, 0.5), None, 0.5)
    assert cpus.label(on0, on1, True) == "c0/s1"
    assert cpus.label(on0, on0, True) == "c0/s0"
    assert cpus.label(moved, on1, True) == "c?/s1"
    assert cpus.label(on0, None, True) == "c0/s?"  # a server that could not be read
    assert cpus.label(on0, None, False) == "c0"  # ping: no server process
    assert cpus.label(None, on1, True) == ""


def test_readings_of_the_wrapper_and_the_server_give_the_sidecars_cpus():
    stat = "cpu  10 0 10 100 0 0 {t} 0 0 0\ncpu0 5 0 5 50 0 0 {a} 0 0 0\ncpu1 5 0 5 50 0 0 {b} 0 0 0\n"
    before = stat.format(t=10, a=5, b=5) + "podnet_percpu 100 100\n"
    after = stat.format(t=310, a=305, b=5) + "podnet_percpu 2000000100 100\n"
    srv = ("x\npodnet_percpu 0 0\n", "x\npodnet_percpu 0 3000000000\n")
    rec = cpus.from_readings((before, after), srv, None, 100)
    assert rec["placement"] == "c0/s1"
    assert rec["softirq"]["cpu"] == 0 and rec["softirq"]["cpu_s"] == [3.0, 0.0]
    # cgroup v2 has no per-CPU usage: said, not guessed
    v2 = cpus.from_readings((stat.format(t=1, a=1, b=0), stat.format(t=2, a=2, b=0)), None, None, 100)
    assert v2["placement"] == "" and "cgroup v2" in v2["client"]["error"]
    lost = cpus.from_readings((before, after), (None, None), "exec refused", 100)
    assert lost["placement"] == "c0/s?" and "exec refused" in lost["server"]["error"]


def test_the_launcher_places_a_side_with_taskset_only_when_the_design_names_its_cpu():
    assert pinned_argv({"client": 0, "server": 1}, "server") == ["taskset", "-c", "1"]
    assert pinned_argv({"client": 0}, "server") == [] and pinned_argv(None, "client") == []


def test_a_batch_policy_starts_each_side_under_chrt_before_taskset():
    batch = {"client": 0, "server": 0, "policy": "batch"}
    assert pinned_argv(batch, "client") == ["chrt", "--batch", "0", "taskset", "-c", "0"]
    assert pinned_argv({**batch, "policy": "other"}, "server") == ["taskset", "-c", "0"]
    assert pinned_argv({"policy": "batch"}, "server") == []  # no CPU named: nothing placed
    with pytest.raises(ValueError, match="policy 'fifo'"):
        pinned_argv({"client": 0, "policy": "fifo"}, "client")


def test_the_policy_reaches_the_server_container_and_the_sidecar(tmp_path):
    from podnet.launch.spec.config import from_mapping

    cfg = from_mapping(
        {
            "experiment": "t",
            "launch": {
                "affinity": {"client": 0, "server": 0, "policy": "batch"},
                "tools": {"iperf3": {"tests": [{"name": "tcp"}]}, "ping": {"tests": [{"name": "plain"}]}},
                "scenarios": [{"name": "pp", "client": {"kind": "pod"}, "server": {"kind": "pod"}}],
            },
        }
    )
    assert cfg.affinity == {"client": 0, "server": 0, "policy": "batch"}
    from podnet import tools as adapters

    iperf3 = cfg.harness_settings(adapters.get("iperf3"), {"affinity": [0, 0]})["affinity"]
    ping = cfg.harness_settings(adapters.get("ping"), {})["affinity"]
    assert iperf3["policy"] == "batch" and ping["policy"] == "batch"
    assert iperf3["by"] == "iperf3's own option (started under the launcher's chrt --batch 0 + taskset)"
    assert ping["by"] == "the launcher's chrt --batch 0 + taskset (ping has no CPU option)"


def test_the_sidecar_says_what_placed_the_ends_chrt_as_well_as_taskset():
    """harness.affinity.by names the commands the launcher started the ends under (issue 43)."""
    from podnet.launch.spec.defaults import harness_affinity, placed_by

    batch, other = {"client": 0, "server": 1, "policy": "batch"}, {"client": 0, "server": 1}
    assert (
        placed_by(batch) == "chrt --batch 0 + taskset"
        and placed_by({**batch, "policy": "other"}) == "taskset"
    )
    assert placed_by(other) == "taskset" and placed_by({"server": 1}) == "taskset"
    assert placed_by({"policy": "batch"}) == "" and placed_by(None) == ""
    ping = harness_affinity("ping", False, None, other)
    assert ping == {**other, "applied": True, "by": "the launcher's taskset (ping has no CPU option)"}
    unset = harness_affinity("iperf3", True, None, batch)
    assert unset["by"] == "the launcher's chrt --batch 0 + taskset (the test's params unset the option)"
    assert harness_affinity("iperf3", True, [1, 0], None) == {
        "client": 1, "server": 0, "applied": True, "by": "iperf3's own option"
    }  # fmt: skip
    # a policy without a CPU places nothing (pinned_argv gives []): the sidecar does not say it did
    none = harness_affinity("ping", False, None, {"policy": "batch"})
    assert none["applied"] is False and none["by"] == "nothing: launch.affinity names no CPU"
    assert (
        pinned_argv({"policy": "batch"}, "client") == []
        and harness_affinity("ping", False, None, None) is None
    )


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")
def test_the_sampler_sees_a_pinned_process_on_its_cpu():
    ncpu = os.cpu_count() or 1
    cpu = ncpu - 1
    busy = subprocess.Popen(
        [
            "taskset",
            "-c",
            str(cpu),
            sys.executable,
            "-c",
            "import time\nt=time.time()\nwhile time.time()-t<0.6: pass",
        ]
    )
    try:
        with cpus.Sampler({}, ncpu, interval=0.02) as where:
            where.add("busy", busy.pid)
            time.sleep(0.4)
    finally:
        busy.wait()
    s = where.side("busy")
    assert s is not None and s.cpu == cpu
    assert cpus.processor(busy.pid) is None  # gone


def _tidy(placements_t: list[str], placements_b: list[str], vt: list[float], vb: list[float]) -> pd.DataFrame:
    rows = []
    for sc, places, vals in (("pod", placements_t, vt), ("host", placements_b, vb)):
        for k, (p, v) in enumerate(zip(places, vals, strict=True)):
            rows.append(
                {
                    "experiment": "e",
                    "variant": "v",
                    "scenario": sc,
                    "tool": "iperf3",
                    "test": "tcp",
                    "protocol": "tcp",
                    "direction": "forward",
                    "streams": 1,
                    "repeat": k + 1,
                    "run_id": f"{sc}/r{k + 1}",
                    "metric": "throughput",
                    "value": v,
                    "unit": "bit/s",
                    "source": "measured",
                    "raw_path": f"raw/{sc}/r{k + 1}.json",
                    "launch_id": "L1",
                    "round_seq": k,
                    "placement": p,
                }
            )
    return as_tidy(pd.DataFrame(rows))


def test_a_group_whose_runs_ran_in_two_placements_is_flagged_in_the_summary():
    t = _tidy(["c0/s0"] * 4 + ["c0/s1"] * 2, ["c0/s0"] * 6, [15e9] * 4 + [9e9] * 2, [19e9] * 6)
    s = summarize(t).set_index("scenario")
    assert bool(s.loc["pod", "placement_split"]) and s.loc["pod", "placements"] == "c0/s0 x4, c0/s1 x2"
    assert not bool(s.loc["host", "placement_split"]) and s.loc["host", "placements"] == "c0/s0 x6"
    text = placement_sentence(t, summarize(t))
    assert "c0/s0 in 10" in text and "**1 groups ran in more than one placement**" in text
    one = _tidy(["c0/s0"] * 3, ["c0/s0"] * 3, [1.0, 1.1, 1.2], [2.0, 2.1, 2.2])
    assert "No group's runs ran in more than one placement" in placement_sentence(one, summarize(one))
    imported = one.assign(placement="")
    assert placement_sentence(imported, summarize(imported)) == ""
    assert summarize(imported)["placements"].eq("").all()


def test_a_pair_whose_two_runs_ran_in_different_placements_is_left_out():
    pt = ["c0/s0", "c0/s0", "c0/s1", "c0/s0", "c0/s0", "c0/s0"]
    pb = ["c0/s0", "c0/s1", "c0/s1", "c0/s0", "c0/s0", "c0/s0"]
    vt = [15.0, 15.2, 9.0, 15.1, 14.9, 15.3]
    vb = [19.0, 10.5, 10.4, 19.2, 18.8, 19.1]  # round 1: pod on one CPU, host on two
    g = make_groups(_tidy(pt, pb, vt, vb))
    keys = g.keys.reset_index(drop=True)
    ti = np.array([int(keys.index[keys["scenario"] == "pod"][0])])
    bi = np.array([int(keys.index[keys["scenario"] == "host"][0])])
    r = paired(g, ti, bi, np.array(["scenario"]), 0.95, False, 1e-9)
    assert r.n_pairs[0] == 5 and "1 pair(s) whose runs ran in different placements left out" in r.note[0]
    # the mixed pair (15.2 / 10.5 = 1.45) is not in the ratio: all kept pairs are near 0.79-0.87
    assert 0.75 < r.ratio[0] < 0.9


def test_a_server_container_starts_under_the_policy_and_on_its_cpu():
    from podnet.launch.spec.plan import ServerProc

    s = ServerProc(
        tool="iperf3", container="iperf3-1", argv=["iperf3", "-s"], port=5201, cpu=0, policy="batch"
    )
    assert s.pin == ["chrt", "--batch", "0", "taskset", "-c", "0"]
    assert ServerProc(tool="iperf3", container="iperf3-1", argv=[], port=5201).pin == []
