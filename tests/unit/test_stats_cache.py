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
