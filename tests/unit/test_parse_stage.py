"""Parse stage: sidecars, failed runs with reasons, shards, and the `podnet parse` command."""

import shutil
import subprocess
import sys

import pytest
import yaml

from podnet.parse import parse_experiment, shard_files, shard_of
from podnet.parse.raw import find_raw_files, read_sidecar, sidecar_path, write_raw
from tests.conftest import FIXTURES, REPO

GOOD_JSON = (FIXTURES / "iperf3/tcp-forward.json").read_text()


def put(raw_dir, rel, content, **meta):
    meta = {"tool": "iperf3", "variant": "v", "scenario": "s", **meta}
    return write_raw(raw_dir / rel, content, meta)


@pytest.fixture
def raw_dir(tmp_path):
    d = tmp_path / "raw" / "exp"
    put(d, "good/a.json", GOOD_JSON, repeat=1)
    put(d, "good/b.json", GOOD_JSON, repeat=2)
    put(d, "bad/empty.json", "")
    put(d, "bad/truncated.json", GOOD_JSON[:300])
    put(d, "bad/binary.bin", b"\x00\x01\x02\xffiperf")
    put(d, "bad/error.json", (FIXTURES / "iperf3/error-refused.json").read_text())
    put(d, "bad/launch-failed.txt", "partial", status="failed", error="client pod timed out after 60 s")
    (d / "bad/no-sidecar.txt").write_text((FIXTURES / "iperf3/tcp-forward.txt").read_text())
    put(d, "bad/changed.json", GOOD_JSON)
    (d / "bad/changed.json").write_text(GOOD_JSON + "\n")
    (d / "README.md").write_text("not a raw file")
    return d


def test_bad_files_are_listed_with_reasons_and_the_rest_is_processed(raw_dir):
    parsed = parse_experiment(raw_dir, "exp")
    assert sorted(parsed.tidy["run_id"].unique()) == ["good/a", "good/b"]
    reasons = {r.raw_path.split("/bad/")[1]: r.reason for r in parsed.failed.itertuples()}
    assert set(reasons) == {
        "empty.json",
        "truncated.json",
        "binary.bin",
        "error.json",
        "launch-failed.txt",
        "no-sidecar.txt",
        "changed.json",
    }
    assert "empty file" in reasons["empty.json"]
    assert "cut off" in reasons["truncated.json"]
    assert "binary" in reasons["binary.bin"]
    assert "Connection refused" in reasons["error.json"]
    assert "timed out" in reasons["launch-failed.txt"]
    assert "no sidecar" in reasons["no-sidecar.txt"]
    assert "sha256" in reasons["changed.json"]
    assert all(parsed.failed["experiment"] == "exp")


def test_rows_take_context_from_the_sidecar(raw_dir):
    tidy = parse_experiment(raw_dir, "exp").tidy
    row = tidy[(tidy.run_id == "good/b") & (tidy.metric == "throughput")].iloc[0]
    assert (row.variant, row.scenario, row.tool, row.test, row.direction, row["repeat"]) == (
        "v",
        "s",
        "iperf3",
        "tcp",
        "forward",
        2,
    )
    assert row.unit == "bit/s" and row.source == "measured"


def test_write_raw_never_overwrites(raw_dir):
    with pytest.raises(FileExistsError):
        put(raw_dir, "good/a.json", "x")
    assert read_sidecar(raw_dir / "good/a.json")["sha256"]


def test_shards_are_stable_and_cover_every_file(raw_dir):
    files = find_raw_files(raw_dir)
    shards = shard_files(raw_dir, 4)
    assert sorted(f for fs in shards.values() for f in fs) == files
    before = {str(f): shard_of(f, raw_dir, 4) for f in files}
    put(raw_dir, "good/c.json", GOOD_JSON)
    after = {str(f): k for k, fs in shard_files(raw_dir, 4).items() for f in fs}
    assert all(after[f] == k for f, k in before.items())  # adding a file moves no other file


