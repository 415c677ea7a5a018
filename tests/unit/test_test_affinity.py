"""A test's own placement (``launch.tools.<tool>.tests[].affinity``, issue 46): its client exec, its
server container, its tool's CPU option and its server's readings where it says, the other tests where
``launch.affinity`` says. Seed 001 at 1 GbE with both ends on CPU 0: iperf 2's paced UDP sender
offered 1000M and sent 0.52-0.64 Gbit/s host-host, the CPU's rate, not the link's."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnet.config import schema
from podnet.launch.campaign import run as campaign
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.manifests import pod_manifest
from podnet.launch.noise import interference, netns_floor
from podnet.launch.noise.floor import floor_tests
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.launch.spec.config import TestSpec as Spec
from podnet.launch.spec.placement import Node
from podnet.launch.spec.plan import POLICIES, build_plan, case_params
from podnet.parse.raw import find_raw_files, read_sidecar, validate_sidecar
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import HOST_HOST, experiment, pod_pod

SHARED = {"client": 0, "server": 0, "policy": "batch"}  # seed 001's launch.affinity
SPLIT = {"client": 0, "server": 1, "policy": "batch"}  # its udp-1000m's own
NODES = [Node("n1", {}), Node("n2", {})]
BATCH = ["chrt", "--batch", "0"]
REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "iperf2"


def _iperf2(udp_affinity: dict | None = SPLIT, **udp: object) -> dict:
    """Seed 001's iperf2 tests: TCP on launch.affinity, UDP at 1000M with ``udp_affinity``."""
    test = {"name": "udp-1000m", "params": {"protocol": "udp", "bandwidth": "1000M", "duration": 5}, **udp}
    if udp_affinity is not None:
        test["affinity"] = udp_affinity
    return {"iperf2": {"tests": [{"name": "tcp", "params": {"duration": 5}}, test]}}


def _cfg(tools: dict, launch_affinity: dict | None = SHARED, scenarios=None, **extra):
    more = {"affinity": launch_affinity} if launch_affinity is not None else {}
    return from_mapping(experiment(scenarios or [HOST_HOST], tools, **more, **extra))


def _case(plan, name: str):
    (cp,) = [c for c in plan.cases if c.case.test.name == name]
    return cp


def test_the_schema_takes_launch_affinitys_shape_for_a_test():
    for good in (SPLIT, {"client": 1}, {"server": 2, "policy": "batch"}, {"client": 0, "policy": "other"}):
        cfg = _cfg(_iperf2(good))
        assert _case(build_plan(cfg, NODES), "udp-1000m").case.test.affinity == good
    for bad in ({}, {"client": -1}, {"client": "one"}, {"cpu": 1}, {**SPLIT, "policy": "fifo"}, [0, 1], 1):
        with pytest.raises(LaunchConfigError, match="affinity"):
            _cfg(_iperf2(bad))
    items = schema.section("launch", "tools")["additionalProperties"]["properties"]["tests"]["items"]
    aff = items["properties"]["affinity"]
    assert aff["additionalProperties"] is False and set(aff["properties"]) == {"client", "server", "policy"}
    assert aff["properties"]["policy"]["enum"] == list(POLICIES)
    assert aff["properties"]["policy"]["enum"] == schema.section("launch", "affinity", "policy")["enum"]


def test_a_tests_affinity_is_its_own_whole_and_reaches_every_point_of_it():
    tools = {"iperf3": {"tests": [{"name": "tcp", "affinity": {"client": 1}, "sweep": {"streams": [1, 2]}}]}}
    cfg = _cfg(tools)
    assert {c.test.name for c in cfg.cases} == {"tcp-streams-1", "tcp-streams-2"}
    for c in cfg.cases:
        assert c.test.affinity == {"client": 1}
        # whole: the server CPU and the policy are not taken from launch.affinity
        assert c.test.placed(cfg.affinity) == {"client": 1}
    plain = Spec("iperf3", "tcp")
    assert plain.affinity is None and plain.placed(SHARED) == SHARED and plain.placed(None) is None
    assert Spec("iperf3", "tcp", affinity=SPLIT) == plain  # not part of a test's identity (its key)


def test_the_plan_starts_the_tests_server_container_on_its_cpu_and_the_others_on_the_launchs():
    plan = build_plan(_cfg(_iperf2()), NODES)
    tcp, udp = _case(plan, "tcp"), _case(plan, "udp-1000m")
    assert tcp.server_pod == udp.server_pod and tcp.server is not udp.server
    # as under launch.affinity the policy reaches nginx only, not a tool's own server container
    assert tcp.server.pin == ["taskset", "-c", "0"] and udp.server.pin == ["taskset", "-c", "1"]
    containers = pod_manifest(
        plan.pods[udp.server_pod], image="i", pull_policy="Never", labels={}, lifetime=60
    )
    command = {c["name"]: c["command"] for c in containers["spec"]["containers"]}
    assert command[udp.server.container][:5] == ["taskset", "-c", "1", "iperf", "-s"]
    assert "-u" in command[udp.server.container]
    assert command[tcp.server.container][:4] == ["taskset", "-c", "0", "iperf"]
    assert "-u" not in command[tcp.server.container]


