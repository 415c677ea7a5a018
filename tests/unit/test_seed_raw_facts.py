"""The seed checks' raw facts (podnet.report.seed_reports.raw_facts): the cache gives the checks read
without it, after one added raw output only that file is read again, and a file's key follows its
sidecar (added, changed, a broken link) as pathlib's ``exists``/``stat`` did."""

import os
import shutil
from pathlib import Path

from podnet.parse.raw import sidecar_path
from podnet.report.seed_reports import provenance_checks, raw_facts
from tests.conftest import REPO


def test_cached_provenance_equals_uncached_and_reads_only_the_new_file(tmp_path, monkeypatch):
    raw = tmp_path / "seed-qperf"  # qperf conf blocks: the checks that find two descriptions of a node
    shutil.copytree(REPO / "raw/seed-qperf", raw)
    cache = tmp_path / "cache.pickle"
    cold = provenance_checks(raw)
    assert provenance_checks(raw, cache).equals(cold)  # filling the cache
    read = []
    real = raw_facts._read
    monkeypatch.setattr(raw_facts, "_read", lambda p: read.append(p.name) or real(p))
    assert provenance_checks(raw, cache).equals(cold)  # every file from the cache
    assert read == []
    src = raw_facts.find_raw_files(raw)[0]
    added = src.with_name("added" + src.suffix)
    shutil.copy(src, added)
    shutil.copy(sidecar_path(src), sidecar_path(added))
    assert provenance_checks(raw, cache).equals(provenance_checks(raw))
    assert read[:1] == [added.name] and read.count(added.name) == 2  # cached run once, uncached run once
    assert len(read) == 1 + len(raw_facts.find_raw_files(raw))


def test_a_stale_or_broken_cache_is_read_again(tmp_path):
    raw = REPO / "raw/seed-cni-1gbe"
    cache = tmp_path / "cache.pickle"
    cache.write_bytes(b"not a pickle")
    assert provenance_checks(raw, cache).equals(provenance_checks(raw))
    assert len(raw_facts.collect(raw, cache)) == len(raw_facts.collect(raw))


def _pathlib_key(path: Path):
    """The key as it was written with pathlib (the reference for the text version)."""
    try:
        st = path.stat()
        side = sidecar_path(path)
        ss = side.stat() if side.exists() else None
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, ss.st_size if ss else None, ss.st_mtime_ns if ss else None)


def test_a_files_key_follows_its_sidecar(tmp_path):
    raw = tmp_path / "r.txt"
    raw.write_text("x")
    side = sidecar_path(raw)
    keys = []

    def both() -> None:
        assert raw_facts._key(raw) == _pathlib_key(raw)
        keys.append(raw_facts._key(raw))

    both()  # no sidecar
    side.write_text("tool: ping\n")
    both()
    side.write_text("tool: iperf3\n# longer\n")
    both()
    side.unlink()
    os.symlink(tmp_path / "nowhere", side)  # a broken link: no sidecar, as Path.exists() says
    both()
    side.unlink()
    os.symlink(side.name, side)  # a link to itself (ELOOP)
    both()
    assert keys[0][2:] == (None, None) and keys[1][2] == 11 and keys[2][2] == 22 and keys[3] == keys[0]
    assert raw_facts._key(tmp_path / "gone.txt") is None and _pathlib_key(tmp_path / "gone.txt") is None
