"""Variants side by side on in-memory clusters: one launch id, runs interleaved run by run, pairs
the statistics read as side-by-side, adaptive rounds across variants (podnet.launch.campaign.sidebyside)."""

from __future__ import annotations

import copy
import json
import math
import random

import pytest

from podnet.launch.campaign import sidebyside
from podnet.launch.campaign.sidebyside import SideBySide, interleave, launch_side_by_side
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds.scale import variant_rounds
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.launch.spec.load import LOAD_PORT
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar
from podnet.stats.variants import variant_table
from tests.fakekube import FakeKube, make_node
from tests.launch_configs import HOST_HOST, experiment, pod_pod
from tests.unit.test_launch_runner import iperf_json

IPERF3 = {"iperf3": {"tests": [{"name": "tcp"}]}}
PRIMARY = {"by": "variant", "baseline": "a", "tests": ["iperf3:tcp"]}


def cfg(tmp_path, variant, **over):
    c = experiment(
        [HOST_HOST, pod_pod()],
        IPERF3,
        raw_dir=tmp_path / "raw",
        stats={
            "planning": {
                "target_rel_half_width": 0.05,
                "min_repeats": 3,
                "max_repeats": 12,
                "min_to_stop": 4,
            },
            "primary": [PRIMARY],
            "comparisons": [{"by": "scenario", "baseline": "host-host"}, {"by": "variant", "baseline": "a"}],
        },
        variant=variant,
        repeats=3,
        warmup=0,
    )
    c["launch"].update(over)
    return from_mapping(c)


def nodes():
    return [make_node("n1", {"pool": "a"}, "10.1.0.1"), make_node("n2", {"pool": "a"}, "10.1.0.2")]


