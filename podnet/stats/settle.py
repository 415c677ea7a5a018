"""Test length and warm-up from data: how iperf3's per-second throughput settles within a run.

Reads iperf3 JSON runs (``iperf3 -J -i 1``, the tool's own ``intervals`` array) under a raw
directory and answers, per (variant, scenario, tool, test) group of runs:

- **warm-up**: each run's *steady mean* is the median of its second half; the group's *profile*
  is, per second i, the median over runs of ``x_i / steady - 1``. The warm-up to omit is the
  first second from which every later second of the profile is within ``tolerance`` (2 %) of
  steady. The median over runs removes the per-second noise of single runs, so what is left is
  the transient every run has (TCP slow start, CPU frequency, caches).
- **test length**: after the warm-up, each run is cut into non-overlapping windows of w seconds
  (3, 5, 10, 20). ``within_cv`` is the CV of window means inside one run (pooled over runs);
  ``test_cv`` the CV of all window means of all runs, i.e. what repeated w-second tests would
  show (within- plus between-run noise); ``between_cv`` the CV across runs of their whole steady
  means (the noise that no test length removes). The shortest w whose within-run CV is at most
  the between-run CV is *recommended*: longer tests mostly re-measure the same run.
  ``time_per_precision`` is the time a case needs for a given interval width with w-second tests
  (repeats scale with ``test_cv`` squared, each costs w + omit + overhead seconds), relative to the
  cheapest w.

Record runs long enough for this (30 s, no ``-O``): ``podnet floor --config
benchmarks/settle-floor.yaml --tests iperf3:tcp-30s --raw raw/settle``, then ``podnet settle
raw/settle``. Runs launched on a cluster with a long test work the same way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.parse.raw import SIDECAR_SUFFIX, read_sidecar
from podnet.stats.core import cv

WINDOWS = (3, 5, 10, 20)
TOLERANCE = 0.02
#: seconds a launched run costs beyond its test (exec, process start): 0.2 s measured on the
#: embedded cluster (iperf3 -t 3 -O 1 runs took 4.19 s from exec to exit, median of 42)
OVERHEAD_S = 0.2
KEYS = ["variant", "scenario", "tool", "test"]


@dataclass
class Run:
    """One iperf3 run's per-interval receiver-side series (bit/s), in order, with its group."""

    path: str
    variant: str
    scenario: str
    test: str
    values: np.ndarray
    seconds: np.ndarray
    omitted: np.ndarray

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.variant, self.scenario, "iperf3", self.test)


def series(doc: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bit/s, seconds, omitted) of each interval's ``sum`` in an iperf3 JSON document.

    Omitted (``-O``) intervals are kept: the warm-up is what they hold. Raises ValueError
    for a document without intervals (an error, or not iperf3 JSON).
    """
    if doc.get("error"):
        raise ValueError(f"iperf3 error: {doc['error']}")
    ivs = doc.get("intervals")
    if not isinstance(ivs, list) or not ivs:
        raise ValueError("no intervals")
    v, s, o = [], [], []
    for iv in ivs:
        summ = iv.get("sum") or {}
        if "bits_per_second" not in summ:
            raise ValueError("an interval without sum.bits_per_second")
        v.append(float(summ["bits_per_second"]))
        s.append(float(summ.get("seconds", summ.get("end", 0) - summ.get("start", 0))))
        o.append(bool(summ.get("omitted", False)))
    return np.array(v), np.array(s), np.array(o)


def read_run(path: Path) -> Run:
    """One raw iperf3 JSON file and its sidecar (scenario and test from the path when it has none)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    v, s, o = series(doc)
    try:
        meta = read_sidecar(path)
    except (OSError, ValueError):
        meta = {}
    return Run(
        path=str(path),
        variant=str(meta.get("variant") or path.parent.parent.parent.name),
        scenario=str(meta.get("scenario") or path.parent.parent.name),
        test=str(meta.get("test") or path.parent.name.removeprefix("iperf3-")),
        values=v,
        seconds=s,
        omitted=o,
    )


