"""Seed 003's published table beside a campaign (podnet.report.vs_seed): mapping, table, words,
figure and the seed-003 campaign config, on a small synthetic campaign run through the real stats
stage (tests/vs_seed_fixture.py)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml

from podnet.config import schema
from podnet.launch.campaign import run as campaign
from podnet.launch.spec.config import from_mapping
from podnet.report import vs_seed
from podnet.report.figures import check
from podnet.report.vs_seed.figure import figure
from tests import vs_seed_fixture as F

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = REPO / "config" / "campaigns" / "seed-003.yaml"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    d = tmp_path_factory.mktemp("vs_seed")
    return F.write_published(d / "published"), F.processed(d / "processed")


def _build(dirs, **over):
    pub, proc = dirs
    cfg = copy.deepcopy(F.VS_SEED)
    cfg.update(over)
    cfg["published"] = str(pub)
    return vs_seed.build(cfg, proc)


def _one(t, **match):
    m = np.ones(len(t), dtype=bool)
    for k, v in match.items():
        m &= t[k].astype(str).to_numpy() == str(v)
    assert m.sum() == 1, f"{m.sum()} rows match {match}"
    return t[m].iloc[0]


# ---- the mapping and the seed's numbers ---------------------------------------------------------


def test_campaign_mapping_names_every_seed_path_and_cni():
    doc = yaml.safe_load(CAMPAIGN.read_text())
    m = vs_seed.SeedMapping.from_config(doc["report"]["vs_seed"])
    pub = vs_seed.published(REPO / m.published)
    # every path and CNI seed 003 published is mapped (to ours, or to nothing on purpose)
    assert set(pub["path"]) == set(m.scenarios)
    assert set(pub["seed_cni"]) == set(m.variants)
    assert m.scenarios["pod-node-cross-node"] == ("pod-host-cross-node",)
    assert m.scenarios["pod-service-cross-node"] == ("pod-svc-cross-node",)
    assert m.scenarios["node-service-cross-node"] == ()  # not run: mapped to nothing on purpose
    assert m.variant_of("calico-ipip") is None and m.variant_of("sriov-standalone") is None
    assert m.variant_of("macvlan-standalone") == "macvlan.iptables"
    assert m.seed_cni_of("calico-vxlan.iptables") == "calico-vxlan"
    assert m.seed_cni_of("bridge.iptables") is None
    # every scenario the mapping names is launched by the campaign, every seed measure published
    c = campaign.load(CAMPAIGN)
    launched = {s["name"] for s in c.experiment["launch"]["scenarios"]}
    assert {s for v in m.scenarios.values() for s in v} <= launched
    published = set(zip(pub["seed_tool"], pub["seed_test"], pub["seed_metric"]))
    assert {(x.tool, x.test, x.metric) for x in m.measures} <= published
    # the mapped variants that run here are the campaign's; the others can only be the two being added
    names = {v.name for v in c.variants}
    mapped = {v for v in m.variants.values() if v}
    assert mapped - names <= {"calico-bgp.iptables", "cilium-vxlan.iptables"}
    assert {"macvlan.iptables", "calico-vxlan.iptables"} <= names & mapped


def test_published_reads_the_reference_tables_in_si_units():
    pub = vs_seed.published(REPO / "raw" / "seed-cni-report")
    r = pub[(pub["seed_cni"] == "macvlan-standalone") & (pub["path"] == "pod-pod-cross-node")]
    tput = r[r["seed_metric"] == "throughput"].iloc[0]
    assert tput["seed_value"] == pytest.approx(9.18e9) and tput["seed_unit"] == "bit/s"
    rr = r[r["seed_test"] == "TCP_RR"].iloc[0]
    assert rr["seed_value"] == pytest.approx(81.74e-6) and rr["seed_unit"] == "s"
    with pytest.raises(ValueError, match="no published reference table"):
        vs_seed.published(REPO / "config")


def test_measure_parse():
    assert str(vs_seed.Measure.parse("netperf:TCP_RR:latency_p50")) == "netperf:TCP_RR:latency_p50"
    for bad in ("iperf3:tcp", "a::b", "a:b:c:d"):
        with pytest.raises(ValueError, match="tool:test:metric"):
            vs_seed.Measure.parse(bad)


# ---- the table -------------------------------------------------------------------------------------


def test_table_sets_seed_ratio_beside_ours(dirs):
    t = _build(dirs)
    assert list(t.columns) == vs_seed.COLUMNS
    r = _one(t, path="pod-pod-cross-node", seed_cni="calico-vxlan", metric="throughput")
    assert r["variant"] == "calico-vxlan.iptables" and r["status"] == "both"
    assert r["seed_value"] == pytest.approx(1.37e9)
    assert r["seed_ratio"] == pytest.approx(1.37 / 9.16)  # against the seed's own node-node
    assert r["ratio"] == pytest.approx(4.0 / 9.0, rel=0.03)  # ours against our host-host
    assert r["ratio_ci_low"] < r["ratio"] < r["ratio_ci_high"]
    assert r["ci_low"] < r["value"] < r["ci_high"] and r["n"] == 4
    lat = _one(t, path="pod-pod-cross-node", seed_cni="calico-vxlan", metric="latency_p50")
    assert lat["seed_metric"] == "latency_mean" and lat["better"] == "lower"
    assert lat["seed_ratio"] == pytest.approx(275.22 / 113.27)


def test_ranks_and_verdicts_from_the_ranking(dirs):
    t = _build(dirs)
    tput = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "throughput")]
    both = tput[tput["status"] == "both"].set_index("seed_cni")
    assert both.loc["macvlan-standalone", "rank_seed"] == 1 and both.loc["calico-vxlan", "rank_seed"] == 2
    # our order is ranking.csv's (paired ratios, Holm), ours-only bridge between the two
    assert set(tput["order_ours"]) == {"macvlan.iptables > bridge.iptables > calico-vxlan.iptables"}
    assert (
        both.loc["macvlan-standalone", "letters_ours"] == "a" and both.loc["calico-vxlan", "group_ours"] == 3
    )
    bridge = _one(tput, variant="bridge.iptables")
    assert bridge["status"] == "not in seed" and bridge["group_ours"] == 2
    assert set(tput["ranking"]) == {"agrees"}
    # latency: lower is better; the fixture puts calico-vxlan below macvlan: the seed's order reversed
    lat = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "latency_p50")]
    assert set(lat["ranking"]) == {"contradicts"}
    # node-node: the seed printed one figure for every CNI: a tie, whatever ours says
    assert set(t.loc[t["path"] == "node-node", "ranking"]) == {"seed ties only"}


def test_orders_judged_by_the_paired_ratio(dirs):
    pub, proc = dirs
    cfg = {**F.VS_SEED, "published": str(pub)}
    o = vs_seed.build_orders(cfg, proc)
    assert list(o.columns) == vs_seed.ORDER_COLUMNS
    r = _one(o, path="pod-pod-cross-node", metric="throughput")
    assert (r["seed_a"], r["seed_b"], r["a"], r["b"]) == (
        "macvlan-standalone",
        "calico-vxlan",
        "macvlan.iptables",
        "calico-vxlan.iptables",
    )
    assert r["seed_ratio"] == pytest.approx(9.18 / 1.37) and r["seed_order"] == ">"
    assert r["ratio"] == pytest.approx(8.5 / 4.0, rel=0.03) and r["ci_low"] < r["ratio"] < r["ci_high"]
    assert r["relation"] == "ordered" and r["ours"] == ">" and r["status"] == "agrees"
    # Holm ran within that path x measure's ranking (stats.ranking.family's default): its family
    # is the ranking's pairs, and the order carries its size
    rk = pd.read_csv(Path(proc) / "ranking.csv")
    q = rk[(rk["row"] == "pair") & (rk["scenario"] == r["scenario"]) & (rk["metric"] == "throughput")]
    q = q[q["tool"] == r["tool"]]
    assert len(q) >= 1 and set(q["holm_family"]) == {len(q)} and r["holm_family"] == len(q)
    lat = _one(o, path="pod-pod-cross-node", metric="latency_p50")
    assert lat["ours"] == "<" and lat["status"] == "contradicts"
    assert lat["ratio"] == pytest.approx(70 / 55, rel=0.03)  # macvlan / calico-vxlan latency here
    tie = _one(o, path="node-node", metric="throughput")
    assert tie["seed_order"] == "tie" and tie["status"] == "tie"


def _ranking_pairs(
    rel: str, ratio: float, lo: float, hi: float, a="macvlan.iptables", b="calico-vxlan.iptables"
):
    """A ranking.csv with one pair on pod-pod-cross-node iperf3 tcp throughput."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "row": "pair",
                "scenario": "pod-pod-cross-node",
                "tool": "iperf3",
                "test": "tcp",
                "protocol": "tcp",
                "direction": "forward",
                "streams": 1,
                "metric": "throughput",
                "variant": a,
                "other": b,
                "ratio": ratio,
                "ci_low": lo,
                "ci_high": hi,
                "n_pairs": 10,
                "p_holm": 0.5,
                "relation": rel,
            }
        ]
    )