def test_a_tests_affinity_reaches_the_tools_own_cpu_option():
    tools = {
        "netperf": {
            "tests": [
                {"name": "rr", "params": {"test": "TCP_RR"}},
                {"name": "rr-split", "params": {"test": "TCP_RR", "port": 15866}, "affinity": SPLIT},
            ]
        }
    }
    cfg = _cfg(tools, scenarios=[pod_pod()])
    by = {t.name: t for t in cfg.tools["netperf"]}
    assert case_params(cfg, by["rr"])["affinity"] == [0, 0]
    assert case_params(cfg, by["rr-split"])["affinity"] == [0, 1]
    plan = build_plan(cfg, NODES)
    split = _case(plan, "rr-split")
    assert split.template.client[split.template.client.index("-T") + 1] == "0,1"
    assert split.server.pin == ["taskset", "-c", "1"] and _case(plan, "rr").server.pin == [
        "taskset",
        "-c",
        "0",
    ]
    # the params' own option still wins over the placement's
    by["rr-split"].params["affinity"] = [1, 1]
    assert case_params(cfg, by["rr-split"])["affinity"] == [1, 1]


def test_a_tests_affinity_alike_the_launchs_shares_its_server_container():
    plan = build_plan(_cfg(_iperf2(SHARED, params={"protocol": "udp", "duration": 5})), NODES)
    udp = _case(plan, "udp-1000m")
    assert udp.server.pin == ["taskset", "-c", "0"]
    tools = _iperf2(None)
    tools["iperf2"]["tests"].append({"name": "udp-same", "params": {"protocol": "udp"}, "affinity": SHARED})
    plan = build_plan(_cfg(tools), NODES)
    assert _case(plan, "udp-same").server is _case(plan, "udp-1000m").server


def test_one_server_process_serves_one_placement_and_the_error_names_the_test():
    tools = _iperf2(None)  # udp-1000m on launch.affinity's CPU 0
    tools["iperf2"]["tests"].append({"name": "udp-split", "params": {"protocol": "udp"}, "affinity": SPLIT})
    with pytest.raises(LaunchConfigError, match="one server process serves both") as err:
        build_plan(_cfg(tools), NODES)
    assert "launch.tools.iperf2 test 'udp-split'" in str(err.value)
    assert "test 'udp-1000m'" in str(err.value) and "params.port" in str(err.value)
    # a port of its own: a server container of its own
    tools["iperf2"]["tests"][-1]["params"]["port"] = 15002
    plan = build_plan(_cfg(tools), NODES)
    split, shared = _case(plan, "udp-split"), _case(plan, "udp-1000m")
    assert split.server is not shared.server and split.server.port == 15002
    assert split.server.pin == ["taskset", "-c", "1"] and shared.server.pin == ["taskset", "-c", "0"]
    # nginx too: one per port, one placement
    http = {"ab": {"tests": [{"name": "c1"}]}, "wrk": {"tests": [{"name": "c1", "affinity": SPLIT}]}}
    with pytest.raises(LaunchConfigError, match="launch.tools.wrk test 'c1'.*nginx"):
        build_plan(_cfg(http, scenarios=[pod_pod()]), NODES)
    http["wrk"]["tests"][0]["affinity"] = SHARED
    plan = build_plan(_cfg(http, scenarios=[pod_pod()]), NODES)
    (nginx,) = {id(c.server): c.server for c in plan.cases}.values()
    assert nginx.pin == [*BATCH, "taskset", "-c", "0"]  # nginx starts under the policy


def test_a_load_without_its_own_affinity_runs_where_its_tests_affinity_places_the_probe():
    probe = {
        "name": "rr",
        "params": {"test": "TCP_RR", "duration": 2},
        "affinity": {"client": 1, "server": 1},
    }
    (cp,) = build_plan(
        _cfg({"netperf": {"tests": [{**probe, "load": {"streams": 2}}]}}, scenarios=[pod_pod()]), NODES
    ).cases
    assert cp.server.pin == cp.load_server.pin == ["taskset", "-c", "1"]
    assert cp.case.test.load.placed(cp.case.test.placed(SHARED)) == {"client": 1, "server": 1}
    own = {**probe, "load": {"streams": 2, "affinity": {"client": 0, "server": 0}}}
    (cp,) = build_plan(_cfg({"netperf": {"tests": [own]}}, scenarios=[pod_pod()]), NODES).cases
    assert cp.server.pin == ["taskset", "-c", "1"] and cp.load_server.pin == ["taskset", "-c", "0"]
    assert cp.case.test.load.apart(cp.case.test.placed(SHARED)) == (0,)  # the probe's client is on 1


