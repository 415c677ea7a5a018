"""End to end: Snakemake on the seed-raven example, bad raw files, and incremental re-runs."""

import re

import pandas as pd
import pytest

from podnet.parse.raw import write_raw
from tests.conftest import FIXTURES, REPO
from tests.workflow_runs import scratch_example, snakemake

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def seed_raven():
    snakemake(REPO / "config/examples/seed-raven.yaml")
    return REPO / "processed/seed-raven"


def test_every_output_is_published(seed_raven):
    for name in (
        "tidy.parquet",
        "tidy.csv",
        "summary.csv",
        "ratios.csv",
        "failed_runs.csv",
        "notebooks/report.ipynb",
    ):
        assert (seed_raven / name).stat().st_size > 0, name
    for fig in ("throughput", "latency", "ratios"):
        for ext in ("png", "svg", "pdf"):
            assert (seed_raven / "figures" / f"{fig}.{ext}").stat().st_size > 1000
    # one variant: no variants figure that would only say so; the plan says why
    import json

    plan = json.loads((seed_raven / "figures" / "plan.json").read_text())
    assert not (seed_raven / "figures" / "variants.png").exists()
    assert "published" not in plan["variants"] and plan["variants"].get("omitted"), plan["variants"]


def _means(summary, metric, test, direction):
    sel = summary[(summary.metric == metric) & (summary.test == test) & (summary.direction == direction)]
    return dict(zip(sel.scenario, sel["mean"]))


def test_summary_holds_the_raw_figures(seed_raven):
    s = pd.read_csv(seed_raven / "summary.csv")
    fwd = _means(s, "throughput", "tcp", "forward")
    rev = _means(s, "throughput", "tcp", "reverse")
    assert fwd == pytest.approx(
        {"same-edge": 3.67e9, "cloud-edge": 87.6e6, "edge-cloud-edge": 787e3}, rel=1e-12
    )
    assert rev == pytest.approx(
        {"same-edge": 3.34e9, "cloud-edge": 845e3, "edge-cloud-edge": 791e3}, rel=1e-12
    )
    flood = _means(s, "rtt_avg", "flood", "roundtrip")
    plain = _means(s, "rtt_avg", "plain", "roundtrip")
    assert flood == pytest.approx(
        {"same-edge": 0.065e-3, "cloud-edge": 33.919e-3, "edge-cloud-edge": 63.325e-3}, rel=1e-9
    )
    assert plain == pytest.approx(
        {"same-edge": 0.190e-3, "cloud-edge": 33.938e-3, "edge-cloud-edge": 63.413e-3}, rel=1e-9
    )
    one = s[s.metric == "throughput"]
    assert (one["n"] == 1).all() and one["ci_low"].isna().all() and one["ci_high"].isna().all()


def test_ratios_against_same_edge_come_from_the_raw_numbers(seed_raven):
    r = pd.read_csv(seed_raven / "ratios.csv")
    assert set(r["baseline"]) == {"same-edge"}
    thr = r[(r.metric == "throughput") & (r.direction == "forward")].set_index("treatment")["ratio"]
    assert thr["cloud-edge"] == pytest.approx(87.6e6 / 3.67e9, rel=1e-12)
    assert thr["edge-cloud-edge"] == pytest.approx(787e3 / 3.67e9, rel=1e-12)
    lat = r[(r.metric == "rtt_avg") & (r.test == "flood")].set_index("treatment")["ratio"]
    assert lat["cloud-edge"] == pytest.approx(33.919 / 0.065, rel=1e-9)
    assert r[r.metric == "throughput"]["ci_low"].isna().all()  # n = 1: no interval invented


def test_figures_are_byte_stable(seed_raven, tmp_path):
    from podnet.report import figures

    again = figures.publish(seed_raven, tmp_path)
    for p in again:
        assert p.read_bytes() == (seed_raven / "figures" / p.name).read_bytes(), p.name


@pytest.fixture
def scratch(tmp_path):
    return scratch_example(tmp_path, "scratch", parse={"shards": 4})


def test_bad_raw_files_are_listed_and_the_rest_goes_on(scratch):
    cfg, raw, out = scratch
    meta = {"tool": "iperf3", "variant": "raven", "scenario": "same-edge"}
    write_raw(raw / "bad/empty.txt", "", meta)
    write_raw(raw / "bad/truncated.json", (FIXTURES / "iperf3/tcp-forward.json").read_text()[:400], meta)
    write_raw(raw / "bad/binary.txt", bytes(range(256)), meta)
    write_raw(raw / "bad/error.json", (FIXTURES / "iperf3/error-refused.json").read_text(), meta)
    log = snakemake(cfg)
    failed = pd.read_csv(out / "failed_runs.csv")
    assert sorted(p.rsplit("/", 1)[1] for p in failed.raw_path) == [
        "binary.txt",
        "empty.txt",
        "error.json",
        "truncated.json",
    ]
    assert failed.reason.str.len().min() > 10
    assert "could not parse" in log and "truncated.json" in log
    tidy = pd.read_parquet(out / "tidy.parquet")
    assert tidy.run_id.nunique() == 12  # every good seed run is still there


def _jobs(dry_run_output):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", dry_run_output, re.M)}


def test_rerun_does_nothing_and_a_new_file_reparses_one_shard(scratch):
    cfg, raw, out = scratch
    snakemake(cfg)
    assert "Nothing to be done" in snakemake(cfg, "-n")
    write_raw(
        raw / "same-edge/iperf3-forward-r2.json",
        (FIXTURES / "iperf3/tcp-forward.json").read_text(),
        {"tool": "iperf3", "variant": "raven", "scenario": "same-edge", "repeat": 2},
    )
    jobs = _jobs(snakemake(cfg, "-n"))
    assert jobs.get("parse_shard") == 1, jobs
