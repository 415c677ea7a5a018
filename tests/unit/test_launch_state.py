"""Skip-existing: deterministic raw paths, attempts, what is missing."""

from __future__ import annotations

import copy

from podnet.launch.rounds.state import (
    invalidate_stale_manifest,
    launch_complete,
    missing_repeats,
    pending_runs,
    raw_path,
    scan_case,
)
from podnet.launch.spec.config import from_mapping
from podnet.parse.raw import write_raw
from tests.launch_configs import experiment

CFG = experiment(
    [{"name": "pp", "client": {"other_node_than": "server"}, "server": {}}],
    {"iperf3": {"tests": [{"name": "tcp"}]}, "ping": {"tests": [{"name": "plain"}]}},
    variant="bridge",
    repeats=3,
    max_attempts=2,
)


def make(tmp_path):
    c = copy.deepcopy(CFG)
    c["raw_dir"] = str(tmp_path / "raw")
    return from_mapping(c)


def test_raw_paths_are_deterministic(tmp_path):
    cfg = make(tmp_path)
    case = cfg.cases[0]
    assert (
        raw_path(cfg.raw_dir, "bridge", case, 1, 1, "json").relative_to(cfg.raw_dir).as_posix()
        == "bridge/pp/iperf3-tcp/r001.json"
    )
    assert raw_path(cfg.raw_dir, "bridge", case, 12, 2, "txt").name == "r012.a2.txt"


def test_missing_and_attempts(tmp_path):
    cfg = make(tmp_path)
    case = cfg.cases[0]
    meta = {"variant": "bridge", "scenario": "pp"}
    write_raw(raw_path(cfg.raw_dir, "bridge", case, 1, 1, "json"), "{}", {**meta, "status": "ok"})
    write_raw(
        raw_path(cfg.raw_dir, "bridge", case, 2, 1, "txt"), "", {**meta, "status": "failed", "error": "boom"}
    )
    st = scan_case(cfg.raw_dir, "bridge", case)
    assert st.ok_repeats() == {1}
    assert st.failures(2) == 1 and st.next_attempt(2) == 2 and st.last_error(2) == "boom"
    assert missing_repeats(st, range(1, 4), max_attempts=2) == [2, 3]
    # a second failed attempt exhausts repeat 2
    write_raw(
        raw_path(cfg.raw_dir, "bridge", case, 2, 2, "txt"), "", {**meta, "status": "failed", "error": "again"}
    )
    st = scan_case(cfg.raw_dir, "bridge", case)
    assert missing_repeats(st, range(1, 4), max_attempts=2) == [3]
    # an interrupted attempt does not count
    write_raw(
        raw_path(cfg.raw_dir, "bridge", case, 3, 1, "txt"),
        "",
        {**meta, "status": "failed", "interrupted": True},
    )
    st = scan_case(cfg.raw_dir, "bridge", case)
    assert st.failures(3) == 0 and st.next_attempt(3) == 2


def test_pending_and_todo_signature(tmp_path):
    cfg = make(tmp_path)
    pend = pending_runs(cfg, "bridge")
    assert pend == {("pp", "iperf3", "tcp"): [1, 2, 3], ("pp", "ping", "plain"): [1, 2, 3]}
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}")
    assert launch_complete(cfg) is False
    assert invalidate_stale_manifest(cfg, manifest) and not manifest.exists()
    for case in cfg.cases:
        for r in (1, 2, 3):
            write_raw(
                raw_path(cfg.raw_dir, "bridge", case, r, 1, "txt"),
                "x",
                {"variant": "bridge", "scenario": "pp", "status": "ok"},
            )
    assert pending_runs(cfg, "bridge") == {}
    manifest.write_text("{}")
    assert launch_complete(cfg) is True and not invalidate_stale_manifest(cfg, manifest) and manifest.exists()
    # another variant is a different set of runs
    assert pending_runs(cfg, "vxlan")[("pp", "ping", "plain")] == [1, 2, 3]


def test_ok_sidecar_without_raw_file_is_not_done(tmp_path):
    cfg = make(tmp_path)
    case = cfg.cases[0]
    p = raw_path(cfg.raw_dir, "bridge", case, 1, 1, "json")
    write_raw(p, "{}", {"variant": "bridge", "scenario": "pp", "status": "ok"})
    p.unlink()
    assert scan_case(cfg.raw_dir, "bridge", case).ok_repeats() == set()