def _cluster() -> FakeKube:
    """A fake cluster answering iperf 2 with seed 001's own TCP and UDP outputs."""
    tcp = (FIXTURES / "seed001-tcp-i1.txt").read_text()
    udp = (FIXTURES / "seed001-udp-10s.txt").read_text()

    def respond(pod, argv):
        if argv[:1] == ["iperf"]:
            return ExecResult(rc=0, stdout=udp if "-u" in argv else tcp, stderr="")
        return ExecResult(rc=0, stdout="", stderr="")

    return FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], respond)


def test_a_launched_tests_client_exec_server_and_readings_start_where_its_affinity_says(tmp_path):
    cfg = _cfg(_iperf2(), raw_dir=tmp_path / "raw", repeats=1, warmup=0)
    k = _cluster()
    res = launch(cfg, kube=k)
    assert (res.ok, res.failed) == (2, 0)
    clients = [a for _, a in k.execs if "iperf" in a and "timeout" in a]
    assert [a[:6] for a in clients] == [[*BATCH, "taskset", "-c", "0"]] * 2  # both clients on CPU 0
    # the server's readings around each run start on that run's server CPU
    reads = [a[: -len(interference.SNAPSHOT)] for _, a in k.execs if a[-3:] == interference.SNAPSHOT[-3:]]
    assert reads == [[*BATCH, "taskset", "-c", "0"]] * 2 + [[*BATCH, "taskset", "-c", "1"]] * 2
    side = {read_sidecar(f)["test"]: validate_sidecar(read_sidecar(f)) for f in find_raw_files(cfg.raw_dir)}
    udp, tcp = side["udp-1000m"], side["tcp"]
    assert udp["placement_command"] == tcp["placement_command"] == [*BATCH, "taskset", "-c", "0"]
    assert udp["server_command"][:5] == ["taskset", "-c", "1", "iperf", "-s"]
    assert tcp["server_command"][:4] == ["taskset", "-c", "0", "iperf"]
    assert udp["harness"]["affinity"] == {
        **SPLIT,
        "applied": True,
        "by": "the launcher's chrt --batch 0 + taskset (iperf2 has no CPU option)",
        "from": "test",
    }
    assert tcp["harness"]["affinity"] == {
        **SHARED,
        "applied": True,
        "by": "the launcher's chrt --batch 0 + taskset (iperf2 has no CPU option)",
    }
    # the label is what the readings show (the fake's client on CPU 0, server on CPU 1), not the config
    assert udp["cpus"]["placement"] == "c0/s1"


def test_the_floor_places_a_test_as_the_launch_does(tmp_path):
    tools = {"iperf3": {"tests": [{"name": "tcp"}, {"name": "split", "affinity": SPLIT}]}}
    cfg = _cfg(tools, floor={"enabled": True, "tests": ["iperf3:tcp", "iperf3:split"]})
    by = {t.name: t for t in floor_tests(cfg)}
    assert by["tcp"].affinity == SHARED and by["tcp"].params["affinity"] == [0, 0]
    assert by["split"].affinity == SPLIT and by["split"].params["affinity"] == [0, 1]
    raw = experiment([HOST_HOST], tools, affinity=SHARED)
    by = {t.name: t for t in netns_floor.tests_from_config(raw)}
    assert by["split"].affinity == SPLIT and by["split"].params["affinity"] == [0, 1]
    assert by["tcp"].affinity == SHARED


def test_seed_001s_udp_sender_has_a_cpu_of_its_own(monkeypatch):
    monkeypatch.chdir(REPO)
    c = campaign.load("config/campaigns/seed-001.yaml")
    for v in c.variants:
        cfg = from_mapping(campaign.variant_config(c, v))
        by = {t.name: t for t in cfg.tools["iperf2"]}
        assert by["udp-1000m"].affinity == SPLIT and by["tcp"].affinity is None
        assert cfg.affinity == SHARED
        plan = build_plan(cfg, NODES)
        for cp in plan.cases:
            if cp.case.test.key == "iperf2:udp-1000m":
                assert cp.server.pin == ["taskset", "-c", "1"]
            elif cp.case.test.tool == "iperf2":
                assert cp.server.pin == ["taskset", "-c", "0"]
