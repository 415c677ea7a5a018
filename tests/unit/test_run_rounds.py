"""The round a run ran in is said in one place (podnet.stats._data.run_rounds): variant pairs,
rankings, ratios to idle (and a curve's end ratio) and the time-to-network bootstrap over rounds
read it from there, so they cannot pair runs differently."""

from __future__ import annotations

import pandas as pd
import pytest

from podnet.stats import netready_compare, ranking, underload, variants
from podnet.stats._data import has_rounds, run_rounds


def _runs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "launch_id": ["L1", "L1", "L1", "", None],
            "round_seq": pd.array([0, 2, pd.NA, 1, 1], dtype="Int64"),
            "repeat": [1, 2, 3, 4, 5],
            "value": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )


def test_a_round_label_names_launch_and_round_and_never_equals_a_repeat_label():
    t = _runs()
    assert list(run_rounds(t).fillna("-")) == ["L1#round0", "L1#round2", "-", "-", "-"]
    assert list(run_rounds(t, "repeat").fillna("-")) == ["L1#repeat1", "L1#repeat2", "L1#repeat3", "-", "-"]
    # without a launch: numbered by themselves where the caller allows it (a load sweep's pairs)
    assert list(run_rounds(t, need_launch=False).fillna("-")) == [
        "L1#round0",
        "L1#round2",
        "-",
        "#round1",
        "#round1",
    ]
    assert not set(run_rounds(t).dropna()) & set(run_rounds(t, "repeat").dropna())
    floats = t.assign(round_seq=[0.0, 2.0, None, 1.0, 1.0])  # a CSV read back: the same labels
    assert list(run_rounds(floats).fillna("-")) == list(run_rounds(t).fillna("-"))
    assert run_rounds(t.drop(columns=["round_seq"])).isna().all()
    assert run_rounds(t.drop(columns=["launch_id"])).isna().all()
    assert not has_rounds(t) and has_rounds(t.iloc[:2]) and not has_rounds(t.drop(columns=["round_seq"]))
    with pytest.raises(ValueError, match="numbered by"):
        run_rounds(t, "run_id")


def test_every_pairing_reads_the_same_round():
    t = _runs().iloc[:2]
    want = ["L1#round0", "L1#round2"]
    assert list(underload.pair_key(t)) == want
    assert list(ranking._rounds(t, ranking.round_key(t, t)).index) == want
    assert list(variants._by_round(t).index) == want
    assert [netready_compare._round_of(t.iloc[[i]]) for i in range(2)] == want
    # a run without its round: the load sweep pairs it by repeat, the time-to-network bootstrap by none
    r = _runs().iloc[[2]]
    assert list(underload.pair_key(r)) == ["L1#repeat3"] and netready_compare._round_of(r) is None
    assert list(variants._by_round(_runs().iloc[:3]).index) == ["L1#repeat1", "L1#repeat2", "L1#repeat3"]