def load(raw_dir: Path | str) -> tuple[list[Run], list[tuple[str, str]]]:
    """Every iperf3 JSON run with intervals under ``raw_dir``, and (file, why) for those skipped."""
    runs, skipped = [], []
    for p in sorted(Path(raw_dir).rglob("*.json")):
        if p.name.endswith(SIDECAR_SUFFIX) or "_launch" in p.parts:
            continue
        try:
            runs.append(read_run(p))
        except (OSError, ValueError, json.JSONDecodeError) as exc:
            skipped.append((str(p), str(exc)))
    return runs, skipped


def _one_second(runs: Sequence[Run]) -> list[np.ndarray]:
    """Each run's values, checked to be 1-s intervals (the profile is indexed by interval).

    Single intervals may stretch (a starved iperf3 reports 1.2 s, then 0.8 s); their median must
    be 1 s. Each value is a rate over its own interval, so the index is about the second.
    """
    out = []
    for r in runs:
        if len(r.seconds) and abs(float(np.median(r.seconds)) - 1.0) > 0.05:
            raise ValueError(f"{r.path}: intervals are not 1 s (run iperf3 with -i 1)")
        out.append(r.values)
    return out


def _seconds(runs: Sequence[Run]) -> list[np.ndarray]:
    return [np.where(r.seconds > 0, r.seconds, 1.0) for r in runs]