@pytest.mark.parametrize(
    "rel, pair, status",
    [
        ("ordered", ("macvlan.iptables", "calico-vxlan.iptables", 1.3, 1.2, 1.4), "agrees"),
        ("ordered", ("calico-vxlan.iptables", "macvlan.iptables", 1.3, 1.2, 1.4), "contradicts"),
        ("equivalent", ("macvlan.iptables", "calico-vxlan.iptables", 1.01, 0.98, 1.03), "gap not reproduced"),
        ("inconclusive", ("macvlan.iptables", "calico-vxlan.iptables", 1.1, 0.9, 1.3), "inconclusive here"),
        (
            "too few pairs",
            ("macvlan.iptables", "calico-vxlan.iptables", np.nan, np.nan, np.nan),
            "inconclusive here",
        ),
    ],
)
def test_each_relation_judges_a_seed_order(dirs, rel, pair, status):
    t = _build(dirs)
    m = vs_seed.SeedMapping.from_config({**F.VS_SEED, "published": str(dirs[0])})
    a, b, ratio, lo, hi = pair
    o = vs_seed.orders_table(t, _ranking_pairs(rel, ratio, lo, hi, a, b), m)
    r = _one(o, path="pod-pod-cross-node", metric="throughput")
    assert r["status"] == status and r["relation"] == rel
    if a != "macvlan.iptables" and np.isfinite(ratio):  # stored the other way round: inverted
        assert r["ratio"] == pytest.approx(1 / ratio) and r["ci_low"] == pytest.approx(1 / hi)
    # without our pair, every order is inconclusive here
    o = vs_seed.orders_table(t, _ranking_pairs(rel, ratio, lo, hi).iloc[0:0], m)
    assert set(o.loc[o["seed_order"] == ">", "status"]) == {"inconclusive here"}


