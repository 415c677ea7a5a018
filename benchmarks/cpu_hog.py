"""A CPU hog for a while in the middle of a launch: N busy processes, started after a delay, ended by PID.

What a researcher's machine often has: other work during a measurement. Run it beside a launch to see
what the launcher's disturbed-run rule (podnet/launch/spec/disturbance.py) does with it::

    .venv/bin/python benchmarks/cpu_hog.py --delay 25m --duration 5m --procs 2 & make run

Each busy process is ``python -c 'while True: pass'`` (one CPU each, nice 0 unless ``--nice``); they are
ended by their own PIDs (SIGTERM, then SIGKILL after 2 s) when the duration is over, or at once when
this script gets SIGINT/SIGTERM. Start and end times (UTC) are printed, to set beside the sidecars.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import signal
import subprocess
import sys
import time

BUSY = "while True: pass"


def seconds(text: str) -> float:
    """``90``, ``90s``, ``5m``, ``1h``, ``1h30m`` as seconds."""
    from podnet.launch.spec.defaults import parse_duration

    value = parse_duration(float(text) if text.replace(".", "", 1).isdigit() else text)
    return float(value or 0.0)


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def start(procs: int, nice: int) -> list[subprocess.Popen]:
    """``procs`` busy processes (each at niceness ``nice``)."""

    def lower() -> None:
        if nice:
            os.nice(nice)

    return [
        subprocess.Popen([sys.executable, "-c", BUSY], preexec_fn=lower, stdin=subprocess.DEVNULL)
        for _ in range(procs)
    ]


def stop(children: list[subprocess.Popen]) -> None:
    """End each child by its PID: SIGTERM, then SIGKILL for one still alive after 2 s."""
    for p in children:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 2
    for p in children:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay", default="0", help="wait this long before starting (90, 90s, 25m)")
    ap.add_argument("--duration", default="5m", help="keep the hog running this long (default 5m)")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1, help="busy processes (default: CPUs)")
    ap.add_argument("--nice", type=int, default=0, help="niceness of the busy processes (default 0)")
    args = ap.parse_args(argv)
    delay, duration = seconds(args.delay), seconds(args.duration)
    children: list[subprocess.Popen] = []

    def interrupted(signum: int, _frame: object) -> None:
        stop(children)
        print(f"{now()} cpu_hog: signal {signum}: ended {[p.pid for p in children]}", flush=True)
        sys.exit(130)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    print(f"{now()} cpu_hog: {args.procs} busy process(es) in {delay:g} s, for {duration:g} s", flush=True)
    time.sleep(delay)
    children.extend(start(args.procs, args.nice))
    print(f"{now()} cpu_hog: started pids {[p.pid for p in children]}", flush=True)
    time.sleep(duration)
    stop(children)
    print(f"{now()} cpu_hog: ended pids {[p.pid for p in children]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