def test_shard_state_changes_with_exactly_what_a_shard_reads(raw_dir):
    """The workflow re-runs a parse shard when its digest (params) changes: a file added, removed,
    rewritten or touched, or its sidecar edited, changes its own shard's digest and no other's."""
    import os

    from podnet.parse.shards import shard_entries, shard_state

    def states():
        return {k: shard_state(v, raw_dir) for k, v in shard_entries(raw_dir, 4).items()}

    before = states()
    assert states() == before  # nothing changed: nothing re-runs
    a = raw_dir / "good/a.json"
    for change in (
        lambda: put(raw_dir, "good/c.json", GOOD_JSON),  # added
        lambda: os.utime(a, ns=(1, 1)),  # touched
        lambda: sidecar_path(a).write_text(sidecar_path(a).read_text() + "note: x\n"),  # sidecar edited
        lambda: (raw_dir / "good/c.json").unlink(),  # removed
    ):
        s0 = states()
        change()
        s1 = states()
        assert len([k for k in s0 if s0[k] != s1[k]]) == 1, change  # its shard re-runs, no other


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "podnet.cli", *args], capture_output=True, text=True, cwd=REPO
    )


def test_cli_parse_prints_csv_and_detects_tool():
    p = run_cli("parse", str(FIXTURES / "iperf3/tcp-p3.txt"), str(FIXTURES / "ping/loopback-flood.txt"))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("experiment,variant,scenario,tool,test")
    assert any(",iperf3," in ln and ",throughput," in ln for ln in lines)
    assert any(",ping," in ln and ",rtt_avg," in ln for ln in lines)


def test_cli_parse_names_the_bad_file_and_fails(tmp_path):
    bad = tmp_path / "truncated.json"
    bad.write_text(GOOD_JSON[:200])
    p = run_cli("parse", str(FIXTURES / "iperf3/tcp-p3.txt"), str(bad))
    assert p.returncode != 0
    assert str(bad) in p.stderr and "cut off" in p.stderr
    assert ",throughput," in p.stdout  # the good file is still printed
    forced = run_cli("parse", "--tool", "ping", str(FIXTURES / "iperf3/tcp-p3.txt"))
    assert forced.returncode != 0 and "tcp-p3.txt" in forced.stderr


def test_cli_parse_uses_sidecar_when_present(tmp_path):
    shutil.copy(REPO / "raw/seed-raven/same-edge/iperf3-reverse.txt", tmp_path / "r.txt")
    shutil.copy(
        sidecar_path(REPO / "raw/seed-raven/same-edge/iperf3-reverse.txt"), sidecar_path(tmp_path / "r.txt")
    )
    p = run_cli("parse", str(tmp_path / "r.txt"))
    assert p.returncode == 0, p.stderr
    assert "raven,same-edge,iperf3,tcp,tcp,reverse" in p.stdout
    meta = yaml.safe_load(sidecar_path(tmp_path / "r.txt").read_text())
    assert meta["direction"] == "reverse"


def test_scan_lists_paths_as_pathlib_would_write_and_order_them(tmp_path):
    """The scan works on text (10,000s of names on every workflow run): its paths are the Paths
    pathlib would build, in pathlib's order (by parts: "a/b" before "a-c", unlike text order), and
    their shards and relative names are pathlib's, for a base given as text, with "./" or a slash."""
    import os
    from pathlib import Path

    from podnet.parse.raw import relative_text, scan_raw_dir
    from podnet.parse.shards import shard_of

    root = tmp_path / "raw"
    for rel in (
        "a/b.txt",
        "a-c.txt",
        "a.txt",
        "b/z/y.txt",
        "b/z-.txt",
        "c d/e f.txt",
        "_skip/x.txt",
        ".hid/x.txt",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    os.symlink(root / "a", root / "link-dir")  # reported, not followed
    (root / os.fsdecode(b"bad\xffname.txt")).write_text("x")  # reported: not UTF-8
    good, bad = scan_raw_dir(root)
    expect = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and p.parts[len(root.parts)][0] not in "._"
        and "bad" not in p.name
    )
    assert good == expect and [str(p) for p in good] == [str(p) for p in expect]
    assert [b.path.name for b in bad] == sorted(
        ["link-dir", os.fsdecode(b"bad\xffname.txt")], key=os.fsencode
    )
    for base in (str(root), str(root) + "/", f"{tmp_path}/./raw"):
        found, _ = scan_raw_dir(base)
        assert found == expect
        for p in found:
            assert relative_text(p, base) == p.relative_to(Path(base)).as_posix()
            assert shard_of(p, base, 7) == shard_of(Path(p), Path(base), 7)
