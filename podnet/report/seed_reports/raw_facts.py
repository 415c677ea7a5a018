"""What the provenance checks read from each raw output: its sidecar's variant, scenario and tool, and
the hosts and nodes its parser found (:data:`FACTS` of the result's ``info``).

Reading them means reading every sidecar (YAML, validated) and parsing every raw output again: at
10,000 runs that cost the ``seed_discrepancies`` rule half a minute of CPU whenever one run was added.
``cache`` (a pickle, not an output: deleting it only costs time) keeps each file's facts while its
raw file's and sidecar's size and mtime are unchanged (what the workflow's shard digests compare, too)
and the podnet source is the same (:func:`podnet.parse.cache.code_version`).
"""

from __future__ import annotations

import errno
import os
import pickle
from pathlib import Path
from typing import Any, NamedTuple

from podnet import tools as adapters
from podnet.parse import read_text
from podnet.parse.cache import code_version
from podnet.parse.raw import SIDECAR_SUFFIX, SidecarError, find_raw_files, read_sidecar, relative_text
from podnet.tools.base import ParseError

#: the parser's ``info`` keys the provenance checks read
FACTS = ("target", "remote", "role", "benchmarking", "server_hostname", "conf")
#: the sidecar keys they read
META = ("variant", "scenario", "tool")

Key = tuple[int, int, int | None, int | None]


class RawFacts(NamedTuple):
    """One readable, parseable raw output: its path, sidecar fields (:data:`META`) and parser facts."""

    path: Path
    meta: dict[str, Any]
    info: dict[str, Any]


#: what ``Path.exists()`` takes for "not there" (any other error makes a file's key unknown)
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _key(path: Path) -> Key | None:
    """Size and mtime of the raw file and of its sidecar (None, None when it has none).

    ``os.stat`` on the paths' text: pathlib's parsing of 20,000 paths was a fifth of the
    ``seed_discrepancies`` job after one added run at 10,000 runs."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        ss = os.stat(f"{os.fspath(path)}{SIDECAR_SUFFIX}")  # sidecar_path(path), as text
    except OSError as e:
        if e.errno not in _ABSENT:
            return None
        ss = None
    return (st.st_size, st.st_mtime_ns, ss.st_size if ss else None, ss.st_mtime_ns if ss else None)


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The file's facts, read and parsed now (None: no readable sidecar, or no parse)."""
    try:
        meta = read_sidecar(path)
        text = read_text(path)
        adapter = adapters.get(meta["tool"]) if meta.get("tool") else adapters.detect(text)
        res = adapter.parse(text)
    except (SidecarError, ParseError, KeyError, OSError, UnicodeDecodeError):
        return None
    return (
        {k: meta[k] for k in META if k in meta},
        {k: res.info[k] for k in FACTS if k in res.info},
    )


def _load(cache: Path | None, version: str) -> dict[str, tuple[Key, Any]]:
    if cache is None or not cache.is_file():
        return {}
    try:
        stored = pickle.loads(cache.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
        return {}  # a cache that cannot be read is read again from the raw files
    if not isinstance(stored, dict) or stored.get("version") != version:
        return {}
    return stored.get("files", {})


def collect(raw_dir: Path | str, cache: Path | str | None = None) -> list[RawFacts]:
    """Every raw output under ``raw_dir`` (in :func:`~podnet.parse.raw.find_raw_files` order) whose
    sidecar reads and whose output parses, with its facts; ``cache`` as the module says."""
    raw_dir = Path(raw_dir)
    cache = Path(cache) if cache is not None else None
    version = code_version() if cache is not None else ""
    known = _load(cache, version)
    seen: dict[str, tuple[Key, Any]] = {}
    out: list[RawFacts] = []
    fresh = False
    for f in find_raw_files(raw_dir):
        rel = relative_text(f, raw_dir)
        key = _key(f)
        hit = known.get(rel)
        if key is not None and hit is not None and hit[0] == key:
            facts = hit[1]
        else:
            facts = _read(f)
            fresh = True
        if key is not None:
            seen[rel] = (key, facts)
        if facts is not None:
            out.append(RawFacts(f, *facts))
    if cache is not None and (fresh or seen.keys() != known.keys()):
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(cache.name + ".tmp")
        tmp.write_bytes(pickle.dumps({"version": version, "files": seen}))
        tmp.replace(cache)
    return out
