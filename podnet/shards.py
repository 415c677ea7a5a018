"""Which parse shard a raw file belongs to (a stable hash of its path).

Kept apart from :mod:`podnet.parse` so that the Snakefile, which lists every raw file by shard
on each run (a no-op too), does not import pandas and the adapters to do it; ``podnet.parse``
re-exports these names.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from podnet.raw import BadEntry, scan_raw_dir


def shard_of(path: Path | str, raw_dir: Path | str, shards: int) -> int:
    """The shard a raw file is parsed in: a stable hash of its path below raw_dir."""
    rel = Path(path).relative_to(raw_dir).as_posix()
    return zlib.crc32(os.fsencode(rel)) % shards


def shard_files(raw_dir: Path | str, shards: int, ignore: list[str] | None = None) -> dict[int, list[Path]]:
    """Readable raw files of an experiment grouped by shard (every shard present, maybe empty)."""
    return {
        k: [f for f in v if isinstance(f, Path)] for k, v in shard_entries(raw_dir, shards, ignore).items()
    }


def shard_entries(
    raw_dir: Path | str, shards: int, ignore: list[str] | None = None
) -> dict[int, list[Path | BadEntry]]:
    """Raw files and unreadable entries (:class:`BadEntry`) of an experiment, by shard."""
    out: dict[int, list[Path | BadEntry]] = {k: [] for k in range(shards)}
    good, bad = scan_raw_dir(raw_dir, ignore)
    for f in good:
        out[shard_of(f, raw_dir, shards)].append(f)
    for b in bad:
        out[shard_of(b.path, raw_dir, shards) if b.path != Path(raw_dir) else 0].append(b)
    return out


__all__ = ["shard_entries", "shard_files", "shard_of"]
