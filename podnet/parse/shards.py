"""Which parse shard a raw file belongs to (a stable hash of its path).

Kept apart from :mod:`podnet.parse` so that the Snakefile, which lists every raw file by shard
on each run (a no-op too), does not import pandas and the adapters to do it; ``podnet.parse``
re-exports these names.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

from podnet.parse.raw import SIDECAR_SUFFIX, BadEntry, relative_text, scan_raw_dir


def shard_of(path: Path | str, raw_dir: Path | str, shards: int) -> int:
    """The shard a raw file is parsed in: a stable hash of its path below raw_dir."""
    return zlib.crc32(os.fsencode(relative_text(path, raw_dir))) % shards


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


def _stat_key(path: Path | str) -> str:
    """size and mtime (ns) of ``path``, or "-" when it is absent or cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def shard_state(entries: list[Path | BadEntry], raw_dir: Path | str) -> str:
    """One digest of what a parse shard reads: every raw file's path, size and mtime, its
    sidecar's, and every unreadable entry with its reason.

    The workflow gives it to the shard's job as a parameter instead of declaring each raw file
    and sidecar as an input: Snakemake re-runs the job when it changes (rerun trigger "params"),
    which is the same decision at a fraction of the cost (its bookkeeping of 200,000 declared
    inputs took 3 minutes of CPU at 100,000 runs; this is two stat calls per run).
    """
    h = hashlib.sha256()
    n = 0
    for e in entries:
        if isinstance(e, BadEntry):
            h.update(f"bad\0{e.display()}\0{e.reason}\n".encode())
            continue
        n += 1
        rel = relative_text(e, raw_dir)
        h.update(f"{rel}\0{_stat_key(e)}\0{_stat_key(f'{e}{SIDECAR_SUFFIX}')}\n".encode())
    return f"{n} files, {len(entries) - n} unreadable, sha256 {h.hexdigest()[:20]}"


__all__ = ["shard_entries", "shard_files", "shard_of", "shard_state"]
