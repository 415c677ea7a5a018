"""Parse-stage benchmark: prints figures, asserts nothing.

Writes N raw files (iperf3 JSON, iperf3 text, ping) with sidecars into a
temporary raw dir, then times the parse stage against a floor that only reads
the files and decodes their JSON/YAML. Machines here are shared and noisy, so
read the ratio (parse / floor) measured in the same run, not the seconds.

    .venv/bin/python benchmarks/bench_parse.py [N]
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, sidecar_path, write_raw

FIX = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
KINDS = [
    ("iperf3", FIX / "iperf3/tcp-p2-omit.json"),
    ("iperf3", FIX / "iperf3/tcp-p3.txt"),
    ("ping", FIX / "ping/loopback-flood.txt"),
]


def main(n: int = 3000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        for i in range(n):
            tool, src = KINDS[i % len(KINDS)]
            meta = {"tool": tool, "variant": f"v{i % 3}", "scenario": f"s{i % 9}", "repeat": i // 27 + 1}
            write_raw(raw / f"s{i % 9}" / f"run{i:06d}{src.suffix}", src.read_text(), meta)
        files = find_raw_files(raw)

        t0 = time.perf_counter()
        for f in files:
            text = f.read_text()
            if f.suffix == ".json":
                json.loads(text)
            yaml.load(sidecar_path(f).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        floor = time.perf_counter() - t0

        t0 = time.perf_counter()
        parsed = parse_experiment(raw, "bench")
        full = time.perf_counter() - t0
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"files                     {len(files)}")
    print(
        f"tidy rows                 {len(parsed.tidy)}  interval rows {len(parsed.intervals)}  failed {len(parsed.failed)}"
    )
    print(f"floor (read+json+yaml)    {floor:.2f} s  ({floor / len(files) * 1e3:.2f} ms/file)")
    print(f"parse stage               {full:.2f} s  ({full / len(files) * 1e3:.2f} ms/file)")
    print(f"ratio parse / floor       {full / floor:.2f}")
    print(f"peak RSS                  {peak_mb:.0f} MiB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000)
