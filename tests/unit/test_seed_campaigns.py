"""The seed campaigns 001, 002 and 004 checked before a 40-minute run (issue 46), without a cluster:
the campaign loader accepts each, a campaign of one variant (seed 004) is one plain launch (the
side-by-side launcher refuses one variant), every case is placed on the nodes its variant's cluster
has (zones, pools, other node or same node) with a command line its tool builds, and the fixed
rounds fit the 45-minute budget at the per-run times measured on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnet.launch.campaign import run as campaign
from podnet.launch.rounds.state import initial_repeats
from podnet.launch.spec import plan as launch_plan
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.placement import Node
from tests import seed_campaign_fixture as S

REPO = Path(__file__).resolve().parents[2]
SEEDS = ("seed-001", "seed-002", "seed-004")
#: what a run costs beyond its test's own length, measured (raw/seed-001, 2026-11-29 08:38, 4 clusters
#: side by side, from one run's start to the next's): iperf2 5 s -> 5.6 s, ping 10 x 0.2 s -> 2.1 s
#: (ping's invocation length, count x interval + 2, is 1.9 s more than it runs)
OVERHEAD_S = 0.6
#: ab -n 10000 -c 50 (its invocation's length is a time limit, 60 s): 4.6 s a run, measured as above
AB_RUN_S = 4.6
#: bringing a cluster up (warm, ~1 min for 2-3 nodes), taking it down, publishing (~5 min), in minutes
FRAME_MIN = {"up": 1.0, "down": 1.0, "publish": 5.0}


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def _load(name: str) -> campaign.Campaign:
    return campaign.load(REPO / "config" / "campaigns" / f"{name}.yaml")


def test_a_campaign_of_one_variant_is_one_plain_launch(in_repo, tmp_path, monkeypatch):
    """seed-004 has one variant: the side-by-side launcher needs two (it refused, and the campaign
    published nothing); one variant is the experiment launched on its cluster, up and down around it."""
    c = _load("seed-004")
    assert len(c.variants) == 1
    assert campaign.design(c) == ("sequential", "one variant: one launch on its cluster")
    assert campaign.variant_config(c, c.variants[0])["launch"]["kubeconfig"] == ".cluster/kubeconfig"
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    monkeypatch.setattr(campaign, "missing_runs", lambda c, v, r=None: 304)
    calls: list[tuple[list[str], dict]] = []
    monkeypatch.setattr(campaign, "_run", lambda cmd, env=None: calls.append((cmd, env or {})) or 0)
    assert campaign.run(REPO / "config/campaigns/seed-004.yaml", python="py", publish=False) == 0
    steps = [Path(cmd[1]).name if cmd[0] == "bash" else cmd[2] for cmd, _ in calls]
    assert steps == ["up.sh", "podnet.cli", "down.sh"]
    assert calls[1][0][3:] == [
        "launch",
        "--config",
        str(tmp_path / "work" / "flannel-vxlan.iptables.1gbit.yaml"),
    ]
    assert calls[0][1]["LINK_RATE"] == "1gbit" and calls[0][1]["CLUSTER_ID"] == "0"


@pytest.mark.parametrize("name", SEEDS)
def test_every_case_is_placed_on_its_variants_nodes(in_repo, name):
    """Each variant's launch plan on the nodes make cluster-up gives it (fake nodes labelled as up.sh
    labels them): every case has its pods and a command line, the client and server where the
    scenario says (another node or the same one, the zones named)."""
    c = _load(name)
    for v in c.variants:
        cfg = from_mapping(campaign.variant_config(c, v))
        nodes = [Node(n.metadata.name, dict(n.metadata.labels)) for n in S.nodes(v)]
        zone = {n.name: n.labels["topology.kubernetes.io/zone"] for n in nodes}
        plan = launch_plan.build_plan(cfg, nodes)
        assert len(plan.cases) == len(cfg.cases) and not [cp.error for cp in plan.cases if cp.error]
        for cp in plan.cases:
            client, server = plan.pods[cp.client_pod], plan.pods[cp.server_pod]
            a, b = client.placement.node, server.placement.node
            assert a and b, f"{v.name} {cp.case.key}: not placed"
            sc = cp.case.scenario.name
            assert (a == b) == ("same-node" in sc), f"{v.name} {sc}: client {a}, server {b}"
            if "cross-zone" in sc:
                assert (zone[a], zone[b]) == ("zone-b", "zone-a"), sc
            elif "same-zone" in sc:
                assert zone[a] == zone[b] == "zone-a" and a != b, sc
            assert cp.template is not None and cp.template.client


def _minutes(c: campaign.Campaign) -> dict[str, float]:
    """The fixed rounds' time (warm-ups, the floor, every case of every variant each round), side by
    side: the variants' runs follow one another, so their times add."""
    m = campaign.variant_config(c, c.variants[0])
    cfg = from_mapping(m)
    lengths = launch_plan.test_lengths(m)

    def run_s(tool: str, test: str) -> float:
        if tool == "ab":
            return AB_RUN_S
        s = lengths[(tool, test)]
        return (s - 2 if tool == "ping" else s) + OVERHEAD_S

    per_round = sum(run_s(k.test.tool, k.test.name) for k in cfg.cases) * len(c.variants)
    floor = sum(run_s(*t.split(":")) for t in campaign.floor_tests(c))
    warmups = {(k.test.tool, k.scenario.name) for k in cfg.cases}
    warm = sum(run_s(t, next(k.test.name for k in cfg.cases if k.test.tool == t)) for t, _ in warmups)
    rounds = initial_repeats(cfg)  # an adaptive launch's base rounds: at least planning.min_repeats
    launch = (rounds * (per_round + floor) + warm * len(c.variants)) / 60
    ups = len(campaign.setups(c))
    return {
        "launch": launch,
        "total": launch + ups * (FRAME_MIN["up"] + FRAME_MIN["down"]) + FRAME_MIN["publish"],
    }


@pytest.mark.parametrize("name", SEEDS)
def test_the_fixed_rounds_fit_the_45_minute_budget(in_repo, name):
    """The fixed rounds at the measured per-run times, clusters up and down and the publish step:
    under 45 minutes; an adaptive campaign (seed 002) stops adding rounds at its budget, which must
    leave that much room too."""
    c = _load(name)
    t = _minutes(c)
    adaptive = c.experiment["launch"].get("adaptive") or {}
    if adaptive.get("enabled"):
        from podnet.launch.spec.defaults import parse_duration

        budget = parse_duration(adaptive["budget"]) / 60
        assert t["launch"] <= budget, f"{name}: the base rounds alone ({t['launch']:.0f} min) pass the budget"
        t["total"] += budget - t["launch"]
    assert t["total"] < 45, f"{name}: about {t['total']:.0f} min"
