"""Two words for two questions (issue 44; METHODS.md, "Two words: different and precise").

*different*: the Holm-adjusted test of a declared family rejects; *precise*: the interval meets its
width target on at least min_to_stop pairs. They are independent, a zero-spread resample gives
neither (no p: NaN with a reason, never 0), and every table, the gate and the stop read the same
functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.stats import compare, gate
from podnet.stats import ranking as R
from podnet.stats.planning import met, precise
from podnet.stats.variants import variant_table
from tests.stats_tables import one, rows, side_by_side_rows, tidy

VCMP = [{"by": "variant", "baseline": "a"}]
VPRIM = [{"by": "variant", "baseline": "a"}]
S = {"comparisons": VCMP, "primary": VPRIM}


def test_precise_is_the_width_on_min_to_stop_pairs_and_never_zero_width():
    s = {"planning": {"min_to_stop": 10}}
    got = precise([0.04, 0.04, 0.06, 0.0, np.nan], 0.05, [10, 9, 30, 30, 30], s)
    assert got.tolist() == [True, False, False, False, False]
    # equal ends: no spread measured, not precise whatever the half-width says
    got = precise([0.01, 0.01], 0.05, [12, 12], s, low=[0.9, 0.89], high=[0.9, 0.91])
    assert got.tolist() == [False, True]


def test_the_stop_is_precise_or_with_stop_when_different_its_p_below_the_stop_level():
    s = {"planning": {"min_to_stop": 10}}
    wide = dict(low=[1.1], high=[1.5], p=[0.001])
    assert (
        not met([0.2], 0.05, [10], s, **wide)[0]
        and not precise([0.2], 0.05, [10], s, low=[1.1], high=[1.5])[0]
    )
    sd = {"planning": {"min_to_stop": 10, "stop_when_different": True}}
    assert met([0.2], 0.05, [10], sd, **wide)[0]  # stops; the tables' precise does not change
    assert not met([0.2], 0.05, [10], sd, low=[1.1], high=[1.5], p=[0.02])[
        0
    ]  # an excluding interval is not it
    assert not precise([0.2], 0.05, [10], sd, low=[1.1], high=[1.5])[0]
    assert not met([0.2], 0.05, [10], sd, low=[1.2], high=[1.2], p=[0.001])[0]  # never on a zero width


def _words(t: pd.DataFrame) -> tuple[bool, bool]:
    r = one(variant_table(t, S), design="side-by-side")
    c = compare(t, S).iloc[0]
    # ratios.csv and variants.csv ask the same two questions of the same rounds
    assert (bool(r["different"]), bool(r["precise"])) == (bool(c["different"]), bool(c["precise"]))
    return bool(r["different"]), bool(r["precise"])


def test_different_and_precise_are_two_questions():
    assert _words(side_by_side_rows(12, 0.8, 0.005)) == (True, True)  # a clear gap, narrow
    assert _words(side_by_side_rows(12, 1.0, 0.005)) == (False, True)  # no gap, narrow: precise only
    assert _words(side_by_side_rows(6, 0.7, 0.01)) == (True, False)  # a gap on 6 pairs < min_to_stop
    assert _words(side_by_side_rows(4, 1.0, 0.2)) == (False, False)


def test_exploratory_rows_are_neither():
    t = side_by_side_rows(12, 0.8, 0.005)
    r = compare(t, {"comparisons": VCMP}).iloc[0]  # no stats.primary: exploratory
    assert r["role"] == "exploratory" and not r["different"] and not r["precise"]
    v = one(variant_table(t, {"comparisons": VCMP}), design="side-by-side")
    assert v["role"] == "exploratory" and not v["different"] and not v["precise"] and v["verdict"] == ""


def _flat() -> pd.DataFrame:
    """Jitter (no declared printed resolution) equal in every round: every pair's ratio is 2."""
    jit = dict(tool="iperf3", test="udp", protocol="udp", metric="jitter", unit="s")
    return tidy(
        rows([1e-5] * 12, variant="a", launch_id="L", **jit),
        rows([2e-5] * 12, variant="b", launch_id="L", **jit),
    )


def test_a_zero_spread_comparison_has_no_p_and_is_neither_different_nor_precise():
    prim = [{"by": "variant", "baseline": "a", "metrics": ["jitter"]}]
    cfg = {"comparisons": VCMP, "primary": prim}
    v = one(variant_table(_flat(), cfg), design="side-by-side")
    assert np.isnan(v["p_value"]) and "p-value undefined" in v["p_note"]  # NaN with a reason, never 0
    assert not v["different"] and not v["precise"] and v["verdict"] == "inconclusive"
    c = compare(_flat(), cfg).iloc[0]
    assert np.isnan(c["p_value"]) and c["p_note"] == v["p_note"] != ""  # the same comparison, one note
    assert not c["different"] and not c["precise"]
    # the gate: an interval of width zero neither passes nor fails
    th = [{"by": "variant", "baseline": "a", "treatment": "b", "metric": "jitter", "max": 3.0}]
    (g,) = gate.check(compare(_flat(), cfg), th).itertuples()
    assert g.verdict == "inconclusive" and not g.different and not g.precise


def test_a_zero_spread_pair_of_a_ranking_has_no_p():
    jit = dict(tool="iperf3", test="udp", protocol="udp", metric="jitter", unit="s")
    t = tidy(
        rows([1e-5] * 12, variant="a", launch_id="L", **jit),
        rows([2e-5] * 12, variant="b", launch_id="L", **jit),
    )
    out = R.ranking_table(t, {"ranking": {"measures": ["iperf3:udp:jitter"]}})
    p = out[out["row"] == "pair"].iloc[0]
    assert np.isnan(p["p_value"]) and "no spread" in p["reason"]
    assert p["relation"] != "ordered" and not p["different"] and not p["precise"]


