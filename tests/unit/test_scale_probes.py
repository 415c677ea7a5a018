"""Repeated probe changes per scale set-up, owned by the parse stage: a sidecar's probe lists become
scale_probes.csv (one row per change; a sidecar written before ``scale.changes`` gives one), the
stats stage reads that table, not the sidecars, and scale_effect.csv gives P50 / P90 / P99 with
order-statistic intervals where the changes suffice (P50's over the set-ups' medians), the set-ups,
the first change of a set-up apart and a note where changes of one set-up correlate."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from podnet import stats
from podnet.parse import scale as pscale
from podnet.parse.raw import write_raw
from podnet.parse.tidy import FAILED_COLUMNS, frame
from podnet.stats import scale as sscale

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "scale" / "probe-changes.meta.yaml"


def _fixture() -> dict:
    return yaml.safe_load(FIXTURE.read_text())


def test_a_sidecars_probe_lists_are_one_row_per_change():
    meta = _fixture()
    e = pscale.effect_rows([meta, copy.deepcopy(meta)])  # two runs of one set-up: counted once
    assert list(e.columns) == pscale.EFFECT_COLUMNS and len(e) == 6
    eff = e[e["metric"] == "service_effect_s"]
    assert eff["value"].tolist() == [0.6412, 0.1873, 0.2219] and eff["change_no"].tolist() == [0, 1, 2]
    assert set(e["changes"]) == {3} and set(e["services"]) == {200}
    assert set(e["setup"]) == {"flannel-vxlan/L-20261127T044500/2026-11-27T04:46:12.318Z"}
    assert e["experiment"].isna().all() and set(e["variant"]) == {"flannel-vxlan"}  # not in a sidecar
    assert not (e["metric"].str.startswith("policy")).any()


def test_a_sidecar_written_before_changes_gives_its_one_change_and_a_bad_time_is_an_error():
    meta = _fixture()
    meta["scale"]["probe"] = {"service_effect_s": 0.3, "service_removed_s": None}
    e = pscale.effect_rows([meta])
    assert e[["metric", "change_no", "changes", "value"]].values.tolist() == [["service_effect_s", 0, 1, 0.3]]
    meta["scale"]["probe"] = {"service_effect_s": "fast"}
    with pytest.raises(ValueError, match="neither a number nor a list"):
        pscale.effect_rows([meta])


def _tidy_of(tmp_path: Path, metas: list[dict]) -> pd.DataFrame:
    rows = []
    for i, meta in enumerate(metas):
        raw = write_raw(tmp_path / "raw" / f"r{i:03d}.txt", "netperf\n", meta)
        rows.append(
            {
                "experiment": "service-scale", "variant": meta["variant"], "scenario": meta["scenario"],
                "tool": "netperf", "test": meta["test"], "protocol": "tcp", "direction": "roundtrip",
                "streams": 1, "repeat": i + 1, "run_id": f"r{i:03d}", "source": "measured",
                "raw_path": str(raw), "launch_id": meta["launch"]["id"], "round_seq": meta["round_seq"],
                "sweep": "TCP_CRR", "sweep_param": "services", "sweep_value": 200,
                "metric": "transaction_rate", "value": 5000.0 + i, "unit": "transactions/s",
            }
        )  # fmt: skip
    return frame(rows)


def test_the_parse_stage_table_from_the_tidy_tables_raw_paths(tmp_path):
    meta = _fixture()
    other = copy.deepcopy(meta)
    other["scale"]["verified"] = "2026-11-27T04:52:00.000Z"
    tidy = _tidy_of(tmp_path, [meta, other, copy.deepcopy(meta)])
    p = pscale.probe_table(tidy)
    assert len(p) == 12 and p["setup"].nunique() == 2  # 2 set-ups x 2 probes x 3 changes
    assert set(p["experiment"]) == {"service-scale"}  # the tidy table's
    assert pscale.probe_table(tidy.assign(sweep_param="streams")).empty
    with pytest.raises(ValueError, match="scale_probes.csv"):
        pscale.probe_table(tidy.assign(raw_path=str(tmp_path / "gone.txt")))


def _probes(setups: int, changes: int, spread: float = 0.0, seed: int = 5) -> pd.DataFrame:
    """Probe rows of one point: each set-up's changes around its own level (``spread``: the levels'
    log SD), the first change of each set-up 2 s (it waits for the fillers' programming)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(setups):
        level = 0.2 * np.exp(spread * rng.standard_normal())
        for i in range(changes):
            v = 2.0 if i == 0 else level * np.exp(0.3 * rng.standard_normal())
            for metric in ("service_effect_s", "service_removed_s"):
                rows.append(
                    {"experiment": "x", "variant": "v", "launch_id": "L", "round_seq": s,
                     "verified": f"t{s}", "setup": f"L/t{s}", "services": 200, "network_policies": 0,
                     "endpoints_per_service": 2, "rules_per_policy": 4, "metric": metric,
                     "change_no": i, "changes": changes, "value": float(v)}
                )  # fmt: skip
    return pd.DataFrame(rows, columns=pscale.EFFECT_COLUMNS)


def test_p90_has_its_interval_from_36_changes_and_the_first_of_each_set_up_is_apart():
    t = sscale.effect_table(_probes(24, 3)).set_index("metric")
    eff, rem = t.loc["service_effect_s"], t.loc["service_removed_s"]
    assert (eff["n"], eff["setups"], eff["first_left_out"]) == (48, 24, 24) and eff["first_p50"] == 2.0
    assert eff["p99"] < 2.0  # the first changes are in no quantile
    assert np.isfinite(eff["p90_low"]) and np.isfinite(eff["p90_high"]) and eff["p90_coverage"] >= 0.95
    assert eff["p50_low"] <= eff["p50"] <= eff["p50_high"] <= eff["p90_high"]
    assert "p99_low" not in eff and "P99 is a point of 48 changes" in eff["note"]
    assert "P90" not in eff["note"] and sscale.needed(0.9) == 36
    # a removal waits for nothing before it: every change counted, the 2 s ones too
    assert (rem["n"], rem["first_left_out"]) == (72, 0) and rem["p99"] == pytest.approx(2.0)
    few = sscale.effect_table(_probes(15, 3)).set_index("metric").loc["service_effect_s"]
    assert few["n"] == 30 and np.isnan(few["p90_high"]) and "P90 has no interval: 30 changes" in few["note"]
    six = sscale.effect_table(_probes(6, 7)).set_index("metric").loc["service_effect_s"]
    assert six["n"] == 36 and np.isnan(six["p90_high"]) and "in 6 set-ups" in six["note"]


def test_changes_of_one_set_up_that_correlate_are_said_to_narrow_the_intervals():
    apart = sscale.effect_table(_probes(8, 6, spread=1.5)).set_index("metric").loc["service_effect_s"]
    assert apart["icc"] > 0.5 and apart["design_effect"] >= sscale.DEFF_NOTE
    assert "correlate" in apart["note"]
    alike = sscale.effect_table(_probes(8, 6, spread=0.0)).set_index("metric").loc["service_effect_s"]
    assert alike["design_effect"] < sscale.DEFF_NOTE and "correlate" not in alike["note"]
    c = sscale.icc([0.0, 0.1, 1.0, 1.1, 2.0, 2.1], ["a", "a", "b", "b", "c", "c"])
    assert c.icc > 0.99 and c.design_effect > 1.99 and c.p < 0.001
    assert all(np.isnan(sscale.icc([1.0, 2.0], ["a", "b"])))  # one value per set-up: no estimate


def _clustered(setups: int, changes: int) -> pd.DataFrame:
    """Removals of one point whose set-ups differ by far more than their changes do (ICC near 1):
    set-up s at 0.1 (s + 1) s, its changes within 1 %."""
    rows = [
        {"variant": "v", "metric": "policy_removed_s", "services": 0, "network_policies": 100,
         "setup": f"s{s}", "change_no": i, "changes": changes, "value": 0.1 * (s + 1) * (1 + 0.001 * i)}
        for s in range(setups) for i in range(changes)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_p50_interval_is_over_set_ups_not_changes_that_share_one():
    (row,) = sscale.effect_table(_clustered(6, 6)).to_dict("records")
    medians = [0.1 * (s + 1) * 1.0025 for s in range(6)]
    # 36 changes counted as independent gave [x(12), x(25)]: the 2nd and the 5th set-up's, coverage 97 %
    assert row["n"] == 36 and row["setups"] == 6 and row["design_effect"] > 5
    assert medians[0] < row["p50_low"] < medians[1] and medians[4] < row["p50_high"] < medians[5]
    assert row["p50_coverage"] == pytest.approx(0.95) and "too narrow" not in row["note"]
    assert "correlate" in row["note"] and "P50" not in row["note"]
    five = sscale.effect_table(_clustered(5, 3)).iloc[0]  # 5 set-ups: the range of their medians
    assert five["p50_low"] == pytest.approx(0.1 * 1.001) and five["p50_high"] == pytest.approx(0.5 * 1.001)
    assert five["p50_coverage"] == pytest.approx(1 - 2 / 32)
    assert "P50 interval is the range of the set-ups' medians, coverage 93.8% (5 set-ups" in five["note"]
    one = sscale.effect_table(_clustered(1, 7)).iloc[0]
    assert np.isnan(one["p50_low"]) and "P50 has no interval: 7 changes of 1 set-up" in one["note"]


def test_the_set_ups_median_interval_is_interpolated_to_its_level():
    m = sscale.setup_median_interval(np.arange(1.0, 7.0), list("abcdef"))
    assert (m.median, m.coverage) == (3.5, 0.95)
    lam = 5 * 0.1 / (1 + 4 * 0.1)  # Hettmansperger-Sheather between x(1) and x(2): 96.9 % and 78.1 %
    assert (m.low, m.high) == pytest.approx((1 + lam, 6 - lam))
    exact = sscale.setup_median_interval(np.arange(5.0), list("abcde"))  # 93.8 %: the range, as it is
    assert (exact.low, exact.high, exact.coverage) == (0.0, 4.0, pytest.approx(0.9375))
    # an even count's middle: the geometric mean of its two (the logs' median)
    two = sscale.setup_median_interval([1.0, 3.0, 2.0, 4.0], ["a", "a", "b", "b"])
    assert (two.median, two.low, two.high) == pytest.approx((2.5, 3**0.5, 8**0.5))
    assert two.coverage == pytest.approx(0.5)


def test_the_stats_stage_reads_scale_probes_csv_not_the_sidecars(tmp_path):
    meta = _fixture()
    tidy = _tidy_of(tmp_path, [copy.deepcopy(meta) for _ in range(3)])  # 3 runs of one set-up
    out = tmp_path / "out"
    out.mkdir()
    tidy.to_parquet(out / "tidy.parquet")
    pd.DataFrame(columns=FAILED_COLUMNS).to_csv(out / "failed_runs.csv", index=False)
    _probes(6, 7).to_csv(out / "scale_probes.csv", index=False)
    paths = stats.run(out / "tidy.parquet", out, {}, cache=False, probes_path=out / "scale_probes.csv")
    e = pd.read_csv(paths["scale_effect"])
    assert list(e.columns) == sscale.EFFECT_COLUMNS
    e = e.set_index("metric")
    assert e.loc["service_effect_s", "n"] == 36  # the table's, not the one sidecar's 2 changes
    # without it (podnet stats on a tidy table alone) the sidecars at raw_path are read
    paths = stats.run(out / "tidy.parquet", out, {}, cache=False)
    e = pd.read_csv(paths["scale_effect"]).set_index("metric")
    assert e.loc["service_effect_s", "n"] == 2 and e.loc["service_effect_s", "first_left_out"] == 1
    pscale.effect_rows([]).to_csv(out / "none.csv", index=False)  # no scale runs: a header only
    paths = stats.run(out / "tidy.parquet", out, {}, cache=False, probes_path=out / "none.csv")
    assert pd.read_csv(paths["scale_effect"]).empty


def test_the_workflow_declares_the_table_from_parse_to_stats():
    root = Path(__file__).resolve().parents[2] / "workflow"
    parse = (root / "rules" / "parse.smk").read_text()
    stats_rule = (root / "rules" / "stats.smk").read_text()
    declared = 'probes=f"{OUT}/scale_probes.csv"'
    tidy_rule = parse[parse.index("rule tidy:") :]
    assert declared in tidy_rule[tidy_rule.index("output:") : tidy_rule.index("log:")]
    stats_in = stats_rule[stats_rule.index("rule stats:") :]
    assert declared in stats_in[stats_in.index("input:") : stats_in.index("output:")]
    assert "probes_path=sm.input.probes" in (root / "scripts" / "stats.py").read_text()
    assert "probe_table(parsed.tidy)" in (root / "scripts" / "combine.py").read_text()


def test_a_lifted_deny_is_said_to_be_resolved_only_to_the_connect_limit():
    rows = _probes(6, 7).assign(metric=lambda d: d["metric"].map(
        {"service_effect_s": "policy_effect_s", "service_removed_s": "policy_removed_s"}
    ), services=0, network_policies=20)  # fmt: skip
    t = sscale.effect_table(rows).set_index("metric")
    assert "late by up to 0.1 s" in t.loc["policy_removed_s", "note"]
    assert "late by up to" not in t.loc["policy_effect_s", "note"]  # a drop is seen at its SYN
    # attempts that did not wait for each other (late_up_to_s 0 in the table): no such words
    t = sscale.effect_table(rows.assign(late_up_to_s=0.0)).set_index("metric")
    assert "late by up to" not in t.loc["policy_removed_s", "note"]


def test_a_lifted_deny_is_late_by_the_connect_limit_only_where_attempts_waited_for_each_other():
    probe = {"policy_removed_s": [0.05], "policy_effect_s": [0.03], "connect_timeout_s": 0.1}
    assert pscale.late_up_to(probe, "policy_removed_s") == 0.1
    assert pscale.late_up_to(probe, "policy_effect_s") == 0.0
    assert pscale.late_up_to({"service_effect_s": [0.1]}, "service_effect_s") == 0.1  # a reach too
    assert pscale.late_up_to({"service_removed_s": [0.1]}, "service_removed_s") == 0.0
    assert pscale.late_up_to({**probe, "reach_attempt_every_s": 0.01}, "policy_removed_s") == 0.0


def test_a_set_up_whose_runs_were_all_disturbed_is_marked_and_left_out():
    """A disturbed run is not a value; neither is a set-up timed while every run carrying it was
    disturbed (the time-to-effect campaign of 2026-11-30: P50 at 200 Services 0.107 s in set-ups beside a
    simulation, 0.062 s in quiet ones)."""
    meta = _fixture()
    busy = copy.deepcopy(meta) | {"disturbed": True}
    assert pscale.effect_rows([busy, copy.deepcopy(busy)])["disturbed"].all()
    assert not pscale.effect_rows([busy, meta])["disturbed"].any()  # one quiet run of the set-up
    assert not pscale.effect_rows([meta])["disturbed"].any()
    probes = _probes(40, 2)
    probes["disturbed"] = probes["round_seq"] < 4  # 4 set-ups disturbed, 36 quiet
    probes.loc[probes["disturbed"], "value"] = 9.0
    eff = sscale.effect_table(probes).set_index("metric").loc["service_effect_s"]
    assert (eff["n"], eff["setups"], eff["disturbed_left_out"]) == (36, 36, 4)
    assert eff["p99"] < 9.0 and np.isfinite(eff["p90_high"])
    assert "4 set-ups left out: every run carrying them was disturbed" in eff["note"]
    probes["disturbed"] = probes["round_seq"] < 5  # 35 quiet set-ups: too few for P90's interval
    eff = sscale.effect_table(probes).set_index("metric").loc["service_effect_s"]
    assert (eff["setups"], eff["disturbed_left_out"]) == (35, 5) and np.isnan(eff["p90_high"])
    quiet = sscale.effect_table(_probes(36, 2)).set_index("metric").loc["service_effect_s"]
    assert quiet["disturbed_left_out"] == 0 and "left out" not in quiet["note"]
