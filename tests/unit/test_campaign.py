"""The comparison campaign (podnet.launch.campaign.run): configs, derived experiments, resume and ordering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from podnet.launch.campaign import model as campaign_config
from podnet.launch.campaign import run as campaign
from podnet.launch.spec.config import from_mapping

REPO = Path(__file__).resolve().parents[2]
CI = REPO / "config" / "campaigns" / "cni-ci.yaml"
FULL = REPO / "config" / "campaigns" / "cni.yaml"


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def test_ci_campaign_variants(in_repo):
    c = campaign.load(CI)
    assert [v.name for v in c.variants] == [
        "bridge.iptables",
        "flannel-vxlan.iptables",
        "flannel-host-gw.iptables",
        "flannel-vxlan.nftables",
    ]
    assert c.baseline == "bridge.iptables"
    assert all(v.embedded and v.nodes == 2 for v in c.variants)
    assert c.variants[3].cluster_env() == {
        "CNI": "flannel-vxlan",
        "PROXY": "nftables",
        "NODES": "2",
        "LINK_RATE": "",
        "EDGE_TUNNEL": "",
    }


def test_a_calico_variant_names_itself_and_takes_no_edge_tunnel(in_repo):
    v = campaign_config._variant({"cni": "calico-vxlan"}, 2)
    assert v.name == "calico-vxlan.iptables" and v.cluster_env()["CNI"] == "calico-vxlan"
    with pytest.raises(campaign.CampaignError, match="needs cni bridge or flannel-vxlan"):
        campaign_config._variant({"cni": "calico-vxlan", "edge_tunnel": "wireguard", "nodes": 3}, 2)
    with pytest.raises(campaign.CampaignError, match="cni must be one of"):
        campaign_config._variant({"cni": "calico-ipip"}, 2)


def test_an_edge_tunnel_variant_names_itself_and_sets_the_cluster(in_repo):
    v = campaign_config._variant({"cni": "flannel-vxlan", "edge_tunnel": "wireguard", "nodes": 3}, 2)
    assert v.name == "flannel-vxlan.iptables.edge-wireguard"
    assert v.cluster_env()["EDGE_TUNNEL"] == "wireguard" and v.cluster_env()["NODES"] == "3"
    c = campaign.load("config/campaigns/seed-000.yaml")
    env = c.variants[1].cluster_env()
    assert env["ZONES"] == "zone-a,zone-a,zone-b,zone-c" and env["POOLS"].endswith("pool-c")
    assert env["EDGE_TUNNEL"] == "wireguard" and c.variants[0].cluster_env()["EDGE_TUNNEL"] == ""
    for bad, why in (
        ({"cni": "bridge", "zones": "zone a"}, "label values"),
        ({"cni": "macvlan", "edge_tunnel": "wireguard"}, "needs cni bridge or flannel-vxlan"),
        ({"cni": "bridge", "edge_tunnel": "ipsec"}, "must be wireguard"),
        ({"name": "x", "kubeconfig": "/k", "edge_tunnel": "wireguard"}, "for the embedded cluster"),
    ):
        with pytest.raises(campaign.CampaignError, match=why):
            campaign_config._variant(bad, 2)


@pytest.mark.parametrize(
    "path", sorted(str(p.relative_to(REPO)) for p in (REPO / "config" / "campaigns").glob("*.yaml"))
)
def test_variant_configs_are_valid_experiments(in_repo, path):
    c = campaign.load(path)
    for v in c.variants:
        cfg = campaign.variant_config(c, v)
        assert cfg["experiment"] == c.name
        lc = from_mapping(cfg)  # schema-valid launch config
        assert lc.variant == v.name
        assert str(lc.raw_dir) == f"raw/{c.name}"


@pytest.mark.parametrize(
    "path", sorted(str(p.relative_to(REPO)) for p in (REPO / "config" / "campaigns").glob("*.yaml"))
)
def test_every_campaign_holds_the_idle_poll_of_the_default_run(in_repo, path):
    """A campaign measures on the default run's floor: its launch holds PM QoS at 0 µs as
    config/config.yaml does (podnet.launch.noise.idle; qperf tcp_lat's paired sd 0.14-0.17 without,
    0.09-0.12 with). Seven campaigns did not, the under-load campaign among them."""
    c = campaign.load(path)
    for v in c.variants:
        assert from_mapping(campaign.variant_config(c, v)).cpu_latency_us == 0, (path, v.name)


def test_seed_001_runs_at_its_link_speed_with_its_physical_path(in_repo):
    c = campaign.load("config/campaigns/seed-001.yaml")
    assert {v.link_rate for v in c.variants} == {"1gbit"}
    for v in c.variants:
        lc = from_mapping(campaign.variant_config(c, v))
        assert {s.name for s in lc.scenarios} == {"host-host", "pod-pod-cross-node"}
        assert lc.affinity is not None
    primary = c.experiment["stats"]["primary"]
    assert primary == [
        {
            "by": "scenario",
            "baseline": "host-host",
            "treatments": ["pod-pod-cross-node"],
            "tests": ["iperf2:tcp"],
        }
    ]


def test_launch_overrides_replace_the_experiment_keys(in_repo):
    c = campaign.load(CI)
    launch = c.experiment["launch"]
    assert launch["repeats"] == 2
    assert set(launch["tools"]) == {"iperf3", "netperf"}
    assert [s["name"] for s in launch["scenarios"]] == [
        "host-host",
        "pod-pod-cross-node",
        "pod-svc-cross-node",
    ]
    # keys not overridden come from the experiment (quick.yaml)
    quick = yaml.safe_load((REPO / "config/examples/quick.yaml").read_text())
    assert launch["defaults"] == quick["launch"]["defaults"]


def test_publish_config_compares_variants_without_launching(in_repo):
    c = campaign.load(FULL)
    pub = campaign.publish_config(c)
    assert "launch" not in pub
    comps = pub["stats"]["comparisons"]
    assert {"by": "variant", "baseline": "bridge.iptables"} in comps
    assert {"by": "scenario", "baseline": "host-host"} in comps


def test_missing_runs_counts_every_case_repeat(in_repo, tmp_path, monkeypatch):
    c = campaign.load(CI)
    monkeypatch.chdir(tmp_path)  # an empty raw/
    # 3 scenarios x (iperf3 tcp + netperf TCP_RR) x 2 repeats
    assert campaign.missing_runs(c, c.variants[0]) == 12


def test_variant_names(in_repo):
    assert campaign.variant_name("flannel-vxlan", "nftables") == "flannel-vxlan.nftables"
    assert campaign.variant_name("bridge", "iptables", "1gbit") == "bridge.iptables.1gbit"


@pytest.mark.parametrize(
    "entry, msg",
    [
        ({"cni": "vxlan"}, "cni must be"),
        ({"cni": "bridge", "proxy": "ipvs"}, "proxy must be"),
        ({"kubeconfig": "/x"}, "needs a name"),
        ({"name": "c", "kubeconfig": "/x", "cni": "bridge"}, "embedded cluster"),
        ({"cni": "bridge", "color": "red"}, "unknown keys"),
        ({"name": "a/b", "cni": "bridge"}, "variant name"),
    ],
)
def test_bad_variants(entry, msg):
    with pytest.raises(campaign.CampaignError, match=msg):
        campaign_config._variant(entry, 2)


def test_real_cluster_variant(in_repo, tmp_path):
    p = tmp_path / "real.yaml"
    p.write_text(
        yaml.safe_dump(
            {
                "campaign": "real",
                "experiment": str(REPO / "config/examples/quick.yaml"),
                "variants": [
                    {"name": "calico", "kubeconfig": "/k/calico"},
                    {"name": "cilium", "kubeconfig": "/k/cilium"},
                ],
            }
        )
    )
    c = campaign.load(p)
    cfg = campaign.variant_config(c, c.variants[1])
    assert cfg["launch"]["kubeconfig"] == "/k/cilium"
    assert "image_file" not in cfg["launch"] and cfg["launch"]["variant"] == "cilium"


def test_run_resumes_and_always_takes_the_cluster_down(in_repo, tmp_path, monkeypatch):
    """Complete variants are skipped; each other one is up -> launch -> down (down also after a
    failed launch), one after the other; then the publish step runs once."""
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(
        campaign, "missing_runs", lambda c, v, r=None: 0 if v.name == "bridge.iptables" else 3
    )
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    calls: list[tuple[str, str, str]] = []

    def fake_run(cmd, env=None):
        step = "launch" if "launch" in cmd else Path(cmd[1]).name if cmd[0] == "bash" else "publish"
        calls.append((step, (env or {}).get("CNI", ""), (env or {}).get("PROXY", "")))
        if step == "launch":
            import os

            assert os.environ.get("PODNET_CLUSTER_LOCKED") == "1"  # under the cluster lock
        return 1 if step == "launch" and len(calls) == 2 else 0

    monkeypatch.setattr(campaign, "_run", fake_run)
    doc = yaml.safe_load(CI.read_text())
    doc["side_by_side"] = False  # one after the other
    seq = tmp_path / "seq.yaml"
    seq.write_text(yaml.safe_dump(doc))
    rc = campaign.run(seq, python=str(REPO / ".venv/bin/python"))
    assert rc == 1  # one launch failed
    steps = [s for s, _, _ in calls]
    assert steps == ["up.sh", "launch", "down.sh"] * 3 + ["publish"]
    assert [(cni, proxy) for s, cni, proxy in calls if s == "up.sh"] == [
        ("flannel-vxlan", "iptables"),
        ("flannel-host-gw", "iptables"),
        ("flannel-vxlan", "nftables"),
    ]


def test_interleaved_rounds_launch_one_repeat_of_each_variant_in_turn(in_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    c = campaign.load(REPO / "config/campaigns/vxlan-vs-bridge.yaml")
    assert c.interleave and c.repeats == 6
    done: dict[str, int] = {}  # variant -> repeats in raw/

    def fake_missing(c, v, r=None):
        return max(0, (r or c.repeats) - done.get(v.name, 0))

    order: list[tuple[str, int]] = []

    def fake_variant(c, v, config, python):
        r = yaml.safe_load(Path(config).read_text())["launch"]["repeats"]
        order.append((v.name, r))
        done[v.name] = r
        return 0

    monkeypatch.setattr(campaign, "missing_runs", fake_missing)
    monkeypatch.setattr(campaign, "run_variant", fake_variant)
    assert campaign.run(c.source, publish=False) == 0
    assert order == [(v, r) for r in range(1, 7) for v in ("bridge.iptables", "flannel-vxlan.iptables")]
    # resumed after all rounds: nothing left to launch
    order.clear()
    assert campaign.run(c.source, publish=False) == 0
    assert order == []


def test_an_interleaved_step_launches_its_repeat_without_adaptive_rounds(in_repo):
    c = campaign.load(REPO / "config/campaigns/cni.yaml")  # config/config.yaml: adaptive
    v = c.variants[0]
    assert campaign.variant_config(c, v)["launch"]["adaptive"]["enabled"] is True
    step = campaign.variant_config(c, v, repeats=2)["launch"]
    assert step["repeats"] == 2 and "adaptive" not in step


def test_design_side_by_side_where_the_variants_can_coexist(in_repo, tmp_path):
    """Variants sharing the one embedded cluster set-up (A/A) or real clusters run side by side;
    embedded variants with different settings cannot be up at once and run one after another."""
    aa = campaign.load(REPO / "config/campaigns/aa.yaml")
    assert campaign.design(aa) == ("side-by-side", "one embedded cluster shared by its variants")
    assert campaign.cluster_ids(aa) == {"host-gw-a": 0, "host-gw-b": 0}
    vx = campaign.load(REPO / "config/campaigns/vxlan-vs-host-gw.yaml")
    how, why = campaign.design(vx)
    assert how == "side-by-side" and "2 embedded clusters up at once" in why
    assert campaign.cluster_ids(vx) == {"flannel-host-gw.iptables": 0, "flannel-vxlan.iptables": 1}
    # each variant launches against its own cluster's kubeconfig and info.json
    second = campaign.variant_config(vx, vx.variants[1])["launch"]
    assert (
        second["kubeconfig"] == ".cluster-1/kubeconfig" and second["cluster_info"] == ".cluster-1/info.json"
    )
    assert campaign.variant_config(vx, vx.variants[0])["launch"]["kubeconfig"] == ".cluster/kubeconfig"
    cfg = tmp_path / "c.yaml"
    doc = {
        "campaign": "real",
        "experiment": "config/examples/quick.yaml",
        "variants": [{"cni": "flannel-vxlan"}, {"name": "calico", "kubeconfig": "/k/calico.yaml"}],
    }
    cfg.write_text(yaml.safe_dump(doc))
    assert campaign.design(campaign.load(cfg))[0] == "side-by-side"  # the embedded one beside a real one
    doc["side_by_side"] = False
    cfg.write_text(yaml.safe_dump(doc))
    how, why = campaign.design(campaign.load(cfg))
    assert how == "sequential" and why.startswith("side_by_side: false")


def test_design_falls_back_to_sequential_where_set_ups_cannot_coexist(in_repo, tmp_path, monkeypatch):
    """A named global resource two set-ups would share, or more set-ups than cluster ids: one after
    another, every variant on the embedded cluster .cluster."""
    vx = campaign.load(REPO / "config/campaigns/vxlan-vs-host-gw.yaml")
    clash = (
        lambda ups: {v.cni for v in ups} >= {"flannel-vxlan", "flannel-host-gw"},
        "both need /dev/example",
    )
    monkeypatch.setattr(campaign, "COEXIST_CONFLICTS", (clash,))
    how, why = campaign.design(vx)
    assert how == "sequential" and why.startswith("both need /dev/example")
    assert campaign.variant_config(vx, vx.variants[1])["launch"]["kubeconfig"] == ".cluster/kubeconfig"
    monkeypatch.setattr(campaign, "COEXIST_CONFLICTS", ())
    monkeypatch.setattr(campaign, "MAX_EMBEDDED_CLUSTERS", 1)
    how, why = campaign.design(vx)
    assert how == "sequential" and "2 embedded set-ups, more than the 1" in why


def test_side_by_side_brings_every_set_up_up_and_always_down(in_repo, tmp_path, monkeypatch):
    """Set-ups come up in order, CLUSTER_ID 0, 1, ...; all go down in reverse, also when a bring-up
    fails (then nothing is launched)."""
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    monkeypatch.setattr(campaign, "missing_runs", lambda c, v, r=None: 4)
    calls: list[tuple[str, str, str]] = []
    fail_up = {"1"}

    def fake_run(cmd, env=None):
        step = Path(cmd[1]).name if cmd[0] == "bash" else "launch"
        calls.append((step, (env or {}).get("CLUSTER_ID", ""), (env or {}).get("CNI", "")))
        return 1 if step == "up.sh" and (env or {}).get("CLUSTER_ID") in fail_up else 0

    monkeypatch.setattr(campaign, "_run", fake_run)
    assert campaign.run(CI, python="py", publish=False) == 1
    assert calls == [
        ("up.sh", "0", "bridge"),
        ("up.sh", "1", "flannel-vxlan"),
        ("down.sh", "1", "flannel-vxlan"),
        ("down.sh", "0", "bridge"),
    ]
    calls.clear()
    fail_up.clear()
    assert campaign.run(CI, python="py", publish=False) == 0
    ups = [(i, cni) for s, i, cni in calls if s == "up.sh"]
    assert ups == [("0", "bridge"), ("1", "flannel-vxlan"), ("2", "flannel-host-gw"), ("3", "flannel-vxlan")]
    assert [s for s, _, _ in calls] == ["up.sh"] * 4 + ["launch"] + ["down.sh"] * 4
    assert [i for s, i, _ in calls if s == "down.sh"] == ["3", "2", "1", "0"]


def test_a_side_by_side_campaign_is_one_launch_under_one_cluster_up(in_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    monkeypatch.setattr(campaign, "missing_runs", lambda c, v, r=None: 20)
    calls: list[list[str]] = []

    def fake_run(cmd, env=None):
        calls.append(cmd)
        return 0

    monkeypatch.setattr(campaign, "_run", fake_run)
    assert campaign.run(REPO / "config/campaigns/aa.yaml", python="py", publish=False) == 0
    assert [Path(c[1]).name if c[0] == "bash" else c[2] for c in calls] == [
        "up.sh",
        "podnet.launch.campaign.sidebyside",
        "down.sh",
    ]
    launched = [Path(p).name for p in calls[1][3:]]
    assert launched == ["host-gw-a.yaml", "host-gw-b.yaml"]  # the baseline variant first
    # each variant's config declares the variant comparison its primary family names
    cfg = yaml.safe_load((tmp_path / "work" / "host-gw-b.yaml").read_text())
    assert {"by": "variant", "baseline": "host-gw-a"} in cfg["stats"]["comparisons"]
    assert cfg["launch"]["variant"] == "host-gw-b"


def test_cpu_hog_spins_for_the_duration_and_is_always_ended():
    import os
    import time

    with campaign.cpu_hog(2) as pids:
        assert len(pids) == 2
        # a hog is alive and spinning once it has used user CPU; on a loaded machine the interpreter
        # may still be starting (state D, reading its files) for a while, so poll with a deadline
        deadline = time.monotonic() + 30
        for pid in pids:
            while True:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                assert fields[0] not in "ZXT", fields[:12]  # neither ended nor stopped
                if int(fields[11]) > 0:  # used user CPU
                    break
                assert time.monotonic() < deadline, fields[:12]
                time.sleep(0.05)
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    with campaign.cpu_hog(0) as none:
        assert none == []


# ---- seed 003's ranking: the default of make compare ------------------------------------------------

SEED3 = REPO / "config" / "campaigns" / "seed-003.yaml"


def test_make_compare_runs_seed_003_by_default():
    mk = (REPO / "envs" / "cluster" / "cluster.mk").read_text()
    assert "CAMPAIGN ?= config/campaigns/seed-003.yaml" in mk.splitlines()
    assert FULL.exists()  # the several-hour bridge/flannel campaign stays, by name


def test_seed_003_primary_family_is_each_seed_cni_and_the_aa_twin_over_macvlan(in_repo):
    """Side by side with adaptive rounds; the primary rows of variants.csv: 4 treatments (3 seed CNIs
    and macvlan's A/A twin) x (4 iperf3 throughputs + TCP_RR and TCP_CRR mean latency), flannel-vxlan
    and the CPU cost exploratory."""
    from podnet.stats.variants import variant_table
    from tests.stats_tables import rows, tidy

    c = campaign.load(SEED3)
    assert campaign.design(c)[0] == "side-by-side" and len(campaign.setups(c)) == 5
    ids = campaign.cluster_ids(c)
    assert ids["macvlan.iptables"] == ids["macvlan-aa"]  # the A/A pair shares one cluster
    assert c.experiment["launch"]["adaptive"]["enabled"] and c.bare_floor > 0
    cfg = campaign.publish_config(c)
    rng = np.random.default_rng(3)
    parts = []
    for v in c.variants:
        for sc in c.experiment["launch"]["scenarios"]:
            for test in sc["tests"]:
                tool, _, name = test.partition(":")
                common = dict(variant=v.name, scenario=sc["name"], tool=tool, test=name, launch_id="L")
                if tool == "iperf3":
                    parts.append(rows(1e10 * np.exp(rng.normal(0, 0.05, 4)), **common))
                    parts.append(
                        rows(
                            rng.uniform(1, 2, 4) * 1e-10, metric="machine_cpu_per_bit", unit="s/bit", **common
                        )
                    )
                else:
                    for metric in ("latency_mean", "transaction_rate"):
                        parts.append(
                            rows(
                                rng.uniform(50, 60, 4) * 1e-6,
                                direction="roundtrip",
                                metric=metric,
                                unit="s",
                                **common,
                            )
                        )
    vt = variant_table(tidy(*parts), cfg["stats"])
    prim = vt[(vt["role"] == "primary") & vt["preferred"]]
    assert set(prim["variant"]) == {
        "calico-vxlan.iptables",
        "calico-bgp.iptables",
        "cilium-vxlan.iptables",
        "macvlan-aa",
    }
    assert set(prim["baseline_variant"]) == {"macvlan.iptables"}
    assert len(prim) == 4 * (4 + 3)
    assert set(prim["metric"]) == {"throughput", "latency_mean"}
    assert prim["p_adjusted"].notna().all()
    flannel = vt[vt["variant"] == "flannel-vxlan.iptables"]
    assert len(flannel) and (flannel["role"] == "exploratory").all()


def test_budget_replaces_the_adaptive_budget_for_one_run(in_repo):
    c = campaign.load(SEED3)
    short = campaign.with_budget(c, "12m")
    assert short.experiment["launch"]["adaptive"]["budget"] == "12m"
    assert c.experiment["launch"]["adaptive"]["budget"] != "12m"  # the loaded campaign is not changed
    assert from_mapping(campaign.variant_config(short, short.variants[0])).budget_s == 720
    assert campaign.with_budget(c, None) is c
    with pytest.raises(campaign.CampaignError, match="budget"):
        campaign.with_budget(c, "soon")


def test_bare_floor_runs_before_any_cluster_is_up(in_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("PODNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PODNET_CLUSTER_LOCKED", raising=False)
    monkeypatch.setattr(campaign.Campaign, "workdir", property(lambda self: tmp_path / "work"))
    monkeypatch.setattr(campaign, "missing_runs", lambda c, v, r=None: 4)
    calls: list[list[str]] = []

    def fake_run(cmd, env=None):
        calls.append(cmd)
        return 0

    monkeypatch.setattr(campaign, "_run", fake_run)
    real_missing = campaign.bare_floor_missing
    monkeypatch.setattr(campaign, "bare_floor_missing", lambda c, tests: 20)
    assert campaign.run(SEED3, python="py", publish=False, budget="10m") == 0
    steps = [Path(c[1]).name if c[0] == "bash" else c[2] for c in calls]
    assert steps == ["podnet.cli"] + ["up.sh"] * 5 + ["podnet.launch.campaign.sidebyside"] + ["down.sh"] * 5
    floor = calls[0]
    assert floor[3:] == [
        "floor",
        "--config",
        str(tmp_path / "work" / "macvlan.iptables.yaml"),
        "--tests",
        "iperf3:tcp,ping:plain",
        "--repeats",
        "10",
    ]
    # resumed with every bare-floor run on disk: no floor (no namespaces created for nothing)
    c = campaign.load(SEED3)
    monkeypatch.chdir(tmp_path)
    assert real_missing(c, ["iperf3:tcp"]) == 10
    for r in range(1, 11):
        f = tmp_path / "raw" / "seed-003" / "floor" / "netns-veth" / "iperf3-tcp" / f"r{r:03d}.json"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}")
    assert real_missing(c, ["iperf3:tcp"]) == 0
    assert real_missing(c, ["iperf3:tcp", "ping:plain"]) == 10
    monkeypatch.chdir(REPO)
    launched = yaml.safe_load((tmp_path / "work" / "cilium-vxlan.iptables.yaml").read_text())
    assert launched["launch"]["adaptive"]["budget"] == "10m"
    # a failed bare floor is reported, the launch still runs
    calls.clear()
    monkeypatch.setattr(campaign, "_run", lambda cmd, env=None: calls.append(cmd) or int("podnet.cli" in cmd))
    assert campaign.run(SEED3, python="py", publish=False) == 1
    assert any("podnet.launch.campaign.sidebyside" in c for c in calls)


def test_bare_floor_must_be_a_number_of_rounds(in_repo, tmp_path):
    doc = yaml.safe_load(SEED3.read_text())
    for bad in (-1, True, "ten"):
        p = tmp_path / "c.yaml"
        p.write_text(yaml.safe_dump({**doc, "bare_floor": bad}))
        with pytest.raises(campaign.CampaignError, match="bare_floor"):
            campaign.load(p)


def test_a_sigterm_reaches_the_launch_which_ends_first_then_the_caller_is_interrupted(tmp_path):
    """A campaign killed by SIGTERM passes it on to its launch, waits for the launch's own clean-up and
    raises, so its finally takes the clusters down (it used to die at once: launch and clusters left up)."""
    import os
    import signal
    import sys
    import threading
    import time

    from podnet.launch.cluster.signals import Interrupted, run_to_end

    done = tmp_path / "cleaned"
    child = (
        "import signal, sys, time, pathlib\n"
        "def bye(*_):\n"
        "    time.sleep(0.5); pathlib.Path(sys.argv[1]).write_text('ok'); sys.exit(143)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
    t0 = time.monotonic()
    with pytest.raises(Interrupted, match="SIGTERM"):
        run_to_end([sys.executable, "-c", child, str(done)])
    assert done.read_text() == "ok" and time.monotonic() - t0 < 20  # the child cleaned up before we raised
    assert run_to_end([sys.executable, "-c", "raise SystemExit(3)"]) == 3
