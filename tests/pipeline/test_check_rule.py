"""The gate as the pipeline's last step: with stats.thresholds, check.csv is written; "unresolved" does not fail."""

import shutil
import subprocess

import pandas as pd
import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.pipeline


def test_check_rule_writes_verdicts_and_unresolved_does_not_fail(tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(REPO / "raw/seed-raven", raw)
    cfg = yaml.safe_load((REPO / "config/examples/seed-raven.yaml").read_text())
    cfg.update(experiment="gate", raw_dir=str(raw), processed_dir=str(tmp_path / "out"))
    cfg["report"] = {"notebooks": []}
    # one run per case: no interval, so every verdict is unresolved
    cfg["stats"]["thresholds"] = [
        {
            "baseline": "same-edge",
            "treatment": "cloud-edge",
            "test": "iperf3",
            "metric": "throughput",
            "min": 0.8,
        }
    ]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    p = subprocess.run(
        [str(REPO / ".venv/bin/snakemake"), "--cores", "2", "--configfile", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    v = pd.read_csv(tmp_path / "out" / "check.csv")
    assert len(v) >= 1 and set(v["verdict"]) == {"unresolved"}
