"""The seed checks' raw facts (podnet.report.seed_reports.raw_facts): the cache gives the checks read
without it, and after one added raw output only that file is read again."""

import shutil

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
    shutil.copy(raw_facts.sidecar_path(src), raw_facts.sidecar_path(added))
    assert provenance_checks(raw, cache).equals(provenance_checks(raw))
    assert read[:1] == [added.name] and read.count(added.name) == 2  # cached run once, uncached run once
    assert len(read) == 1 + len(raw_facts.find_raw_files(raw))


def test_a_stale_or_broken_cache_is_read_again(tmp_path):
    raw = REPO / "raw/seed-cni-1gbe"
    cache = tmp_path / "cache.pickle"
    cache.write_bytes(b"not a pickle")
    assert provenance_checks(raw, cache).equals(provenance_checks(raw))
    assert len(raw_facts.collect(raw, cache)) == len(raw_facts.collect(raw))
