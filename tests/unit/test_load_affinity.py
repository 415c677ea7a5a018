"""A test's ``load.affinity``: the load's client exec and server container on CPUs of their own while
the probe keeps ``launch.affinity``'s; absent, the load runs where its probe runs (as before). With
both on one CPU under policy other, a loaded TCP_RR P99 was the scheduler's time slice (2.2-4.5 ms
against 34-79 µs idle, every CNI), not the path's queueing."""

from __future__ import annotations

import pytest

from podnet.config import schema
from podnet.launch.cluster.manifests import pod_manifest
from podnet.launch.rounds import underload
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.launch.spec.load import LOAD_PORT, LoadSpec
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import POLICIES, build_plan
from podnet.parse.raw import find_raw_files, read_sidecar, validate_sidecar
from podnet.tools import netperf
from tests.launch_configs import experiment, pod_pod
from tests.unit.test_underload_launch import _cluster, _running_load, _tools

PROBE_CPU = {"client": 0, "server": 0}
OWN = {"client": 1, "server": 1}
NODES = [Node("n1", {}), Node("n2", {})]


def _cfg(load: dict, launch_affinity: dict | None = PROBE_CPU, **extra):
    more = {"affinity": launch_affinity} if launch_affinity is not None else {}
    return from_mapping(experiment([pod_pod()], _tools(load), **more, **extra))


def test_the_schema_takes_launch_affinitys_shape_for_a_load():
    for good in (OWN, {"client": 1}, {"server": 2, "policy": "batch"}, {**OWN, "policy": "other"}):
        cfg = _cfg({"streams": [0, 4], "affinity": good})
        assert {c.test.load.affinity == good for c in cfg.cases} == {True}
    for bad in ({}, {"client": -1}, {"client": "one"}, {"cpu": 1}, {**OWN, "policy": "fifo"}, [1, 1], 1):
        with pytest.raises(LaunchConfigError):
            _cfg({"streams": 4, "affinity": bad})
    node = schema.section("launch")["properties"]["tools"]["additionalProperties"]["properties"]["tests"]
    aff = node["items"]["properties"]["load"]["properties"]["affinity"]
    assert (
        aff["properties"]["policy"]["enum"]
        == list(POLICIES)
        == schema.section("launch", "affinity", "policy")["enum"]
    )


def test_the_load_server_container_is_on_the_loads_cpu_and_the_probes_server_on_the_launchs():
    plan = build_plan(_cfg({"streams": [0, 4], "affinity": OWN}), NODES)
    idle, loaded = plan.cases
    assert idle.load_server is None and idle.server.pin == ["taskset", "-c", "0"]
    assert loaded.server.pin == ["taskset", "-c", "0"]  # the probe's (netperf's) server
    assert loaded.load_server.pin == ["taskset", "-c", "1"] and loaded.load_server.port == LOAD_PORT
    containers = pod_manifest(
        plan.pods[loaded.server_pod], image="i", pull_policy="Never", labels={}, lifetime=60
    )["spec"]["containers"]
    command = {c["name"]: c["command"] for c in containers}
    assert command[loaded.load_server.container][:4] == ["taskset", "-c", "1", "iperf3"]
    assert command[loaded.server.container][:3] == ["taskset", "-c", "0"]
    # no tool option from launch.affinity in the load's iperf3 (taskset places it), either way
    inv = loaded.load_invocation("10.0.0.9", loaded.template.duration)
    assert "-A" not in inv.client and "-A" not in loaded.load_server.argv
    batch = build_plan(_cfg({"streams": 4, "affinity": {**OWN, "policy": "batch"}}), NODES).cases[0]
    assert batch.load_server.pin == ["chrt", "--batch", "0", "taskset", "-c", "1"]


def test_without_its_own_affinity_the_load_runs_where_its_probe_runs():
    (loaded,) = build_plan(_cfg({"streams": 4}), NODES).cases
    assert loaded.case.test.load.affinity is None
    assert loaded.load_server.pin == loaded.server.pin == ["taskset", "-c", "0"]
    assert loaded.case.test.load.placed({"client": 0}) == {"client": 0}
    assert LoadSpec(4, affinity=OWN).placed(PROBE_CPU) == OWN
    (free,) = build_plan(_cfg({"streams": 4}, launch_affinity=None), NODES).cases
    assert free.load_server.pin == [] and free.load_server.cpu is None


