"""Coverage of paired log-ratio intervals with heavy tails and disturbed rounds, under the launcher's stop.

Modes of benchmarks/sim_intervals.py (``--contaminated``, ``--conditional``); the estimators are
podnet/stats/robust.py's. Each simulated comparison is a sequence of per-round log ratios
d_k = theta + sd * e_k (+ a disturbed round's log factor), with e_k normal, t5 or t3 scaled to
sd 1, and 0-3 of the first 28 rounds disturbed: one side (half the time, either side) or both
sides inflated by a factor uniform on 1.5-4 each, at uniform random rounds (``early``: the first
6). Every estimator's 95 % (and 97.5 %) interval is computed on the first n pairs for every n,
then stop rules are applied as the launcher applies them (podnet/launch/adaptive.py): the
comparison stops at the first n >= min_to_stop whose relative half-width (high - low) / (2 ratio)
is at most the target (resolved), else at the cap (unresolved). ``stop_when_different`` also
stops (as resolved-different) at the first n >= min_to_stop whose interval excludes 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import stats

from podnet.stats import robust

TARGET = 0.05
N_FROM = 8  # the smallest min_to_stop looked at (looks before it are never stops)
CAP = 60
LEVELS = (0.95, 0.97, 0.975, 0.98)
SDS = (0.02, 0.05, 0.08, 0.10, 0.13, 0.15, 0.17, 0.20, 0.25, 0.30)
NOISES = ("normal", "t5", "t3")
DISTURBED = (0, 1, 2, 3)
WINDOW = 28  # disturbed rounds fall in the first 28 (the default run ended at n = 28)


class Estimator(NamedTuple):
    name: str
    fn: Callable[
        [np.ndarray], tuple[np.ndarray, list[np.ndarray]]
    ]  # d -> (estimate, [half-widths lo/hi] per level)


def _t_based(loc_fn: Callable[[np.ndarray], robust.Location], df_of: Callable[[int], int]) -> Callable:
    def run(d: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        loc = loc_fn(d)
        df = df_of(d.shape[-1])
        q95 = stats.t.ppf(0.975, df)
        out = []
        for lev in LEVELS:
            f = stats.t.ppf(0.5 + lev / 2, df) / q95
            out.append(
                (loc.estimate - f * (loc.estimate - loc.low), loc.estimate + f * (loc.high - loc.estimate))
            )
        return loc.estimate, out

    return run


def _hl(d: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Hodges-Lehmann with its Wilcoxon intervals at every level from one partition of the Walsh averages."""
    n = d.shape[-1]
    w = robust.walsh_averages(d)
    m = w.shape[-1]
    ks = [robust.wilcoxon_rank(n, lev) for lev in LEVELS]
    mid = [(m - 1) // 2, m // 2]
    part = np.partition(w, sorted({*mid, *[i for k in ks if k >= 0 for i in (k, m - k - 1)]}), axis=-1)
    est = 0.5 * (part[:, mid[0]] + part[:, mid[1]])
    nan = np.full(est.shape, np.nan)
    return est, [(part[:, k], part[:, m - k - 1]) if k >= 0 else (nan, nan) for k in ks]


ESTIMATORS = (
    Estimator("mean-t", _t_based(robust.mean_t, lambda n: n - 1)),
    Estimator(
        "trim10", _t_based(lambda d: robust.trimmed_yuen(d, trim=0.1), lambda n: n - 2 * int(0.1 * n) - 1)
    ),
    Estimator(
        "trim20", _t_based(lambda d: robust.trimmed_yuen(d, trim=0.2), lambda n: n - 2 * int(0.2 * n) - 1)
    ),
    Estimator("HL", _hl),
    Estimator("huber", _t_based(robust.huber, lambda n: n - 1)),
)


def noise(rng: np.random.Generator, kind: str, shape: tuple[int, int]) -> np.ndarray:
    """Standardised noise (sd 1): normal, t5 or t3."""
    if kind == "normal":
        return rng.normal(size=shape)
    nu = int(kind[1:])
    return rng.standard_t(nu, shape) / np.sqrt(nu / (nu - 2))


def disturbance(rng: np.random.Generator, k: int, shape: tuple[int, int], early: bool = False) -> np.ndarray:
    """Log-ratio shifts of k disturbed rounds per row: one side (either) or both sides x U(1.5, 4)."""
    out = np.zeros(shape)
    if k == 0:
        return out
    e = shape[0]
    window = 6 if early else WINDOW
    pos = np.argsort(rng.random((e, window)), axis=1)[:, :k]
    fa = np.log(rng.uniform(1.5, 4.0, (e, k)))
    fb = np.log(rng.uniform(1.5, 4.0, (e, k)))
    both = rng.random((e, k)) < 0.5
    side = np.where(rng.random((e, k)) < 0.5, 1.0, -1.0)
    shift = np.where(both, fa - fb, side * fa)
    np.put_along_axis(out, pos, shift, axis=1)
    return out


class Paths(NamedTuple):
    """Per estimator: estimate, and (low, high) per level, each (E, CAP - N_FROM + 1), on the log scale."""

    est: dict[str, np.ndarray]
    lo: dict[str, np.ndarray]  # (E, n, level)
    hi: dict[str, np.ndarray]


def paths(d: np.ndarray, names: tuple[str, ...]) -> Paths:
    """Every estimator's interval on the first n pairs, n = N_FROM ... CAP (float32 to keep memory low)."""
    e = d.shape[0]
    ns = range(N_FROM, CAP + 1)
    est, lo, hi = {}, {}, {}
    for est_ in ESTIMATORS:
        if est_.name not in names:
            continue
        a = np.empty((e, len(ns)), np.float32)
        lo_ = np.empty((e, len(ns), len(LEVELS)), np.float32)
        hi_ = np.empty_like(lo_)
        for i, n in enumerate(ns):
            c, ivs = est_.fn(d[:, :n])
            a[:, i] = c
            for j, (lw, hg) in enumerate(ivs):
                lo_[:, i, j], hi_[:, i, j] = lw, hg
        est[est_.name], lo[est_.name], hi[est_.name] = a, lo_, hi_
    return Paths(est, lo, hi)


class Outcome(NamedTuple):
    resolved: float  # share stopped as met (or, for the difference rule, as met or different)
    cov: float  # coverage of the published interval, all comparisons
    cov_resolved: float  # coverage among the resolved
    n_resolved: int
    pairs: float  # mean pairs at the stop
    rhw: float  # median relative half-width at the stop


def apply_rule(
    p: Paths,
    name: str,
    theta: float,
    sd_scale: float,
    mts: int,
    cap: int,
    level: int,
    different: bool = False,
    step: int = 1,
) -> Outcome:
    """The launcher's stop on estimator ``name``'s path (scaled by sd_scale, shifted by theta)."""
    est = p.est[name][:, : cap - N_FROM + 1].astype(float) * sd_scale + theta
    lo = p.lo[name][:, : cap - N_FROM + 1, level].astype(float) * sd_scale + theta
    hi = p.hi[name][:, : cap - N_FROM + 1, level].astype(float) * sd_scale + theta
    with np.errstate(invalid="ignore", over="ignore"):
        rhw = (np.exp(hi) - np.exp(lo)) / (2 * np.exp(est))
    stop_ok = np.nan_to_num(rhw, nan=np.inf) <= TARGET
    if different:
        stop_ok |= (lo > 0) | (hi < 0)
    stop_ok[:, : mts - N_FROM] = False
    if step > 1:  # looks only every ``step`` rounds from min_to_stop on (and at the cap)
        ns = np.arange(N_FROM, cap + 1)
        stop_ok[:, ((ns - mts) % step != 0) & (ns != cap)] = False
    any_ = stop_ok.any(axis=1)
    at = np.where(any_, stop_ok.argmax(axis=1), cap - N_FROM)
    rows = np.arange(len(at))
    cov = (lo[rows, at] <= theta) & (theta <= hi[rows, at])
    return Outcome(
        float(any_.mean()),
        float(cov.mean()),
        float(cov[any_].mean()) if any_.any() else float("nan"),
        int(any_.sum()),
        float((at + N_FROM).mean()),
        float(np.nanmedian(rhw[rows, at])),
    )


def simulate(
    rng: np.random.Generator,
    kind: str,
    k: int,
    sd: float,
    experiments: int,
    names: tuple[str, ...],
    early: bool = False,
) -> tuple[Paths, float]:
    """Paths of one cell; for k = 0 the paths are of sd 1 (every estimator is scale-equivariant: scale after)."""
    shape = (experiments, CAP)
    if k == 0:
        return paths(noise(rng, kind, shape), names), sd
    return paths(sd * noise(rng, kind, shape) + disturbance(rng, k, shape, early), names), 1.0


def _cell(o: Outcome) -> str:
    c = "  -  " if np.isnan(o.cov_resolved) else f"{100 * o.cov_resolved:5.1f}"
    return f"{c}/{100 * o.resolved:3.0f}"


def contaminated(seed: int = 5, experiments: int = 3000, names: tuple[str, ...] | None = None) -> None:
    """Coverage conditional on resolved (and the share resolved) per estimator, noise, disturbed rounds, sd."""
    rng = np.random.default_rng(seed)
    names = names or tuple(e.name for e in ESTIMATORS)
    rules = [(10, 30, 0), (15, 30, 0), (10, 60, 0), (10, 30, 1), (15, 30, 1), (15, 60, 1)]
    t0 = time.time()
    print(
        f"contaminated: target ±{TARGET:.0%}, stop from min_to_stop, levels {LEVELS}, {experiments} comparisons a cell"
    )
    print("  cell: coverage % among those resolved / % resolved (the overall coverage follows each row)")
    print(f"  pair sd: {SDS}")
    worst: dict[tuple, list[float]] = {}
    for kind in NOISES:
        clean = None
        for k in DISTURBED:
            for sd in SDS:
                if k == 0 and clean is not None:
                    p, scale = clean[0], sd
                else:
                    p, scale = simulate(rng, kind, k, sd, experiments * (3 if k == 0 else 1), names)
                    if k == 0:
                        clean = (p,)
                for name in names:
                    for mts, cap, lev in rules:
                        o = apply_rule(p, name, 0.0, scale, mts, cap, lev)
                        key = (kind, k, name, mts, cap, lev)
                        worst.setdefault(key, []).append(o)
                del p
        print(f"  [{time.time() - t0:.0f} s] {kind} done", flush=True)
    for (kind, k, name, mts, cap, lev), outs in worst.items():
        overall = min(o.cov for o in outs)
        print(
            f"  {kind:<6} k={k} {name:<6} mts {mts:>2} cap {cap} {100 * LEVELS[lev]:.1f}%: "
            + " ".join(_cell(o) for o in outs)
            + f" | overall min {100 * overall:.1f}"
        )
