"""Incremental re-runs through Snakemake with the parse and statistics caches: nothing changed ->
nothing rewritten; one value changed in one raw file -> its tables and figure change (and equal a
run from nothing); the caches never serve a stale table."""

import hashlib
import shutil

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.pipeline.test_declared_outputs import state
from tests.workflow_runs import example_config, snakemake

pytestmark = pytest.mark.pipeline
TABLES = ["tidy.parquet", "intervals.parquet", "failed_runs.csv", "summary.csv", "ratios.csv", "planning.csv"]


def make_config(tmp, raw, out, name):
    cfg = example_config("seed-raven")
    cfg.update(experiment="incremental", raw_dir=str(raw), processed_dir=str(out))
    cfg["parse"] = {"shards": 3}
    cfg["report"] = {"notebooks": ["report"]}
    path = tmp / name
    path.write_text(yaml.safe_dump(cfg))
    return path


def read(out, name):
    return pd.read_parquet(out / name) if name.endswith(".parquet") else pd.read_csv(out / name)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("incremental")
    raw = tmp / "raw"
    shutil.copytree(REPO / "raw/seed-raven", raw)
    cfg = make_config(tmp, raw, tmp / "out", "config.yaml")
    snakemake(cfg)
    return tmp, cfg, raw, tmp / "out"


def test_a_rerun_with_nothing_changed_rewrites_nothing(experiment):
    tmp, cfg, raw, out = experiment
    before = state(out)
    snakemake(cfg)
    assert state(out) == before


def test_one_changed_value_changes_its_tables_and_figure_as_a_run_from_nothing_would(experiment):
    tmp, cfg, raw, out = experiment
    before = {name: read(out, name) for name in TABLES}
    figures = {p.name: p.read_bytes() for p in (out / "figures").glob("*.png")}
    drawn_at = {p.name: p.stat().st_mtime_ns for p in (out / "figures").glob("*.*")}
    target = raw / "same-edge/ping-plain.txt"
    data = target.read_bytes().replace(b"0.130/0.190/0.347", b"0.130/0.290/0.347")
    target.write_bytes(data)
    side = target.with_name(target.name + ".meta.yaml")
    meta = yaml.safe_load(side.read_text())
    meta["sha256"] = hashlib.sha256(data).hexdigest()  # a corrected output, recorded as such
    side.write_text(yaml.safe_dump(meta, sort_keys=False))

    log = snakemake(cfg)
    assert "parse_shard" in log
    tidy = read(out, "tidy.parquet")
    row = tidy[(tidy.raw_path == str(target)) & (tidy.metric == "rtt_avg")]
    assert row["value"].tolist() == [pytest.approx(0.290e-3)]
    s = read(out, "summary.csv")
    plain = s[(s.scenario == "same-edge") & (s.test == "plain") & (s.metric == "rtt_avg")]
    assert plain["mean"].tolist() == [pytest.approx(0.290e-3)]
    assert not s.equals(before["summary.csv"]) and not read(out, "ratios.csv").equals(before["ratios.csv"])
    # the figure that plots it changed; one that does not plot ping latency is byte-identical ...
    assert (out / "figures/latency.png").read_bytes() != figures["latency.png"]
    assert (out / "figures/throughput.png").read_bytes() == figures["throughput.png"]
    # ... and its job did not run at all: its digest file (figure_plan, a checkpoint) came out the same
    for ext in ("png", "svg", "pdf"):
        assert (out / f"figures/throughput.{ext}").stat().st_mtime_ns == drawn_at[f"throughput.{ext}"]
    assert "drew latency" in (out / "logs/figure-latency.log").read_text()

    # a run from nothing (no cache, no earlier outputs) gives the same tables
    fresh = tmp / "fresh"
    snakemake(make_config(tmp, raw, fresh, "fresh.yaml"), *(str(fresh / n) for n in TABLES))
    for name in TABLES:
        pd.testing.assert_frame_equal(read(out, name), read(fresh, name), check_exact=True, obj=name)


def test_without_the_caches_the_tables_are_the_same(experiment):
    tmp, cfg, raw, out = experiment
    tables = {name: read(out, name) for name in TABLES}
    shutil.rmtree(out / ".cache")
    (out / "tidy.parquet").unlink()  # re-runs tidy and everything after it, from cold caches
    for p in (out / "parsed").glob("shard-*.tidy.parquet"):
        p.unlink()  # ... and every parse shard
    snakemake(cfg)
    assert (out / ".cache/parse").is_dir() and (out / ".cache/summary.parquet").is_file()
    for name in TABLES:
        pd.testing.assert_frame_equal(read(out, name), tables[name], check_exact=True, obj=name)


@pytest.mark.parametrize("deleted", ["report.html", "report.ipynb"])
def test_a_deleted_notebook_file_is_made_again_with_its_figures_untouched(experiment, deleted):
    """The notebook's job makes both files again; its figures (checkpoints behind figure_plan) are
    resolved though none of them runs (before, its figure inputs were left "<TBD>" and it failed)."""
    tmp, cfg, raw, out = experiment
    snakemake(cfg)
    figures = {p.name: p.stat().st_mtime_ns for p in (out / "figures").glob("*.*")}
    page = (out / "notebooks/report.html").read_text()
    (out / "notebooks" / deleted).unlink()
    log = snakemake(cfg)
    assert (
        "rule notebook:" in log
        and "rule figure:" not in log
        and "figure_plan" not in log.split("Job stats")[1]
    )
    assert (out / "notebooks/report.ipynb").exists() and (out / "notebooks/report.html").exists()
    assert {p.name: p.stat().st_mtime_ns for p in (out / "figures").glob("*.*")} == figures
    assert (out / "notebooks/report.html").read_text().count("<img") == page.count("<img") > 0
