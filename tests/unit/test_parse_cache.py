"""The parse cache (podnet.parse.cache): results equal the uncached parse's in every state, and a
file is parsed again exactly when its bytes, its sidecar, its name or the code changed."""

import os
import shutil

import pandas as pd
import pytest

from podnet.parse import cache as parse_cache
from podnet.parse import parse_files
from podnet.parse.raw import scan_raw_dir, sidecar_path, write_raw
from tests.conftest import FIXTURES, REPO


@pytest.fixture
def raw(tmp_path):
    """Real seed outputs, an iperf3 JSON run with intervals, and files that fail in different ways."""
    raw = tmp_path / "raw"
    for seed in ("seed-raven", "seed-qperf"):
        shutil.copytree(REPO / "raw" / seed, raw / seed)
    meta = {"tool": "iperf3", "variant": "v", "scenario": "s", "repeat": 1}
    write_raw(raw / "json/run.json", (FIXTURES / "iperf3/tcp-forward.json").read_bytes(), meta)
    write_raw(raw / "bad/empty.txt", "", meta)
    write_raw(raw / "bad/truncated.json", (FIXTURES / "iperf3/tcp-forward.json").read_text()[:400], meta)
    (raw / "bad/no-sidecar.txt").write_bytes((REPO / "raw/seed-raven/same-edge/ping-plain.txt").read_bytes())
    (raw / "bad/dangling.txt").write_bytes((REPO / "raw/seed-raven/same-edge/ping-plain.txt").read_bytes())
    os.symlink(raw / "nowhere.yaml", sidecar_path(raw / "bad/dangling.txt"))
    return raw


def entries(raw):
    good, bad = scan_raw_dir(raw)
    return [*good, *bad]


def assert_same(a, b):
    for part in ("tidy", "intervals", "failed"):
        pd.testing.assert_frame_equal(getattr(a, part), getattr(b, part), check_exact=True, obj=part)


@pytest.fixture
def counted(monkeypatch):
    """The files parse_cache hands to the real parser, call by call."""
    calls = []

    def spy(files, raw_dir, experiment):
        files = list(files)
        calls.append([os.fspath(getattr(f, "path", f)) for f in files])
        return parse_files(files, raw_dir, experiment)

    monkeypatch.setattr(parse_cache, "parse_files", spy)
    return calls


def test_cold_warm_and_changed_results_equal_the_uncached_parse(raw, tmp_path, counted):
    cache = tmp_path / "cache/shard-0"
    files = entries(raw)
    expected = parse_files(files, raw, "exp")
    assert len(expected.tidy) and len(expected.intervals) and len(expected.failed) >= 4
    assert_same(parse_cache.parse_files_cached(files, raw, "exp", cache), expected)  # cold
    assert_same(parse_cache.parse_files_cached(files, raw, "exp", cache), expected)  # warm
    # only what cannot be keyed (the dangling sidecar's file) is parsed again when nothing changed
    assert [os.path.basename(f) for f in counted[-1]] == ["dangling.txt"]

    # one value changed in one raw file: that file alone is parsed again, and its row changes
    target = raw / "seed-raven/same-edge/ping-plain.txt"
    text = target.read_text()
    assert "0.190" in text
    sidecar = sidecar_path(target)
    sidecar.write_text(
        "\n".join(x for x in sidecar.read_text().splitlines() if not x.startswith("sha256")) + "\n"
    )
    target.write_text(text.replace("0.190", "0.290"))
    got = parse_cache.parse_files_cached(files, raw, "exp", cache)
    assert sorted(os.path.basename(f) for f in counted[-1]) == ["dangling.txt", "ping-plain.txt"]
    assert_same(got, parse_files(files, raw, "exp"))
    row = got.tidy[(got.tidy.raw_path == str(target)) & (got.tidy.metric == "rtt_avg")]
    assert row["value"].tolist() == [pytest.approx(0.290e-3)]


def test_a_changed_sidecar_a_new_file_and_a_deleted_file(raw, tmp_path, counted):
    cache = tmp_path / "cache/shard-0"
    parse_cache.parse_files_cached(entries(raw), raw, "exp", cache)
    side = sidecar_path(raw / "json/run.json")
    side.write_text(side.read_text().replace("scenario: s", "scenario: t"))
    write_raw(raw / "json/new.json", (FIXTURES / "iperf3/tcp-forward.json").read_bytes(), {"tool": "iperf3"})
    (raw / "seed-qperf").rename(tmp_path / "moved-away")
    files = entries(raw)
    got = parse_cache.parse_files_cached(files, raw, "exp", cache)
    assert sorted(os.path.basename(f) for f in counted[-1]) == ["dangling.txt", "new.json", "run.json"]
    assert_same(got, parse_files(files, raw, "exp"))
    assert set(got.tidy[got.tidy.raw_path.str.endswith("run.json")]["scenario"]) == {"t"}
    assert not got.tidy.raw_path.str.contains("seed-qperf").any()
    # the cache holds the current files only
    assert not pd.read_parquet(f"{cache}.tidy.parquet").raw_path.str.contains("seed-qperf").any()


def test_a_new_experiment_name_or_code_version_parses_everything_again(raw, tmp_path, counted, monkeypatch):
    cache = tmp_path / "cache/shard-0"
    files = entries(raw)
    parse_cache.parse_files_cached(files, raw, "exp", cache)
    got = parse_cache.parse_files_cached(files, raw, "other", cache)
    assert len(counted[-1]) == len(files)
    assert set(got.tidy["experiment"]) == {"other"}
    monkeypatch.setattr(parse_cache, "code_version", lambda: "a changed parser")
    parse_cache.parse_files_cached(files, raw, "other", cache)
    assert len(counted[-1]) == len(files)


def test_a_damaged_cache_is_only_a_lost_cache(raw, tmp_path, counted):
    cache = tmp_path / "cache/shard-0"
    files = entries(raw)
    parse_cache.parse_files_cached(files, raw, "exp", cache)
    (tmp_path / "cache/shard-0.tidy.parquet").write_bytes(b"not parquet")
    assert_same(parse_cache.parse_files_cached(files, raw, "exp", cache), parse_files(files, raw, "exp"))
    assert len(counted[-1]) == len(files)


def test_the_parse_cache_version_covers_the_tools_parsers(tmp_path):
    """A changed adapter (podnet/tools) re-parses: the cache's version is the parse stage's, which
    hashes tools and config too (it hashed podnet/parse alone, and a new qperf check stayed unapplied)."""
    import shutil

    from podnet.config import stages

    assert parse_cache.code_version() == stages.code_version("parse")
    roots = [tmp_path / "a" / "podnet", tmp_path / "b" / "podnet"]
    for root in roots:
        for pkg in ("config", "tools", "parse"):
            shutil.copytree(stages.ROOT / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    changed = roots[1] / "tools" / "qperf.py"
    changed.write_text(changed.read_text() + "\n# changed\n")
    assert stages.code_version("parse", roots[0]) != stages.code_version("parse", roots[1])