def test_seed_tie_margin_and_setup_notes(dirs):
    pub, proc = dirs
    note = "seed: 10 GbE NICs cap cross-node throughput at 9.16 Gbit/s; LINK_RATE=10gbit emulates it"
    cfg = {
        **F.VS_SEED,
        "published": str(pub),
        "seed_tie_margin": 0.25,  # macvlan 16.4 vs calico-vxlan 13.8 on pod-node-same-node: 19 %
        "notes": [{"note": note, "paths": ["pod-pod-cross-node"], "measures": ["iperf3:tcp:throughput"]}],
    }
    t = vs_seed.build(cfg, proc)
    o = vs_seed.build_orders(cfg, proc, t)
    assert _one(o, path="pod-node-same-node", metric="throughput")["status"] == "tie"
    assert _one(o, path="pod-pod-cross-node", metric="throughput")["note"] == note
    assert _one(o, path="pod-pod-cross-node", metric="latency_p50")["note"] == ""
    g = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "throughput")]
    assert set(g["note"]) == {note}
    s = next(w for w in vs_seed.sentences(t, orders=o) if w.startswith("pod-pod-cross-node, iperf3"))
    assert s.endswith(f"Set-up: {note}.")


def test_missing_cni_and_cni_without_counterpart(dirs):
    t = _build(dirs)
    cil = _one(t, path="pod-pod-cross-node", seed_cni="cilium-vxlan", metric="throughput")
    assert cil["status"] == "not run here" and cil["variant"] == "cilium-vxlan.iptables"
    assert cil["seed_ratio"] == pytest.approx(8.30 / 9.16) and np.isnan(cil["ratio"])
    assert np.isnan(cil["rank_seed"])  # ranks are among the CNIs both sources have
    ipip = _one(t, path="pod-pod-cross-node", seed_cni="calico-ipip", metric="throughput")
    assert ipip["status"] == "no counterpart" and ipip["variant"] == ""
    words = vs_seed.sentences(t)
    s = next(w for w in words if w.startswith("pod-pod-cross-node, iperf3 tcp throughput"))
    assert "Not run here: cilium-vxlan (cilium-vxlan.iptables)" in s
    assert "no counterpart here: calico-ipip" in s


