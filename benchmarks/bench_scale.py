"""podnet at scale: the whole pipeline's cost of one added raw file, and the statistics stage alone
(printed, not asserted).

    .venv/bin/python benchmarks/bench_scale.py --pipeline [--runs 10000]   # whole pipeline, +1 raw file
    .venv/bin/python benchmarks/bench_scale.py [--runs 10000] [--replicate 100000]   # stats stage

``--pipeline``: the seed-cni-1gbe example (its config: five notebooks, every figure) over its raw
files replicated to ``--runs`` files (new repeat numbers; its published tables beside them), in a
temporary directory (``--dir``: in that directory), through ``snakemake --cores 2`` run from
``git archive HEAD`` (the committed tree; editing meanwhile changes nothing): ``full``, ``no-op``,
``+1 raw file`` (one more copy of one of its runs), ``no-op`` and ``figure code`` (a comment
appended to one published figure's own module in that copy: prints whether only that figure
re-ran). Each phase prints its wall and CPU time, per rule the jobs Snakemake ran with their wall
and CPU seconds, and the outputs it rewrote (which figures and notebooks re-ran).

Builds a scaled experiment from the real raw files in raw/seed-*: every raw
file and its sidecar is copied ``runs / files`` times with new repeat numbers
(the issue 12 recipe), parsed with podnet.parse into tidy.parquet. Then, each
in a fresh process (so its peak RSS is its own):

- ``full``: stats.run without a cache (every group computed);
- ``full+cache``: the same, filling the per-group cache;
- ``no-op``: again on the unchanged table (every group from the cache);
- ``one added run``: the table plus one more run (a copy with a new repeat).

``--replicate N`` also times a table of N runs made by replicating the parsed
runs' tidy rows with new repeat numbers (parsing N files is the parse stage's
benchmark, not this one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bench_common import REPO, build_raw, committed_tree, run_phase, show, show_timeline

SETTINGS = {"comparisons": [{"by": "scenario", "baseline": "same-edge"}]}


def one_more_run(tidy: pd.DataFrame) -> pd.DataFrame:
    """The table plus a copy of its first run with a new repeat number and run id."""
    first = tidy[tidy["run_id"] == tidy["run_id"].iloc[0]].copy()
    first["repeat"] = int(pd.to_numeric(tidy["repeat"]).max()) + 1
    first["run_id"] = first["run_id"] + "-added"
    return pd.concat([tidy, first], ignore_index=True)


def measure(mode: str, tidy_path: str, out: str) -> None:
    """One timed stats.run in this process; prints a JSON line (seconds, peak RSS MiB, groups computed)."""
    from podnet import stats
    from podnet.stats import cache as cache_mod

    computed = []
    real = cache_mod.subset
    cache_mod.subset = lambda g, idx: computed.append(len(idx)) or real(g, idx)  # count recomputed groups
    path = Path(tidy_path)
    if mode == "one added run":
        path = path.with_name("tidy-plus-one.parquet")
        one_more_run(pd.read_parquet(tidy_path)).to_parquet(path)
    t0 = time.perf_counter()
    stats.run(path, out, SETTINGS, cache=mode != "full")
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"mode": mode, "seconds": round(dt, 2), "peak_rss_mib": round(rss), "recomputed": computed}
        )
    )


def run_modes(tidy_path: Path, out: Path, label: str) -> None:
    t = pd.read_parquet(tidy_path, columns=["run_id"])
    print(f"\n{label}: {t['run_id'].nunique()} runs, {len(t)} tidy rows")
    for mode in ("full", "full+cache", "no-op", "one added run"):
        p = subprocess.run(
            [sys.executable, __file__, "--measure", mode, str(tidy_path), str(out)],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        if p.returncode != 0:
            print(p.stderr[-2000:])
            raise SystemExit(p.returncode)
        r = json.loads(p.stdout.strip().splitlines()[-1])
        groups = sum(r["recomputed"]) if r["recomputed"] else 0
        print(
            f"  {mode:<14} {r['seconds']:7.2f} s   peak RSS {r['peak_rss_mib']:5d} MiB   groups computed {groups}"
        )


EXAMPLE = "seed-cni-1gbe"


def _outputs(processed: Path) -> dict[str, int]:
    """mtime of every output under ``processed`` (logs and caches aside)."""
    return {
        str(p.relative_to(processed)): p.stat().st_mtime_ns
        for p in processed.rglob("*")
        if p.is_file() and not {"logs", ".cache"} & set(p.relative_to(processed).parts)
    }


def _figure_to_touch(processed: Path) -> str | None:
    """A published figure drawn by a module of its own (editing it concerns that figure alone)."""
    from podnet.config.lean import FIGURES
    from podnet.report.figures import published

    modules = [m.split(".")[0] for m in FIGURES.values()]
    own = [
        n
        for n in published(processed / "figures" / "plan.json")
        if modules.count(FIGURES[n].split(".")[0]) == 1
    ]
    return own[0] if own else None


def touch_figure_code(src: Path, name: str) -> None:
    """A comment appended to figure ``name``'s module in the workflow's copy: its code version changes,
    what it draws does not."""
    from podnet.config.lean import FIGURES

    module = src / "podnet/report/figures" / f"{FIGURES[name].split('.')[0]}.py"
    module.write_text(module.read_text() + "# touched by bench_scale.py\n")
    print(f"  (appended a comment to {module.relative_to(src)})")


def pipeline(
    runs: int,
    cores: int,
    parent: str | None,
    keep: bool = False,
    shards: int = 0,
    repeat: int = 1,
    timeline: bool = False,
) -> None:
    """The whole pipeline on ``runs`` copies of the seed-cni-1gbe example's raw files (see the docstring);
    ``keep``: the directory stays (its path is printed), to time single jobs in it afterwards."""
    import os
    import shutil

    import yaml

    from podnet.parse.raw import find_raw_files, read_sidecar, write_raw

    source = REPO / "raw" / EXAMPLE
    if keep:
        kept = tempfile.mkdtemp(prefix="podnet-scale-", dir=parent)
        print(f"kept: {kept}")
    with (
        contextlib.nullcontext(kept)
        if keep
        else tempfile.TemporaryDirectory(prefix="podnet-scale-", dir=parent) as d
    ):
        tmp = Path(d)
        t0 = time.perf_counter()
        n = build_raw(tmp / "raw", runs, [source])
        raw = tmp / "raw" / EXAMPLE
        shutil.copytree(source / "published", raw / "published")
        print(
            f"{n} raw files (+ sidecars) from raw/{EXAMPLE} in {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.1f}"
        )
        cfg = yaml.safe_load((REPO / "config/examples" / f"{EXAMPLE}.yaml").read_text())
        processed = tmp / "processed" / EXAMPLE
        cfg.update(raw_dir=str(raw), processed_dir=str(processed))
        if shards:  # the example's own is for its 22 files (the schema's default: 8)
            cfg["parse"] = {**cfg.get("parse", {}), "shards": shards}
        path = tmp / "config.yaml"
        path.write_text(yaml.safe_dump(cfg))

        added = []

        def add_one() -> None:
            src = find_raw_files(source)[0]
            meta = read_sidecar(src)
            for k in ("sha256", "podnet_sidecar"):
                meta.pop(k, None)
            meta["repeat"] = 999_999 - len(added)
            rel = src.relative_to(source)
            write_raw(raw / rel.parent / f"added{len(added) or ''}{rel.suffix}", src.read_bytes(), meta)
            added.append(rel)
            print(f"  (added a copy of raw/{EXAMPLE}/{rel})")

        src = committed_tree(tmp / "src")  # the workflow and podnet as committed
        touched: list[str] = []

        def touch() -> None:
            name = _figure_to_touch(processed)
            if name:
                touched.append(name)
                touch_figure_code(src, name)

        phases = [("full", None), ("no-op", None), ("+1 raw file", add_one), ("no-op", None)]
        phases += [("+1 raw file", add_one)] * (repeat - 1)  # more, for a median on a noisy machine
        plus: list[float] = []
        for label, change in [*phases, ("figure code", touch)]:
            if change:
                change()
            before = _outputs(processed) if processed.exists() else {}
            ph = run_phase(label, path, [], cores, src)
            after = _outputs(processed)
            rewritten = sorted(k for k in after if before.get(k) != after[k])
            show(ph)
            if timeline and label != "full":
                show_timeline(ph)
            if label == "+1 raw file":
                plus.append(ph.seconds)
            if label == "full":
                continue
            shown = [k for k in rewritten if k.startswith(("figures/", "notebooks/")) and "/specs/" not in k]
            print(f"      rewrote {len(rewritten)} file(s); figures and notebooks: {', '.join(shown) or '-'}")
            if label == "figure code" and touched:
                # the plan (figure_plan: what every figure would draw, so every figure's code) is
                # computed again; of the figures, only the touched one may be drawn
                figs = [r for r, *_ in ph.jobs if r == "figure"]
                others = sorted({r for r, *_ in ph.jobs} - {"figure", "figure_plan"})
                # the figures' files (plan.json is the plan's, not a figure)
                drawn = sorted(
                    {
                        k.split("/")[1].rsplit(".", 1)[0]
                        for k in shown
                        if k.startswith("figures/") and k != "figures/plan.json"
                    }
                )
                alone = len(figs) == 1 and not others and drawn == touched
                print(
                    f"      change one figure's code ({touched[0]}) -> only that figure re-runs: "
                    f"{'yes' if alone else 'NO'} (jobs: {', '.join(r for r, *_ in ph.jobs) or '-'}; "
                    f"figures rewritten: {', '.join(drawn) or '-'})"
                )
        if len(plus) > 1:
            print(
                f"  +1 raw file, {len(plus)} times: median {statistics.median(plus):.1f} s ({', '.join(f'{x:.1f}' for x in plus)})"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pipeline", action="store_true", help="the whole pipeline's +1 raw file (seed-cni-1gbe)"
    )
    ap.add_argument("--cores", type=int, default=2, help="snakemake --cores (with --pipeline)")
    ap.add_argument("--dir", help="with --pipeline: make the temporary directory in DIR")
    ap.add_argument("--keep", action="store_true", help="with --pipeline: keep the directory (printed)")
    ap.add_argument("--runs", type=int, default=10000, help="raw files in the scaled experiment")
    ap.add_argument(
        "--repeat", type=int, default=1, help="with --pipeline: the +1 raw file phase this many times"
    )
    ap.add_argument(
        "--shards", type=int, default=0, help="with --pipeline: parse.shards (default: the example's, 2)"
    )
    ap.add_argument(
        "--timeline", action="store_true", help="with --pipeline: each job's start and end, as bars"
    )
    ap.add_argument("--replicate", type=int, default=0, help="also a tidy-level table of this many runs")
    ap.add_argument("--measure", nargs=3, metavar=("MODE", "TIDY", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    if args.pipeline:
        pipeline(args.runs, args.cores, args.dir, args.keep, args.shards, args.repeat, args.timeline)
        return
    from podnet.parse import parse_experiment

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        t0 = time.perf_counter()
        n = build_raw(d / "raw", args.runs)
        print(f"copied {n} raw files (+ sidecars) in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        tidy = parse_experiment(d / "raw", "scale").tidy
        print(f"parsed them in {time.perf_counter() - t0:.1f} s (podnet.parse, one process)")
        tidy.to_parquet(d / "tidy.parquet")
        run_modes(d / "tidy.parquet", d / "out", f"scaled from raw/seed-* ({n} files)")
        if args.replicate:
            runs = tidy["run_id"].nunique()
            k = -(-args.replicate // runs)
            big = pd.concat(
                [
                    tidy.assign(repeat=tidy["repeat"] + 100000 * (i + 1), run_id=tidy["run_id"] + f"-r{i}")
                    for i in range(k)
                ],
                ignore_index=True,
            )
            big.to_parquet(d / "big.parquet")
            del big
            run_modes(d / "big.parquet", d / "out-big", f"replicated tidy rows (x{k})")


if __name__ == "__main__":
    main()
