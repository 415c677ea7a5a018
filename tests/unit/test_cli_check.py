"""`podnet check DIR --config X.yaml`: the gate's verdicts and exit codes (0 pass, 1 fail, 3 inconclusive, 2 error)."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from podnet.stats import compare, gate
from tests.conftest import REPO
from tests.stats_tables import rows, tidy

CMP = [{"by": "scenario", "baseline": "host-host"}]


def check(*args):
    return subprocess.run(
        [sys.executable, "-m", "podnet.cli", "check", *args], capture_output=True, text=True, cwd=REPO
    )


def processed(tmp_path, treatment_values, minimum=0.8):
    """ratios.csv of pod-pod-cross-node vs host-host, and a config with a threshold on it."""
    base = [10e9, 10.1e9, 9.9e9, 10.05e9, 9.95e9]
    t = tidy(rows(base, scenario="host-host"), rows(treatment_values, scenario="pod-pod-cross-node"))
    thresholds = [
        {
            "baseline": "host-host",
            "treatment": "pod-pod-cross-node",
            "test": "iperf3:tcp",
            "metric": "throughput",
            "min": minimum,
        }
    ]
    out = tmp_path / "processed"
    out.mkdir()
    compare(t, {"comparisons": CMP}).to_csv(out / "ratios.csv", index=False)
    cfg = tmp_path / "x.yaml"
    cfg.write_text(
        yaml.safe_dump({"experiment": "x", "stats": {"comparisons": CMP, "thresholds": thresholds}})
    )
    return out, cfg


@pytest.mark.parametrize(
    "values, code, verdict",
    [
        ([9.0e9, 9.1e9, 8.9e9, 9.05e9, 8.95e9], 0, "pass"),  # ~0.90, interval wholly above 0.8
        ([5.0e9, 5.1e9, 4.9e9, 5.05e9, 4.95e9], 1, "fail"),  # ~0.50, wholly below
        ([8.0e9, 6.0e9, 10.0e9, 7.0e9, 9.0e9], 3, "inconclusive"),  # ~0.79, straddles 0.8
    ],
)
def test_exit_codes(tmp_path, values, code, verdict):
    out, cfg = processed(tmp_path, values)
    p = check(str(out), "--config", str(cfg), "--out", str(tmp_path / "v.csv"))
    assert p.returncode == code, p.stdout + p.stderr
    assert p.stdout.startswith(verdict)
    v = pd.read_csv(tmp_path / "v.csv")
    assert list(v["verdict"]) == [verdict]
    lo, hi = v.loc[0, "ci_low"], v.loc[0, "ci_high"]
    assert {"pass": lo >= 0.8, "fail": hi < 0.8, "inconclusive": lo < 0.8 <= hi}[verdict]


def test_no_matching_ratio_is_inconclusive():
    r = pd.DataFrame({c: [] for c in ("by", "baseline", "treatment", "tool", "test", "metric")})
    v = gate.check(r, [{"baseline": "a", "treatment": "b", "metric": "throughput", "min": 1}])
    assert list(v["verdict"]) == ["inconclusive"] and "no ratio row" in v.loc[0, "reason"]
    assert gate.exit_code(v) == 3


def test_max_bound_and_no_interval():
    r = pd.DataFrame(
        {
            "by": ["scenario"] * 2,
            "baseline": ["h"] * 2,
            "treatment": ["p"] * 2,
            "tool": ["ping"] * 2,
            "test": ["plain"] * 2,
            "metric": ["rtt_avg"] * 2,
            "ratio": [1.5, 1.1],
            "ci_low": [1.3, np.nan],
            "ci_high": [1.7, np.nan],
        }
    )
    v = gate.check(r, [{"baseline": "h", "treatment": "p", "metric": "rtt_avg", "max": 1.2}])
    assert list(v["verdict"]) == ["fail", "inconclusive"]


def test_errors_exit_2(tmp_path):
    out, cfg = processed(tmp_path, [9.0e9, 9.1e9, 8.9e9])
    assert check(str(tmp_path / "nowhere"), "--config", str(cfg)).returncode == 2
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"experiment": "x", "stats": {"comparisons": CMP}}))
    p = check(str(out), "--config", str(bare))
    assert p.returncode == 2 and "no stats.thresholds" in p.stderr
