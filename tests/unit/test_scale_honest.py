"""Time-to-effect intervals that are honest (issue 44): the curve's end ratio has an interval only
from 2 rounds that ran both ends (never Welch on runs within one round), P90's interval counts a
point's changes as independent only as far as its set-ups allow (n / design effect, at least 36 for
95 %), P99 is a point with its n."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.stats import scale as sscale


def _ends(rounds: int, repeats: int, seed: int = 2) -> pd.DataFrame:
    """A curve's two ends, ``repeats`` runs of each in each of ``rounds`` rounds of one launch."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(rounds):
        level = np.exp(rng.normal(0, 0.05))  # the round's moment, shared by its runs
        for k in range(repeats):
            for x, f in ((0, 1.0), (1000, 0.8)):
                rows.append(
                    {"sweep_value": x, "value": 100 * f * level * np.exp(rng.normal(0, 0.01)),
                     "launch_id": "L", "round_seq": r, "repeat": r * repeats + k + 1}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_one_round_with_repeats_at_both_ends_has_no_interval():
    """The old fallback took Welch over the 4 runs of each end of one round: pseudo-replication."""
    one = sscale.end_ratio(_ends(1, 4))
    assert np.isnan(one["ratio_low"]) and np.isnan(one["ratio_high"]) and np.isnan(one["ratio_p"])
    assert "no interval: 1 round" in one["ratio_note"] and one["ratio_method"] == ""
    assert one["ratio"] == pytest.approx(0.8, rel=0.05) and one["ratio_n"] == 1


def test_two_rounds_give_the_paired_interval():
    two = sscale.end_ratio(_ends(2, 4))
    assert two["ratio_method"].startswith("paired by round") and two["ratio_n"] == 2
    assert two["ratio_low"] < 0.8 < two["ratio_high"] and two["ratio_note"] == ""


def _changes(setups: int, changes: int, spread: float, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    level = np.repeat(spread * rng.standard_normal(setups), changes)
    value = 0.2 * np.exp(level + 0.3 * rng.standard_normal(setups * changes))
    return pd.DataFrame(
        {"variant": "v", "metric": "policy_removed_s", "services": 0, "network_policies": 20,
         "setup": np.repeat([f"s{i}" for i in range(setups)], changes), "value": value}
    )  # fmt: skip


def test_p99_is_a_point_with_its_n_even_from_400_changes():
    row = sscale.effect_table(_changes(400, 1, 0.0)).iloc[0]
    assert row["n"] == 400 and np.isfinite(row["p99"])
    assert not any(c.startswith("p99_") for c in sscale.EFFECT_COLUMNS)
    assert "P99 is a point of 400 changes" in row["note"]


def test_p90_of_changes_that_cluster_by_set_up_has_no_interval_below_36_effective():
    """48 changes in 24 set-ups that differ: they count as 48 / design effect, fewer than 36."""
    row = sscale.effect_table(_changes(24, 2, 1.0)).iloc[0]
    assert row["n"] == 48 and row["design_effect"] > 1.34
    assert np.isnan(row["p90_low"]) and np.isnan(row["p90_high"]) and row["p90_n_effective"] < 36
    assert "P90 has no interval: 48 changes counting as" in row["note"]
    iid = sscale.effect_table(_changes(40, 1, 0.0)).iloc[0]  # 40 set-ups of 1: independent
    assert iid["p90_n_effective"] == 40 and np.isfinite(iid["p90_low"]) and np.isfinite(iid["p90_high"])


def test_p90_needs_24_set_ups_whatever_their_changes():
    """40 changes in 4 set-ups that do not differ: too few set-ups to tell (6 x 6 at ICC 0.3 covered
    88.8 %), no interval; 12 set-ups of 3 neither (what 12 x 3 published covered 92.5 % at ICC 0.3,
    88.0 % at 0.6: below the floor); 24 set-ups of 2: an interval."""
    few = sscale.effect_table(_changes(4, 10, 0.0)).iloc[0]
    assert few["n"] == 40 and np.isnan(few["p90_low"]) and few["p90_n_effective"] == 0
    assert "P90 has no interval: 40 changes in 4 set-ups" in few["note"]
    twelve = sscale.effect_table(_changes(12, 3, 0.0)).iloc[0]
    assert twelve["n"] == 36 and np.isnan(twelve["p90_low"]) and twelve["p90_n_effective"] == 0
    assert "in at least 24 set-ups" in twelve["note"]
    enough = sscale.effect_table(_changes(24, 2, 0.0)).iloc[0]
    assert enough["n"] == 48 and np.isfinite(enough["p90_low"]) and np.isfinite(enough["p90_high"])


def test_an_effective_size_widens_the_order_statistic_interval_outwards():
    x = np.random.default_rng(3).lognormal(0, 0.3, 120)
    est, lo, hi, cover = sscale.quantile_interval(x, 0.9)
    e2, lo2, hi2, cover2 = sscale.quantile_interval(x, 0.9, n_effective=60)
    assert e2 == est and lo2 <= lo and hi2 >= hi and (lo2, hi2) != (lo, hi) and cover2 >= 0.95
    assert sscale.quantile_interval(x, 0.9, n_effective=120) == (est, lo, hi, cover)
    assert np.isnan(sscale.quantile_interval(x, 0.9, n_effective=35)[1])
