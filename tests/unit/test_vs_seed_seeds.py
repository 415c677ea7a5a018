"""Every seed campaign's claims in one table (podnet.report.vs_seed.seeds, ``make seeds``) and the
claims as the vs_seed notebook shows them (podnet.report.vs_seed.verdicts), on made-up per-seed
tables: claims of two seeds, seed 003's ranking table, a seed without either."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from podnet.report import vs_seed
from podnet.report.vs_seed import seeds


def _claims(seed: str, verdicts: list[str]) -> pd.DataFrame:
    rows = [
        {
            "seed": seed,
            "claim": f"c{i}",
            "says": f"claim {i}",
            "seed_value": 910e6,
            "seed_baseline": 942e6,
            "seed_ratio": 910 / 942,
            "seed_relation": "<",
            "by": "scenario",
            "treatment": "pod-pod",
            "baseline": "host-host",
            "measure": "iperf2:tcp:throughput",
            "ratio": 0.967,
            "ci_low": 0.957,
            "ci_high": 0.978,
            "verdict": v,
        }
        for i, v in enumerate(verdicts)
    ]
    return pd.DataFrame(rows).reindex(columns=vs_seed.CLAIM_COLUMNS)


def _ranking() -> pd.DataFrame:
    """Two rows of a seed-003-like vs_seed.csv: a CNI both have, one not run here."""
    rows = [
        {
            "seed": "seed 003",
            "path": "pod-pod-cross-node",
            "scenario": "pod-pod-cross-node",
            "seed_cni": "calico-vxlan",
            "variant": "calico-vxlan.iptables",
            "status": "both",
            "seed_tool": "iperf3",
            "seed_test": "tcp",
            "seed_metric": "throughput",
            "tool": "iperf3",
            "test": "tcp",
            "metric": "throughput",
            "seed_value": 1.37e9,
            "seed_baseline": 9.16e9,
            "seed_ratio": 1.37 / 9.16,
            "ratio": 0.44,
            "ratio_ci_low": 0.40,
            "ratio_ci_high": 0.48,
            "interval": "paired t",
            "n": 3,
            "rank_seed": 4.0,
            "ranking": "agrees",
            "note": "",
        },
        {
            "seed": "seed 003",
            "path": "pod-pod-cross-node",
            "scenario": "pod-pod-cross-node",
            "seed_cni": "cilium-vxlan",
            "variant": "",
            "status": "not run here",
            "seed_tool": "iperf3",
            "seed_test": "tcp",
            "seed_metric": "throughput",
            "tool": "iperf3",
            "test": "tcp",
            "metric": "throughput",
            "seed_value": 8.30e9,
            "seed_baseline": 9.16e9,
            "seed_ratio": 8.30 / 9.16,
            "rank_seed": 2.0,
            "ranking": "agrees",
            "note": "no cilium here",
        },
    ]
    return pd.DataFrame(rows).reindex(columns=vs_seed.COLUMNS)


def test_verdict_counts_in_the_claim_verdicts_order():
    c = _claims("seed 001", ["contradicts", "agrees", "agrees", "not run here"])
    n = vs_seed.verdict_counts(c)
    assert list(n.index) == ["agrees", "contradicts", "not run here"] and list(n) == [2, 1, 1]
    assert vs_seed.count_sentence(c) == "Of 4 claims of seed 001: 2 agrees, 1 contradicts, 1 not run here."
    empty = pd.DataFrame(columns=vs_seed.CLAIM_COLUMNS)
    assert vs_seed.verdict_counts(empty).empty
    assert "No claims of seed 003" in vs_seed.count_sentence(empty, "seed 003")


def test_headline_leads_with_the_claims_then_the_ranking():
    c = _claims("seed 002", ["agrees"])
    empty = pd.DataFrame(columns=vs_seed.COLUMNS)
    assert vs_seed.headline(c, empty) == "Of 1 claim of seed 002: 1 agrees."
    h = vs_seed.headline(pd.DataFrame(columns=vs_seed.CLAIM_COLUMNS), _ranking(), "seed 003")
    assert h.startswith("No claims of seed 003") and vs_seed.summary_sentence(_ranking()) in h


def test_claims_read_back_and_shown(tmp_path):
    c = _claims("seed 004", ["agrees", "inconclusive here"])
    c["reason"] = ["", ""]
    vs_seed.write(c, tmp_path / "vs_seed_claims.csv")
    back = vs_seed.read_claims(tmp_path / "vs_seed_claims.csv")
    assert list(back.columns) == vs_seed.CLAIM_COLUMNS and back.loc[1, "reason"] == ""
    shown = vs_seed.claims_shown(back).set_index("claim")
    assert list(shown.index) == ["c0", "c1"] and shown.loc["c0", "verdict"] == "agrees"
    assert shown.loc["c0", "seed: treatment / baseline"] == "910 / 942 Mbit/s"
    assert shown.loc["c0", "seed ratio"] == "0.966 (<)"
    assert shown.loc["c0", "our ratio [95 % CI]"] == "0.97 [0.96, 0.98]"  # width 0.021: 2 decimals
    # a seed without claims: no file, an empty table with the columns, nothing to show
    none = vs_seed.read_claims(tmp_path / "missing.csv")
    assert none.empty and list(none.columns) == vs_seed.CLAIM_COLUMNS
    assert vs_seed.claims_shown(none).empty


def test_ranking_rows_as_claims():
    r = seeds.ranking_as_claims(_ranking(), "host-host")
    assert list(r.columns) == vs_seed.CLAIM_COLUMNS
    both, cil = r.iloc[0], r.iloc[1]
    assert both["claim"] == "pod-pod-cross-node calico-vxlan iperf3:tcp:throughput"
    assert both["says"] == "rank 4 in the seed" and both["baseline"] == "host-host"
    assert (both["ratio"], both["ci_low"], both["ci_high"]) == (0.44, 0.40, 0.48)
    assert both["verdict"] == "agrees" and both["seed_in_ci"] is not None and not bool(both["seed_in_ci"])
    # not run here: the status, not the group's ranking verdict; no interval, no seed_in_ci
    assert cil["verdict"] == "not run here" and cil["reason"] == "no cilium here"
    assert np.isnan(cil["ratio"]) and pd.isna(cil["seed_in_ci"])
    assert seeds.ranking_as_claims(pd.DataFrame()).empty


def test_collect_and_count_per_seed():
    claims = {
        "seed-000": pd.DataFrame(columns=vs_seed.CLAIM_COLUMNS),
        "seed-001": _claims("seed 001", ["agrees", "agrees", "gap not reproduced"]),
        "seed-003": pd.DataFrame(columns=vs_seed.CLAIM_COLUMNS),
        "seed-004": _claims("", ["contradicts"]),
    }
    t = seeds.collect(claims, {"seed-003": _ranking()}, {"seed-003": "host-host"})
    assert list(t.columns) == seeds.SEEDS_COLUMNS
    assert list(t["campaign"]) == ["seed-001"] * 3 + ["seed-003"] * 2 + ["seed-004"]
    assert list(t["source"]) == ["claims"] * 3 + ["ranking"] * 2 + ["claims"]
    # an empty seed cell takes the campaign's name
    assert list(t["seed"].unique()) == ["seed 001", "seed 003", "seed-004"]
    n = seeds.verdict_table(t, list(claims))
    assert list(n.columns) == seeds.VERDICT_COLUMNS
    got = {(r.campaign, r.verdict): r.n for r in n.itertuples()}
    assert got == {
        ("seed-000", seeds.NO_TABLE): 0,
        ("seed-001", "agrees"): 2,
        ("seed-001", "gap not reproduced"): 1,
        ("seed-003", "agrees"): 1,
        ("seed-003", "not run here"): 1,
        ("seed-004", "contradicts"): 1,
    }
    assert list(dict.fromkeys(n["campaign"])) == ["seed-000", "seed-001", "seed-003", "seed-004"]
    assert seeds.collect({}).empty


def test_publish_from_processed_folders(tmp_path, capsys):
    proc = tmp_path / "processed"
    for name in ("seed-000", "seed-001", "seed-002", "seed-003"):
        (proc / name).mkdir(parents=True)
    # seed-000: no report.vs_seed, no table; seed-002: not published (an empty claims file)
    vs_seed.write(_claims("seed 001", ["agrees", "contradicts"]), proc / "seed-001" / "vs_seed_claims.csv")
    (proc / "seed-002" / "vs_seed_claims.csv").write_text("")
    vs_seed.write(pd.DataFrame(columns=vs_seed.CLAIM_COLUMNS), proc / "seed-003" / "vs_seed_claims.csv")
    vs_seed.write(_ranking(), proc / "seed-003" / "vs_seed.csv")
    dirs = [str(proc / n) for n in ("seed-000", "seed-001", "seed-002", "seed-003")]
    assert seeds.main(["--out", str(tmp_path / "seeds"), *dirs]) == 0
    t = pd.read_csv(tmp_path / "seeds" / "claims.csv")
    assert list(t.columns) == seeds.SEEDS_COLUMNS and len(t) == 4
    assert set(t.loc[t["campaign"] == "seed-003", "baseline"]) == {"host-host"}
    n = pd.read_csv(tmp_path / "seeds" / "verdicts.csv")
    assert n[n["verdict"] == seeds.NO_TABLE]["campaign"].tolist() == ["seed-000", "seed-002"]
    assert n["n"].sum() == 4
    out = capsys.readouterr().out
    assert "seed-001: 1 agrees, 1 contradicts" in out and "4 rows in" in out


def test_publish_twice_gives_the_same_table(tmp_path):
    d = tmp_path / "seed-001"
    vs_seed.write(_claims("seed 001", ["agrees"]), d / "vs_seed_claims.csv")
    first = seeds.publish([d], tmp_path / "out")
    second = seeds.publish([d], tmp_path / "out")
    pd.testing.assert_frame_equal(first[0], second[0])
    pd.testing.assert_frame_equal(first[1], second[1])


def _reader_claims() -> pd.DataFrame:
    """A small claims frame as vs_seed_claims.csv holds it: SI numbers of three measures (bit/s, s,
    requests/s), a narrow interval, and a claim not comparable here (no numbers at all)."""
    c = _claims("seed 001", ["agrees", "agrees", "agrees", "not comparable here"])
    c["claim"] = ["bw", "lat", "qps", "neutron"]
    c["seed_measure"] = ["iperf2:tcp:throughput", "ping:plain:rtt_avg", "ab:http-c50:requests_per_second", ""]
    c["measure"] = c["seed_measure"]
    c["variant"] = "flannel"
    c["seed_value"] = [910e6, 7.27e-4, 10031.23, np.nan]
    c["seed_baseline"] = [942e6, 2.45e-4, 12439.61, np.nan]
    c["seed_ratio"] = c["seed_value"] / c["seed_baseline"]
    c["ratio"] = [0.9655537, 1.933, 0.578, np.nan]
    c["ci_low"] = [0.9637538, 1.871, 0.549, np.nan]
    c["ci_high"] = [0.9673570, 1.997, 0.611, np.nan]
    c["seed_in_ci"] = [True, False, False, np.nan]
    for col in ("seed_relation", "by", "treatment", "baseline", "measure"):
        c[col] = [*c[col].iloc[:3], ""]
    c["reason"] = ["", "", "", "neutron is not a CNI"]
    return c


def _summary() -> pd.DataFrame:
    rows = [
        ("pod-pod", "iperf2", "tcp", "throughput", 921.5e6),
        ("host-host", "iperf2", "tcp", "throughput", 954.4e6),
        ("pod-pod", "ping", "plain", "rtt_avg", 157.6e-6),
        ("host-host", "ping", "plain", "rtt_avg", 81.49e-6),
    ]
    return pd.DataFrame(
        [
            {"variant": "flannel", "scenario": s, "tool": t, "test": e, "metric": m, "centre": v}
            for s, t, e, m, v in rows
        ]
    )


def test_claims_table_reads_in_display_units_never_e_notation_or_nan(tmp_path):
    """The notebook's claims table (issue 45): verdict and reason first, each row's numbers in its
    measure's display unit, our ratio and interval in one cell to the interval's width, blank where a
    claim has no number; vs_seed_claims.csv keeps SI."""
    vs_seed.write(_reader_claims(), tmp_path / "vs_seed_claims.csv")
    back = vs_seed.read_claims(tmp_path / "vs_seed_claims.csv")
    shown = vs_seed.claims_shown(back, _summary())
    assert list(shown.columns[:4]) == ["claim", "verdict", "reason", "says"]
    row = shown.set_index("claim")
    assert row.loc["bw", "seed: treatment / baseline"] == "910 / 942 Mbit/s"
    assert row.loc["bw", "ours: treatment / baseline"] == "921.5 / 954.4 Mbit/s"
    assert row.loc["bw", "our ratio [95 % CI]"] == "0.966 [0.964, 0.967]"
    assert row.loc["lat", "seed: treatment / baseline"] == "727 / 245 µs"
    assert row.loc["lat", "ours: treatment / baseline"] == "157.6 / 81.49 µs"
    assert row.loc["qps", "seed: treatment / baseline"] == "10,031 / 12,440 requests/s"
    assert row.loc["qps", "ours: treatment / baseline"] == ""  # summary.csv has no such row: blank
    assert (row.loc["neutron"].drop(["verdict", "reason", "says"]) == "").all()
    html = vs_seed.claims_view(back, _summary()).to_html()
    for bad in ("e+0", "e-0", "NaN", "nan"):
        assert bad not in html, bad
    assert "0.966 [0.964,\u00a00.967]" in html and "neutron is not a CNI" in html
    # the CSV stays SI, machine-readable
    raw = pd.read_csv(tmp_path / "vs_seed_claims.csv")
    assert raw.loc[0, "seed_value"] == 910e6 and raw.loc[1, "seed_value"] == 7.27e-4


# ---- a campaign not published yet, and the seeds notebook's helpers ---------------------------------

REPO = Path(__file__).resolve().parents[2]
CAMPAIGNS = REPO / "config" / "campaigns"


def test_a_campaign_never_published_lists_its_claims_as_not_run_yet(tmp_path, monkeypatch):
    """make seeds-publish before (or without) a campaign's run: its claims from its file, each one
    judged later "not run yet" with the seed's own ratio where it printed one; those not run or not
    comparable here keep their verdict; never an error, never a campaign without rows."""
    monkeypatch.chdir(REPO)  # the campaign files name the seeds' files from the repository's root
    proc = tmp_path / "processed"
    vs_seed.write(_claims("seed 001", ["agrees"]), proc / "seed-001" / "vs_seed_claims.csv")
    dirs = [proc / "seed-001", proc / "seed-002", proc / "seed-004"]  # 002 and 004: never run
    table, counts = seeds.publish(dirs, tmp_path / "seeds", campaigns=CAMPAIGNS)
    assert list(table.loc[table["campaign"] == "seed-001", "verdict"]) == ["agrees"]
    for name in ("seed-002", "seed-004"):
        t = table[table["campaign"] == name]
        doc = yaml.safe_load((CAMPAIGNS / f"{name}.yaml").read_text())["report"]["vs_seed"]
        assert list(t["claim"]) == [c["id"] for c in doc["claims"]]
        assert set(t["verdict"]) <= {seeds.NOT_RUN_YET, "not run here", "not comparable here"}
        pending = t[t["verdict"] == seeds.NOT_RUN_YET]
        assert len(pending) and pending["reason"].str.contains(f"processed/{name}/vs_seed_claims.csv").all()
        assert t["seed"].iloc[0] == name.replace("-", " ")
    # seed 004 printed its numbers (raw/seed-qperf): its pending claims carry the seed's ratio
    four = table[(table["campaign"] == "seed-004") & (table["verdict"] == seeds.NOT_RUN_YET)]
    assert np.isfinite(four["seed_ratio"].astype(float)).all()
    assert seeds.NO_TABLE not in set(counts["verdict"])
    lead = seeds.headline(counts)
    assert lead.splitlines()[0] == "- **seed-001** (seed 001): 1 claim: 1 agrees."
    assert "**seed-002** (seed 002)" in lead and seeds.NOT_RUN_YET in lead
    m = seeds.count_matrix(counts)
    assert list(m.index) == ["seed-001", "seed-002", "seed-004"] and m.loc["seed-001", "agrees"] == 1
    assert m.loc["seed-001", seeds.NOT_RUN_YET] == 0 and m.loc["seed-004", seeds.NOT_RUN_YET] > 0
    parts = seeds.per_campaign(seeds.read_table(tmp_path / "seeds" / "claims.csv"))
    assert parts[0] == "### seed-001" and parts[1].startswith("Of 1 claim of seed 001")


def test_a_derived_campaign_has_its_bases_claims():
    """seed-003-unshaped.yaml derives from seed-003.yaml (``base:``): the same claims, read without
    the launch stage's loader (podnet.launch.campaign.model, which the report may not import)."""
    from podnet.launch.campaign import run as campaign

    here = os.getcwd()
    os.chdir(REPO)
    try:
        got = seeds.campaign_vs_seed(CAMPAIGNS / "seed-003-unshaped.yaml")
        want = campaign.load(CAMPAIGNS / "seed-003-unshaped.yaml").experiment["report"]["vs_seed"]
    finally:
        os.chdir(here)
    assert got == want


def test_a_seed_without_campaign_file_or_claims_is_no_table(tmp_path):
    d = tmp_path / "seed-009"
    _, counts = seeds.publish([d], tmp_path / "out", campaigns=tmp_path)
    assert counts.to_dict("records") == [
        {"campaign": "seed-009", "seed": "seed-009", "verdict": seeds.NO_TABLE, "n": 0}
    ]
    assert seeds.headline(counts) == "- **seed-009**: no claims and no table (seed-009 names none)."
