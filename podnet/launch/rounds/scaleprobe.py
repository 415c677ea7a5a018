"""Probes that show a scale point's objects are in the datapath, and time how long a change takes.

A probe is a loop in a client pod (bash ``/dev/tcp``, each connect limited to
:data:`CONNECT_TIMEOUT` s, :data:`INTERVAL` s apart) that waits until a TCP connect to ``ip:port``
succeeds (``reach``) or fails (``fail``) and prints the pod's clock at its start and at the first
such connect. The launcher starts it on a thread, waits :data:`LEAD` s so it runs, notes its own
clock, makes the change (creates the probe's EndpointSlice, a deny policy, or deletes one) and
takes the time from the change to the connect. The pod's and the launcher's clocks are one clock
on the embedded cluster (one machine); on a real cluster their offset adds to the time. A loop
that started after the change, or saw nothing in time, is a failed probe with that reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: seconds a single connect attempt may take (a dropped SYN counts as ``fail`` after this)
CONNECT_TIMEOUT = 0.1
#: seconds between attempts
INTERVAL = 0.01
#: seconds between starting the loop's exec and making the change (the exec's set-up)
LEAD = 2.0
#: seconds the exec may take beyond the loop's own limit
EXEC_SLACK = 30

#: the loop (fixed text: mode, address, port and limit are positional arguments)
SCRIPT = (
    'mode=$1 ip=$2 port=$3 limit=$4; echo "start $(date +%s.%N)"; end=$(( $(date +%s) + limit )); '
    "while :; do "
    f'if timeout {CONNECT_TIMEOUT} bash -c \'exec 3<>"/dev/tcp/$0/$1"\' "$ip" "$port" 2>/dev/null; '
    "then r=reach; else r=fail; fi; "
    'if [ "$r" = "$mode" ]; then echo "$r $(date +%s.%N)"; exit 0; fi; '
    'if [ "$(date +%s)" -ge "$end" ]; then echo "timeout $(date +%s.%N)"; exit 3; fi; '
    f"sleep {INTERVAL}; done"
)


class ProbeFailed(RuntimeError):
    """A probe did not see what it waited for; the message says what and for how long."""


@dataclass
class Seen:
    """What one probe loop printed: its start, the first connect of its mode, or its time-out."""

    start: float | None = None
    at: float | None = None
    outcome: str = ""


def parse_loop(text: str) -> Seen:
    """The loop's output (``start <ts>``, then ``reach|fail|timeout <ts>``)."""
    seen = Seen()
    for line in text.splitlines():
        word, _, ts = line.strip().partition(" ")
        try:
            value = float(ts)
        except ValueError:
            continue
        if word == "start":
            seen.start = value
        elif word in ("reach", "fail", "timeout"):
            seen.outcome, seen.at = word, value
    return seen


class Prober:
    """Runs probe loops in one client pod (``kube``: a :class:`~podnet.launch.cluster.k8s.Kube` or a double)."""

    def __init__(
        self,
        kube: Any,
        namespace: str,
        pod: str,
        port: int,
        *,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.kube, self.ns, self.pod, self.port = kube, namespace, pod, port
        self.wall, self.sleep = wall, sleep

    def timed(self, mode: str, ip: str, change: Callable[[], Any] | None, limit: float) -> float:
        """Seconds from ``change`` (None: from now) until a connect to ``ip`` does ``mode``
        (``reach`` / ``fail``); :class:`ProbeFailed` when it does not within ``limit`` s."""
        limit = max(1, int(limit))
        argv = ["bash", "-c", SCRIPT, "podnet-scale-probe", mode, ip, str(self.port), str(limit)]
        box: dict[str, Any] = {}

        def work() -> None:
            box["r"] = self.kube.exec(self.ns, self.pod, argv, limit + EXEC_SLACK, container="main")

        th = threading.Thread(target=work, name="podnet-scale-probe", daemon=True)
        th.start()
        self.sleep(LEAD)
        t0 = self.wall()
        if change is not None:
            change()
        th.join(limit + EXEC_SLACK + 5)
        r = box.get("r")
        what = (
            f"a TCP connect from {self.pod} to {ip}:{self.port} to {'succeed' if mode == 'reach' else 'fail'}"
        )
        if r is None:
            raise ProbeFailed(f"waiting for {what}: the probe's exec did not return")
        seen = parse_loop(r.stdout)
        if seen.start is None:
            raise ProbeFailed(
                f"waiting for {what}: the probe did not run ({r.error or r.stderr.strip()[-200:]})"
            )
        if change is not None and seen.start > t0:
            raise ProbeFailed(
                f"waiting for {what}: the probe started {seen.start - t0:.2f}s after the change "
                f"(its exec took more than {LEAD:g}s)"
            )
        if seen.outcome != mode or seen.at is None:
            raise ProbeFailed(f"waited {limit}s for {what}: it did not")
        return round(max(seen.at - t0, 0.0), 4)
