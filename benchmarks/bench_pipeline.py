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
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
from bench_scale import build_raw  # noqa: E402  (the same scaled copies as the stats benchmark)

SNAKEMAKE = REPO / ".venv/bin/snakemake"
SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^.]*\.(\w+)\.py")
NOTEBOOKS = ["report", "explore", "compare", "planning"]


@dataclass
class Phase:
    """What one Snakemake invocation cost."""

    label: str
    seconds: float = 0.0
    cpu_s: float = 0.0
    load: float = 0.0
    tree_peak_mib: float = 0.0
    largest_mib: float = 0.0
    first_job_s: float | None = None
    jobs: list[tuple[str, float, float, float]] = field(default_factory=list)  # rule, s, CPU s, MiB


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


def run_phase(label: str, cfg: Path, targets: list[str], cores: int, src: Path) -> Phase:
    """One `snakemake` run of the workflow in ``src``, its process tree sampled every 0.1 s."""
    cmd = ["/usr/bin/time", "-f", "BENCH_TIME %e %M", str(SNAKEMAKE), *targets, "--cores", str(cores)]
    cmd += ["--configfile", str(cfg), "--quiet", "rules"]  # (both take several values: targets first)
    ph = Phase(label, load=os.getloadavg()[0])
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(src)}  # podnet from ``src`` (also in notebook kernels)
    proc = subprocess.Popen(cmd, cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    seen: dict[int, dict] = {}
    while proc.poll() is None:
        now = time.monotonic() - t0
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        total = 0.0
        for p in tree:
            try:
                rss = p.memory_info().rss / 2**20
                if p.pid not in seen:
                    seen[p.pid] = {"cmd": " ".join(p.cmdline()), "ppid": p.ppid(), "start": now, "peak": 0.0}
            except psutil.Error:
                continue
            s = seen[p.pid]
            s["end"], s["peak"] = now, max(s["peak"], rss)
            try:
                c = p.cpu_times()
                s["cpu"] = c.user + c.system
            except psutil.Error:
                pass
            total += rss
        ph.tree_peak_mib = max(ph.tree_peak_mib, total)
        time.sleep(0.1)
    out, err = proc.communicate()
    ph.seconds = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    ph.cpu_s = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    if proc.returncode != 0:
        print(out[-3000:], err[-5000:], sep="\n")
        raise SystemExit(f"{label}: snakemake failed ({proc.returncode})")
    m = re.search(r"BENCH_TIME (\S+) (\d+)", err)
    ph.largest_mib = int(m.group(2)) / 1024 if m else float("nan")
    ph.jobs, ph.first_job_s = _jobs(seen)
    return ph


def _jobs(seen: dict[int, dict]) -> tuple[list[tuple[str, float, float, float]], float | None]:
    """Jobs (script processes): wall time, CPU time and peak RSS of their own process tree."""
    parent = {pid: s["ppid"] for pid, s in seen.items()}
    jobs: dict[int, str] = {}
    for pid, s in seen.items():
        m = SCRIPT.search(s["cmd"])
        if m and not (parent.get(pid) in seen and SCRIPT.search(seen[parent[pid]]["cmd"])):
            jobs[pid] = m.group(1)
    peak: dict[int, float] = defaultdict(float)
    cpu: dict[int, float] = defaultdict(float)
    for pid, s in seen.items():
        up = pid
        while up in seen and up not in jobs:
            up = parent.get(up)
        if up in jobs:
            peak[up] += s["peak"]  # sum of the job's processes' peaks (an upper bound of its tree's)
            cpu[up] += s.get("cpu", 0.0)  # as last sampled (up to 0.1 s before the process ended)
    rows = [(jobs[p], seen[p]["end"] - seen[p]["start"], cpu[p], peak[p]) for p in jobs]
    first = min((seen[p]["start"] for p in jobs), default=None)
    return sorted(rows, key=lambda r: (r[0], -r[1])), first


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


def show(ph: Phase) -> None:
    print(
        f"  {ph.label:<12} {ph.seconds:8.1f} s (CPU {ph.cpu_s:6.1f} s)   peak RSS: tree {ph.tree_peak_mib:6.0f} MiB, "
        f"largest process {ph.largest_mib:6.0f} MiB   jobs {len(ph.jobs)}   load {ph.load:.1f}"
    )
    if not ph.jobs:
        return
    busy = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for rule, s, cpu, mib in ph.jobs:
        b = busy[rule]
        b[0], b[1], b[2], b[3] = b[0] + 1, b[1] + s, b[2] + cpu, max(b[3], mib)
    jobs_cpu = sum(b[2] for b in busy.values())
    print(
        f"      snakemake before its first job: {ph.first_job_s:.1f} s; "
        f"snakemake itself ~{ph.cpu_s - jobs_cpu:.1f} s CPU"
    )
    for rule, (n, s, cpu, mib) in sorted(busy.items(), key=lambda kv: -kv[1][1]):
        print(
            f"      {rule:<16} {n:4d} job(s) {s:7.1f} s wall, {cpu:7.1f} s CPU in all "
            f"({s / n:5.1f} s, {cpu / n:5.1f} s CPU each)   peak {mib:5.0f} MiB"
        )


def bench(runs: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="podnet-bench-") as d:
        tmp = Path(d)
        # the workflow and podnet as committed (HEAD), so editing the tree meanwhile changes nothing
        src = tmp / "src"
        src.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
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