def test_a_mapped_cni_absent_everywhere_leaves_nothing_to_rank(dirs):
    t = _build(
        dirs, variants={"macvlan-standalone": "macvlan.iptables", "calico-vxlan": "calico-bgp.iptables"}
    )
    g = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "throughput")]
    assert set(g["ranking"]) == {"nothing to rank"}
    s = next(w for w in vs_seed.sentences(t) if w.startswith("pod-pod-cross-node, iperf3"))
    assert "fewer than two CNIs in both, nothing to rank" in s and "calico-vxlan (calico-bgp.iptables)" in s


def test_seed_path_without_counterpart(dirs):
    t = _build(dirs)
    g = t[t["path"] == "pod-service-cross-node"]
    assert len(g) == 2 and set(g["status"]) == {"no counterpart path"} and set(g["scenario"]) == {""}
    assert g["ratio"].isna().all() and set(g["ranking"]) == {"nothing to rank"}
    assert "pod-service-cross-node, iperf3 tcp throughput: seed 003's path has no counterpart here." in (
        vs_seed.sentences(t)
    )


# ---- the words -------------------------------------------------------------------------------------


def test_words_say_where_the_ranking_agrees_and_where_not(dirs):
    t = _build(dirs)
    o = vs_seed.build_orders({**F.VS_SEED, "published": str(dirs[0])}, dirs[1], t)
    words = vs_seed.sentences(t, orders=o)
    agree = next(w for w in words if w.startswith("pod-pod-cross-node, iperf3 tcp throughput"))
    assert "seed 003 ranks (ratio to host-host) macvlan-standalone (1.00x) > calico-vxlan (0.15x)" in agree
    assert (
        "podnet (ranking.csv, paired, Holm) ranks macvlan.iptables > bridge.iptables > calico-vxlan" in agree
    )
    assert (
        "**agrees** (agrees on macvlan-standalone > calico-vxlan (here macvlan.iptables / calico-vxlan"
        in agree
    )
    dis = next(w for w in words if w.startswith("pod-pod-cross-node, netperf TCP_RR latency_p50"))
    assert "(seed: netperf TCP_RR latency_mean)" in dis and "**contradicts**" in dis
    assert (
        "contradicts macvlan-standalone > calico-vxlan (here calico-vxlan.iptables > macvlan.iptables: "
        "macvlan.iptables / calico-vxlan.iptables 1.2" in dis
    )
    summary = vs_seed.summary_sentence(t)
    assert summary.startswith("Of 6 path x measure rankings") and "1 contradicts" in summary
    assert "Contradicting (all or in part): pod-pod-cross-node netperf TCP_RR latency_p50." in summary
    md = vs_seed.markdown(t, orders=o)
    assert md.count("\n- ") == len(words) and "Of 6 orders between two CNIs" in md