class Clock:
    """A fake monotonic clock that each iperf3 run advances by 5 s."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def kube(order: list[str], name: str, gbps, clock: Clock | None = None) -> FakeKube:
    """A cluster whose iperf3 runs give ``gbps()`` Gbit/s and log ``name`` into ``order``."""

    def respond(pod, argv):
        if argv[0] == "iperf3":
            order.append(name)
            if clock is not None:
                clock.t += 5
            return ExecResult(rc=0, stdout=iperf_json(gbps() * 1e9), stderr="")
        return ExecResult(rc=0, stdout="", stderr="")

    return FakeKube(nodes(), respond)


def sidecars(raw):
    return {f.relative_to(raw).as_posix(): read_sidecar(f) for f in find_raw_files(raw)}


def test_variants_run_back_to_back_with_one_launch_id_and_pair_side_by_side(tmp_path):
    order: list[str] = []
    rng = random.Random(1)
    a, b = cfg(tmp_path, "a"), cfg(tmp_path, "b")
    ka = kube(order, "a", lambda: 9 * math.exp(rng.gauss(0, 0.03)))
    kb = kube(order, "b", lambda: 6 * math.exp(rng.gauss(0, 0.03)))
    results = launch_side_by_side([a, b], kubes=[ka, kb])
    assert [(r.launched, r.ok, r.failed, r.error) for r in results] == [(6, 6, 0, "")] * 2
    assert len({r.launch_id for r in results}) == 1
    # every case's repeat runs under both variants back to back: pairs in time, a drawn order
    assert len(order) == 12 and all({order[i], order[i + 1]} == {"a", "b"} for i in range(0, 12, 2))
    assert order[0::2] != ["a"] * 6, "the variants' order within a pair is drawn, not fixed"
    side = sidecars(a.raw_dir)
    launch_ids = {s["launch"]["id"] for s in side.values()}
    assert launch_ids == {results[0].launch_id}
    assert {k.split("/")[0] for k in side} == {"a", "b"}
    # each variant's launch log, not one overwriting the other
    logs = sorted(p.name for p in (a.raw_dir / "_launch").iterdir())
    assert logs == [f"{results[0].launch_id}.a.json", f"{results[0].launch_id}.b.json"]
    # the statistics read the pairs as side by side
    tidy = parse_experiment(a.raw_dir, experiment="t").tidy
    vt = variant_table(tidy, {"comparisons": [{"by": "variant", "baseline": "a"}]})
    row = vt[
        (vt["design"] == "side-by-side")
        & (vt["scenario"] == "pod-pod")
        & (vt["metric"] == "throughput")
        & vt["preferred"]
    ]
    assert len(row) == 1 and int(row["n_pairs"].iloc[0]) == 3
    assert 0.6 < float(row["ratio"].iloc[0]) < 0.7 < float(row["ci_high"].iloc[0]) * 1.05


def test_one_noise_floor_per_machine_and_each_variant_its_own_namespace(tmp_path):
    order: list[str] = []
    a = cfg(tmp_path, "a", floor={"enabled": True, "tests": ["iperf3:tcp"]})
    b = cfg(tmp_path, "b", floor={"enabled": True, "tests": ["iperf3:tcp"]})
    ka = kube(order, "a", lambda: 9)
    sbs = SideBySide([a, b], [ka, ka])  # an A/A on one cluster: two variant names, one kubeconfig
    assert sbs.launchers[0].cfg.floor_tests and not sbs.launchers[1].cfg.floor_tests
    # hostNetwork servers of both variants on one node: each variant its own ports
    pa, pb = sbs.launchers[0].cfg.ports, sbs.launchers[1].cfg.ports
    # the load's server port (launch.ports.load, default LOAD_PORT) shifts with the others
    assert pa == a.ports and pb == {k: v + 1000 for k, v in {"load": LOAD_PORT, **pa}.items()}
    high = cfg(tmp_path, "c", ports={"iperf3": 65000})
    with pytest.raises(LaunchConfigError, match="passes 65535"):
        SideBySide([a, high], [ka, ka])


def test_bad_variant_sets_are_refused(tmp_path):
    a = cfg(tmp_path, "a")
    with pytest.raises(LaunchConfigError, match="at least two"):
        SideBySide([a], [None])
    with pytest.raises(LaunchConfigError, match="distinct"):
        SideBySide([a, cfg(tmp_path, "a")], [None, None])
    other = copy.deepcopy(a)
    other.variant = "b"
    other.experiment = "other"
    with pytest.raises(LaunchConfigError, match="one experiment"):
        SideBySide([a, other], [None, None])


def test_interleave_puts_every_variant_of_a_case_together():
    from podnet.launch.rounds.schedule import schedule

    keys = [("s1", "iperf3", "tcp"), ("s2", "iperf3", "tcp")]
    pend = {k: [1, 2] for k in keys}
    per = [("A", schedule(keys, pend)), ("B", schedule(keys, pend)), ("C", schedule(keys, {keys[0]: [1]}))]
    rounds = interleave(per, seed=7)  # type: ignore[arg-type]
    assert [len(r) for r in rounds] == [5, 4]
    first = [(v, s.case) for v, s in rounds[0]]
    assert {v for v, c in first[:3]} == {"A", "B", "C"} and {c for _, c in first[:3]} == {keys[0]}
    assert {v for v, c in first[3:]} == {"A", "B"} and {c for _, c in first[3:]} == {keys[1]}


def test_side_by_side_rounds_set_each_scale_point_up_once_per_round_up_then_down():
    # as one launch runs them: two tests at one point share its set-up, and the next round comes
    # back down (each round's change the smallest); without it each test swept its own points and
    # every round began from 0 again (service-scale-5000: 10,000 objects deleted per round)
    tests = [{"name": n, "scale": {"services": [0, 200, 1000]}} for n in ("crr", "rr")]
    c = from_mapping(experiment([pod_pod()], {"iperf3": {"tests": tests}}, variant="a"))
    keys = [k.key for k in c.cases]
    rounds = variant_rounds(c, keys, {k: [1, 2] for k in keys})
    names = [[slot.case[2] for slot in r] for r in rounds]
    assert names[0] == ["crr-services-0", "rr-services-0", "crr-services-200", "rr-services-200",
                        "crr-services-1000", "rr-services-1000"]  # fmt: skip
    assert names[1][:2] == ["crr-services-1000", "rr-services-1000"] and names[1][-1] == "rr-services-0"
    merged = interleave([("A", rounds), ("B", rounds)], seed=3)  # type: ignore[list-item]
    assert [s.case[2] for _, s in merged[1][::2]] == names[1]  # the variants follow that order
    # the side-by-side launch schedules its base and added rounds that way
    import inspect

    src = inspect.getsource(SideBySide.run) + inspect.getsource(sidebyside.VariantSampler.loop)
    assert "variant_rounds(L.cfg, keys" in src and "by_scale([slots], L.cfg)" in src


@pytest.mark.parametrize(
    ("noise", "more"),
    [(0.002, False), (0.2, True)],
    ids=["quiet: met after the base rounds and min_to_stop", "noisy: rounds added up to the cap"],
)
def test_adaptive_rounds_go_to_the_unmet_variant_comparisons(tmp_path, noise, more):
    order: list[str] = []
    rng = random.Random(3)
    clock = Clock()
    a = cfg(tmp_path, "a", adaptive={"enabled": True})
    b = cfg(tmp_path, "b", adaptive={"enabled": True})
    ka = kube(order, "a", lambda: 9 * math.exp(rng.gauss(0, noise)), clock)
    kb = kube(order, "b", lambda: 9 * math.exp(rng.gauss(0, noise)), clock)
    sbs = SideBySide([a, b], [ka, kb], clock=clock)
    sbs.run()
    doc = json.loads(next((a.raw_dir / "_side_by_side").glob("*.json")).read_text())
    items = {(tuple(it["case"]), it["metric"]): it for it in doc["items"]}
    tput = [it for (case, m), it in items.items() if m == "throughput"]
    assert tput and {tuple(it["case"])[1:] for it in tput} == {("iperf3", "tcp")}
    if more:
        assert doc["stop"].startswith("max_repeats reached")
        assert all(it["n_pairs"] == 12 and not it["met"] for it in tput)
    else:  # 3 base rounds, then one added round each to reach min_to_stop (4)
        assert doc["stop"] == "every primary variant comparison met its target"
        assert doc["added_rounds"] == 1 and all(it["n_pairs"] == 4 and it["met"] for it in tput)
    # every added run has its partner of the other variant next to it
    assert all({order[i], order[i + 1]} == {"a", "b"} for i in range(0, len(order), 2))


def test_the_budget_stops_added_rounds(tmp_path):
    order: list[str] = []
    rng = random.Random(5)
    clock = Clock()
    a = cfg(tmp_path, "a", adaptive={"enabled": True, "budget": "70s"})
    b = cfg(tmp_path, "b", adaptive={"enabled": True, "budget": "70s"})
    ka = kube(order, "a", lambda: 9 * math.exp(rng.gauss(0, 0.2)), clock)
    kb = kube(order, "b", lambda: 9 * math.exp(rng.gauss(0, 0.2)), clock)
    SideBySide([a, b], [ka, kb], clock=clock).run()
    doc = json.loads(next((a.raw_dir / "_side_by_side").glob("*.json")).read_text())
    # 3 base rounds x 2 cases x 2 variants = 60 s; a round of the unmet cases would end past 70 s
    assert doc["stop"] == "budget spent" and doc["added_rounds"] == 0 and clock.t == 60


def test_the_side_by_side_launch_holds_the_idle_states_its_config_asks_for(tmp_path, monkeypatch):
    """launch.cpu_latency_us is held for the whole side-by-side launch, as a single launch holds it,
    and each variant's manifest says so (the seed-003 campaign asked for 0 and recorded {})."""
    import contextlib

    from podnet.launch.campaign import sidebyside
    from podnet.launch.noise.idle import IdleHold

    asked: list[int | None] = []

    @contextlib.contextmanager
    def fake_hold(us):
        asked.append(us)
        yield IdleHold(requested_us=us, held=us is not None)

    monkeypatch.setattr(sidebyside, "hold_cpu_latency", fake_hold)
    order: list[str] = []
    a, b = cfg(tmp_path, "a", cpu_latency_us=0), cfg(tmp_path, "b", cpu_latency_us=0)
    results = launch_side_by_side([a, b], kubes=[kube(order, "a", lambda: 9), kube(order, "b", lambda: 6)])
    assert asked == [0] and len(order) == 12
    assert all(r.cpu_latency.get("held") is True and r.cpu_latency.get("requested_us") == 0 for r in results)
    logs = [json.loads(p.read_text()) for p in sorted((a.raw_dir / "_launch").iterdir())]
    assert [log["cpu_latency"]["held"] for log in logs] == [True, True]
