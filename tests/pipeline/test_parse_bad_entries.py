"""Snakemake and raw entries that cannot be read (issue 10): failed runs, never stale tables."""

import os
import shutil
import subprocess

import pandas as pd
import pytest
import yaml

from tests.conftest import FIXTURES, REPO

pytestmark = pytest.mark.pipeline
SNAKEMAKE = str(REPO / ".venv/bin/snakemake")


def snakemake(configfile, target, *args):
    p = subprocess.run(
        [SNAKEMAKE, str(target), *args, "--cores", "2", "--configfile", str(configfile)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout + p.stderr


def test_broken_links_loops_and_undecodable_names_rerun_the_parse_and_are_listed(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(REPO / "raw/seed-raven", raw)
    cfg = yaml.safe_load((REPO / "config/examples/seed-raven.yaml").read_text())
    cfg.update(experiment="bad-entries", raw_dir=str(raw), processed_dir=str(tmp_path / "out"))
    cfg["parse"] = {"shards": 2}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))
    failed_csv = tmp_path / "out" / "failed_runs.csv"
    snakemake(config, failed_csv)
    assert len(pd.read_csv(failed_csv)) == 0
    assert "Nothing to be done" in snakemake(config, failed_csv, "-n")

    os.symlink(raw / "nowhere.txt", raw / "dangling.txt")
    os.symlink(raw / "loop.txt", raw / "loop.txt")
    with open(os.fsencode(raw) + b"/caf\xe9.txt", "wb") as fh:
        fh.write((FIXTURES / "wrk/basic.txt").read_bytes())
    assert "Nothing to be done" not in snakemake(config, failed_csv, "-n")  # not stale
    snakemake(config, failed_csv)
    failed = pd.read_csv(failed_csv)
    names = {p.rsplit("/", 1)[1]: r for p, r in zip(failed.raw_path, failed.reason)}
    assert set(names) == {"dangling.txt", "loop.txt", "caf\\xe9.txt"}
    assert "broken symlink" in names["dangling.txt"] and "symlink loop" in names["loop.txt"]
    assert "UTF-8" in names["caf\\xe9.txt"]
    tidy = pd.read_parquet(tmp_path / "out" / "tidy.parquet")
    assert tidy.run_id.nunique() == 12  # every good seed run is still there
