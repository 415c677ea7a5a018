"""Latency under load across variants side by side (podnet.launch.campaign.sidebyside) on in-memory
clusters: a load point is a case like any other (paired per case, point and round); an adaptive
round that runs a loaded point runs its idle point too, so the ratio to idle keeps its pairs; a
load's own rows (iperf3 inside a probe's test) are never judged as a case; each variant's load server
gets its own port; under-load.yaml is a valid campaign of the five CNIs."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from podnet.launch.campaign import run as campaign
from podnet.launch.campaign.sidebyside import launch_side_by_side, variant_ports
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds import underload
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.load import LOAD_PORT, with_idle_points
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from podnet.tools import netperf
from tests.conftest import REPO
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import experiment, pod_pod
from tests.vs_seed_fixture import _scaled

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROBE = (FIX / "netperf" / "tcp-rr-k-launcher.txt").read_text()
LOAD = json.loads((FIX / "iperf3" / "tcp-p2-omit.json").read_text())
TOOLS = {
    "netperf": {
        "tests": [
            {"name": "tcp_rr", "params": {"test": "TCP_RR", "duration": 2}, "load": {"streams": [0, 2]}}
        ]
    }
}
IDLE, LOADED = (
    ("pod-pod", "netperf", "tcp_rr-load_streams-0"),
    ("pod-pod", "netperf", "tcp_rr-load_streams-2"),
)


def cfg(tmp_path: Path, variant: str, primary: dict):
    stats = {
        "planning": {"target_rel_half_width": 0.05, "min_repeats": 2, "max_repeats": 6, "min_to_stop": 3},
        "primary": [primary],
        "comparisons": [{"by": "variant", "baseline": "a"}],
    }
    c = experiment(
        [pod_pod()],
        TOOLS,
        raw_dir=tmp_path / "raw",
        stats=stats,
        variant=variant,
        repeats=2,
        warmup=0,
        adaptive={"enabled": True, "budget": "10m"},
        disturbance={"enabled": False},
    )
    return from_mapping(c)


def kube(rng: random.Random) -> FakeKube:
    """netperf answers the real TCP_RR output; iperf3 a real -P 2 load stamped as running, its rate
    drawn (so a comparison of the loads' throughput never meets its target)."""

    def respond(pod, argv):
        if "iperf3" in argv and "-J" in argv:
            doc = _scaled(LOAD, rng.uniform(0.5, 2.0))
            doc["start"]["timestamp"]["timesecs"] = int(time.time()) - 3
            doc["intervals"][-1]["sum"]["end"] = 10.0
            return ExecResult(rc=0, stdout=json.dumps(doc), stderr="")
        if "netperf" in argv:
            return ExecResult(rc=0, stdout=PROBE, stderr="")
        return ExecResult(rc=0, stdout="", stderr="")

    return FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], respond)


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(underload, "pause", lambda s: None)
    # the stored TCP_RR output predates the launcher's longer -k list: not what these tests check
    monkeypatch.setattr(type(netperf.ADAPTER), "complete_for", lambda self, result, command: None)


def _runs(raw: Path) -> dict[tuple[str, str], list[int]]:
    """(variant, test) -> the round_seq of each ok run."""
    out: dict[tuple[str, str], list[int]] = {}
    for f in find_raw_files(raw):
        m = read_sidecar(f)
        if m.get("status") == "ok" and m.get("scenario") == "pod-pod":
            out.setdefault((m["variant"], m["test"]), []).append(int(m["round_seq"]))
    return {k: sorted(v) for k, v in out.items()}


def test_with_idle_points_adds_the_idle_point_of_each_loaded_point():
    c = from_mapping(experiment([pod_pod()], {**TOOLS, "iperf3": {"tests": [{"name": "tcp"}]}}))
    plain = ("pod-pod", "iperf3", "tcp")
    assert with_idle_points(c.cases, [LOADED]) == [IDLE, LOADED]
    assert with_idle_points(c.cases, [plain]) == [plain]
    assert with_idle_points(c.cases, [IDLE]) == [IDLE]
    assert with_idle_points(c.cases, []) == []


