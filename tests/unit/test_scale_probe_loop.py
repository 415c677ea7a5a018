"""The probe loops' shell text run for real: in a network namespace of their own (``unshare -n``,
gone with the process), against a listener on its loopback, with an nftables rule that drops or
refuses the SYNs and is lifted while the loop waits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from podnet.launch.rounds import scaleprobe

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("nft")),
    reason="needs root, unshare and nft (a network namespace of the test's own)",
)

PORT = 15299

#: runs in the namespace: a listener, the loop in the background, a rule on the SYNs added or lifted
#: at a noted clock (``changed <ts>``); prints the loop's lines and the rule's packet count
DRIVER = textwrap.dedent(
    """
    set -e
    ip link set lo up
    {py} -c 'import socket,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", {port})); s.listen(512); time.sleep(30)' &
    srv=$!
    nft add table inet t
    nft add chain inet t in '{{ type filter hook input priority 0; }}'
    rule="tcp dport {port} tcp flags syn counter {verdict}"
    {before}
    sleep 0.3
    bash -c "$LOOP" podnet-scale-probe {mode} 127.0.0.1 {port} {limit} > out.txt &
    loop=$!
    sleep {hold}
    echo "changed $EPOCHREALTIME"
    {change}
    wait $loop || true
    nft list chain inet t in > rule.txt
    kill $srv
    cat out.txt
    """
)
LIFT = ("nft add rule inet t in $rule", "nft list chain inet t in > lifted.txt; nft flush chain inet t in")
BLOCK = ("", "nft add rule inet t in $rule")


def _run(
    tmp_path, mode: str, verdict: str, hold: float, how: tuple[str, str], limit: int = 5
) -> dict[str, float]:
    before, change = how
    script = DRIVER.format(
        py=sys.executable,
        port=PORT,
        mode=mode,
        verdict=verdict,
        hold=hold,
        before=before,
        change=change,
        limit=limit,
    )
    r = subprocess.run(
        ["unshare", "-n", "bash", "-c", script],
        cwd=tmp_path,
        env={**os.environ, "LOOP": scaleprobe.SCRIPT},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    seen = {}
    for line in r.stdout.splitlines():
        word, _, ts = line.partition(" ")
        seen[word] = float(ts)
    rule = tmp_path / "lifted.txt" if (tmp_path / "lifted.txt").exists() else tmp_path / "rule.txt"
    packets = rule.read_text().split("packets")
    seen["syns"] = float(packets[1].split()[0]) if len(packets) > 1 else 0.0
    return seen


def test_a_lifted_drop_is_seen_by_an_attempt_started_after_it_while_attempts_overlap(tmp_path):
    seen = _run(tmp_path, "reach", "drop", 0.6, LIFT)
    assert seen["start"] < seen["changed"] <= seen["reach"]
    # attempts start every INTERVAL without waiting for a dropped one (CONNECT_TIMEOUT each): over
    # 0.6 s one after the other would send about 6 SYNs
    assert seen["syns"] >= 15, seen


def test_a_lifted_refusal_is_reached_and_a_drop_or_refusal_made_is_a_fail(tmp_path):
    seen = _run(tmp_path, "reach", "reject with tcp reset", 0.3, LIFT)
    assert seen["start"] < seen["changed"] <= seen["reach"]
    for verdict in ("drop", "reject with tcp reset"):
        seen = _run(tmp_path, "fail", verdict, 0.3, BLOCK)
        assert seen["start"] < seen["changed"] <= seen["fail"], verdict
        assert seen["syns"] >= 1, verdict  # the attempt that failed met the rule


def test_a_path_never_changed_times_out_in_either_mode(tmp_path):
    seen = _run(tmp_path, "reach", "drop", 0.1, ("nft add rule inet t in $rule", "true"), limit=1)
    assert "timeout" in seen and "reach" not in seen and seen["syns"] >= 10, seen
    # the limit is the loop's whole second, not up to the next whole second of the clock
    assert 1.0 <= seen["timeout"] - seen["start"] < 1.5, seen
    seen = _run(tmp_path, "fail", "drop", 0.1, ("", "true"), limit=1)
    assert "timeout" in seen and "fail" not in seen, seen
    assert 1.0 <= seen["timeout"] - seen["start"] < 1.5, seen
