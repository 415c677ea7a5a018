"""The time-to-effect campaign (config/campaigns/time-to-effect.yaml, issue 44) checked without a
cluster: its base rounds, driven through the launcher's own scale state (fake API and prober), set
each point up once per round with one transition of filler objects a round; the set-ups' probe
times, through the parse stage's rows and ``scale.effect_table``, give every point's P90 an interval
(36 kept changes in 36 set-ups, each set-up's first change set apart) even where set-ups differ; and
the launch fits 40 minutes at the rates measured on this machine."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from podnet.launch.campaign import run as campaign
from podnet.launch.rounds.scale import variant_rounds
from podnet.launch.rounds.state import pending_runs, scan
from podnet.launch.spec import plan as launch_plan
from podnet.launch.spec.config import from_mapping
from podnet.parse.scale import effect_rows
from podnet.stats import scale as sscale
from tests.unit.test_launch_scale import FakeApi, FakeProber, _state

REPO = Path(__file__).resolve().parents[2]
CAMPAIGN = REPO / "config" / "campaigns" / "time-to-effect.yaml"
#: the measured times the campaign's header does its arithmetic with (podnet/launch/README.md,
#: "Times measured here"), each at the slow end: a held point's set-up, 2 s after the probe Services
#: then about 2.4 s per change, rule counts up to 1.2 s (3 changes: 9.3-10.4 s)
SETUP_S, PER_CHANGE_S = 2.0 + 1.2, 2.4
#: filler objects created or deleted per second, the slowest measured (nftables, a unit-test run
#: sharing the cores)
OBJECTS_PER_S = 62.0
#: a netperf run beyond its test's length (seed 003's 3-s TCP_RR runs: ~4.7 s)
RUN_OVERHEAD_S = 1.6
#: pods, one warm-up run a variant, the last point's objects and the namespaces deleted (minutes)
FRAME_MIN = 1.5


class Driven(NamedTuple):
    """One variant's base rounds as the launcher's scale state ran them (:func:`_drive`)."""

    cfg: Any
    records: list[dict[str, Any]]  # each set-up's sidecar record
    churn: int  # filler objects created or deleted
    runs: int
    run_s: float  # the runs' test lengths


def _drive(v: Any) -> Driven:
    """Variant ``v``'s base rounds through :class:`~podnet.launch.rounds.scale.ScaleState` with a fake
    API and prober."""
    c = campaign.load(CAMPAIGN)
    m = campaign.variant_config(c, v)
    cfg, lengths = from_mapping(m), launch_plan.test_lengths(m)
    spec = {k.key: k.test.scale for k in cfg.cases}
    with tempfile.TemporaryDirectory() as empty:  # the rounds of a fresh launch, whatever raw/ holds
        pending = pending_runs(cfg, v.name, scan(Path(empty), v.name, cfg.cases))
    rounds = variant_rounds(cfg, list(spec), pending)
    api, prober = FakeApi(), FakeProber()
    st = _state(cfg, api, prober)
    records, runs, run_s = [], 0, 0.0
    for rnd in rounds:
        for slot in rnd:
            before = len(prober.calls)
            assert st.ensure(spec[slot.case], round_no=slot.round) is None
            runs += 1
            run_s += lengths[(slot.case[1], slot.case[2])]
            if len(prober.calls) > before:  # probed: a set-up of its own
                records.append({**st.meta(), "verified": f"setup-{len(records)}"})
    churn = sum(
        1
        for op, kind, name in api.log
        if kind in ("Service", "EndpointSlice") and name.startswith("podnet-scale-svc-")
    )
    return Driven(cfg, records, churn, runs, run_s)


@pytest.fixture(scope="module")
def driven() -> dict[str, Driven]:
    c = campaign.load(CAMPAIGN)
    return {v.name: _drive(v) for v in c.variants}


def test_each_point_is_set_up_once_a_round_with_one_transition_a_round(driven):
    for name, (cfg, records, churn, runs, run_s) in driven.items():
        points = [r["wanted"]["services"] for r in records]
        assert points.count(0) == points.count(200) == cfg.repeats == 40, name
        assert all(r["probe"]["changes"] == 2 for r in records)
        # ascending, then descending: the point ending a round begins the next, held and probed again
        assert churn == cfg.repeats * 400, name  # one 0 <-> 200 transition a round, 2 objects a Service
        assert runs == 2 * cfg.repeats and run_s == runs * 1.0  # two 1-s runs a round


def _table(records: list[dict[str, Any]], icc: float, seed: int = 5) -> Any:
    """scale_effect.csv's rows of one variant's set-ups, the fake probe times replaced by log-normal
    ones whose set-ups share a shift (the set-ups' share of the variance ``icc``)."""
    metas = [{"variant": "v", "launch": {"id": "L"}, "scale": r} for r in records]
    rows = effect_rows(metas)
    rng = np.random.default_rng(seed)
    shift = {s: rng.normal(0, np.sqrt(icc)) for s in rows["setup"].unique()}
    noise = rng.normal(0, np.sqrt(1 - icc), len(rows))
    rows["value"] = 0.2 * np.exp(rows["setup"].map(shift).to_numpy(float) + noise)
    return sscale.effect_table(rows)


@pytest.mark.parametrize("icc", [0.0, 0.6])
def test_every_point_publishes_a_p90_interval_from_its_second_changes(driven, icc):
    """40 set-ups of 2 changes: the first of each set apart (it waits for a transition's programming
    in every other set-up), the second counted, one a set-up: the interval whatever the ICC; the
    removals count both changes (80 in 40 set-ups: n / design effect >= 36 at any ICC)."""
    for name, d in driven.items():
        records = d.records
        t = _table(records, icc)
        assert len(t) == 4, name  # 2 probes x 2 points
        for _, row in t.iterrows():
            assert np.isfinite(row["p90_low"]) and np.isfinite(row["p90_high"]), (name, dict(row))
            assert row["p90_coverage"] >= 0.95 and row["setups"] == 40
            assert "P99 is a point of" in row["note"]
        eff = t[t["metric"] == "service_effect_s"]
        assert (eff["n"] == 40).all() and (eff["first_left_out"] == 40).all()
        assert (t[t["metric"] == "service_removed_s"]["n"] == 80).all()


def test_one_set_up_fewer_publishes_no_p90_interval_for_the_effect(driven):
    """36 quiet set-ups are the fewest with an interval: 35 leave 35 changes and none (the 4 rounds
    beyond 36 leave room for set-ups left out as disturbed; a failed set-up is run again in the
    launch's retry pass, a set-up of its own)."""
    records = next(iter(driven.values())).records
    seen: dict[int, int] = {}
    short = []
    for r in records:  # the first 35 set-ups of each point
        point = r["wanted"]["services"]
        seen[point] = seen.get(point, 0) + 1
        if seen[point] <= 35:
            short.append(r)
    t = _table(short, 0.0)
    eff = t[(t["metric"] == "service_effect_s") & (t["n"] == 35)]
    assert len(eff) == 2 and eff["p90_low"].isna().all()


def test_the_launch_fits_40_minutes_at_the_measured_rates(driven):
    seconds = 0.0
    for d in driven.values():
        seconds += sum(SETUP_S + PER_CHANGE_S * r["probe"]["changes"] for r in d.records)
        seconds += d.churn / OBJECTS_PER_S + d.run_s + d.runs * RUN_OVERHEAD_S
    minutes = seconds / 60 + FRAME_MIN
    assert 25 < minutes <= 40, f"about {minutes:.1f} min"


def _sim() -> Any:
    spec = importlib.util.spec_from_file_location(
        "sim_scale_probes", REPO / "benchmarks" / "sim_scale_probes.py"
    )
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    return sim


def test_the_simulation_counts_what_effect_table_keeps_of_an_effect_probe():
    """benchmarks/sim_scale_probes.py --effect: 36 set-ups of 2 changes keep 36 (one a set-up) and
    publish P90 at an ICC of 0.6; 24 of 3 keep 48 in set-ups of 2, which the design effect withholds."""
    sim = _sim()
    assert sim._designs("36x2, 24X3") == ((36, 2), (24, 3))
    rng = np.random.default_rng(3)
    this = sim.coverage(36, 2, 0.6, 60, rng, "effect")
    assert this.p90_published == 1.0 and this.flagged == 0.0 and this.p90 >= 0.9
    fewer = sim.coverage(24, 3, 0.6, 60, rng, "effect")
    assert fewer.p90_published < 0.2 and fewer.flagged > 0.8
