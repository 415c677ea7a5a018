"""podnet settle: warm-up and window CVs from iperf3's own per-interval JSON."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import numpy as np
import pytest

from podnet.cli import main
from podnet.stats import settle
from tests.conftest import FIXTURES

LONG = sorted((FIXTURES / "iperf3").glob("floor-30s-loaded-r?.json"))


def test_series_is_iperf3s_intervals_and_adds_up_to_its_bytes():
    for path in [*LONG, FIXTURES / "iperf3" / "tcp-p2-omit.json"]:
        doc = json.loads(path.read_text())
        v, s, om = settle.series(doc)
        assert len(v) == len(doc["intervals"]) and list(om) == [
            iv["sum"]["omitted"] for iv in doc["intervals"]
        ]
        # rate x seconds of the counted intervals = the bytes the sender reports (independent of the rates)
        sent = doc["end"]["sum_sent"]["bytes"] * 8
        assert (v[~om] * s[~om]).sum() == pytest.approx(sent, rel=0.01)
    with pytest.raises(ValueError, match="iperf3 error"):
        settle.series(json.loads((FIXTURES / "iperf3" / "error-refused.json").read_text()))


def run(values, seconds=None, scenario="s", test="t"):
    v = np.asarray(values, dtype=float)
    s = np.ones(len(v)) if seconds is None else np.asarray(seconds, dtype=float)
    return settle.Run("x", "v", scenario, test, v, s, np.zeros(len(v), dtype=bool))


def test_a_known_warm_up_is_found_and_noise_is_not_a_warm_up():
    rng = np.random.default_rng(7)
    ramp = [0.40, 0.70, 0.95]  # three slow seconds, then steady at 10 Gbit/s +- 0.5 %
    runs = [run(np.r_[ramp, 1 + rng.normal(0, 0.005, 27)] * 1e10) for _ in range(5)]
    prof = settle.profile(runs)
    assert settle.noise_threshold(prof) == 0.02  # the profile is quieter than the tolerance
    assert settle.settle_seconds(prof, 0.02) == 3
    warm, _ = settle.settle(runs)
    assert warm.loc[0, "settle_s"] == 3 and not warm.loc[0, "noise_limited"]
    flat = [run((1 + rng.normal(0, 0.005, 30)) * 1e10) for _ in range(5)]
    assert settle.settle(flat)[0].loc[0, "settle_s"] == 0
    # per-second noise of 20 %: a 10 % first second cannot be told from it
    noisy = [run(np.r_[0.9, 1 + rng.normal(0, 0.2, 29)] * 1e10) for _ in range(3)]
    w = settle.settle(noisy)[0]
    assert w.loc[0, "noise_limited"] and w.loc[0, "threshold"] > 0.1


def _within_cv_by_hand(runs: list[np.ndarray], secs: list[np.ndarray], width: int) -> float:
    """Pooled within-run CV of window means, written out with the statistics module."""
    ss, df = 0.0, 0
    for v, s in zip(runs, secs, strict=True):
        k = len(v) // width
        means = [
            sum(v[i * width + j] * s[i * width + j] for j in range(width))
            / sum(s[i * width : (i + 1) * width])
            for i in range(k)
        ]
        if k >= 2:
            m = statistics.fmean(means)
            ss += sum((x / m - 1) ** 2 for x in means)
            df += k - 1
    return (ss / df) ** 0.5


def test_window_cvs_on_real_30s_runs_match_a_direct_computation():
    runs = [settle.read_run(p) for p in LONG]
    omit = 2
    table = settle.windows(runs, omit, (3, 5, 10, 20))
    vals = [r.values[omit:] for r in runs]
    secs = [r.seconds[omit:] for r in runs]
    for _, row in table.iterrows():
        w = int(row["window_s"])
        if w == 20:  # 28 s left: one window per run, no within-run CV
            assert np.isnan(row["within_cv"]) and row["runs_with_2_windows"] == 0
            continue
        assert row["within_cv"] == pytest.approx(_within_cv_by_hand(vals, secs, w), rel=1e-9)
    firsts = [sum(v[:5] * s[:5]) / sum(s[:5]) for v, s in zip(vals, secs, strict=True)]
    row5 = table[table["window_s"] == 5].iloc[0]
    assert row5["first_window_cv"] == pytest.approx(statistics.stdev(firsts) / statistics.fmean(firsts))
    means = [sum(v * s) / sum(s) for v, s in zip(vals, secs, strict=True)]
    assert row5["between_cv"] == pytest.approx(statistics.stdev(means) / statistics.fmean(means))
    # time for a given precision: test CV squared x (test + omit + overhead), relative to the cheapest
    cost = {
        int(r["window_s"]): r["test_cv"] ** 2 * (r["window_s"] + omit + settle.OVERHEAD_S)
        for _, r in table.iterrows()
    }
    for _, r in table.iterrows():
        assert r["time_per_precision"] == pytest.approx(cost[int(r["window_s"])] / min(cost.values()))


def test_recommended_is_the_shortest_window_whose_within_run_noise_is_below_between_run_noise():
    rng = np.random.default_rng(11)
    # runs differ by 8 % (between); seconds within a run by 20 % (white): within CV ~ 0.2 / sqrt(w)
    runs = [run(1e10 * (1 + rng.normal(0, 0.08)) * (1 + rng.normal(0, 0.2, 120))) for _ in range(12)]
    t = settle.windows(runs, 0, (3, 5, 10, 20))
    assert t["within_cv"].to_numpy() == pytest.approx(0.2 / np.sqrt([3, 5, 10, 20]), rel=0.2)
    below = t[t["within_cv"] <= t["between_cv"]]
    assert list(t.loc[t["recommended"], "window_s"]) == [int(below["window_s"].min())]
    assert int(below["window_s"].min()) >= 5  # 0.2/sqrt(3) = 0.115 is above 8 %


def test_intervals_other_than_one_second_are_refused():
    with pytest.raises(ValueError, match="not 1 s"):
        settle.profile([run([1e10] * 10, seconds=[0.5] * 10)])


def test_cli_reads_a_raw_directory_and_writes_its_tables(tmp_path, capsys):
    d = tmp_path / "raw" / "floor" / "netns-veth" / "iperf3-tcp-30s"
    d.mkdir(parents=True)
    for i, p in enumerate(LONG, 1):
        shutil.copy(p, d / f"r{i:03d}.json")
    (d / "r009.json").write_text("{ cut")
    out = tmp_path / "out"
    assert main(["settle", str(tmp_path / "raw"), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "r009.json" in err
    warm = (out / "settle.csv").read_text().splitlines()
    assert len(warm) == 2 and "netns-veth" in warm[1] and ",tcp-30s," in warm[1]
    assert len((out / "settle_windows.csv").read_text().splitlines()) == 1 + 4
    assert main(["settle", str(tmp_path / "empty")]) == 1


def test_fixture_runs_are_long_enough_for_the_windows():
    assert len(LONG) == 3 and all(len(settle.read_run(p).values) == 30 for p in LONG)
    assert Path(LONG[0]).name == "floor-30s-loaded-r1.json"
