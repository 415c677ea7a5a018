"""Snakemake and raw entries that cannot be read (issue 10): failed runs, never stale tables."""

import os

import pandas as pd
import pytest

from tests.conftest import FIXTURES
from tests.workflow_runs import scratch_example, snakemake

pytestmark = pytest.mark.pipeline


def test_broken_links_loops_and_undecodable_names_rerun_the_parse_and_are_listed(tmp_path):
    config, raw, _ = scratch_example(tmp_path, "bad-entries", parse={"shards": 2})
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