def test_the_gate_carries_the_ratio_rows_words():
    t = side_by_side_rows(12, 0.8, 0.005)
    th = [{"by": "variant", "baseline": "a", "treatment": "b", "metric": "throughput", "min": 0.7}]
    (g,) = gate.check(compare(t, S), th).itertuples()
    assert g.verdict == "pass" and g.different and g.precise
    assert list(gate.check(compare(t, S), th).columns) == gate.CHECK_COLUMNS


def _adaptive(stop_when_different: bool) -> dict:
    return {
        **S,
        "paired": {"adaptive": True},
        "planning": {"min_to_stop": 10, "stop_when_different": stop_when_different},
    }


def test_a_row_the_stop_ends_on_its_p_states_its_interval_at_the_stops_level():
    from podnet.stats import robust
    from podnet.stats.variants import side_by_side

    t = side_by_side_rows(12, 0.6, 0.12)  # a clear gap, too noisy for ±5 %: met on its p alone
    on = one(variant_table(t, _adaptive(True), stop=True), design="side-by-side")
    off = one(variant_table(t, _adaptive(False), stop=True), design="side-by-side")
    assert bool(on["met"]) and not bool(on["precise"]) and not bool(off["met"])
    assert on["interval_level"] == robust.DIFFERENT_LEVEL and off["interval_level"] == 0.975
    a = t[t["variant"] == "a"].sort_values("repeat")["value"].to_numpy(float)
    b = t[t["variant"] == "b"].sort_values("repeat")["value"].to_numpy(float)
    wide = side_by_side(b, a, robust.DIFFERENT_LEVEL, adaptive=False)
    assert (on["ci_low"], on["ci_high"]) == (float(wide.low), float(wide.high))
    assert on["ci_low"] < off["ci_low"] and on["ci_high"] > off["ci_high"]  # wider, same ratio and p
    assert on["ratio"] == off["ratio"] and on["p_value"] == off["p_value"]
    assert on["rel_half_width"] == (on["ci_high"] - on["ci_low"]) / (2 * on["ratio"])
    # a row met by its width keeps the 1 - alpha/2 interval
    narrow = one(
        variant_table(side_by_side_rows(12, 0.8, 0.005), _adaptive(True), stop=True), design="side-by-side"
    )
    assert bool(narrow["precise"]) and narrow["interval_level"] == 0.975
    # ratios.csv states the same interval for the same comparison
    c = compare(t, _adaptive(True)).iloc[0]
    assert c["paired_interval_level"] == robust.DIFFERENT_LEVEL
    assert (c["paired_ci_low"], c["paired_ci_high"]) == pytest.approx(
        (on["ci_low"], on["ci_high"]), rel=1e-12
    )
    assert compare(t, _adaptive(False)).iloc[0]["paired_interval_level"] == 0.975


def test_ratios_row_between_variants_reads_whether_its_variants_row_stopped_on_p():
    # one decision (family.variant_stopped_on_p): a by-scenario entry with a tiny width target makes
    # variants.csv's row neither precise nor met (p 0.2-0.9), while ratios.csv's own interval meets the
    # by-variant entry's target; the row did not stop on p, and neither table may say it did
    from podnet.stats import robust

    rng = np.random.default_rng(5)
    drift = rng.lognormal(0, 0.1, 12)

    def side(variant: str, scenario: str, ratio: float = 1.0) -> list[dict]:
        values = 9e9 * ratio * drift * rng.lognormal(0, 0.005, 12)
        return rows(values, variant=variant, scenario=scenario, launch_id="L")

    t = tidy(
        side("a", "pod-pod"), side("b", "pod-pod"), side("a", "host-host", 1.1), side("b", "host-host", 1.1)
    )
    cfg = _adaptive(True) | {
        "comparisons": [*VCMP, {"by": "scenario", "baseline": "host-host"}],
        "primary": [*VPRIM, {"by": "scenario", "baseline": "host-host", "target_rel_half_width": 1e-4}],
    }
    v = variant_table(t, cfg, stop=True)
    r = compare(t, cfg)
    for path in ("pod-pod", "host-host"):
        vr = one(v, design="side-by-side", scenario=path)
        rr = one(r, by="variant", scenario=path)
        assert not vr["met"] and not vr["precise"] and vr["p_value"] > 0.05
        assert vr["interval_level"] == rr["paired_interval_level"] == 0.975
    # a row between paths (no variants.csv row) decides by its own interval: p ~1e-14, not precise
    assert set(r.loc[r["by"] == "scenario", "paired_interval_level"]) == {robust.DIFFERENT_LEVEL}


def test_only_rows_that_stop_on_p_get_the_interval_at_the_stops_level(monkeypatch):
    from podnet.stats import robust
    from podnet.stats import variants as V

    levels: list[float] = []
    real = V.side_by_side
    monkeypatch.setattr(
        V, "side_by_side", lambda a, b, level, **kw: levels.append(level) or real(a, b, level, **kw)
    )
    narrow = one(variant_table(side_by_side_rows(12, 0.8, 0.005), _adaptive(True)), design="side-by-side")
    assert bool(narrow["precise"]) and robust.DIFFERENT_LEVEL not in levels  # met by its width
    on_p = one(variant_table(side_by_side_rows(12, 0.6, 0.12), _adaptive(True)), design="side-by-side")
    assert on_p["interval_level"] == robust.DIFFERENT_LEVEL and levels.count(robust.DIFFERENT_LEVEL) == 1