def test_an_adaptive_round_runs_the_idle_point_beside_the_loaded_one(tmp_path, quick):
    primary = {
        "by": "variant",
        "baseline": "a",
        "tests": ["netperf:tcp_rr-load_streams-2"],
        "metrics": ["latency_p50"],
    }
    a, b = cfg(tmp_path, "a", primary), cfg(tmp_path, "b", primary)
    rng = random.Random(7)
    results = launch_side_by_side([a, b], kubes=[kube(rng), kube(rng)])
    assert [r.error for r in results] == ["", ""]
    runs = _runs(a.raw_dir)
    for v in ("a", "b"):
        loaded, idle = runs[(v, LOADED[2])], runs[(v, IDLE[2])]
        assert len(loaded) >= 3, runs  # 2 base rounds, then adaptive ones (min_to_stop 3)
        assert loaded == idle, (v, loaded, idle)  # every loaded run has its round's idle run
    # per case, point and round the two variants are a pair; each variant's loaded/idle runs of a round too
    t = parse_experiment(a.raw_dir, "t").tidy
    assert set(t["role"]) == {"probe", "load"}
    assert runs[("a", LOADED[2])] == runs[("b", LOADED[2])]


def test_a_loads_own_rows_are_never_judged_as_a_case(tmp_path, quick):
    """A primary entry without `tests` declares the load's iperf3 rows too (tool iperf3 in the probe's
    test): no such case exists; the sampler leaves them out instead of failing on them."""
    primary = {"by": "variant", "baseline": "a", "metrics": ["latency_p50", "throughput"]}
    a, b = cfg(tmp_path, "a", primary), cfg(tmp_path, "b", primary)
    rng = random.Random(3)
    results = launch_side_by_side([a, b], kubes=[kube(rng), kube(rng)])
    assert [r.error for r in results] == ["", ""], results[0].error
    (acc,) = sorted((a.raw_dir / "_side_by_side").glob("*.json"))
    items = json.loads(acc.read_text())["items"]
    assert items and all(it["case"][1] == "netperf" for it in items), [it["case"] for it in items]


def test_each_variant_serves_its_load_on_its_own_port(tmp_path):
    c = cfg(tmp_path, "b", {"by": "variant", "baseline": "a"})
    assert variant_ports(c, 0)["load"] == LOAD_PORT
    assert variant_ports(c, 2)["load"] == LOAD_PORT + 2000


def test_the_under_load_campaign_is_five_cnis_and_an_aa_side_by_side_idle_and_at_8_streams(monkeypatch):
    monkeypatch.chdir(REPO)  # the campaign names its experiment config relative to the repository
    c = campaign.load(REPO / "config" / "campaigns" / "under-load.yaml")
    assert [v.cni for v in c.variants] == [
        "macvlan",
        "macvlan",  # macvlan-aa: the A/A pair on the baseline's cluster
        "calico-bgp",
        "calico-vxlan",
        "cilium-vxlan",
        "flannel-vxlan",
    ]
    assert campaign.design(c)[0] == "side-by-side"
    assert c.variants[1].name == "macvlan-aa"
    lc = from_mapping(campaign.variant_config(c, c.variants[2]))  # schema-valid launch config
    assert lc.variant == "calico-bgp.iptables" and lc.adaptive
    assert [case.key for case in lc.cases] == [
        ("pod-pod-cross-node", "netperf", f"tcp_rr-load_streams-{n}") for n in (0, 8)
    ] + [("pod-pod-cross-node", "netready", "burst")]  # time to network, 20 pods at once
    # 10-s probes: their loaded P99 spread half as much as 3-s ones (benchmarks/probe-length.yaml)
    assert {case.test.params["duration"] for case in lc.cases if case.test.tool == "netperf"} == {10}
    assert {case.test.load.direction for case in lc.cases if case.test.load} == {"forward"}
    pub = campaign.publish_config(c)
    assert "compare" in pub["report"]["notebooks"]
    (entry,) = pub["stats"]["primary"]
    assert entry["baseline"] == c.baseline == "macvlan.iptables"
    # the declared family (issue 44): one row per CNI, TCP_RR P99 under 8 streams over macvlan's
    assert entry["tests"] == ["netperf:tcp_rr-load_streams-8"] and entry["metrics"] == ["latency_p99"]
    assert len(entry["treatments"]) == 5 and "macvlan-aa" in entry["treatments"]
