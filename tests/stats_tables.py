"""Builders of small tidy tables, for tests of the stats stage and of code that calls it.

(A test double: it lives in tests/, not in the package.)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.parse.tidy import frame

BASE = dict(
    experiment="exp",
    variant="calico",
    scenario="pod-pod",
    tool="iperf3",
    test="tcp",
    protocol="tcp",
    direction="forward",
    streams=1,
    metric="throughput",
    unit="bit/s",
    source="measured",
)


def rows(values, repeats=None, **over) -> list[dict]:
    """One tidy row per value; repeats default to 1..n."""
    values = list(values)
    repeats = list(range(1, len(values) + 1)) if repeats is None else list(repeats)
    out = []
    for v, r in zip(values, repeats):
        d = dict(BASE)
        d.update(over)
        d["repeat"] = r
        d["value"] = v
        d["run_id"] = f"{d['variant']}/{d['scenario']}/{d['metric']}/{r}/{d['source']}"
        d["raw_path"] = f"raw/{d['run_id']}.json"
        out.append(d)
    return out


def tidy(*row_lists) -> pd.DataFrame:
    """A tidy frame of the rows; a ``launch_id`` given to :func:`rows` is kept as a column."""
    allrows = [r for rl in row_lists for r in rl]
    out = frame(allrows)
    if any("launch_id" in r for r in allrows):
        out["launch_id"] = pd.array([r.get("launch_id") for r in allrows], dtype="string")
    return out


def one(df: pd.DataFrame, **match) -> pd.Series:
    """The single row of df matching the given column values."""
    m = np.ones(len(df), dtype=bool)
    for k, v in match.items():
        m &= (df[k].astype("string") == str(v)).fillna(False).to_numpy(dtype=bool)
    assert m.sum() == 1, f"{m.sum()} rows match {match}"
    return df.loc[m].iloc[0]


def side_by_side_rows(n: int, ratio: float, noise: float, seed: int = 3) -> pd.DataFrame:
    """``n`` rounds of variants a and b in one launch (b = ``ratio`` x a), a shared drift of 10 % per
    round and ``noise`` (log sd) per run."""
    rng = np.random.default_rng(seed)
    drift = rng.lognormal(0, 0.1, n)
    a = rows(9e9 * drift * rng.lognormal(0, noise, n), variant="a", launch_id="L")
    b = rows(9e9 * ratio * drift * rng.lognormal(0, noise, n), variant="b", launch_id="L")
    return tidy(a, b)
