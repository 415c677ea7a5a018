"""Incremental parsing: a raw file is parsed again only when its content (or the code) changed.

A parse shard holds thousands of raw files when an experiment is large; adding
one file re-runs its shard, and without a cache that re-parses every file of
the shard. :func:`parse_files_cached` returns exactly what
:func:`podnet.parse.parse_files` returns (same rows, order and dtypes; tested),
reusing the rows of every file whose key is unchanged. The key of a file is the
sha256 of: the source of the whole ``podnet`` package (parsers, sidecar schema,
units), the experiment name, the raw dir, the file's path, its bytes, its
sidecar's bytes (or its absence) and a latency-under-load run's load output's bytes. A file whose entry is not a plain readable
file, or that cannot be read while hashing, is always parsed again.

The cache is three parquet files (``<prefix>.tidy.parquet`` ...; the pipeline
puts them in ``processed/<exp>/.cache/parse/``): not outputs, rewritten each
time with exactly the current files' rows; deleting them only costs time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.parse import Parsed, parse_files
from podnet.parse.raw import BadEntry, display_path, entry_problem, sha256, sidecar_path
from podnet.parse.tidy import coerce
from podnet.parse.underload import load_name

KEY = "_parse_key"
PARTS = ("tidy", "intervals", "failed")


@lru_cache(maxsize=1)
def code_version() -> str:
    """The parse stage's code version: every file of ``podnet.parse`` and of the packages it depends
    on, the tools' adapters (their parsers) and config among them
    (:func:`podnet.config.stages.code_version`); any change re-parses. It hashed ``podnet/parse``
    alone before 2026-11-29, so a changed parser in ``podnet/tools`` kept its cached rows (a qperf
    latency check stayed unapplied to seed 004's cached runs)."""
    from podnet.config.stages import code_version as stage_version

    return stage_version("parse")


def file_key(path: Path, raw_dir: Path | str, experiment: str) -> str | None:
    """The content key of one raw file, or None when it must be parsed again regardless."""
    if entry_problem(path) is not None:
        return None
    h = hashlib.sha256(code_version().encode())
    for part in (experiment, display_path(raw_dir), display_path(path)):
        h.update(part.encode() + b"\0")
    side = sidecar_path(path)
    try:
        h.update(sha256(path).encode())
        # a sidecar that exists but cannot be read (a directory, a broken link) is never cached
        h.update(sha256(side).encode() if side.exists() or side.is_symlink() else b"no sidecar")
        load = path.with_name(load_name(path))  # a latency-under-load run's load output is its too
        if load.exists() or load.is_symlink():
            h.update(b"load" + sha256(load).encode())
    except OSError:
        return None
    return h.hexdigest()


def _read(prefix: Path) -> dict[str, pd.DataFrame] | None:
    try:
        return {p: pd.read_parquet(prefix.with_name(f"{prefix.name}.{p}.parquet")) for p in PARTS}
    except (OSError, ValueError):  # no cache yet, or a damaged one: only a lost cache
        return None


def _write(prefix: Path, tables: dict[str, pd.DataFrame]) -> None:
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for p in PARTS:
        path = prefix.with_name(f"{prefix.name}.{p}.parquet")
        tmp = path.with_name(path.name + ".tmp")
        tables[p].to_parquet(tmp, index=False)
        tmp.replace(path)


def parse_files_cached(
    files: Iterable[Path | str | BadEntry], raw_dir: Path | str, experiment: str, cache: Path | str | None
) -> Parsed:
    """:func:`~podnet.parse.parse_files`, reusing unchanged files' rows from the cache at ``cache``."""
    items = [f if isinstance(f, BadEntry) else Path(f) for f in files]
    if cache is None:
        return parse_files(items, raw_dir, experiment)
    prefix = Path(cache)
    keys = [None if isinstance(f, BadEntry) else file_key(f, raw_dir, experiment) for f in items]
    old = _read(prefix)
    known = set(old["tidy"][KEY]) | set(old["failed"][KEY]) if old else set()
    todo = [i for i, k in enumerate(keys) if k is None or k not in known]
    fresh = parse_files([items[i] for i in todo], raw_dir, experiment)
    # the file (position in ``items``) each row belongs to: fresh rows name their raw file
    pos = {display_path(items[i].path if isinstance(items[i], BadEntry) else items[i]): i for i in todo}
    # a latency-under-load run's load rows name the load's output, beside its probe's raw file
    pos.update({display_path(f.with_name(load_name(f))): i for i in todo if isinstance(f := items[i], Path)})
    reuse = {k: i for i, k in enumerate(keys) if k is not None and k in known}
    key_of = np.array([k or "" for k in keys], dtype=object)
    out: dict[str, pd.DataFrame] = {}
    for p in PARTS:
        new = getattr(fresh, p)
        new = new.assign(_pos=new["raw_path"].map(pos).astype("int64"))
        if old is not None:
            mine = old[p][old[p][KEY].isin(reuse.keys())]
            mine = mine.assign(_pos=mine[KEY].map(reuse).astype("int64")).drop(columns=KEY)
            if len(mine):
                new = pd.concat([mine, new], ignore_index=True) if len(new) else mine
        out[p] = new.sort_values("_pos", kind="stable").reset_index(drop=True)
    # the cache holds exactly the current files that have a key
    _write(
        prefix,
        {
            p: t.assign(**{KEY: key_of[t["_pos"].to_numpy()]})
            .pipe(lambda t: t[t[KEY] != ""])
            .drop(columns="_pos")
            for p, t in out.items()
        },
    )
    tidy = out["tidy"].drop(columns="_pos")
    return Parsed(
        tidy=coerce(tidy) if len(tidy) else fresh.tidy,
        intervals=out["intervals"].drop(columns="_pos"),
        failed=out["failed"].drop(columns="_pos"),
    )
