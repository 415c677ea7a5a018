"""`podnet stats TIDY --out DIR` on a tidy table made from the seed-raven raw files."""

import subprocess
import sys

import pandas as pd
import pytest

from podnet.parse import parse_experiment
from tests.conftest import REPO


@pytest.fixture(scope="module")
def tidy_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("tidy") / "tidy.csv"
    parse_experiment(REPO / "raw/seed-raven", "seed-raven").tidy.to_csv(path, index=False)
    return path


def stats(*args):
    return subprocess.run(
        [sys.executable, "-m", "podnet.cli", "stats", *args], capture_output=True, text=True, cwd=REPO
    )


def test_stats_with_compare_flag(tidy_csv, tmp_path):
    p = stats(str(tidy_csv), "--out", str(tmp_path), "--compare", "scenario=same-edge")
    assert p.returncode == 0, p.stderr
    s = pd.read_csv(tmp_path / "summary.csv")
    r = pd.read_csv(tmp_path / "ratios.csv")
    assert {"n", "mean", "median", "sd", "ci_low", "ci_high", "ci_method"} <= set(s.columns)
    row = r[(r.metric == "throughput") & (r.treatment == "cloud-edge") & (r.direction == "forward")]
    assert row["ratio"].item() == pytest.approx(87.6e6 / 3.67e9, rel=1e-12)


def test_stats_with_experiment_config(tidy_csv, tmp_path):
    p = stats(
        str(tidy_csv), "--out", str(tmp_path), "--config", str(REPO / "config/examples/seed-raven.yaml")
    )
    assert p.returncode == 0, p.stderr
    assert set(pd.read_csv(tmp_path / "ratios.csv")["baseline"]) == {"same-edge"}


def test_stats_errors_name_the_problem(tmp_path):
    p = stats(str(tmp_path / "missing.parquet"), "--out", str(tmp_path))
    assert p.returncode != 0 and "missing.parquet" in p.stderr
    bad = stats(str(tmp_path / "x.csv"), "--out", str(tmp_path), "--compare", "zone=a")
    assert bad.returncode == 2 and "scenario=NAME" in bad.stderr
