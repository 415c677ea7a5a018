"""envs/cluster/lib.sh: a daemon joins the daemons' cgroup before it execs (same pid, nothing outside)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "envs" / "cluster" / "lib.sh"


def _run(script: str) -> str:
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, timeout=30
    ).stdout


@pytest.mark.parametrize("with_cgroup", [True, False])
def test_start_daemon_puts_the_daemon_itself_into_the_listed_groups(tmp_path, with_cgroup):
    groups = [tmp_path / "cpu" / "podnet-daemons", tmp_path / "cpuacct" / "podnet-daemons"]
    for g in groups:
        g.mkdir(parents=True)
        (g / "cgroup.procs").write_text("")  # a plain file stands in for the kernel's
    listing = tmp_path / "daemon-cgroups"
    listing.write_text("".join(f"{g}\n" for g in groups) if with_cgroup else "")
    # lib.sh's fixed paths are redirected into tmp_path: the machine's own cluster is never touched
    _run(
        f"source {LIB}; RUN_DIR={tmp_path}/run; LOG_DIR={tmp_path}/logs; DAEMON_CGROUPS_FILE={listing}; "
        "start_daemon test-daemon - sleep 30"
    )
    pid = int((tmp_path / "run" / "pids" / "test-daemon.pid").read_text())
    try:
        for _ in range(50):
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            if cmd == b"sleep":
                break
            time.sleep(0.1)
        assert cmd == b"sleep"  # the recorded pid is the daemon's (the join step exec'd into it)
        joined = [g / "cgroup.procs" for g in groups]
        assert [p.read_text().split() for p in joined] == ([[str(pid)]] * 2 if with_cgroup else [[], []])
    finally:
        os.kill(pid, 9)


def test_cgroup_v1_mount_finds_a_controller_in_comounted_hierarchies():
    out = _run(f"source {LIB}; cgroup_v1_mount cpu; echo; cgroup_v1_mount no-such-controller")
    mounts = Path("/proc/self/mounts").read_text().splitlines()
    cpu = [m.split()[1] for m in mounts if m.split()[2] == "cgroup" and "cpu" in m.split()[3].split(",")]
    assert out.split("\n")[0] == (cpu[0] if cpu else "")
    assert out.split("\n")[1] == ""


def _make(tmp_path: Path, v2: bool, weight: int = 20) -> dict | None:
    """make_daemon_cgroup against a directory tree standing in for /sys/fs/cgroup."""
    import json

    fs = tmp_path / "cgroup"
    (fs / "cpu").mkdir(parents=True)
    (fs / "cpuacct").mkdir()
    if v2:
        (fs / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (fs / "cgroup.subtree_control").write_text("cpu memory pids\n")
    out = _run(
        f"source {LIB}; RUN_DIR={tmp_path}; CGROUP_FS={fs}; DAEMON_CGROUPS_FILE={tmp_path}/daemon-cgroups; "
        f"DAEMON_CPU_WEIGHT={weight}; cgroup_v1_mount() {{ echo {fs}/$1; }}; "
        'make_daemon_cgroup 2>/dev/null; echo "$DAEMON_CGROUP_JSON"'
    )
    return json.loads(out)


def test_make_daemon_cgroup_on_cgroup_v1_sets_the_equivalent_shares(tmp_path):
    info = _make(tmp_path, v2=False)
    fs = tmp_path / "cgroup"
    assert (fs / "cpu" / "podnet-daemons" / "cpu.shares").read_text().strip() == "204"
    assert info["paths"] == [str(fs / "cpu" / "podnet-daemons"), str(fs / "cpuacct" / "podnet-daemons")]
    assert (tmp_path / "daemon-cgroups").read_text().split() == info["paths"]
    assert info["cgroup_version"] == 1 and info["cpu_weight"] == 20 and info["setting"] == "cpu.shares 204"
    assert info["cpu_usage_file"] == str(fs / "cpuacct" / "podnet-daemons" / "cpuacct.usage")


def test_make_daemon_cgroup_on_cgroup_v2_sets_cpu_weight(tmp_path):
    info = _make(tmp_path, v2=True)
    d = tmp_path / "cgroup" / "podnet-daemons"
    assert (d / "cpu.weight").read_text().strip() == "20"
    assert (
        info["paths"] == [str(d)]
        and info["cgroup_version"] == 2
        and info["cpu_usage_file"] == str(d / "cpu.stat")
    )


def test_no_daemon_cgroup_with_weight_zero(tmp_path):
    assert _make(tmp_path, v2=False, weight=0) is None
    assert not (tmp_path / "cgroup" / "cpu" / "podnet-daemons").exists()
    assert not (tmp_path / "daemon-cgroups").exists()