def steady_mean(values: np.ndarray) -> float:
    """The steady level of one run: the median of its second half."""
    return float(np.median(values[len(values) // 2 :]))


def profile(runs: Sequence[Run]) -> np.ndarray:
    """Per second: the median over runs of the value relative to the run's steady mean, minus 1."""
    vals = _one_second(runs)
    n = min(len(v) for v in vals)
    rel = np.array([v[:n] / steady_mean(v) - 1.0 for v in vals])
    return np.median(rel, axis=0)


def noise_threshold(prof: np.ndarray, tolerance: float = TOLERANCE, z: float = 3.0) -> float:
    """What counts as settled: ``tolerance``, or ``z`` robust sds of the profile's second half when
    the profile is noisier than that (a deviation the noise could make is not a warm-up)."""
    half = prof[len(prof) // 2 :]
    sd = 1.4826 * float(np.median(np.abs(half - np.median(half)))) if len(half) else 0.0
    return max(tolerance, z * sd)


def settle_seconds(prof: np.ndarray, threshold: float = TOLERANCE) -> int:
    """Seconds to omit: one past the last second of the profile's first half that deviates by more
    than ``threshold`` (the second half is the steady reference by construction)."""
    first = prof[: max(1, len(prof) // 2)]
    bad = np.flatnonzero(np.abs(first) > threshold)
    return int(bad[-1] + 1) if len(bad) else 0


def window_means(values: np.ndarray, width: int, seconds: np.ndarray | None = None) -> np.ndarray:
    """Means of the non-overlapping ``width``-interval windows of one run (a last partial one dropped).

    With ``seconds``, each window's mean is weighted by its intervals' lengths (bytes / time,
    what a test of that window would report).
    """
    k = len(values) // width
    if not k:
        return np.array([])
    w = np.ones(len(values)) if seconds is None else seconds
    v, w = values[: k * width].reshape(k, width), w[: k * width].reshape(k, width)
    return (v * w).sum(axis=1) / w.sum(axis=1)


def windows(
    runs: Sequence[Run], omit: int, widths: Iterable[int] = WINDOWS, overhead: float = OVERHEAD_S
) -> pd.DataFrame:
    """Per window width: within-run, per-test and between-run CVs of the means, after ``omit`` seconds.

    ``time_per_precision``: the time a case needs for a given interval width with tests of that
    length, relative to the cheapest width: repeats scale with ``test_cv`` squared, each repeat
    costs ``width + omit + overhead`` seconds.
    """
    vals = [v[omit:] for v in _one_second(runs)]
    secs = [s[omit:] for s in _seconds(runs)]
    between = cv(np.array([np.average(v, weights=s) for v, s in zip(vals, secs, strict=True) if len(v)]))
    rows = []
    for w in widths:
        per_run = [window_means(v, w, s) for v, s in zip(vals, secs, strict=True)]
        # within: variance of window means relative to their run's mean, pooled over runs (df-weighted)
        num = sum(((m / m.mean() - 1.0) ** 2).sum() for m in per_run if len(m) >= 2)
        df = sum(len(m) - 1 for m in per_run if len(m) >= 2)
        allw = (
            np.concatenate([m for m in per_run if len(m)]) if any(len(m) for m in per_run) else np.array([])
        )
        first = np.array([m[0] for m in per_run if len(m)])
        rows.append(
            {
                "window_s": w,
                "n_windows": int(len(allw)),
                "runs_with_2_windows": sum(1 for m in per_run if len(m) >= 2),
                "within_cv": float(np.sqrt(num / df)) if df else float("nan"),
                "test_cv": cv(allw),
                "first_window_cv": cv(first),
                "between_cv": between,
            }
        )
    out = pd.DataFrame(rows)
    cost = out["test_cv"] ** 2 * (out["window_s"] + omit + overhead)
    out["time_per_precision"] = cost / cost.min() if cost.notna().any() else np.nan
    ok = out["within_cv"] <= out["between_cv"]
    out["recommended"] = False
    if ok.any():
        out.loc[ok.idxmax(), "recommended"] = True
    return out


def settle(
    runs: Sequence[Run],
    tolerance: float = TOLERANCE,
    widths: Iterable[int] = WINDOWS,
    omit: int | None = None,
    overhead: float = OVERHEAD_S,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(warm-up table, window table) per group of runs; ``omit`` overrides the measured warm-up."""
    groups: dict[tuple[str, str, str, str], list[Run]] = {}
    for r in runs:
        groups.setdefault(r.key, []).append(r)
    warm, win = [], []
    for key, rs in sorted(groups.items()):
        prof = profile(rs)
        h = noise_threshold(prof, tolerance)
        s = settle_seconds(prof, h)
        used = s if omit is None else omit
        lengths = [len(r.values) for r in rs]
        head = {k: v for k, v in zip(KEYS, key, strict=True)}
        warm.append(
            {
                **head,
                "runs": len(rs),
                "run_s_min": min(lengths),
                "run_s_max": max(lengths),
                "steady_mean_bps": float(np.median([steady_mean(r.values) for r in rs])),
                "per_second_cv": float(np.median([cv(r.values[used:]) for r in rs])),
                "tolerance": tolerance,
                "threshold": h,
                "noise_limited": h > tolerance,
                "settle_s": s,
                "profile_first_5s": " ".join(f"{x:+.3f}" for x in prof[:5]),
            }
        )
        w = windows(rs, used, widths, overhead)
        for k, v in reversed(head.items()):
            w.insert(0, k, v)
        w.insert(len(head), "omit_s", used)
        win.append(w)
    return pd.DataFrame(warm), (pd.concat(win, ignore_index=True) if win else pd.DataFrame())


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``podnet settle`` options."""
    p.add_argument("raw_dir", help="a raw directory holding iperf3 -J -i 1 runs (searched recursively)")
    p.add_argument("--tolerance", type=float, default=TOLERANCE, help="warm-up ends within this (0.02)")
    p.add_argument("--windows", default=",".join(map(str, WINDOWS)), help="window widths in s (3,5,10,20)")
    p.add_argument("--omit", type=int, default=None, help="seconds to drop (default: the measured warm-up)")
    p.add_argument("--overhead", type=float, default=OVERHEAD_S, help="seconds per run beyond the test (0.2)")
    p.add_argument("--out", default=None, help="also write settle.csv and settle_windows.csv here")


def cmd_settle(a: argparse.Namespace) -> int:
    """``podnet settle``: warm-up and window CVs of iperf3 runs; exit 1 when none is usable."""
    runs, skipped = load(a.raw_dir)
    for path, why in skipped:
        print(f"settle: skipped {path}: {why}", file=sys.stderr)
    if not runs:
        print(f"settle: no iperf3 JSON run with intervals under {a.raw_dir}", file=sys.stderr)
        return 1
    try:
        widths = [int(x) for x in a.windows.split(",") if x]
        warm, win = settle(runs, a.tolerance, widths, a.omit, a.overhead)
    except ValueError as exc:
        print(f"settle: {exc}", file=sys.stderr)
        return 1
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(warm.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
        print()
        print(win.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        warm.to_csv(out / "settle.csv", index=False)
        win.to_csv(out / "settle_windows.csv", index=False)
    return 0
