"""Incremental statistics: a group's summary row is recomputed only when its rows changed.

Every statistic of summary.csv depends on one group only (its values, repeat
order, run ids, key; the bootstrap stream is the group's own). So a summary
row can be reused whenever the group's content hash is unchanged. The hash
covers the group's key, values, repeats and run ids, the settings in force
and the statistics stage's code version (``podnet.stats`` and the packages it
reads: a changed method or printed resolution recomputes everything).

The cache is a parquet file (``<out>/.cache/summary.parquet`` in the
pipeline): not an output, deleting it only costs time, and results with and
without it are identical (tested). The ratios' costly per-pair columns (bootstrap,
paired interval) are kept the same way, keyed by both groups' hashes
(:func:`cached_values`, ``<out>/.cache/ratios.pickle``).
"""

from __future__ import annotations

import hashlib
import json
import pickle
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
    """The statistics stage's code version (:func:`podnet.config.stages.code_version`): every file of
    podnet.stats and of the packages it reads (the tools' printed resolutions, the schema's defaults)."""
    from podnet.config.stages import code_version as stage_version

    return stage_version("stats")


def salt(settings: Mapping[str, Any]) -> str:
    """What besides a group's rows decides its statistics: settings and code."""
    return hashlib.sha256(
        (json.dumps(settings, sort_keys=True, default=str) + code_version()).encode()
    ).hexdigest()


def group_hashes(g: Groups, salt_: str) -> np.ndarray:
    """Content hash of each group: key, values, repeats, run ids and placements, in order, plus ``salt_``."""
    keys = key_text(g.keys)
    run_ids = g.rows["run_id"].astype("string").fillna("").to_numpy(dtype=object) if len(g.rows) else []
    has_place = "placement" in g.rows.columns and len(g.rows)
    place = g.rows["placement"].astype("string").fillna("").to_numpy(dtype=object) if has_place else None
    out = np.empty(len(g), dtype=object)
    for i in range(len(g)):
        a, b = g.starts[i], g.starts[i] + g.n[i]
        h = hashlib.sha256(salt_.encode())
        h.update(keys[i].encode())
        h.update(np.int64(g.n_nan[i]).tobytes())
        h.update(g.values[a:b].tobytes())
        h.update(g.repeats[a:b].tobytes())
        h.update("\x1f".join(run_ids[a:b]).encode())
        if place is not None:
            h.update(("\x1e" + "\x1f".join(place[a:b])).encode())
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


def row_column_digest(g: Groups, columns: list[str]) -> np.ndarray:
    """Per group, a digest of ``columns`` of its rows (those ``g.rows`` has), in value order: what a
    statistic reads besides values, repeats and run ids (the paired interval: launch ids, rounds)."""
    have = [c for c in columns if c in g.rows.columns]
    out = np.full(len(g), "", dtype=object)
    if not have or len(g.rows) == 0:
        return out
    text = [g.rows[c].astype("string").fillna("<NA>").to_numpy(dtype=object) for c in have]
    for i in range(len(g)):
        a, b = g.starts[i], g.starts[i] + g.n[i]
        h = hashlib.sha256("\x1e".join(have).encode())
        for t in text:
            h.update("\x1f".join(t[a:b]).encode())
        out[i] = h.hexdigest()
    return out


def cached_values(
    keys: np.ndarray,
    compute: Callable[[np.ndarray], list[tuple[Any, ...]]],
    path: Path | None,
) -> tuple[list[tuple[Any, ...]], int]:
    """``compute(idx)`` (one tuple of plain values per item ``idx``), reusing the tuples of items whose
    key (a content hash) is in ``path`` (a pickle). Returns (tuples in item order, items computed);
    the file is rewritten with exactly the current items. For statistics each item of which depends
    on its own inputs alone (its own random stream): reused or computed, the values are the same."""
    old: dict[str, tuple[Any, ...]] = {}
    if path is not None and path.exists():
        try:
            with path.open("rb") as f:
                loaded = pickle.load(f)
            old = loaded if isinstance(loaded, dict) else {}
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
            old = {}  # a damaged cache is only a lost cache
    miss = np.array([i for i, k in enumerate(keys) if k not in old], dtype=int)
    fresh = compute(miss) if len(miss) else []
    new = dict(zip((keys[i] for i in miss), fresh))
    out = [new[k] if k in new else old[k] for k in keys]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as f:
            pickle.dump(dict(zip(keys, out)), f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    return out, len(miss)
