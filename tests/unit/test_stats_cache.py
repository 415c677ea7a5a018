"""Incremental statistics: unchanged groups are reused, results identical to a fresh run (issue 12)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.stats import cache as cache_mod
from podnet.stats import summarize
from tests.stats_tables import rows, tidy

BOOT = {"bootstrap": {"min_n": 3, "resamples": 500, "batch": 500}}


def table(extra=()):
    rng = np.random.default_rng(3)
    lists = [rows(9e9 * (1 + 0.05 * rng.standard_normal(6)), scenario=f"s{i}") for i in range(6)]
    lists.append(rows([0, 0, 1, 0, 0], metric="loss", unit="fraction"))
    lists.append(rows([1.0], scenario="ref", source="reference"))
    return tidy(*lists, *extra)


def test_cached_summary_equals_fresh_and_recomputes_only_changed_groups(tmp_path, monkeypatch):
    path = tmp_path / "c.parquet"
    first = summarize(table(), BOOT, cache=path)
    pd.testing.assert_frame_equal(first, summarize(table(), BOOT))
    computed = []
    real = cache_mod.subset

    def spy(g, idx):
        computed.append(len(idx))
        return real(g, idx)

    monkeypatch.setattr(cache_mod, "subset", spy)
    again = summarize(table(), BOOT, cache=path)  # no-op: nothing recomputed
    pd.testing.assert_frame_equal(again, first)
    assert computed == []
    # one more run of one group: that group alone is recomputed
    grown = table([rows([9.3e9], scenario="s2", repeats=[7])])
    inc = summarize(grown, BOOT, cache=path)
    assert computed == [1]
    pd.testing.assert_frame_equal(inc, summarize(grown, BOOT))
    # other settings: everything again
    summarize(grown, {**BOOT, "confidence": 0.9}, cache=path)
    assert computed[-1] == 7


def _pairs_table(extra=()):
    """Variants a (baseline), b and c in one launch, two scenarios each: four ratio pairs."""
    rng = np.random.default_rng(5)
    lists = [
        rows(9e9 * f * (1 + 0.05 * rng.standard_normal(8)), variant=v, scenario=sc, launch_id="L")
        for v, f in (("a", 1.0), ("b", 0.9), ("c", 0.8))
        for sc in ("s1", "s2")
    ]
    return tidy(*lists, *extra)


def test_cached_ratios_equal_fresh_and_recompute_only_pairs_of_changed_groups(tmp_path, monkeypatch):
    """ratios.csv's bootstrap and paired columns per pair (issue 31): reused while the pair's two groups
    are unchanged, and the table is the one computed without the cache."""
    from podnet.stats import ratios

    settings = {**BOOT, "comparisons": [{"by": "variant", "baseline": "a"}]}
    path = tmp_path / "ratios.pickle"
    computed = []
    real = ratios._bootstrap

    def spy(g, ti, *rest):
        computed.append(len(ti))
        return real(g, ti, *rest)

    monkeypatch.setattr(ratios, "_bootstrap", spy)
    first = ratios.compare(_pairs_table(), settings, cache=path)
    assert computed == [4]
    pd.testing.assert_frame_equal(first, ratios.compare(_pairs_table(), settings))
    computed.clear()
    pd.testing.assert_frame_equal(ratios.compare(_pairs_table(), settings, cache=path), first)
    assert computed == []  # nothing changed: nothing bootstrapped
    # one more run of c in s2: its pair with a alone is computed again
    grown = _pairs_table([rows([7.1e9], variant="c", scenario="s2", repeats=[9], launch_id="L")])
    inc = ratios.compare(grown, settings, cache=path)
    assert computed == [1]
    computed.clear()
    pd.testing.assert_frame_equal(inc, ratios.compare(grown, settings))
    # the launch id of one run changed (values equal): the pairs of its group again
    moved = grown.copy()
    moved.loc[
        (moved["variant"] == "a") & (moved["scenario"] == "s1") & (moved["repeat"] == 1), "launch_id"
    ] = "M"
    computed.clear()
    again = ratios.compare(moved, settings, cache=path)
    assert computed == [2]
    computed.clear()
    pd.testing.assert_frame_equal(again, ratios.compare(moved, settings))
