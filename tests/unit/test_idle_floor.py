"""benchmarks/idle_floor.py: the floor with no cluster up against the floor with clusters up."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.stats_tables import rows, tidy

_SPEC = importlib.util.spec_from_file_location(
    "idle_floor", Path(__file__).resolve().parents[2] / "benchmarks" / "idle_floor.py"
)
idle_floor = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(idle_floor)


def _table(cv_none: float, cv_up: float, n: int = 10):
    rng = np.random.default_rng(7)
    none = rows(
        2e10 * (1 + cv_none * rng.standard_normal(n)), variant="floor", scenario="netns-veth", tool="iperf3"
    )
    up = rows(
        2e10 * (1 + cv_up * rng.standard_normal(n)),
        variant="macvlan.iptables",
        scenario="floor-netns-veth",
        tool="iperf3",
    )
    other = rows(1e10 * np.ones(n), variant="macvlan.iptables", scenario="pod-pod-cross-node", tool="iperf3")
    return idle_floor.table(tidy(none, up, other))


def test_clusters_that_triple_the_spread_matter():
    t = _table(0.03, 0.15)
    (r,) = t.itertuples()
    assert r.n_none == r.n_up == 10 and r.cv_ratio > 2
    assert r.ci_low > 1 and r.verdict == "matters"


def test_equal_spread_shows_no_sign_and_the_interval_is_not_zero_width():
    t = _table(0.05, 0.05)
    (r,) = t.itertuples()
    assert r.ci_low < 1 < r.ci_high and r.verdict == "no sign"


@pytest.mark.parametrize("ratio, lo, hi, want", [(1.1, 1.02, 1.3, "inconclusive"), (0.5, 0.3, 0.8, "lower")])
def test_verdicts(ratio, lo, hi, want):
    assert idle_floor.verdict(ratio, lo, hi) == want
