"""Big-file benchmark: a ping log of SIZE MB through the parse stage; prints time and peak RSS.

The log is built from the real reply lines of ``tests/fixtures/ping/loopback-plain.txt``
(repeated, with increasing icmp_seq) and its real statistics block, with a sidecar,
then parsed by ``podnet.parse.parse_experiment`` in a child process so the peak
RSS is the parse's alone. Detection reads a bounded head; ping streams line by line.

    .venv/bin/python benchmarks/bench_big_ping.py [SIZE_MB]   (default 500)
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ping" / "loopback-plain.txt"


def build(path: Path, size_mb: float) -> int:
    lines = FIX.read_text().splitlines(keepends=True)
    header = [ln for ln in lines if ln.startswith("PING")]
    replies = [ln for ln in lines if "bytes from" in ln]
    tail = lines[lines.index(next(ln for ln in lines if ln.startswith("---"))) - 1 :]
    target = int(size_mb * 1e6)
    n = 0
    with open(path, "w") as fh:
        fh.writelines(header)
        written = 0
        block = []
        while written < target:
            for r in replies:
                n += 1
                block.append(re.sub(r"icmp_seq=\d+", f"icmp_seq={n}", r))
            if len(block) >= 10000:
                s = "".join(block)
                fh.write(s)
                written += len(s)
                block = []
        fh.write("".join(block))
        fh.writelines(tail)
    return n


CHILD = """
import sys, time, resource
from podnet.parse import parse_experiment
t0 = time.perf_counter()
p = parse_experiment(sys.argv[1], "bench")
dt = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{dt:.2f} {rss:.0f} {len(p.tidy)} {len(p.failed)}")
"""


def main(size_mb: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        raw.mkdir()
        log = raw / "big-ping.txt"
        t0 = time.perf_counter()
        n = build(log, size_mb)
        (raw / "big-ping.txt.meta.yaml").write_text("tool: ping\nvariant: v\nscenario: s\n")
        built = time.perf_counter() - t0
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(raw)], capture_output=True, text=True, check=True
        )
        dt, rss, rows, failed = out.stdout.split()
        print(
            f"ping log                  {log.stat().st_size / 1e6:.0f} MB, {n} reply lines (built in {built:.1f} s)"
        )
        print(f"parse stage               {dt} s")
        print(f"peak RSS of the parse     {rss} MiB")
        print(f"tidy rows {rows}, failed {failed}")
        print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 500)
