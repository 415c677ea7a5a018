"""Coverage of paired log-ratio intervals with heavy tails and disturbed rounds, under the launcher's stop.

Modes of benchmarks/sim_intervals.py: ``--contaminated`` (:func:`contaminated`: coverage overall
and conditional on stopping as precise, per estimator, level, min_to_stop and cap; about 2 min of
CPU) and ``--different`` (:func:`different`: the ``stop_when_different`` rule, and disturbances
placed early or on the treatment side only; under 1 min of CPU). The estimators are
podnet/stats/robust.py's. Each simulated comparison is a sequence of per-round log ratios
d_k = theta + sd * e_k (+ a disturbed round's log factor), with e_k normal, t5 or t3 scaled to
sd 1, and 0-3 of the first 28 rounds disturbed: one side (half the time, either side) or both
sides inflated by a factor uniform on 1.5-4 each, at uniform random rounds (``early``: the first
6; ``treatment_only``: always the treatment side). Every estimator's interval at each of LEVELS
is computed on the first n pairs for every n,
then stop rules are applied as the launcher applies them (podnet/launch/rounds/adaptive.py): the
comparison stops at the first n >= min_to_stop whose relative half-width (high - low) / (2 ratio)
is at most the target (precise), else at the cap (not precise). ``stop_when_different`` also
stops (as different) at the first n >= min_to_stop whose interval (at DIFFERENT_LEVEL, or the
rule's own level) excludes 1. The rule the stats state is CHOSEN; TODAY is the one it replaces.
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
LEVELS = (0.95, 0.965, 0.97, 0.975, 0.993)  # the last: stop_when_different's
CANDIDATE_LEVELS = LEVELS[:4]
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


class _HL:
    """Hodges-Lehmann with its Wilcoxon intervals at every level, the sorted Walsh averages kept from
    one n to the next (a merge of two sorted runs per added pair instead of a partition of all).
    Equal to :func:`podnet.stats.robust.hodges_lehmann` (checked in :func:`paths`)."""

    def __init__(self) -> None:
        self.w: np.ndarray | None = None
        self.rows: np.ndarray | None = None

    def __call__(
        self, d: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        n = d.shape[-1]
        if self.w is None or self.w.shape[-1] != (n - 1) * n // 2:
            w = np.sort(robust.walsh_averages(d), axis=-1)
        else:
            keep = np.searchsorted(self.rows, rows)
            new = np.sort((d[:, -1:] + d) / 2.0, axis=-1)
            w = np.sort(np.concatenate([self.w[keep], new], axis=-1), axis=-1, kind="stable")
        self.w, self.rows = w, rows
        m = w.shape[-1]
        est = 0.5 * (w[:, (m - 1) // 2] + w[:, m // 2])
        nan = np.full(est.shape, np.nan)
        out = []
        for lev in LEVELS:
            k = robust.wilcoxon_rank(n, lev)
            out.append((w[:, k], w[:, m - k - 1]) if k >= 0 else (nan, nan))
        return est, out


ESTIMATORS = (
    Estimator("mean-t", _t_based(robust.mean_t, lambda n: n - 1)),
    Estimator(
        "trim10", _t_based(lambda d: robust.trimmed_yuen(d, trim=0.1), lambda n: n - 2 * int(0.1 * n) - 1)
    ),
    Estimator(
        "trim20", _t_based(lambda d: robust.trimmed_yuen(d, trim=0.2), lambda n: n - 2 * int(0.2 * n) - 1)
    ),
    Estimator("HL", None),  # type: ignore[arg-type]  # stateful: _HL, made per path
    Estimator("huber", _t_based(robust.huber, lambda n: n - 1)),
)


def noise(rng: np.random.Generator, kind: str, shape: tuple[int, int]) -> np.ndarray:
    """Standardised noise (sd 1): normal, t5 or t3."""
    if kind == "normal":
        return rng.normal(size=shape)
    nu = int(kind[1:])
    return rng.standard_t(nu, shape) / np.sqrt(nu / (nu - 2))


def disturbance(
    rng: np.random.Generator,
    k: int,
    shape: tuple[int, int],
    early: bool = False,
    treatment_only: bool = False,
) -> np.ndarray:
    """Log-ratio shifts of k disturbed rounds per row among the first 28 (``early``: the first 6).

    A disturbed round inflates one side (either, at even odds) or, half the time, both sides, each
    by a factor uniform on 1.5-4; ``treatment_only``: always the treatment side alone (a hog that
    slows one path more than its baseline: the log ratio is biased upwards).
    """
    out = np.zeros(shape)
    if k == 0:
        return out
    e = shape[0]
    window = 6 if early else WINDOW
    pos = np.argsort(rng.random((e, window)), axis=1)[:, :k]
    fa = np.log(rng.uniform(1.5, 4.0, (e, k)))
    fb = np.log(rng.uniform(1.5, 4.0, (e, k)))
    if treatment_only:
        shift = fa
    else:
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


def paths(d: np.ndarray, names: tuple[str, ...], done_from: int | None = None) -> Paths:
    """Every estimator's interval on the first n pairs, n = N_FROM ... CAP (float32 to keep memory low).

    ``done_from``: once a row's widest interval met the target at some n >= done_from, every rule
    looked at (min_to_stop <= done_from, narrower levels) has stopped, so its later n are left NaN
    and not computed (the clean cells, scaled afterwards, pass None).
    """
    e = d.shape[0]
    ns = range(N_FROM, CAP + 1)
    est, lo, hi = {}, {}, {}
    for est_ in ESTIMATORS:
        if est_.name not in names:
            continue
        a = np.full((e, len(ns)), np.nan, np.float32)
        lo_ = np.full((e, len(ns), len(LEVELS)), np.nan, np.float32)
        hi_ = np.full_like(lo_, np.nan)
        open_ = np.ones(e, dtype=bool)
        hl = _HL() if est_.name == "HL" else None
        for i, n in enumerate(ns):
            rows = np.flatnonzero(open_)
            if not len(rows):
                break
            c, ivs = hl(d[rows, :n], rows) if hl is not None else est_.fn(d[rows, :n])
            if hl is not None and i == 0:  # the incremental Walsh averages are robust.hodges_lehmann's
                ref = robust.hodges_lehmann(d[rows[:3], :n], LEVELS[0])
                assert np.allclose(ref.low, ivs[0][0][:3]) and np.allclose(ref.estimate, c[:3])
            a[rows, i] = c
            for j, (lw, hg) in enumerate(ivs):
                lo_[rows, i, j], hi_[rows, i, j] = lw, hg
            if done_from is not None and n >= done_from:
                lw, hg = ivs[-1]
                with np.errstate(invalid="ignore", over="ignore"):
                    met = (np.exp(hg) - np.exp(lw)) / (2 * np.exp(c)) <= TARGET
                open_[rows[met]] = False
        est[est_.name], lo[est_.name], hi[est_.name] = a, lo_, hi_
    return Paths(est, lo, hi)


class Outcome(NamedTuple):
    # share stopped as precise (with ``different``, also those stopped by the difference rule: a stop,
    # not *different*, which Holm decides)
    precise: float
    cov: float  # coverage of the published interval, all comparisons
    cov_precise: float  # coverage among those stopped as precise
    n_precise: int
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


class Rule(NamedTuple):
    """A stop rule: the estimator whose interval is judged and published, its level, min_to_stop."""

    estimator: str
    level: float
    mts: int

    def label(self) -> str:
        return f"{self.estimator} {100 * self.level:g}% mts {self.mts}"


TODAY = Rule("mean-t", 0.95, 10)  # variants.side_by_side judged at min_to_stop 10 (the launcher today)
CHOSEN = Rule("HL", 0.975, 10)  # METHODS.md, "Robust paired intervals"
CAPS = (30, 40, 60)
DIFFERENT_LEVEL = robust.DIFFERENT_LEVEL  # a difference stop at any of up to 50 looks: 5 % for A/A pairs
MTS = (10, 15)


def outcome(
    p: Paths, scale: float, r: Rule, cap: int, theta: float = 0.0, different: bool = False
) -> Outcome:
    return apply_rule(p, r.estimator, theta, scale, r.mts, cap, LEVELS.index(r.level), different)


def grid(
    rng: np.random.Generator, experiments: int, names: tuple[str, ...]
) -> dict[tuple[str, int, float], tuple[Paths, float]]:
    """The paths of every (noise, disturbed rounds, sd) cell (clean cells share one path, scaled)."""
    cells: dict[tuple[str, int, float], tuple[Paths, float]] = {}
    t0 = time.time()
    for kind in NOISES:
        clean = paths(noise(rng, kind, (2 * experiments, CAP)), names)
        for sd in SDS:
            cells[(kind, 0, sd)] = (clean, sd)
        for k in DISTURBED[1:]:
            for sd in SDS:
                d = sd * noise(rng, kind, (experiments, CAP)) + disturbance(rng, k, (experiments, CAP))
                cells[(kind, k, sd)] = (paths(d, names, done_from=max(MTS)), 1.0)
        print(f"  [{time.time() - t0:4.0f} s] {kind}: paths done", flush=True)
    return cells


def _pct(x: float) -> str:
    return "  -  " if np.isnan(x) else f"{100 * x:5.1f}"


def contaminated(seed: int = 5, experiments: int = 2000) -> None:
    """Coverage overall and conditional on stopping as precise, per stop rule, noise, disturbed rounds and pair sd."""
    names = tuple(e.name for e in ESTIMATORS)
    rng = np.random.default_rng(seed)
    se = np.sqrt(0.95 * 0.05 / experiments)
    print(
        f"contaminated: target ±{TARGET:.0%}; noise normal/t5/t3 (sd = pair sd); 0-3 disturbed rounds of the"
        f" first {WINDOW} (x1.5-4, one or both sides); {experiments} comparisons a disturbed cell,"
        f" {2 * experiments} clean (Monte Carlo se of a 95 % coverage ±{100 * se:.1f} points overall,"
        " larger conditional: ±0.5 / sqrt(share precise))"
    )
    cells = grid(rng, experiments, names)
    print(f"\n  [A] cond. coverage % among the precise / % precise, pair sd {SDS}")
    for cap in (30, 60):
        for r in (TODAY, CHOSEN):
            print(f"  {r.label()}, cap {cap}:")
            for kind in NOISES:
                for k in DISTURBED:
                    outs = [outcome(*cells[(kind, k, sd)], r, cap) for sd in SDS]
                    row = " ".join(f"{_pct(o.cov_precise)}/{100 * o.precise:3.0f}" for o in outs)
                    print(
                        f"    {kind:<6} {k} disturbed: {row} | overall min {100 * min(o.cov for o in outs):.1f}"
                    )
    print(
        "\n  [B] candidates: conditional coverage worst where >= 50 % / >= 20 % are precise, highest, pooled over"
        " the sd grid (worst noise x disturbed), overall worst; cost on clean normal noise: mean pairs at"
        " sd 0.10, median ±% at sd 0.05; % precise at 2 disturbed rounds, sd 0.10"
    )
    for cap in (30, 60):
        for name in names:
            for lev in CANDIDATE_LEVELS:
                for mts in MTS:
                    r = Rule(name, lev, mts)
                    w50, w20, hi, pooled, overall = 1.0, 1.0, 0.0, 1.0, 1.0
                    for kind in NOISES:
                        for k in DISTURBED:
                            outs = [outcome(*cells[(kind, k, sd)], r, cap) for sd in SDS]
                            for o in outs:
                                if o.precise >= 0.5:
                                    w50 = min(w50, o.cov_precise)
                                if o.precise >= 0.2:
                                    w20 = min(w20, o.cov_precise)
                                    hi = max(hi, o.cov_precise)
                                overall = min(overall, o.cov)
                            num = sum(o.precise * o.cov_precise for o in outs if o.precise > 0)
                            pooled = min(pooled, num / max(sum(o.precise for o in outs), 1e-12))
                    c10 = outcome(*cells[("normal", 0, 0.10)], r, cap)
                    c05 = outcome(*cells[("normal", 0, 0.05)], r, cap)
                    k2 = outcome(*cells[("normal", 2, 0.10)], r, cap)
                    print(
                        f"    cap {cap} {r.label():<22} worst {_pct(w50)} / {_pct(w20)}  highest {_pct(hi)}"
                        f"  pooled {_pct(pooled)}  overall {_pct(overall)} | pairs {c10.pairs:4.1f}"
                        f"  ±{100 * c05.rhw:.1f} %  | precise {100 * k2.precise:3.0f} %"
                    )


def different(seed: int = 6, experiments: int = 2000) -> None:
    """``stop_when_different``: stop also when the interval excludes 1; coverage given each kind of stop.

    Also the disturbances the grid leaves out: all disturbed rounds in the first 6, and disturbances
    of the treatment side only (biased), for today's rule and the chosen one.
    """
    rng = np.random.default_rng(seed)
    names = tuple(sorted({TODAY.estimator, CHOSEN.estimator}))
    sds = (0.05, 0.10, 0.15, 0.20)
    thetas = (1.0, 1.05, 1.1, 1.2)
    print(
        f"stop_when_different: stop at the first n >= min_to_stop whose interval meets ±{TARGET:.0%} (met) or"
        f" excludes 1 (different); {experiments} comparisons a cell; true ratio {thetas}"
    )
    print("  cell: % stopped different (cond. coverage %) / % met (cond. coverage %), overall coverage %")
    for kind, k in (("normal", 0), ("t3", 0), ("normal", 2), ("t3", 2)):
        for sd in sds:
            d = sd * noise(rng, kind, (experiments, CAP)) + disturbance(rng, k, (experiments, CAP))
            p = paths(d, names, done_from=max(MTS))
            for r, dl in ((TODAY, None), (CHOSEN, None), (CHOSEN, DIFFERENT_LEVEL)):
                for cap in (30, 60):
                    cells = [_split(p, r, cap, np.log(th), dl) for th in thetas]
                    lab = r.label() + (f", different at {100 * dl:g}%" if dl else "")
                    print(f"  {kind:<6} {k} dist. sd {sd:.2f} {lab:<40} cap {cap}: " + "  ".join(cells))
    print("  disturbed rounds placed early (first 6) or on the treatment side only; width stop only:")
    for label, kw in (("early", {"early": True}), ("treatment only", {"treatment_only": True})):
        for k in (2, 3):
            for cap in (30, 60):
                outs: dict[Rule, list[Outcome]] = {TODAY: [], CHOSEN: []}
                for sd in SDS:
                    d = sd * noise(rng, "normal", (experiments, CAP)) + disturbance(
                        rng, k, (experiments, CAP), **kw
                    )
                    p = paths(d, names, done_from=max(MTS))
                    for r in outs:
                        outs[r].append(outcome(p, 1.0, r, cap))
                for r, os_ in outs.items():
                    row = " ".join(f"{_pct(o.cov_precise)}/{100 * o.precise:3.0f}" for o in os_)
                    print(f"    {label:<14} {k} normal cap {cap} {r.label():<20}: {row}")


def _split(p: Paths, r: Rule, cap: int, theta: float, diff_level: float | None = None) -> str:
    """'% different (cov) / % met (cov), overall' of the stop_when_different rule at log ratio theta.

    The difference stop looks at the interval of ``diff_level`` (default: the rule's own level); the
    interval published at either stop is the rule's.
    """
    lv = LEVELS.index(r.level)
    dv = LEVELS.index(diff_level if diff_level is not None else r.level)
    sl = slice(0, cap - N_FROM + 1)
    est = p.est[r.estimator][:, sl].astype(float) + theta
    lo = p.lo[r.estimator][:, sl, lv].astype(float) + theta
    hi = p.hi[r.estimator][:, sl, lv].astype(float) + theta
    with np.errstate(invalid="ignore", over="ignore"):
        met = np.nan_to_num((np.exp(hi) - np.exp(lo)) / (2 * np.exp(est)), nan=np.inf) <= TARGET
    dlo = p.lo[r.estimator][:, sl, dv].astype(float) + theta
    dhi = p.hi[r.estimator][:, sl, dv].astype(float) + theta
    diff = (dlo > 0) | (dhi < 0)
    stop = met | diff
    stop[:, : r.mts - N_FROM] = False
    any_ = stop.any(axis=1)
    at = np.where(any_, stop.argmax(axis=1), cap - N_FROM)
    rows = np.arange(len(at))
    cov = (lo[rows, at] <= theta) & (theta <= hi[rows, at])
    is_diff = any_ & diff[rows, at]
    is_met = any_ & ~is_diff
    c_d = cov[is_diff].mean() if is_diff.any() else np.nan
    c_m = cov[is_met].mean() if is_met.any() else np.nan
    return f"{100 * is_diff.mean():3.0f} ({_pct(c_d)}) / {100 * is_met.mean():3.0f} ({_pct(c_m)}), {_pct(cov.mean())}"


# -- two speeds: what an unpinned design costs (issue 43, METHODS.md "Placement") -----------------------
#: iperf3 on two CPUs, measured 2026-11 on this machine's embedded cluster (3-node bridge, 3-s runs):
#: Gbit/s with client and server on one CPU ("fast") and on two ("slow"); run sd on the log scale
SPEEDS = {"host-host": (19.0, 10.5), "pod-pod-cross-node": (15.5, 9.4)}
RUN_SD = {"host-host": 0.041, "pod-pod-cross-node": 0.065}


class Design(NamedTuple):
    """Where the runs land: ``q`` the chance a run is on one CPU ("fast"); ``phase`` rounds per phase
    (a placement held for several rounds by both sides, as the scheduler did) or 0 (each run on its
    own); ``within``: pairs whose two runs differ in placement are left out (podnet.stats.paired)."""

    label: str
    q: float
    phase: int = 0
    within: bool = False


DESIGNS = (
    Design("pinned, one CPU (the default run)", 1.0),
    Design("unpinned, each run on its own, q 0.5", 0.5),
    Design("unpinned, each run on its own, q 0.3", 0.3),
    Design("unpinned, phases of 5 rounds, q 0.5", 0.5, phase=5),
    Design("unpinned, q 0.5, within placement", 0.5, within=True),
)


def two_speed_rounds(
    rng: np.random.Generator, dsg: Design, e: int, cap: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair log ratios pod-pod-cross-node / host-host under ``dsg`` (``e`` comparisons, ``cap``
    pairs each), and the round each pair ran in (1-based: with ``within``, the rounds whose two runs
    differ in placement pair nothing, so the k-th pair may come from a later round)."""
    (tf, ts), (bf, bs) = SPEEDS["pod-pod-cross-node"], SPEEDS["host-host"]
    rounds = 4 * cap if dsg.within else cap

    def fast(shape: tuple[int, int]) -> np.ndarray:
        if dsg.phase:
            ph = rng.random((shape[0], -(-shape[1] // dsg.phase))) < dsg.q
            return np.repeat(ph, dsg.phase, axis=1)[:, : shape[1]]
        return rng.random(shape) < dsg.q

    ft = fast((e, rounds))
    fb = ft if dsg.phase else fast((e, rounds))  # a phase holds both sides' placement
    lt = np.where(ft, np.log(tf), np.log(ts)) + RUN_SD["pod-pod-cross-node"] * rng.normal(size=(e, rounds))
    lb = np.where(fb, np.log(bf), np.log(bs)) + RUN_SD["host-host"] * rng.normal(size=(e, rounds))
    d = lt - lb
    idx = np.broadcast_to(np.arange(1, rounds + 1), (e, rounds))
    if dsg.within:  # only same-placement pairs, in the order they ran (4 x cap rounds hold cap of them)
        order = np.argsort(ft != fb, axis=1, kind="stable")
        d, idx = np.take_along_axis(d, order, axis=1), np.take_along_axis(idx, order, axis=1)
    return d[:, :cap], idx[:, :cap]


def mixture(seed: int = 7, experiments: int = 2000, cap: int = 40) -> None:
    """What an unpinned design costs: the chosen stop rule (HL 97.5 %, min_to_stop 10) on iperf3's
    pod-pod-cross-node / host-host with runs at two speeds, against the pinned design."""
    rng = np.random.default_rng(seed)
    r = CHOSEN
    fast_ratio = SPEEDS["pod-pod-cross-node"][0] / SPEEDS["host-host"][0]
    slow_ratio = SPEEDS["pod-pod-cross-node"][1] / SPEEDS["host-host"][1]
    print(
        f"two speeds (iperf3, one CPU / two CPUs: host-host {SPEEDS['host-host']}, pod-pod-cross-node"
        f" {SPEEDS['pod-pod-cross-node']} Gbit/s; run sd {RUN_SD}); ratio on one CPU {fast_ratio:.3f}, on two"
        f" {slow_ratio:.3f}; {r.label()}, cap {cap}, target ±{TARGET:.0%}; {experiments} comparisons a design"
    )
    print(
        "  design                                   | sd(d)  | precise  | rounds | ±% at stop | covers 1-CPU | covers 2-CPU"
    )
    for dsg in DESIGNS:
        d, idx = two_speed_rounds(rng, dsg, experiments, CAP)
        p = paths(d, (r.estimator,))
        lv = LEVELS.index(r.level)
        sl = slice(0, cap - N_FROM + 1)
        est = p.est[r.estimator][:, sl].astype(float)
        lo = p.lo[r.estimator][:, sl, lv].astype(float)
        hi = p.hi[r.estimator][:, sl, lv].astype(float)
        with np.errstate(invalid="ignore", over="ignore"):
            rhw = (np.exp(hi) - np.exp(lo)) / (2 * np.exp(est))
        stop = np.nan_to_num(rhw, nan=np.inf) <= TARGET
        stop[:, : r.mts - N_FROM] = False
        any_ = stop.any(axis=1)
        at = np.where(any_, stop.argmax(axis=1), cap - N_FROM)
        rows = np.arange(len(at))
        cf = (lo[rows, at] <= np.log(fast_ratio)) & (np.log(fast_ratio) <= hi[rows, at])
        cs = (lo[rows, at] <= np.log(slow_ratio)) & (np.log(slow_ratio) <= hi[rows, at])
        sd = float(np.median(np.std(d[:, :cap], axis=1, ddof=1)))
        ran = idx[rows, at + N_FROM - 1]  # the round of the last pair used
        print(
            f"  {dsg.label:<40} | {sd:.3f}  | {100 * any_.mean():5.1f} %  | {ran.mean():6.1f} |"
            f" {100 * np.nanmedian(rhw[rows, at]):6.1f}     | {100 * cf.mean():6.1f} %     | {100 * cs.mean():6.1f} %"
        )