def test_the_sidecars_load_record_says_where_the_load_ran():
    assert LoadSpec(4, affinity={**OWN, "policy": "batch"}).as_meta()["affinity"] == {
        **OWN,
        "policy": "batch",
    }
    assert "affinity" not in LoadSpec(4).as_meta()
    assert LoadSpec(4, affinity=OWN) != LoadSpec(4) and hash(LoadSpec(4, affinity=OWN)) == hash(LoadSpec(4))


def test_two_loads_on_one_server_pod_cannot_ask_one_server_for_two_placements():
    tools = _tools({"streams": 2, "affinity": OWN})
    tools["ping"] = {
        "tests": [{"name": "rtt", "params": {"count": 5, "interval": 0.2}, "load": {"streams": 2}}]
    }
    cfg = from_mapping(experiment([pod_pod()], tools, affinity=PROBE_CPU))
    with pytest.raises(LaunchConfigError, match="one server process serves both"):
        build_plan(cfg, NODES)
    # one placement (policy other is the default's): one container for both
    tools["ping"]["tests"][0]["load"]["affinity"] = {**OWN, "policy": "other"}
    plan = build_plan(from_mapping(experiment([pod_pod()], tools, affinity=PROBE_CPU)), NODES)
    assert len({id(cp.load_server) for cp in plan.cases}) == 1


@pytest.mark.parametrize("own", [True, False])
def test_a_launched_loads_exec_starts_on_its_cpu_and_the_probe_on_the_launchs(tmp_path, monkeypatch, own):
    monkeypatch.setattr(underload, "pause", lambda s: None)
    monkeypatch.setattr(type(netperf.ADAPTER), "complete_for", lambda self, result, command: None)
    load = {"streams": 2, **({"affinity": OWN} if own else {})}
    cfg = _cfg(load, raw_dir=tmp_path / "raw", repeats=1, warmup=0)
    k = _cluster([_running_load()])
    res = launch(cfg, kube=k)
    assert (res.ok, res.failed) == (1, 0)
    cpu = "1" if own else "0"
    (load_exec,) = [a for _, a in k.execs if "iperf3" in a and "-J" in a]
    (probe_exec,) = [a for _, a in k.execs if "netperf" in a and "-H" in a]
    assert load_exec[:4] == ["taskset", "-c", cpu, "timeout"] and "-A" not in load_exec
    assert probe_exec[:3] == ["taskset", "-c", "0"]
    (raw,) = find_raw_files(cfg.raw_dir)
    meta = validate_sidecar(read_sidecar(raw))
    rec = meta["load"]
    assert rec["placement_command"] == ["taskset", "-c", cpu]
    assert rec["server_command"][:4] == ["taskset", "-c", cpu, "iperf3"]
    assert meta["placement_command"] == ["taskset", "-c", "0"]
    assert rec.get("affinity") == (OWN if own else None)


def test_the_loads_own_cpus_are_apart_from_the_probes_only_when_they_differ():
    assert LoadSpec(streams=4, affinity=OWN).apart(PROBE_CPU) == (1,)
    assert LoadSpec(streams=4, affinity={"client": 0}).apart(PROBE_CPU) == ()  # the probe's CPU
    assert LoadSpec(streams=4).apart(PROBE_CPU) == ()  # no CPU of its own
    assert LoadSpec(streams=4, affinity={"server": 1}).apart(PROBE_CPU) == ()
    assert LoadSpec(streams=4, affinity=OWN).apart(None) == (1,)


def test_a_probes_client_side_leaves_out_its_loads_cpu():
    """Measured 2026-11-29 (benchmarks/load-cpu.yaml): with the load pinned to CPU 1 in the probe's
    client container, loaded runs read ``c?/s0`` (the container's time split across both CPUs), so
    their pairs with the idle runs (``c0/s0``) were left out as of two placements."""
    from podnet.launch.noise import cpus

    before = f"{cpus.MARK} 1000000000 2000000000"
    after = f"{cpus.MARK} 1300000000 2900000000"  # probe 0.3 s on CPU 0, load 0.9 s on CPU 1
    server = (f"{cpus.MARK} 0 0", f"{cpus.MARK} 200000000 0")
    mixed = cpus.from_readings((before, after), server, None, 100.0)
    assert mixed["placement"] == "c?/s0"
    apart = cpus.from_readings((before, after), server, None, 100.0, (1,))
    assert apart["placement"] == "c0/s0"
    assert apart["client"]["excluded"] == [1] and apart["client"]["share"] == 1.0
    assert apart["client"]["cpu_s"] == [0.3, 0.9]  # both kept in the record
    # a side whose time was all on left-out CPUs did too little elsewhere to say where it ran
    assert cpus.side((0, 0), (10**6, 0), exclude=(0,)) == cpus.Side((0.001, 0.0), None, None, (0,))
