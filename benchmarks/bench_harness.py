"""What the harness adds on the embedded cluster: tool CPU affinity on/off, interleaved, and the
interference every run's sidecar records (printed, not asserted).

    make cluster-up NODES=2 && .venv/bin/python benchmarks/bench_harness.py [--repeats 8] [--duration 3]

One launch against the running cluster (.cluster/kubeconfig), pod-pod-cross-node: iperf3 TCP and
netperf TCP_RR, each unpinned and pinned (``affinity: [0, 1]``: client on CPU 0, server on CPU 1),
interleaved, one uncounted warm-up of each. Prints per test the runs, the geometric mean, the CV, the
ratio pinned / unpinned of geometric means with a 95 % Welch interval on the logs, and the medians
of the sidecars' interference (CPU busy and steal, the launcher's and the daemons' share of one CPU).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def config(raw: Path, repeats: int, duration: float, warmup: int) -> dict:
    state = REPO / ".cluster"
    return {
        "experiment": "bench-harness",
        "raw_dir": str(raw),
        "launch": {
            "kubeconfig": str(state / "kubeconfig"),
            "image_file": str(state / "image"),
            "cluster_info": str(state / "info.json"),
            "image_pull_policy": "Never",
            "repeats": repeats,
            "warmup": warmup,
            "defaults": {"duration": duration},
            "tools": {
                "iperf3": {
                    "tests": [
                        {"name": "tcp", "params": {"omit": 1}},
                        {"name": "tcp-pinned", "params": {"omit": 1, "affinity": [0, 1]}},
                    ]
                },
                "netperf": {
                    "tests": [
                        {"name": "rr", "params": {"test": "TCP_RR"}},
                        {"name": "rr-pinned", "params": {"test": "TCP_RR", "affinity": [0, 1]}},
                    ]
                },
            },
            "scenarios": [
                {
                    "name": "pod-pod-cross-node",
                    "client": {"kind": "pod", "other_node_than": "server"},
                    "server": {"kind": "pod"},
                }
            ],
        },
    }


def ratio(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Ratio of geometric means a / b with a 95 % Welch interval on the logs."""
    la, lb = np.log(a), np.log(b)
    d = la.mean() - lb.mean()
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    h = stats.t.ppf(0.975, df) * np.sqrt(va + vb)
    return float(np.exp(d)), float(np.exp(d - h)), float(np.exp(d + h))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--duration", type=float, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()

    from podnet import tools as adapters
    from podnet.launch.rounds.runner import launch
    from podnet.launch.spec.config import from_mapping
    from podnet.parse import parse_experiment
    from podnet.parse.raw import read_sidecar

    raw = Path(tempfile.mkdtemp(prefix="bench-harness-")) / "raw"
    cfg = from_mapping(config(raw, args.repeats, args.duration, args.warmup))
    res = launch(cfg)
    print(f"launch: {res.launched} runs ({res.ok} ok), {res.warmups} warm-ups, error: {res.error or '-'}")
    tidy = parse_experiment(raw, cfg.experiment).tidy
    # the configured test name (the sidecar's), whatever the adapter infers from the output
    tidy["test"] = tidy["raw_path"].map({p: read_sidecar(p)["test"] for p in tidy["raw_path"].unique()})
    values: dict[str, list[float]] = {}
    inter: dict[str, dict[str, list[float]]] = {}
    for (tool, test), g in tidy.groupby(["tool", "test"]):
        metric = next(m for m in adapters.headline_metrics(tool) if m in set(g["metric"]))
        g = g[g["metric"] == metric]
        values[test] = list(g["value"])
        agg = inter.setdefault(test, {})
        for p in g["raw_path"].unique():
            i = read_sidecar(p).get("interference") or {}
            wall = i.get("exec_wall_s") or float("nan")
            d = i.get("daemons") or {}
            for k, v in (
                ("busy", i.get("busy")),
                ("steal", i.get("steal")),
                ("launcher", (i.get("launcher_cpu_s") or 0) / wall),
                ("daemons", (d.get("cpu_s") or float("nan")) / wall),
                ("control_plane", (d.get("control_plane_cpu_s") or float("nan")) / wall),
                ("daemon_cgroup", (d.get("cgroup_cpu_s") or float("nan")) / wall),
            ):
                agg.setdefault(k, []).append(float("nan") if v is None else float(v))
    out = {}
    for test, v in values.items():
        gm = float(np.exp(np.mean(np.log(v))))
        cv = statistics.stdev(v) / statistics.mean(v) if len(v) > 1 else float("nan")
        med = {k: round(float(np.nanmedian(x)), 4) for k, x in inter[test].items()}
        out[test] = {"n": len(v), "geomean": gm, "cv": round(cv, 4), "interference_median": med}
        print(f"{test:12s} n={len(v)} geomean={gm:.4g} cv={cv:.3f} interference(median)={med}")
    for pinned, plain in (("tcp-pinned", "tcp"), ("rr-pinned", "rr")):
        if pinned in values and plain in values and len(values[pinned]) > 1 and len(values[plain]) > 1:
            r, lo, hi = ratio(values[pinned], values[plain])
            out[f"{pinned}/{plain}"] = [r, lo, hi]
            print(f"{pinned} / {plain}: {r:.3f} [{lo:.3f}, {hi:.3f}]")
    print(json.dumps(out, indent=1))
    return 0 if res.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
