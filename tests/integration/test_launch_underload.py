"""Latency under load on the embedded cluster: config/examples/latency-under-load.yaml, shortened
(netperf TCP_RR 2 s, idle and 2 load streams, 2 repeats). Each loaded run's load (iperf3 -P 2)
starts before its probe and ends after it; probe and load parse into tidy rows of one run with
their role; stats give the ratio to idle; a cut load output makes the run a failed one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from podnet import stats
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from podnet.parse.underload import LOAD_SUFFIX, epoch
from tests.integration.conftest import example_config, sidecars_all_ok
from tests.integration.test_launch import leftovers

pytestmark = pytest.mark.cluster


def _config(tmp_path: Path) -> dict:
    cfg = example_config(
        "latency-under-load.yaml",
        "it-underload",
        tmp_path,
        disturbance={"enabled": False},  # the test counts runs (the load itself is the machine's work)
        repeats=2,
        warmup=1,
    )
    la = cfg["launch"]
    (test,) = la["tools"]["netperf"]["tests"]
    test["params"]["duration"] = 2
    test["load"].update(streams=[0, 2], lead_in=3, lead_out=3)
    return cfg


def test_latency_under_load_end_to_end_on_the_embedded_cluster(core, tmp_path):
    assert not leftovers(core)
    cfg = from_mapping(_config(tmp_path))
    res = launch(cfg)
    assert res.error == "" and not res.interrupted
    side = sidecars_all_ok(cfg.raw_dir)
    assert res.ok == 4
    loaded = {k: v for k, v in side.items() if "load_streams-2" in k}
    assert len(loaded) == 2
    for path, meta in loaded.items():
        rec = meta["load"]
        print(path, rec["command_line"], rec["started"], meta["started"], meta["ended"], rec["ended"])
        assert rec["status"] == "ok" and rec["command"][:2] == ["iperf3", "-c"] and "-P" in rec["command"]
        # the load started before the probe and ended after it, on the launcher's clock
        assert epoch(rec["started"]) + 2 < epoch(meta["started"])
        assert epoch(rec["ended"]) > epoch(meta["ended"])
        assert (cfg.raw_dir / path).with_name(rec["file"]).is_file()
    assert all(v["load"]["streams"] == 0 for k, v in side.items() if "load_streams-0" in k)
    assert not leftovers(core)

    parsed = parse_experiment(cfg.raw_dir, cfg.experiment)
    assert parsed.failed.empty, parsed.failed.to_dict("records")
    t = parsed.tidy
    probe, load = t[t["role"] == "probe"], t[t["role"] == "load"]
    assert set(probe["tool"]) == {"netperf"} and set(load["tool"]) == {"iperf3"}
    assert probe["run_id"].nunique() == 4 and load["run_id"].nunique() == 2
    assert set(load["run_id"]) <= set(probe["run_id"])  # the same runs
    thr = load[load["metric"] == "throughput"]
    assert len(thr) == 2 and (thr["value"] > 0).all() and set(thr["streams"].astype(int)) == {2}
    p50 = probe[probe["metric"] == "latency_p50"]
    assert len(p50) == 4 and (p50["value"] > 0).all()

    tidy_path = tmp_path / "tidy.parquet"
    t.to_parquet(tidy_path)
    paths = stats.run(tidy_path, tmp_path / "out", {}, cache=False)
    u = pd.read_csv(paths["latency_under_load"])
    print(
        u[["metric", "load_streams", "centre", "ratio_to_idle", "ratio_low", "ratio_high", "load_throughput"]]
    )
    row = u[(u["metric"] == "latency_p50") & (u["load_streams"] == 2)].iloc[0]
    assert row["n_pairs"] == 2 and row["ratio_to_idle"] > 0 and row["load_throughput"] > 0

    # a cut load output (a copy of this launch's raw files): a failed run with the reason, no latency
    cut = tmp_path / "cut"
    shutil.copytree(cfg.raw_dir, cut)
    victim = sorted(cut.rglob("*" + LOAD_SUFFIX))[0]
    victim.write_text(victim.read_text()[:2000])
    again = parse_experiment(cut, cfg.experiment)
    (reason,) = again.failed["reason"]
    assert "load output" in reason
    assert again.tidy["run_id"].nunique() == 3