def test_headline_table_and_round_trip(dirs, tmp_path):
    t = _build(dirs)
    p = vs_seed.write(t, tmp_path / "vs_seed.csv")
    back = vs_seed.read(p)
    assert list(back.columns) == vs_seed.COLUMNS and len(back) == len(t)
    assert vs_seed.sentences(back) == vs_seed.sentences(t)
    h = vs_seed.headline_table(back)
    assert ("macvlan-standalone", "macvlan.iptables") in h.index
    seed_col = "iperf3 tcp throughput: seed 003 (iperf3 tcp throughput)"
    assert h.loc[("calico-vxlan", "calico-vxlan.iptables"), seed_col] == "0.15x"
    ours = h.loc[("calico-vxlan", "calico-vxlan.iptables"), "netperf TCP_RR latency_p50: podnet"]
    assert ours.startswith("0.9") and "95 % CI" in ours
    assert h.loc[("cilium-vxlan", "cilium-vxlan.iptables"), "iperf3 tcp throughput: podnet"] == "not run here"


def test_figure_has_no_layout_problems(dirs):
    t = _build(dirs)
    fig = figure(t, "seed 003")
    assert check.problems(fig) == []
    assert len([a for a in fig.axes if a.has_data()]) == 2  # one panel per seed measure


# ---- the campaign config ---------------------------------------------------------------------------


def test_seed_003_campaign_is_a_valid_experiment_under_every_variant():
    c = campaign.load(CAMPAIGN)
    assert [v.name for v in c.variants] == [
        "macvlan.iptables",
        "macvlan-aa",
        "calico-vxlan.iptables",
        "calico-bgp.iptables",
        "cilium-vxlan.iptables",
        "flannel-vxlan.iptables",
    ]
    for v in c.variants:
        cfg = campaign.variant_config(c, v)
        jsonschema.validate(cfg, schema.load())
        lc = from_mapping(cfg)
        assert lc.variant == v.name and str(lc.raw_dir) == "raw/seed-003"
    pub = campaign.publish_config(c)
    jsonschema.validate(pub, schema.load())
    assert "vs_seed" in pub["report"]["notebooks"] and pub["report"]["vs_seed"]["published"]
    assert pub["stats"]["thresholds"] == []
    launch = c.experiment["launch"]
    assert launch["adaptive"]["enabled"] and launch["repeats"] == 3
    assert set(launch["tools"]) == {"iperf3", "netperf", "ping"}  # ping: the floor's only
    # every scenario the campaign runs is mapped to a seed path
    ran = {s["name"] for s in launch["scenarios"]}
    mapped = {x for xs in pub["report"]["vs_seed"]["scenarios"].values() for x in xs}
    assert ran == mapped


def test_the_cnis_being_added_are_one_line_each():
    """calico-bgp and cilium-vxlan: one variant line each (at 10 Gbit/s in seed-003, named without the
    rate; unshaped in seed-003-unshaped, the same names), commented out until the cluster has them."""
    for path, entry in (
        (CAMPAIGN, lambda cni: {"name": f"{cni}.iptables", "cni": cni, "link_rate": "10gbit"}),
        (CAMPAIGN.with_name("seed-003-unshaped.yaml"), lambda cni: {"cni": cni}),
    ):
        lines = [ln.strip() for ln in path.read_text().splitlines()]
        for cni in ("calico-bgp", "cilium-vxlan"):
            line = next(ln for ln in lines if re.match(rf"^#? *- {{.*\bcni: {cni}[,}}]", ln))
            assert yaml.safe_load(line.lstrip("# ")) == [entry(cni)], path.name
            assert line.startswith("#") != (cni in campaign.CNI_MODES), (
                f"{path.name}: {cni}: uncomment it (or not) with CNI_MODES"
            )


