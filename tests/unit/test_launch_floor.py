"""launch.floor: the noise floor at each round's start of a (fake) launch, refused where it cannot run."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from podnet.launch.cluster.signals import Interrupted
from podnet.launch.noise import floor as lfloor
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.parse import parse_experiment, parse_files
from podnet.parse.raw import read_sidecar, write_raw
from tests.fakekube import FakeKube
from tests.unit.test_launch_runner import BASE, IPERF, PING, nodes, ok_responder


def config(tmp_path: Path, floor: dict | None = None, **over):
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"].update(over)
    if floor is not None:
        c["launch"]["floor"] = floor
    return from_mapping(c)


class FakeFloor:
    """Stands in for podnet.launch.noise.netns_floor.Floor: records calls, writes a real tool output per run."""

    def __init__(self, *args, **kwargs):
        self.entered = 0
        self.exited = 0
        self.calls: list[dict] = []

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.exited += 1

    def run(self, test, repeat, raw_dir, experiment, *, variant, scenario, extra):
        self.calls.append({"test": test, "repeat": repeat, "variant": variant, "scenario": scenario, **extra})
        out = json.dumps(IPERF) if test.tool == "iperf3" else PING
        ext = "json" if test.tool == "iperf3" else "txt"
        meta = {
            "tool": test.tool,
            "variant": variant,
            "scenario": scenario,
            "test": test.name,
            "repeat": repeat,
        }
        path = raw_dir / variant / scenario / f"{test.tool}-{test.name}" / f"r{repeat:03d}.{ext}"
        return write_raw(path, out, {**meta, **extra})


@pytest.fixture
def fake_floor(monkeypatch):
    made: list[FakeFloor] = []

    def factory(*a, **k):
        made.append(FakeFloor())
        return made[-1]

    monkeypatch.setattr(lfloor, "Floor", factory)
    monkeypatch.setattr(lfloor, "check_possible", lambda cfg, names: None)
    return made


ON = {"enabled": True, "tests": ["iperf3:tcp", "ping:plain"]}


def test_config_floor_is_off_by_default_and_checked():
    assert from_mapping({**copy.deepcopy(BASE), "raw_dir": "x"}).floor_tests == ()
    c = copy.deepcopy(BASE)
    c["launch"]["floor"] = {"enabled": True}
    assert [t.key for t in from_mapping(c).floor_tests] == [
        "iperf3:tcp",
        "ping:plain",
    ]  # the schema's default
    c["launch"]["floor"] = {"enabled": True, "tests": ["iperf3:nope"]}
    with pytest.raises(LaunchConfigError, match="iperf3:nope"):
        from_mapping(c)
    c = copy.deepcopy(BASE)
    c["launch"]["scenarios"][0]["name"] = lfloor.SCENARIO
    with pytest.raises(LaunchConfigError, match="noise floor"):
        from_mapping(c)


def test_floor_runs_once_per_round_with_the_launch_id(tmp_path, fake_floor):
    cfg = config(tmp_path, ON, repeats=3)
    res = launch(cfg, kube=FakeKube(nodes(), ok_responder), manifest=tmp_path / "m.json")
    assert res.error == "" and res.ok == 12 and res.rounds == 3
    (fl,) = fake_floor
    assert (fl.entered, fl.exited) == (1, 1)
    assert sorted((c["round"], c["test"].key) for c in fl.calls) == [
        (r, k) for r in (1, 2, 3) for k in ("iperf3:tcp", "ping:plain")
    ]
    assert {c["launch"]["id"] for c in fl.calls} == {res.launch_id}
    assert {(c["variant"], c["scenario"]) for c in fl.calls} == {("bridge", "floor-netns-veth")}
    # repeats number each test's floor runs 1..3; the test's params are the cluster's (same command)
    assert sorted(c["repeat"] for c in fl.calls if c["test"].tool == "ping") == [1, 2, 3]
    ping = next(c["test"] for c in fl.calls if c["test"].tool == "ping")
    assert ping.params["count"] == 3
    assert json.loads((tmp_path / "m.json").read_text())["floor_runs"] == 6
    # the parse stage sees the floor beside the cluster, in the same launch
    tidy = parse_experiment(cfg.raw_dir, "t").tidy
    floor_rows = tidy[tidy["scenario"] == "floor-netns-veth"]
    assert len(floor_rows) and set(floor_rows["launch_id"]) == {res.launch_id}
    assert set(tidy.loc[tidy["scenario"] == "pod-pod", "launch_id"]) == {res.launch_id}


class VanishingFloor(FakeFloor):
    """A floor whose namespaces are deleted from outside after ``gone_after`` rounds, and again
    after every rebuild when ``keeps_vanishing``."""

    def __init__(self, gone_after: int, keeps_vanishing: bool):
        super().__init__()
        self.gone_after, self.keeps_vanishing = gone_after, keeps_vanishing
        self.rounds_seen = 0
        self.rebuilt = 0

    def intact(self):
        self.rounds_seen += 1
        if self.rebuilt:
            return not self.keeps_vanishing
        return self.rounds_seen < self.gone_after

    def rebuild(self):
        self.rebuilt += 1


@pytest.mark.parametrize("keeps_vanishing", [False, True])
def test_a_floor_whose_namespaces_vanish_is_rebuilt_then_stopped(
    tmp_path, monkeypatch, caplog, keeps_vanishing
):
    fl = VanishingFloor(gone_after=2, keeps_vanishing=keeps_vanishing)
    monkeypatch.setattr(lfloor, "Floor", lambda *a, **k: fl)
    monkeypatch.setattr(lfloor, "check_possible", lambda cfg, names: None)
    res = launch(config(tmp_path, ON, repeats=5), kube=FakeKube(nodes(), ok_responder))
    assert res.error == "" and res.ok == 20  # the cluster's runs never depend on the floor
    rounds = sorted({c["round"] for c in fl.calls})
    if not keeps_vanishing:  # gone before round 3 (the 2nd check): rebuilt once, every round ran
        assert fl.rebuilt == 1 and rounds == [1, 2, 3, 4, 5]
        assert "stopped" not in caplog.text and res.floor_stopped == ""
    else:  # gone again before rounds 4 and 5: rebuilt MAX_REBUILDS (2) times, then stopped at round 5
        assert fl.rebuilt == lfloor.MAX_REBUILDS and rounds == [1, 2, 3, 4]
        assert "floor stopped at round 5" in caplog.text and "vanished" in res.floor_stopped
    assert fl.exited == 1


def test_a_resumed_launch_adds_floor_runs_and_overwrites_none(tmp_path, fake_floor):
    cfg = config(tmp_path, ON, repeats=1)
    launch(cfg, kube=FakeKube(nodes(), ok_responder))
    cfg2 = config(tmp_path, ON, repeats=2)
    launch(cfg2, kube=FakeKube(nodes(), ok_responder))
    assert [c["repeat"] for c in fake_floor[1].calls if c["test"].tool == "iperf3"] == [2]
    files = sorted(
        p.name for p in (cfg.raw_dir / "bridge" / "floor-netns-veth" / "iperf3-tcp").glob("r*.json")
    )
    assert files == ["r001.json", "r002.json"]


def test_floor_is_closed_after_ctrl_c(tmp_path, fake_floor):
    cfg = config(tmp_path, ON, repeats=2)
    n = {"runs": 0}

    def interrupting(pod, argv):
        n["runs"] += 1
        if n["runs"] == 2:
            raise Interrupted("SIGINT")
        return ok_responder(pod, argv)

    res = launch(cfg, kube=FakeKube(nodes(), interrupting))
    assert res.interrupted and fake_floor[0].exited == 1


def test_floor_off_runs_no_floor(tmp_path, fake_floor):
    res = launch(config(tmp_path, None), kube=FakeKube(nodes(), ok_responder))
    assert res.ok == 8 and fake_floor == [] and res.floor_runs == 0


def test_floor_is_refused_where_it_cannot_run_before_anything_is_created(tmp_path, monkeypatch):
    cfg = config(tmp_path, ON, cluster_info=str(tmp_path / "no-info.json"))
    monkeypatch.setattr(lfloor.os, "geteuid", lambda: 1000)
    with pytest.raises(lfloor.FloorUnavailable, match="needs root"):
        lfloor.check_possible(cfg, ["n1"])
    monkeypatch.setattr(lfloor.os, "geteuid", lambda: 0)
    with pytest.raises(lfloor.FloorUnavailable, match="embedded one"):
        lfloor.check_possible(cfg, ["n1"])
    # an info.json whose nodes are not (or not all) network namespaces here
    info = tmp_path / "info.json"
    netns = tmp_path / "netns"
    netns.mkdir()
    (netns / "ns-n1").touch()
    info.write_text(
        json.dumps({"nodes": [{"name": "n1", "netns": "ns-n1"}, {"name": "n2", "netns": "ns-n2"}]})
    )
    cfg = config(tmp_path, ON, cluster_info=str(info))
    with pytest.raises(lfloor.FloorUnavailable, match="n2 are not network namespaces"):
        lfloor.check_possible(cfg, ["n1", "n2"], netns_dir=netns)
    (netns / "ns-n2").touch()
    monkeypatch.setattr(lfloor.shutil, "which", lambda b: None if b == "nsenter" else "/usr/bin/" + b)
    with pytest.raises(lfloor.FloorUnavailable, match="nsenter not installed"):
        lfloor.check_possible(cfg, ["n1", "n2"], netns_dir=netns)
    # the launch: refused with the reason, no namespace or pod made
    k = FakeKube(nodes(), ok_responder)
    res = launch(config(tmp_path, ON, cluster_info=str(tmp_path / "no-info.json")), kube=k)
    assert "launch.floor" in res.error and res.launched == 0 and not k.created_log


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(
    not (shutil.which("iperf3") and shutil.which("ping") and shutil.which("nsenter")),
    reason="the floor's tools are installed by `make floor-tools`",
)
def test_real_floor_round_between_the_launchers_namespaces(tmp_path):
    """Root: two short rounds on a real floor (iperf3 1 s, ping 3 x 0.2 s), then nothing left."""
    import os

    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    c = copy.deepcopy(BASE)
    c["raw_dir"] = str(tmp_path / "raw")
    c["launch"]["tools"]["iperf3"]["tests"][0]["params"] = {"duration": 1, "omit": 0}
    c["launch"]["floor"] = ON
    cfg = from_mapping(c)
    f = lfloor.LaunchFloor(cfg, "bridge")
    slots = [type("S", (), {"round": 1})()]
    try:
        try:
            paths = f.round(slots, {"id": "L1"})
        except lfloor.FloorUnavailable as exc:
            if "in use by another" in str(exc):
                pytest.skip(f"a launch on this machine has its floor up: {exc}")
            raise
        assert lfloor.NAMES.ns_client in _namespaces() and lfloor.NAMES.ns_server in _namespaces()
        slots[0].round = 2
        paths += f.round(slots, {"id": "L1"})
    finally:
        f.close()
    assert lfloor.NAMES.ns_client not in _namespaces() and lfloor.NAMES.ns_server not in _namespaces()
    assert len(paths) == 4
    for p in paths:
        meta = read_sidecar(p)
        assert (
            meta["status"] == "ok" and meta["launch"]["id"] == "L1" and meta["scenario"] == "floor-netns-veth"
        )
        assert meta["server"]["netns"] == lfloor.NAMES.ns_server
    parsed = parse_files(paths, cfg.raw_dir, "t")
    assert len(parsed.failed) == 0
    assert sorted(set(parsed.tidy["repeat"])) == [1, 2] and set(parsed.tidy["launch_id"]) == {"L1"}


def test_a_floor_that_cannot_be_made_ends_the_launch_with_the_reason(tmp_path, monkeypatch):
    class Broken(FakeFloor):
        def __enter__(self):
            raise subprocess.CalledProcessError(2, ["ip", "netns", "add", "x"], stderr="File exists")

    made = []
    monkeypatch.setattr(lfloor, "Floor", lambda *a, **k: made.append(Broken()) or made[-1])
    monkeypatch.setattr(lfloor, "check_possible", lambda cfg, names: None)
    k = FakeKube(nodes(), ok_responder)
    res = launch(config(tmp_path, ON), kube=k)
    assert "could not make the floor" in res.error and "File exists" in res.error
    assert res.launched == 0 and k.namespaces_live == {} and made[0].exited == 1
