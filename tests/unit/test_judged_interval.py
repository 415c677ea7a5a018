"""One interval per comparison: the findings, the gate, the ratios figure and adaptive sampling all
read a ratio by :func:`podnet.stats.precision.judged` (paired within a launch's interleaved rounds
when it can be, else the unpaired interval). Before, adaptive sampling judged the paired interval
while the findings and the gate stated the unpaired one, so a comparison could be "met" in the
adaptive account and "not precise" in the sentence beside it."""

import numpy as np
import pandas as pd

from podnet.report import findings
from podnet.stats import compare, gate
from podnet.stats.precision import as_judged, judged
from tests.stats_tables import one, rows, tidy

CMP = [{"by": "scenario", "baseline": "host-host"}]
THRESHOLD = [
    {
        "baseline": "host-host",
        "treatment": "pod-pod",
        "test": "iperf3:tcp",
        "metric": "throughput",
        "min": 0.8,
    }
]
# the machine's load drifts from round to round, and both paths of a round feel it
DRIFT = np.array([1.0, 1.35, 0.75, 1.2, 0.85, 1.1, 0.95, 1.25])
NOISE = np.array([1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99])


def ratios(launch_id="L1"):
    base = rows(10e9 * DRIFT, scenario="host-host", launch_id=launch_id)
    treat = rows(8.7e9 * DRIFT * NOISE, scenario="pod-pod", launch_id=launch_id)
    return compare(
        tidy(base, treat), {"comparisons": CMP, "primary": [{**CMP[0], "treatments": ["pod-pod"]}]}
    )


def test_paired_interval_is_the_one_stated_and_gated():
    r = ratios()
    row = one(r, treatment="pod-pod", metric="throughput")
    # the drift makes the unpaired interval straddle 0.8; the paired one lies above it
    assert row["ci_low"] < 0.8 < row["ci_high"]
    assert 0.8 < row["paired_ci_low"] < 0.87 < row["paired_ci_high"] < 0.9
    j = judged(r).loc[row.name]
    assert j["interval"] == "paired" and j["n"] == 8
    assert (j["low"], j["high"]) == (row["paired_ci_low"], row["paired_ci_high"])
    v = gate.check(r, THRESHOLD)
    assert list(v["verdict"]) == ["pass"] and list(v["interval"]) == ["paired"]
    assert v.loc[0, "ci_low"] == row["paired_ci_low"]
    stated = as_judged(r).loc[row.name]
    text = findings.sentence(stated)
    assert "8 interleaved rounds, paired" in text
    assert f"{row['paired_ci_low']:.2f}-{row['paired_ci_high']:.2f}" in text
    assert f"{row['ci_low']:.2f}-" not in text


def test_sides_from_different_launches_state_the_unpaired_interval():
    base = rows(10e9 * DRIFT, scenario="host-host", launch_id="L1")
    treat = rows(8.7e9 * DRIFT * NOISE, scenario="pod-pod", launch_id="L2")
    r = compare(tidy(base, treat), {"comparisons": CMP})
    row = one(r, treatment="pod-pod", metric="throughput")
    j = judged(r).loc[row.name]
    assert j["interval"] == "unpaired" and (j["low"], j["high"]) == (row["ci_low"], row["ci_high"])
    assert list(gate.check(r, THRESHOLD)["verdict"]) == ["inconclusive"]
    assert "n = 8 each" in findings.sentence(as_judged(r).loc[row.name])


def test_no_interval_at_all():
    r = pd.DataFrame(
        {"ratio": [1.2], "ci_low": [np.nan], "ci_high": [np.nan], "n_treatment": [1], "n_baseline": [1]}
    )
    j = judged(r)
    assert j.loc[0, "interval"] == "" and np.isnan(j.loc[0, "low"])
