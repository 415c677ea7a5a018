"""launch.floor on the embedded cluster: the floor runs at each round's start, in the same launch,
beside real pods, and leaves no namespace behind (root, make floor-tools)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from podnet.launch.noise import floor as lfloor
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from tests.integration.test_launch import leftovers, small

pytestmark = pytest.mark.cluster


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("iperf3"), reason="root and make floor-tools")
def test_floor_interleaved_with_a_launch_on_the_embedded_cluster(core, tmp_path):
    floor = {"enabled": True, "tests": ["iperf3:tcp", "ping:plain"]}
    cfg = from_mapping(
        small(
            tmp_path,
            "it-floor",
            ["host-host", "pod-pod-cross-node"],
            ["iperf3", "ping"],
            repeats=2,
            floor=floor,
        )
    )
    res = launch(cfg)
    assert res.error == "" and res.ok == 8 and res.floor_runs == 4
    assert not leftovers(core)
    assert not {lfloor.NAMES.ns_client, lfloor.NAMES.ns_server} & _namespaces()
    tidy = parse_experiment(cfg.raw_dir, "it-floor").tidy
    fl = tidy[tidy["scenario"] == lfloor.SCENARIO]
    assert set(fl["variant"]) == {res.variant} and set(fl["launch_id"]) == {res.launch_id}
    assert sorted(set(fl.loc[fl["tool"] == "iperf3", "repeat"])) == [1, 2]
    thr = tidy[(tidy["metric"] == "throughput") & (tidy["tool"] == "iperf3")]
    assert set(thr["scenario"]) == {"host-host", "pod-pod-cross-node", lfloor.SCENARIO}
