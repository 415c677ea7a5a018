"""What the pipeline benchmarks share (``bench_pipeline.py``, ``bench_scale.py``): scaled copies of
real raw files, the committed tree as a work directory, and one Snakemake run timed per job (wall,
CPU, peak RSS of each job's process tree) and printed."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = REPO / ".venv/bin/snakemake"
ZYGOTE = "podnet.config.warm import serve"  # the warm workers' zygote (podnet.config.warm.start)
SCRIPT = re.compile(r"\.snakemake/scripts/tmp[^.]*\.(\w+)\.py")


def build_raw(dest: Path, runs: int, dirs: list[Path] | None = None) -> int:
    """Copies of raw/seed-*/ (or ``dirs``; raw file + sidecar, repeat renumbered) until ``runs`` files exist."""
    from podnet.parse.raw import find_raw_files, read_sidecar, write_raw

    dirs = dirs or sorted((REPO / "raw").glob("seed-*"))
    sources = [(d, f) for d in dirs for f in find_raw_files(d)]
    copies = -(-runs // len(sources))
    n = 0
    for c in range(copies):
        for d, f in sources:
            if n >= runs:
                return n
            meta = read_sidecar(f)
            meta.pop("sha256", None)
            meta.pop("podnet_sidecar", None)
            meta["repeat"] = int(meta.get("repeat", 1)) + 1000 * (c + 1)
            rel = f.relative_to(d)
            target = dest / d.name / rel.parent / f"{rel.stem}-c{c:05d}{rel.suffix}"
            write_raw(target, f.read_bytes(), meta)
            n += 1
    return n


def committed_tree(dest: Path) -> Path:
    """``git archive HEAD`` unpacked into ``dest``: the workflow and podnet as committed (editing the
    tree while a benchmark runs changes nothing)."""
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


@dataclass
class Phase:
    """What one Snakemake invocation cost."""

    label: str
    seconds: float = 0.0
    cpu_s: float = 0.0
    load: float = 0.0
    tree_peak_mib: float = 0.0
    largest_mib: float = 0.0
    zygote_cpu_s: float = 0.0
    first_job_s: float | None = None
    jobs: list[tuple[str, float, float, float]] = field(default_factory=list)  # rule, s, CPU s, MiB
    spans: list[tuple[str, float, float]] = field(default_factory=list)  # rule, start, end (s into the run)


def run_phase(label: str, cfg: Path, targets: list[str], cores: int, src: Path) -> Phase:
    """One `snakemake` run of the workflow in ``src``, its process tree sampled every 0.1 s."""
    cmd = ["/usr/bin/time", "-f", "BENCH_TIME %e %M", str(SNAKEMAKE), *targets, "--cores", str(cores)]
    cmd += ["--configfile", str(cfg), "--quiet", "rules"]  # (both take several values: targets first)
    ph = Phase(label, load=os.getloadavg()[0])
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(src)}  # podnet from ``src`` (also in notebook kernels)
    # the warm zygote's logs: a worker is the zygote's child, not its job's (podnet.config.warm), and
    # each worker's exact CPU is a line there; the lines this phase adds are read after it
    logs = {p: p.stat().st_size for p in cfg.parent.rglob("logs/warm.log")}
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
    warm = []  # the zygote's accounts of its workers, lines added in this phase
    for p in cfg.parent.rglob("logs/warm.log"):
        with p.open("rb") as f:
            f.seek(logs.get(p, 0))
            warm += [json.loads(x) for x in f.read().decode().splitlines() if x.startswith('{"warm_job"')]
    ph.jobs, ph.first_job_s = _jobs(seen, warm)
    # the zygote itself (its workers are forks: the same command line), from its start (while the
    # DAG is built) to its stop (onsuccess)
    zygotes = [s for s in seen.values() if _first_of(lambda cmd: ZYGOTE in cmd, s, seen)]
    ph.spans = sorted(
        [(SCRIPT.search(s["cmd"]).group(1), s["start"], s["end"]) for s in seen.values() if _is_job(s, seen)]
        + [("(warm zygote)", s["start"], s["end"]) for s in zygotes],
        key=lambda r: r[1],
    )
    ph.zygote_cpu_s = sum(s.get("cpu", 0.0) for s in zygotes)
    return ph


def _jobs(
    seen: dict[int, dict], warm: list[dict]
) -> tuple[list[tuple[str, float, float, float]], float | None]:
    """Jobs (script processes): wall time, CPU time and peak RSS of their own process tree, and of
    the warm workers that ran for them (``warm``: the zygote's accounts, exact, from their exits; a
    worker is the job's when the job, or a process under one of the job's workers, asked for it)."""
    parent = {pid: s["ppid"] for pid, s in seen.items()}
    jobs = {pid: SCRIPT.search(s["cmd"]).group(1) for pid, s in seen.items() if _is_job(s, seen)}
    peak: dict[int, float] = defaultdict(float)
    cpu: dict[int, float] = defaultdict(float)
    for pid, s in seen.items():
        up = pid
        while up in seen and up not in jobs:
            up = parent.get(up)
        if up in jobs:
            peak[up] += s["peak"]  # sum of the job's processes' peaks (an upper bound of its tree's)
            cpu[up] += s.get("cpu", 0.0)  # as last sampled (up to 0.1 s before the process ended)
    owner = {w["pid"]: w["requester"] for w in warm}  # worker -> the process that asked for it
    for w in warm:
        up = w["requester"]
        while up is not None and up not in jobs:
            up = owner.get(up) if up in owner else parent.get(up)
        if up in jobs:
            cpu[up] += w["cpu_s"]
            peak[up] += w["maxrss_mib"]
    rows = [(jobs[p], seen[p]["end"] - seen[p]["start"], cpu[p], peak[p]) for p in jobs]
    first = min((seen[p]["start"] for p in jobs), default=None)
    return sorted(rows, key=lambda r: (r[0], -r[1])), first


def _first_of(match: Callable[[str], object], s: dict, seen: dict[int, dict]) -> bool:
    """Whether process ``s``'s command line matches (``match(cmd)``) and its parent's does not."""
    return bool(match(s["cmd"])) and not match(seen.get(s["ppid"], {}).get("cmd", ""))


def _is_job(s: dict, seen: dict[int, dict]) -> bool:
    """A job's own process: a Snakemake script not started by another one."""
    return _first_of(SCRIPT.search, s, seen)


def show_timeline(ph: Phase) -> None:
    """Each job's start and end in the run (sampled every 0.1 s) and a bar of it: the critical path."""
    scale = 60 / max(ph.seconds, 1e-9)
    for rule, start, end in ph.spans:
        bar = " " * int(start * scale) + "#" * max(1, int((end - start) * scale))
        print(f"        {rule:<18} {start:5.1f}-{end:5.1f} s  |{bar}")


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
        f"snakemake itself ~{ph.cpu_s - jobs_cpu - ph.zygote_cpu_s:.1f} s CPU; "
        f"warm zygote's imports {ph.zygote_cpu_s:.1f} s CPU"
    )
    for rule, (n, s, cpu, mib) in sorted(busy.items(), key=lambda kv: -kv[1][1]):
        print(
            f"      {rule:<16} {n:4d} job(s) {s:7.1f} s wall, {cpu:7.1f} s CPU in all "
            f"({s / n:5.1f} s, {cpu / n:5.1f} s CPU each)   peak {mib:5.0f} MiB"
        )
