"""Incremental statistics: a group's summary row is recomputed only when its rows changed.

Every statistic of summary.csv depends on one group only (its values, repeat
order, run ids, key; the bootstrap stream is the group's own). So a summary
row can be reused whenever the group's content hash is unchanged. The hash
covers the group's key, values, repeats and run ids, the settings in force
and the source of ``podnet.stats`` (a changed method recomputes everything).

The cache is a parquet file (``<out>/.cache/summary.parquet`` in the
pipeline): not an output, deleting it only costs time, and results with and
without it are identical (tested).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._data import Groups, key_text

HASH_COLUMN = "_content_sha256"


@lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 of the source of podnet.stats (and the schema-derived defaults it reads)."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def salt(settings: Mapping[str, Any]) -> str:
    """What besides a group's rows decides its statistics: settings and code."""
    return hashlib.sha256(
        (json.dumps(settings, sort_keys=True, default=str) + code_version()).encode()
    ).hexdigest()


def group_hashes(g: Groups, salt_: str) -> np.ndarray:
    """Content hash of each group: key, values, repeats and run ids, in order, plus ``salt_``."""
    keys = key_text(g.keys)
    run_ids = g.rows["run_id"].astype("string").fillna("").to_numpy(dtype=object) if len(g.rows) else []
    out = np.empty(len(g), dtype=object)
    for i in range(len(g)):
        a, b = g.starts[i], g.starts[i] + g.n[i]
        h = hashlib.sha256(salt_.encode())
        h.update(keys[i].encode())
        h.update(np.int64(g.n_nan[i]).tobytes())
        h.update(g.values[a:b].tobytes())
        h.update(g.repeats[a:b].tobytes())
        h.update("\x1f".join(run_ids[a:b]).encode())
        out[i] = h.hexdigest()
    return out


def subset(g: Groups, idx: np.ndarray) -> Groups:
    """The groups ``idx`` of ``g`` as a Groups of their own (same order of values)."""
    idx = np.asarray(idx, dtype=int)
    n = g.n[idx]
    starts = np.r_[0, np.cumsum(n)[:-1]].astype(int) if len(idx) else np.zeros(0, dtype=int)
    pos = np.repeat(g.starts[idx] - starts, n) + np.arange(int(n.sum()))
    return Groups(
        keys=g.keys.iloc[idx].reset_index(drop=True),
        n=n,
        n_nan=g.n_nan[idx],
        starts=starts,
        values=g.values[pos],
        repeats=g.repeats[pos],
        rows=g.rows.iloc[pos].reset_index(drop=True),
    )


def cached_rows(
    g: Groups,
    settings: Mapping[str, Any],
    compute: Callable[[Groups], pd.DataFrame],
    path: Path | None,
) -> tuple[pd.DataFrame, int]:
    """``compute(g)`` (one row per group), reusing rows of unchanged groups from ``path``.

    Returns (rows in group order, number of groups computed). The cache file
    is rewritten with exactly the current groups.
    """
    hashes = group_hashes(g, salt(settings))
    old = None
    if path is not None and path.exists():
        try:
            old = pd.read_parquet(path)
        except (OSError, ValueError):  # a damaged cache is only a lost cache
            old = None
    hit = np.zeros(len(g), dtype=bool)
    if old is not None and HASH_COLUMN in old.columns:
        old = old.drop_duplicates(HASH_COLUMN).set_index(HASH_COLUMN)
        hit = pd.Index(old.index).get_indexer(hashes) >= 0
    miss = np.nonzero(~hit)[0]
    fresh = compute(subset(g, miss)) if len(miss) else None
    if fresh is not None and (old is None or not hit.any()):
        out = fresh.reset_index(drop=True)
    else:
        reused = old.loc[hashes[hit]].reset_index(drop=True)
        if fresh is not None:
            reused = reused.astype({c: fresh[c].dtype for c in fresh.columns if c in reused.columns})
        parts = [reused] if fresh is None else [reused, fresh]
        order = np.r_[np.nonzero(hit)[0], miss]
        out = pd.concat(parts, ignore_index=True)
        out = out.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        out.assign(**{HASH_COLUMN: hashes}).to_parquet(tmp, index=False)
        tmp.replace(path)
    return out, len(miss)
