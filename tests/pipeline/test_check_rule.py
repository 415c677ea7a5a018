"""The gate as the pipeline's last step: with stats.thresholds, check.csv is written; "inconclusive" does not fail."""

import pandas as pd
import pytest

from tests.workflow_runs import example_config, scratch_example, snakemake

pytestmark = pytest.mark.pipeline


def test_check_rule_writes_verdicts_and_inconclusive_does_not_fail(tmp_path):
    # one run per case: no interval, so every verdict is inconclusive
    bound = {
        "baseline": "same-edge",
        "treatment": "cloud-edge",
        "test": "iperf3",
        "metric": "throughput",
        "min": 0.8,
    }
    stats = {**example_config("seed-raven")["stats"], "thresholds": [bound]}
    path, _, _ = scratch_example(tmp_path, "gate", report={"notebooks": []}, stats=stats)
    snakemake(path)
    v = pd.read_csv(tmp_path / "out" / "check.csv")
    assert len(v) >= 1 and set(v["verdict"]) == {"inconclusive"}
