"""A seed's claims judged one by one (podnet.report.vs_seed.claims): the verdict rules on made-up
intervals and tables, and every seed campaign's claims against its seed's published tables
(coverage), its own scenarios, variants and tests, and the seed's files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from podnet.launch.campaign import run as campaign
from podnet.launch.spec.config import from_mapping
from podnet.report import vs_seed
from podnet.report.vs_seed.claims import direction, judge, uncovered

REPO = Path(__file__).resolve().parents[2]
CAMPAIGNS = sorted((REPO / "config" / "campaigns").glob("seed-*.yaml"))
#: the seeds whose every published table and stated conclusion must be a claim (issue 46): every
#: seed campaign (seed-003-unshaped is seed 003's study unshaped)
CLAIMED = ("seed-000", "seed-001", "seed-002", "seed-003", "seed-003-unshaped", "seed-004")
#: what each seed published, read off the seed reports (../shared/seeds/), independent of the
#: configs: a campaign's report.vs_seed.tables must list each (and a claim cover it), so a seed
#: figure, table or conclusion without a row fails here
PUBLISHED = {
    # seed 000: the environment, a bandwidth and a latency table per path, the two 结论 lines
    "seed-000": [
        "setup",
        "bw-same-edge",
        "lat-same-edge",
        "bw-cloud-edge",
        "lat-cloud-edge",
        "bw-edge-cloud-edge",
        "lat-edge-cloud-edge",
        "conclusion-bandwidth",
        "conclusion-latency",
    ],
    # seed 001: no chart; its cluster table (环境准备), the 结论 table's four columns, its bold stated
    # lines (bandwidths, repeated-ping ranges, ping means) and its pasted UDP runs
    "seed-001": [
        *("setup", "stated-bandwidth", "stated-ping-ranges", "stated-ping-averages", "udp-outputs"),
        *(f"conclusion-{c}" for c in ("latency", "bandwidth", "nginx-qps", "nginx-latency")),
    ],
    # seed 002: two figures a zone (the instance type's spec, the 3 x 3 sender x receiver matrix),
    # its 结果解读 lines (3 within a zone, 4 across) and 总体结论; its last image, a WeChat QR code,
    # is no result
    "seed-002": [
        *(f"same-zone-{x}" for x in ("instance", "matrix", "fill", "inflow", "outflow")),
        *(f"cross-zone-{x}" for x in ("instance", "matrix", "factors", "host", "outflow", "inflow")),
        "overall",
    ],
    # seed 003: four bar charts, four 结论 tables of four rows, four 详细数据 tables (and their 节点间 row)
    "seed-003": [
        *(f"fig-{f}" for f in ("pod-throughput", "service-throughput", "rr-latency", "crr-latency")),
        *(
            f"{m}-{p}"
            for m in ("tput-pod", "tput-svc", "rr-pod", "crr-pod")
            for p in ("node-same", "node-cross", "pod-same", "pod-cross")
        ),
        *(f"table-{t}" for t in ("pod-throughput", "service-throughput", "rr-latency", "crr-latency")),
        "node-node",
    ],
    # seed 004: no table or chart; its 测试策略 and its six pasted qperf blocks, each a set of figures:
    # the 对照组 (host to host, its 场景三), 场景一, 场景二, 场景四 and the two 场景五 (host to pod, pod to
    # another host)
    "seed-004": [
        *("strategy", "control", "scene-1", "scene-2", "scene-4"),
        *("scene-5-host-pod", "scene-5-pod-other-host"),
    ],
}
PUBLISHED["seed-003-unshaped"] = PUBLISHED["seed-003"]


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize(
    "relation, lo, hi, margin, verdict",
    [
        (">", 1.05, 1.20, 0.05, "agrees"),  # wholly above 1
        ("<", 0.95, 0.98, 0.01, "agrees"),  # wholly below 1
        ("~", 0.99, 1.01, 0.05, "tie within margin"),  # within [1/1.05, 1.05]
        (">", 0.80, 0.95, 0.05, "contradicts"),  # the other way
        ("~", 1.10, 1.30, 0.05, "contradicts"),  # wholly beyond the band
        ("~", 0.70, 0.90, 0.05, "contradicts"),
        (">", 0.99, 1.01, 0.05, "gap not reproduced"),  # a stated gap, ours within the band
        (">", 0.90, 1.10, 0.05, "inconclusive here"),  # straddles 1 and the band
        ("~", 1.00, 1.10, 0.05, "inconclusive here"),  # straddles the band's edge
        (">", np.nan, np.nan, 0.05, "inconclusive here"),  # no interval
        ("", 1.10, 1.20, 0.05, "inconclusive here"),  # no seed direction
        (">=", 0.97, 1.20, 0.05, "agrees"),  # close to or above: not below the band
        (">=", 0.80, 0.90, 0.05, "contradicts"),
        (">=", 0.90, 1.00, 0.05, "inconclusive here"),
        ("<=", 0.80, 1.03, 0.05, "agrees"),
        ("<=", 1.10, 1.20, 0.05, "contradicts"),
    ],
)
def test_verdict_rules(relation, lo, hi, margin, verdict):
    assert judge(relation, lo, hi, margin) == verdict


def test_seed_direction_from_its_ratio_and_margin():
    assert direction(910 / 942, 0.01) == "<"
    assert direction(941 / 942, 0.01) == "~"
    assert direction(0.727 / 0.245, 0.21) == ">"
    assert direction(np.nan, 0.1) == ""


def _ratios() -> pd.DataFrame:
    """ratios.csv rows: pod-pod over host-host within two variants (made up)."""
    base = {
        "by": "scenario",
        "baseline": "host-host",
        "treatment": "pod-pod",
        "tool": "iperf2",
        "test": "tcp",
    }
    base |= {"metric": "throughput", "role": "exploratory", "n_pairs": 8}
    return pd.DataFrame(
        [
            {**base, "variant": "vx", "ratio": 0.967, "ci_low": 0.957, "ci_high": 0.978},
            {**base, "variant": "routed", "ratio": 1.003, "ci_low": 0.996, "ci_high": 1.009},
            # another baseline: never read for a claim over host-host
            {**base, "baseline": "other", "variant": "vx", "ratio": 2.0, "ci_low": 1.9, "ci_high": 2.1},
        ]
    )


def _variants() -> pd.DataFrame:
    """variants.csv rows: vx over routed on pod-pod, side by side preferred (made up)."""
    row = {"baseline_variant": "routed", "scenario": "pod-pod", "tool": "iperf2", "test": "tcp"}
    row |= {"metric": "throughput", "n_pairs": 8, "interval_method": "hodges-lehmann"}
    return pd.DataFrame(
        [
            {**row, "variant": "vx", "design": "side-by-side", "preferred": True, "ratio": 0.965}
            | {"ci_low": 0.96, "ci_high": 0.97},
            {**row, "variant": "vx", "design": "sequential", "preferred": False, "ratio": 1.2}
            | {"ci_low": 1.1, "ci_high": 1.3},
        ]
    )


def _values() -> pd.DataFrame:
    rows = [("physical", 942.0), ("flannel", 910.0), ("calico", 941.0)]
    return pd.DataFrame(
        [
            {
                "variant": v,
                "scenario": "",
                "tool": "iperf2",
                "test": "tcp",
                "metric": "throughput",
                "value": x * 1e6,
            }
            for v, x in rows
        ]
    )


def _claim(cid, seed, ours, **kw):
    return {"id": cid, "covers": ["t"], "says": cid, "seed": seed, "ours": ours, **kw}


def test_claims_table_reads_a_scenario_baseline_and_a_variant_baseline():
    m = "iperf2:tcp:throughput"
    claims = [
        # a seed CNI over its "physical" = our pod-pod over host-host within the variant
        _claim(
            "vx-over-physical",
            {"measure": m, "treatment": {"variant": "flannel"}, "baseline": {"variant": "physical"}},
            {
                "by": "scenario",
                "variant": "vx",
                "treatment": "pod-pod",
                "baseline": "host-host",
                "measure": m,
            },
            margin=0.01,
        ),
        _claim(
            "routed-over-physical",
            {"measure": m, "treatment": {"variant": "calico"}, "baseline": {"variant": "physical"}},
            {
                "by": "scenario",
                "variant": "routed",
                "treatment": "pod-pod",
                "baseline": "host-host",
                "measure": m,
            },
            margin=0.01,
        ),
        # an order between two seed CNIs = our variant ratio (the preferred design's row)
        _claim(
            "vx-under-routed",
            {"measure": m, "treatment": {"variant": "flannel"}, "baseline": {"variant": "calico"}},
            {"by": "variant", "scenario": "pod-pod", "treatment": "vx", "baseline": "routed", "measure": m},
            margin=0.01,
        ),
        # a stated direction, no number; ours not measured
        _claim(
            "stated",
            {"relation": ">"},
            {
                "by": "scenario",
                "variant": "vx",
                "treatment": "pod-svc",
                "baseline": "host-host",
                "measure": m,
            },
        ),
        {"id": "ovs", "covers": ["t"], "says": "ovs 917", "not_comparable": "no OVS module"},
        {"id": "mixed", "covers": ["t"], "says": "eni -> terway", "not_run": "two CNIs in one cluster"},
    ]
    t = vs_seed.claims_table(claims, _values(), _ratios(), _variants(), 0.1, "seed 001").set_index("claim")
    assert list(t.columns) == [c for c in vs_seed.CLAIM_COLUMNS if c != "claim"]
    r = t.loc["vx-over-physical"]
    assert r["seed_ratio"] == pytest.approx(910 / 942) and r["seed_relation"] == "<"
    assert (r["ratio"], r["ci_low"], r["ci_high"]) == (0.967, 0.957, 0.978)
    assert r["verdict"] == "agrees" and bool(r["seed_in_ci"]) is True
    assert t.loc["routed-over-physical", "verdict"] == "tie within margin"
    v = t.loc["vx-under-routed"]
    assert v["ratio"] == 0.965 and v["verdict"] == "agrees"  # the side-by-side row, not the sequential
    s = t.loc["stated"]
    assert s["verdict"] == "inconclusive here" and "no such ratio" in s["reason"]
    assert t.loc["ovs", "verdict"] == "not comparable here" and t.loc["ovs", "reason"] == "no OVS module"
    assert t.loc["mixed", "verdict"] == "not run here"
    assert set(t["verdict"]) <= set(vs_seed.CLAIM_VERDICTS)


def test_a_claim_without_a_ratio_or_an_interval_says_why():
    """The reason names what summary.csv and disturbed_runs.csv show: one run a side (a ratio, no
    interval), every run of a side judged disturbed, a test the campaign does not run, no pairs."""
    side = {"variant": "vx", "tool": "iperf2", "test": "tcp", "metric": "throughput"}
    summary = pd.DataFrame(
        [
            {**side, "scenario": "host-host", "n": 1},
            {**side, "scenario": "pod-pod", "n": 1},
            {**side, "test": "udp", "scenario": "host-host", "n": 8},
            {**side, "variant": "routed", "scenario": "pod-pod", "n": 8},
        ]
    )
    kept = {"variant": "vx", "scenario": "pod-pod", "tool": "iperf2", "test": "udp", "action": "kept"}
    disturbed = pd.DataFrame([kept] * 7 + [{**kept, "action": "re-run"}])
    one = {**_ratios().iloc[0].to_dict(), "ratio": 0.96, "ci_low": np.nan, "ci_high": np.nan}

    def ours(test, **kw):
        o = {"by": "scenario", "variant": "vx", "treatment": "pod-pod", "baseline": "host-host"}
        return {**o, "measure": f"iperf2:{test}:throughput", **kw}

    claims = [
        _claim("one-run", {"relation": "<"}, ours("tcp")),
        _claim("all-disturbed", {"relation": "<"}, ours("udp")),
        _claim("not-measured", {"relation": "<"}, ours("udp-1000m")),
        _claim(
            "no-pairs",
            {"relation": "<"},
            {"by": "variant", "scenario": "pod-pod", "treatment": "vx", "baseline": "routed"}
            | {"measure": "iperf2:tcp:throughput"},
        ),
    ]
    t = vs_seed.claims_table(
        claims, _values(), pd.DataFrame([one]), pd.DataFrame(), 0.1, "s", summary, disturbed
    ).set_index("claim")
    assert set(t["verdict"]) == {"inconclusive here"}
    assert t.loc["one-run", "ratio"] == 0.96
    assert t.loc["one-run", "reason"] == "no interval: 1 and 1 run(s) of treatment and baseline"
    why = t.loc["all-disturbed", "reason"]
    assert "every run of vx pod-pod iperf2:udp judged disturbed (7 kept out" in why, why
    assert "not measured here" in t.loc["not-measured", "reason"]
    assert t.loc["no-pairs", "reason"].startswith("no variants.csv row: no rounds of the two variants")


def test_a_claim_naming_no_seed_figure_is_refused():
    m = "iperf2:tcp:throughput"
    c = _claim(
        "x",
        {"measure": m, "treatment": {"variant": "neutron"}, "baseline": {"variant": "physical"}},
        {"by": "scenario", "variant": "vx", "treatment": "pod-pod", "baseline": "host-host", "measure": m},
    )
    with pytest.raises(ValueError, match="no seed figure for the treatment"):
        vs_seed.claims_table([c], _values(), _ratios(), _variants(), 0.1)


def test_uncovered_names_tables_without_a_claim_and_claims_of_unlisted_tables():
    tables = [{"id": "a", "what": "x"}, {"id": "b", "what": "y"}]
    assert uncovered(tables, [{"covers": ["a", "b"]}]) == []
    assert uncovered(tables, [{"covers": ["a"]}, {"covers": ["c"]}]) == ["b", "?c"]


def _vs_seed(path: Path) -> dict:
    """The campaign's report.vs_seed as it loads (merged over its ``base``: seed-003-unshaped's are
    seed-003.yaml's); the working directory the repository's root."""
    return (campaign.load(path).experiment.get("report") or {}).get("vs_seed") or {}


@pytest.mark.parametrize("path", CAMPAIGNS, ids=lambda p: p.stem)
def test_every_published_table_of_a_seed_has_a_claim(in_repo, path):
    """A seed's every published table, figure and stated conclusion is listed (report.vs_seed.tables)
    and covered by at least one claim, judged or said why not."""
    vs = _vs_seed(path)
    assert path.stem in CLAIMED, f"{path.name}: a seed campaign not in CLAIMED"
    assert path.stem in PUBLISHED, f"{path.name}: no list of what its seed published (PUBLISHED)"
    assert vs.get("tables") and vs.get("claims"), f"{path.name}: report.vs_seed lists no tables/claims"
    listed = [str(t["id"]) for t in vs["tables"]]
    missing = [x for x in PUBLISHED.get(path.stem, []) if x not in listed]
    assert not missing, f"{path.name}: seed figures/tables/conclusions without a row: {missing}"
    assert uncovered(vs.get("tables") or [], vs.get("claims") or []) == []
    ids = [c["id"] for c in vs.get("claims") or []]
    assert len(ids) == len(set(ids)), "claim ids repeat"


@pytest.mark.parametrize("path", [p for p in CAMPAIGNS if p.stem in CLAIMED], ids=lambda p: p.stem)
def test_claims_name_what_the_campaign_runs_and_what_the_seed_printed(in_repo, path):
    """Every judged claim names a variant, scenarios and a tool:test the campaign runs, and its seed
    side resolves to one figure of the seed's files each (the seed's ratio is finite)."""
    c = campaign.load(path)
    vs = c.experiment["report"]["vs_seed"]
    variants = {v.name for v in c.variants}
    # what each scenario runs as the launch plans it (a scenario without `tests` runs every test)
    launched: dict[str, set[str]] = {}
    for case in from_mapping(campaign.variant_config(c, c.variants[0])).cases:
        launched.setdefault(case.scenario.name, set()).add(f"{case.test.tool}:{case.test.name}")
    comparisons = {x["baseline"] for x in c.experiment["stats"]["comparisons"] if x["by"] == "scenario"}
    judged = [x for x in vs["claims"] if "ours" in x]
    for x in judged:
        o = x["ours"]
        tool, test, _ = o["measure"].split(":")
        runs = f"{tool}:{test}"
        if o["by"] == "scenario":
            assert o["variant"] in variants, x["id"]
            assert o["baseline"] in comparisons, f"{x['id']}: no ratios.csv comparison over {o['baseline']}"
            paths = (o["treatment"], o["baseline"])
        else:
            assert {o["treatment"], o["baseline"]} <= variants, x["id"]
            assert o["baseline"] == c.baseline, f"{x['id']}: variants.csv has ratios over {c.baseline} only"
            paths = (o["scenario"],)
        for p in paths:
            assert p in launched, f"{x['id']}: scenario {p} not launched"
            assert any(t == runs or runs.startswith(f"{t}-") for t in launched[p]), (
                f"{x['id']}: {p} runs no {runs}"
            )
    t = vs_seed.claims_table(
        vs["claims"], vs_seed.seed_values(vs.get("seed_sources") or []), pd.DataFrame(), pd.DataFrame(), 0.1
    )
    numbered = t[t["claim"].isin([x["id"] for x in judged if "measure" in (x.get("seed") or {})])]
    assert np.isfinite(numbered["seed_ratio"].astype(float)).all()
    assert set(t["verdict"]) <= {"inconclusive here", "not run here", "not comparable here"}  # no run yet


def test_seed_001_claims_read_the_published_table_and_its_physical_is_host_host(in_repo):
    vs = campaign.load(REPO / "config" / "campaigns" / "seed-001.yaml").experiment["report"]["vs_seed"]
    t = vs_seed.claims_table(
        vs["claims"], vs_seed.seed_values(vs["seed_sources"]), pd.DataFrame(), pd.DataFrame(), 0.1
    ).set_index("claim")
    assert t.loc["bw-flannel-vxlan", "seed_ratio"] == pytest.approx(910 / 942)
    assert t.loc["bw-flannel-vxlan", "seed_relation"] == "<"
    assert t.loc["bw-calico", "seed_relation"] == "~"
    assert t.loc["udp-calico", "seed_ratio"] == pytest.approx(811 / 810, rel=2e-3)
    assert (t.loc[t["by"] == "scenario", "baseline"] == "host-host").all()
    for cni in ("neutron", "ovs"):
        rows = t[t.index.str.contains(cni)]
        assert len(rows) and (rows["verdict"] == "not comparable here").all()


def test_claims_table_contradicts_and_gap_not_reproduced_on_made_up_tables():
    """The verdicts a stated gap can get from ratios.csv rows: the other way (contradicts), within the
    band (gap not reproduced); a seed figure picked by its direction (iperf3 forward or -R)."""
    m = "iperf2:tcp:throughput"
    values = pd.DataFrame(
        [
            {"variant": "v", "scenario": s, "tool": "iperf2", "test": "tcp", "direction": d}
            | {"metric": "throughput", "value": x, "file": "tables.csv"}
            for s, d, x in [
                ("near", "forward", 3.67e9),
                ("near", "reverse", 3.34e9),
                ("far", "forward", 87.8e6),
                ("far", "reverse", 1.10e6),
            ]
        ]
    )
    ratios = _ratios()
    ratios.loc[0, ["ratio", "ci_low", "ci_high"]] = [1.20, 1.10, 1.30]  # vx: wholly above 1
    ratios.loc[1, ["ratio", "ci_low", "ci_high"]] = [1.00, 0.98, 1.02]  # routed: within the band
    ours = {"by": "scenario", "treatment": "pod-pod", "baseline": "host-host", "measure": m}
    claims = [
        _claim(
            f"far-{d}-{v}",
            {
                "measure": m,
                "treatment": {"scenario": "far", "direction": d},
                "baseline": {"scenario": "near", "direction": d},
            },
            ours | {"variant": v},
        )
        for d in ("forward", "reverse")
        for v in ("vx", "routed")
    ]
    t = vs_seed.claims_table(claims, values, ratios, _variants(), 0.1).set_index("claim")
    assert t.loc["far-forward-vx", "seed_ratio"] == pytest.approx(87.8e6 / 3.67e9)
    assert t.loc["far-reverse-vx", "seed_ratio"] == pytest.approx(1.10e6 / 3.34e9)
    assert set(t["seed_relation"]) == {"<"}
    assert t.loc["far-forward-vx", "verdict"] == "contradicts"
    assert t.loc["far-forward-routed", "verdict"] == "gap not reproduced"
    assert bool(t.loc["far-forward-routed", "seed_in_ci"]) is False  # the seed's size is not ours
    # without the direction the two rows of the path are one too many
    bad = _claim(
        "x", {"measure": m, "treatment": {"scenario": "far"}, "baseline": {"scenario": "near"}}, ours
    )
    with pytest.raises(ValueError, match="2 rows match"):
        vs_seed.claims_table([bad], values, ratios, _variants(), 0.1)


def _claims_of(name: str) -> list[dict]:
    return _vs_seed(REPO / "config" / "campaigns" / f"{name}.yaml")["claims"]


def test_seed_003_shaped_and_unshaped_judge_the_same_claims(in_repo):
    """seed-003 (10 Gbit/s, the default) and seed-003-unshaped (its base seed-003.yaml): one list of
    claims under the same variant names, each a variant of both campaigns."""
    shaped, unshaped = _claims_of("seed-003"), _claims_of("seed-003-unshaped")
    assert shaped == unshaped and shaped
    path = REPO / "config" / "campaigns"
    for name in ("seed-003", "seed-003-unshaped"):
        variants = {v.name for v in campaign.load(path / f"{name}.yaml").variants}
        ours = [c["ours"] for c in shaped if c.get("ours", {}).get("by") == "variant"]
        assert ours and {n for o in ours for n in (o["treatment"], o["baseline"])} <= variants, name
    assert not any("10gbit" in str(c.get("ours")) for c in shaped)


def test_seed_000_judges_its_copied_flood_row_against_the_table_and_the_output(in_repo):
    """Seed 000's edge-cloud-edge Flooding cell repeats same-edge's row while its output printed 63 ms:
    one claim reads each; each remote path is judged in the tunnel variant over the same pool."""
    vs = campaign.load(REPO / "config" / "campaigns" / "seed-000.yaml").experiment["report"]["vs_seed"]
    t = vs_seed.claims_table(
        vs["claims"], vs_seed.seed_values(vs["seed_sources"]), pd.DataFrame(), pd.DataFrame(), 0.102
    ).set_index("claim")
    assert t.loc["lat-edge-cloud-edge-flood-table", "seed_ratio"] == pytest.approx(1.0)
    assert t.loc["lat-edge-cloud-edge-flood-table", "seed_relation"] == "~"
    assert t.loc["lat-edge-cloud-edge-flood-output", "seed_ratio"] == pytest.approx(63.325 / 0.065, rel=1e-3)
    assert t.loc["bw-cloud-edge-reverse", "seed_ratio"] == pytest.approx(1.10e6 / 3.34e9, rel=1e-3)
    judged = t[t["by"] == "scenario"]
    assert set(judged["variant"]) == {"flannel-vxlan.iptables.edge-wireguard"}
    assert set(judged["baseline"]) == {"same-pool", "edge-to-cloud"}
    sizes = t[t.index.str.endswith("-size")]
    assert len(sizes) == 2 and (sizes["verdict"] == "not comparable here").all()
    assert sizes["reason"].str.contains("WAN").all()


def _judged(rows: list[tuple]) -> pd.DataFrame:
    """vs_seed_claims.csv rows: (claim, seed ratio, relation, margin, ratio, ci_low, ci_high, verdict)."""
    keys = ("claim", "seed_ratio", "seed_relation", "margin", "ratio", "ci_low", "ci_high", "verdict")
    return pd.DataFrame([dict(zip(keys, r)) | {"seed": "seed 001"} for r in rows]).reindex(
        columns=vs_seed.CLAIM_COLUMNS
    )


def test_the_figure_of_a_seed_of_claims_draws_each_judged_claim():
    """A seed without a CNI ranking here (vs_seed.csv empty): the vs_seed figure is its claims, one
    row each judged here (its band, the seed's ratio, ours with the interval), the others counted."""
    from podnet.report.figures import check
    from podnet.report.vs_seed.claims_figure import drawn
    from podnet.report.vs_seed.figure import published_figure

    nan = np.nan
    t = _judged(
        [
            ("bw-flannel-vxlan", 0.966, "<", 0.01, 0.967, 0.957, 0.978, "agrees"),
            ("bw-calico", 0.999, "~", 0.01, 1.003, 0.996, 1.010, "tie within margin"),
            ("lat-flannel-vxlan", 2.97, ">", 0.21, 0.80, 0.75, 0.86, "contradicts"),
            ("fill-eni-pod-pod", nan, "~", 0.057, 1.2, nan, nan, "inconclusive here"),
            ("inflow-eni-pps", nan, ">=", 0.057, nan, nan, nan, "inconclusive here"),
            ("bw-neutron", nan, "", nan, nan, nan, nan, "not comparable here"),
        ]
    )
    assert list(drawn(t)["claim"])[-1] == "inflow-eni-pps" and len(drawn(t)) == 5
    fig = published_figure(pd.DataFrame(columns=vs_seed.COLUMNS), t, "seed 001")
    assert check.problems(fig) == [] and check.checklist(fig) == []
    labels = [x.get_text() for x in fig.axes[0].get_yticklabels()]
    assert labels == [
        "bw-flannel-vxlan",
        "bw-calico",
        "lat-flannel-vxlan",
        "fill-eni-pod-pod (seed: alike) - no interval",
        "inflow-eni-pps (seed: close or above) - no ratio here",
    ]
    assert "1 not run or not comparable here" in fig._suptitle.get_text()
    assert len(fig.podnet_intervals) == 3
    empty = published_figure(pd.DataFrame(columns=vs_seed.COLUMNS), t.iloc[5:], "seed 001")
    assert "No claim of seed 001 judged here" in empty.axes[0].texts[0].get_text()
