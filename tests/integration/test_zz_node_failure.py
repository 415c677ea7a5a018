"""A node dies mid-launch (its kubelet and containerd killed): the launch fails that node's cases fast,
with the node's state as the reason, finishes the rest in about its normal time and leaves nothing behind.

Destructive: the node stays down afterwards, so this module runs last (file name) and the cluster is
taken down after the session (make cluster-ci / the lock-holding command).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from podnet.parse.raw import find_raw_files, read_sidecar
from tests.integration.test_launch import REPO, leftovers, quick, small

pytestmark = pytest.mark.cluster

PIDS = Path("/run/podnet-cluster/pids")  # envs/cluster/lib.sh RUN_DIR: pid + start time of each daemon
VICTIM_N = 2  # quick.yaml: servers on the first node, cross-node clients on the second
VICTIM = f"podnet-node-{VICTIM_N}"  # envs/cluster/lib.sh node_name; its daemons' pid files are <daemon>-<N>
#: seconds the failing launch may take beyond the healthy one (node-monitor-grace-period is 50 s:
#: runs in that window fail at once at the exec; clean-up waits at most until the node is NotReady)
BOUND = 45


def _our_pid(name: str) -> int:
    """The pid of one of this cluster's daemons, checked against its recorded start time."""
    pid = int((PIDS / f"{name}.pid").read_text())
    start = (PIDS / f"{name}.start").read_text().strip()
    assert Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19] == start, name
    return pid


def _launch(tmp_path: Path, name: str) -> tuple[subprocess.Popen, Path, Path]:
    every = [s["name"] for s in quick(tmp_path, name)["launch"]["scenarios"]]
    cfg = small(tmp_path / name, name, every, ["iperf3", "ping", "qperf"], repeats=3)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    manifest = tmp_path / f"{name}.json"
    cmd = [sys.executable, "-m", "podnet.cli", "launch", "--config", str(path), "--manifest", str(manifest)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc, Path(cfg["raw_dir"]), manifest


def test_a_node_dies_mid_launch(core, tmp_path):
    assert not leftovers(core), "podnet leftovers before the test: run `make cleanup`"
    assert VICTIM in {n.metadata.name for n in core.list_node().items}
    # the healthy launch: its time is the "normal time"
    t0 = time.monotonic()
    proc, raw, _ = _launch(tmp_path, "it-healthy")
    out, _ = proc.communicate(timeout=900)
    normal = time.monotonic() - t0
    assert proc.returncode == 0, out
    total = len(find_raw_files(raw))
    assert total and all(read_sidecar(f)["status"] == "ok" for f in find_raw_files(raw)), out

    # the same launch; the victim's kubelet and containerd are killed once a few runs are done
    print(f"healthy launch: {total} runs in {normal:.0f}s")
    t0 = time.monotonic()
    proc, raw, manifest = _launch(tmp_path, "it-node-failure")
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if f"[{max(total // 20, 3)}/" in line:
            break
    killed_at = time.monotonic() - t0
    for daemon in (f"kubelet-{VICTIM_N}", f"containerd-{VICTIM_N}"):
        os.kill(_our_pid(daemon), signal.SIGKILL)
    rest, _ = proc.communicate(timeout=900)
    took = time.monotonic() - t0
    text = "".join(lines) + rest
    print(f"healthy launch {normal:.0f}s; with {VICTIM} killed at {killed_at:.0f}s: {took:.0f}s")
    assert proc.returncode == 0, text
    assert took <= normal + BOUND, text

    side = {f.relative_to(raw).as_posix(): read_sidecar(f) for f in find_raw_files(raw)}
    failed = {p: s for p, s in side.items() if s["status"] != "ok"}
    assert failed, text
    for p, s in failed.items():
        assert s.get("error"), p  # every failure carries its reason
        nodes = {(s.get("client") or {}).get("node"), (s.get("server") or {}).get("node")}
        assert VICTIM in nodes, f"{p} failed on healthy nodes: {s['error']}"
    # before the node controller marks the node NotReady (50 s), the first exec that cannot reach its
    # kubelet marks it: its other cases fail at once with that reason, afterwards with the NotReady one
    fast = (f"node {VICTIM} NotReady since", f"node {VICTIM} kubelet unreachable since")
    assert any(s["error"].startswith(fast) for s in failed.values()), text
    # runs not involving the victim are all done
    ok_elsewhere = [
        s for s in side.values() if VICTIM not in {s["client"].get("node"), s["server"].get("node")}
    ]
    assert ok_elsewhere and all(s["status"] == "ok" for s in ok_elsewhere)
    # no retry on the dead node
    assert not [p for p in failed if ".a2." in p], text
    m = json.loads(manifest.read_text())
    assert VICTIM in m["node_failures"] and m["namespace_deleted"] is True and m["leftovers"] == [], m
    assert not leftovers(core), text
