"""The whole pipeline at scale, through Snakemake as `make run` runs it (printed, not asserted).

    .venv/bin/python benchmarks/bench_pipeline.py [--runs 10000 100000] [--tables-only]

For each size, builds a scaled experiment from real raw files (every raw file
of raw/seed-* copied with its sidecar and a new repeat number, the issue 12
recipe; ``--source DIR`` takes another experiment's raw/), in a temporary
directory outside the repository (raw/, processed/ and the config all there:
nothing lands in the repository's processed/), then runs ``snakemake --cores 2``
on it:

- ``full``: from nothing: parse shards -> tidy -> stats -> figures -> notebooks;
- ``no-op``: again, nothing changed;
- ``add one run``: one more raw file (a copy of a seed-raven iperf3 run, new repeat);
- ``no-op``: again.

Each phase prints its wall time, the peak RSS of the whole process tree (the
sum over Snakemake and every process it started, sampled every 0.1 s) and of
the largest single process (``/usr/bin/time``'s maximum resident set size:
exact, the largest of the tree), then where the time went: Snakemake alone
(start-up, DAG, file checks) and each job (rule, seconds, its tree's peak RSS;
a notebook's includes its kernel). The workflow runs from a copy of the
committed tree (``git archive HEAD``). ``--tables-only`` asks only for parse + tidy
+ stats outputs (no figures, no notebooks).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from bench_common import REPO, build_raw, committed_tree, run_phase, show

NOTEBOOKS = ["report", "explore", "compare", "planning"]


def write_config(tmp: Path, raw: Path, shards: int, notebooks: list[str]) -> Path:
    """An experiment over the scaled raw files; every path inside ``tmp``."""
    cfg = {
        "experiment": "scale",
        "raw_dir": str(raw),
        "processed_dir": str(tmp / "processed/scale"),
        "stats": {"comparisons": [{"by": "scenario", "baseline": "same-edge"}]},
        "report": {"notebooks": notebooks},
    }
    if shards:
        cfg["parse"] = {"shards": shards}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def tables_targets(tmp: Path) -> list[str]:
    out = tmp / "processed/scale"
    return [str(out / n) for n in ("tidy.parquet", "tidy.csv", "summary.csv", "ratios.csv", "planning.csv")]


def add_one_run(raw: Path) -> Path:
    """A copy of one seed-raven iperf3 run (raw file + sidecar) with a repeat no other run has."""
    from podnet.parse.raw import find_raw_files, read_sidecar, sidecar_path, write_raw

    src = next(f for f in sorted(find_raw_files(REPO / "raw/seed-raven")) if "iperf3" in f.name)
    meta = read_sidecar(src)
    for k in ("sha256", "podnet_sidecar"):
        meta.pop(k, None)
    meta["repeat"] = 999_999
    target = raw / "seed-raven/added" / f"added{src.suffix}"
    if target.exists():  # left by an earlier benchmark on the same --raw copy: its own file, not a run
        target.unlink()
        sidecar_path(target).unlink(missing_ok=True)
    write_raw(target, src.read_bytes(), meta)
    return target


def bench(runs: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="podnet-bench-") as d:
        tmp = Path(d)
        # the workflow and podnet as committed (HEAD), so editing the tree meanwhile changes nothing
        src = committed_tree(tmp / "src")
        t0 = time.perf_counter()
        raw = tmp / "raw"
        if args.raw:  # built once by an earlier call (--build-only), read in place
            raw = Path(args.raw) / str(runs)
            n = sum(1 for _ in raw.rglob("*.meta.yaml"))
            print(f"\n== {n} raw files (+ sidecars) in {raw}; the rest in {tmp}")
        else:
            n = build_raw(raw, runs, [Path(s) for s in args.source] or None)
            print(f"\n== {n} raw files (+ sidecars) copied in {time.perf_counter() - t0:.0f} s into {tmp}")
        shards = args.shards
        notebooks = [] if args.tables_only else NOTEBOOKS
        cfg = write_config(tmp, raw, shards, notebooks)
        targets = tables_targets(tmp) if args.tables_only else []
        what = (
            "parse + tidy + stats"
            if args.tables_only
            else "whole pipeline, notebooks " + ", ".join(notebooks)
        )
        print(f"   {what}; {shards or 'default (8)'} parse shards; --cores {args.cores}")
        phases = [("full", None), ("no-op", None), ("add one run", add_one_run), ("no-op", None)]
        for label, change in phases[: 2 if args.no_incremental else 4]:
            if change:
                change(raw)
            show(run_phase(label, cfg, targets, args.cores, src))
        if args.keep:
            subprocess.run(["cp", "-a", str(tmp), args.keep], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[10000])
    ap.add_argument("--source", nargs="*", default=[], help="raw dirs to copy (default raw/seed-*)")
    ap.add_argument("--shards", type=int, default=0, help="parse shards (default: the config's default)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--tables-only", action="store_true", help="parse + tidy + stats outputs only")
    ap.add_argument("--no-incremental", action="store_true", help="full and no-op only")
    ap.add_argument("--keep", help="copy the temporary directory here at the end")
    ap.add_argument("--raw", help="read (with --build-only: write) the scaled raw files in RAW/<runs>/")
    ap.add_argument("--build-only", action="store_true", help="only copy the raw files into --raw")
    args = ap.parse_args()
    if args.build_only:
        for runs in args.runs:
            t0 = time.perf_counter()
            n = build_raw(Path(args.raw) / str(runs), runs, [Path(s) for s in args.source] or None)
            print(f"{n} raw files (+ sidecars) copied in {time.perf_counter() - t0:.0f} s")
        return
    print(
        f"podnet pipeline benchmark; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    for runs in args.runs:
        bench(runs, args)


if __name__ == "__main__":
    main()