def test_every_pair_of_seed_cnis_once(dirs):
    # three CNIs whose seed order is not their row order: each pair exactly once, better first
    t = _build(dirs)
    g = t[(t["path"] == "pod-pod-cross-node") & (t["metric"] == "throughput")].copy()
    g = g[g["seed_cni"].isin(["macvlan-standalone", "calico-vxlan", "cilium-vxlan"])]
    g["status"] = "both"
    m = vs_seed.SeedMapping.from_config({**F.VS_SEED, "published": str(dirs[0])})
    o = vs_seed.orders_table(g.iloc[::-1], _ranking_pairs("ordered", 1.3, 1.2, 1.4).iloc[0:0], m)
    pairs = sorted((r.seed_a, r.seed_b) for r in o.itertuples())
    assert pairs == [
        ("cilium-vxlan", "calico-vxlan"),
        ("macvlan-standalone", "calico-vxlan"),
        ("macvlan-standalone", "cilium-vxlan"),
    ]


@pytest.mark.parametrize(
    "statuses, expected",
    [
        ([], "nothing to rank"),
        (["tie", "tie"], "seed ties only"),
        (["agrees", "agrees", "tie"], "agrees"),
        (["agrees", "inconclusive here"], "agrees where ordered"),
        (["agrees", "gap not reproduced"], "agrees where ordered"),
        # one contradicting pair among agreeing ones does not speak for the group
        (["agrees", "agrees", "agrees", "contradicts"], "mixed"),
        (["contradicts", "inconclusive here"], "contradicts"),
        (["gap not reproduced", "inconclusive here"], "gap not reproduced"),
        (["inconclusive here", "tie"], "inconclusive here"),
    ],
)
def test_group_verdict_counts_its_orders(statuses, expected):
    assert vs_seed.verdict(statuses) == expected


def test_tie_margin_from_the_seeds_run_to_run_cv(dirs):
    base = {**F.VS_SEED, "published": str(dirs[0])}
    m = vs_seed.SeedMapping.from_config({**base, "seed_cv": {"value": 0.035, "source": "stated"}})
    assert m.tie_margin == pytest.approx(np.expm1(1.96 * np.sqrt(2) * 0.035))
    assert "3.5 %" in m.tie_margin_source and "stated" in m.tie_margin_source
    wide = vs_seed.SeedMapping.from_config({**base, "seed_cv": {"value": 0.08, "source": "its repeats"}})
    assert wide.tie_margin == pytest.approx(0.2486, abs=1e-3)
    # seed_cv wins over seed_tie_margin; without it the stated margin is used
    both = vs_seed.SeedMapping.from_config(
        {**base, "seed_tie_margin": 0.5, "seed_cv": {"value": 0.035, "source": "x"}}
    )
    assert both.tie_margin == pytest.approx(m.tie_margin)
    assert vs_seed.SeedMapping.from_config({**base, "seed_tie_margin": 0.5}).tie_margin == 0.5


def test_seed_ranks_and_orders_read_one_key(dirs):
    """rank_seed ranks by the seed's published values, as its orders do: a CNI with the better value
    but a worse ratio to its own baseline keeps rank 1 (the old code ranked by the ratio)."""
    t = _build(dirs)
    pub, proc = dirs
    o = vs_seed.build_orders({**F.VS_SEED, "published": str(pub)}, proc)
    for key, g in t[(t["status"] == "both") & t["rank_seed"].notna()].groupby(["path", "scenario", "metric"]):
        best = g.loc[g["rank_seed"].idxmin(), "seed_cni"]
        q = o[
            (o["path"] == key[0])
            & (o["scenario"] == key[1])
            & (o["metric"] == key[2])
            & (o["seed_order"] == ">")
        ]
        assert not (q["seed_b"] == best).any(), (key, best)  # never the worse side of a seed order
