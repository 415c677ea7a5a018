"""benchmarks/sim_netready.py at a small size: the published time-to-network intervals cover, the
P99 of a campaign's pods is never published, an A/A row is rarely "different", and the
round-paired ratio has the power the campaign is designed for (the full run: METHODS.md, "Time to
network")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "sim_netready", Path(__file__).resolve().parents[2] / "benchmarks" / "sim_netready.py"
)
sim = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sim)

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def cells():
    return sim.main(runs=(4, 10), experiments=150, resamples=300)


def test_every_published_interval_covers_and_none_is_of_width_zero(cells):
    assert len(cells) == 2 * len(sim.SCENARIOS)
    for c in cells:
        assert c.published == {"p50": 1.0, "p90": 0.0, "p99": 0.0}, c
        assert c.published_ratio == {"p50": 1.0, "p90": 1.0, "p99": 0.0}, c
        assert c.zero_width == 0
        assert 0.88 <= c.coverage["p50"] <= 1.0, (c.scenario, c.runs, c.coverage)
        for name in ("p50", "p90"):
            assert 0.88 <= c.ratio_coverage[name] <= 1.0, (c.scenario, c.runs, name, c.ratio_coverage)
            assert 0.88 <= c.ratio_coverage_aa[name] <= 1.0, (c.scenario, c.runs, name, c.ratio_coverage_aa)


def test_the_p99_it_leaves_out_would_not_cover(cells):
    four = [c for c in cells if c.runs == 4]
    assert all(c.unpublished_coverage["p99"] < 0.92 for c in four), [c.unpublished_coverage for c in four]


def test_an_aa_row_is_rarely_different_and_pairing_buys_power(cells):
    for c in cells:
        assert c.aa_different <= 0.03 and c.aa_p05 <= 0.1, c
        assert c.power >= c.power_unpaired - 0.02, c
    api, datapath = sim.SCENARIOS[0].name, sim.SCENARIOS[1].name
    power = {(c.scenario, c.runs): c.power for c in cells}
    assert power[(api, 4)] >= 0.5 and power[(api, 10)] >= 0.9 and power[(datapath, 10)] >= 0.8, power
    assert power[(api, 4)] > power[(datapath, 4)] + 0.3  # the datapath's spread needs more rounds
