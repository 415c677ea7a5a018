"""The simulations behind two choices in podnet/stats/METHODS.md (printed; minutes, not run by the tests).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_intervals.py [--bca] [--welch] [--stopping] [--drift]
        [--quantised]

--bca:   coverage of scipy's nominal 95 % BCa bootstrap interval of a mean, normal N(10, 1.5) and
         log-normal (sigma 0.25) data, n = 3 ... 40, 2,000 experiments x 2,000 resamples each;
         decides stats.bootstrap.min_n (offered from n = 40).
--welch: worst-case coverage (over variance ratios 1/16 ... 16) of the Welch and the Hsu (min(n) - 1
         df) intervals of a difference of means at small, unequal n, 40,000 experiments per cell;
         decides stats.small_n.welch_min_n.
--stopping: coverage of the published paired 95 % interval of a primary comparison under the
         adaptive stopping rule exactly as the launcher runs it (base rounds of
         max(repeats, min_repeats) pairs, one pair per added round, met when the relative
         half-width is at most the target and it rests on at least min_to_stop pairs, else on at
         the cap), for each min_to_stop, over the paired noise measured here; decides
         stats.planning.min_to_stop.
--drift: coverage of the variant-ratio intervals (podnet.stats.variants: side by side, drift-
         normalised, sequential) under launch-to-launch factors of 0.6-1.5x, a slow trend within
         a launch, a common round effect and per-run noise as noise_floor.csv has it.
--contaminated, --different: benchmarks/sim_robust.py (paired intervals of podnet.stats.robust
         under heavy tails and disturbed rounds, coverage conditional on stopping as precise, and
         under stats.planning.stop_when_different); not part of the default run (minutes each).
--quantised: ~20 us latencies printed in whole us (netperf's percentiles), true ratios 1.00 and
         1.03, run-to-run spread 0-10 %: coverage, zero-width share and median half-width of the
         side-by-side interval with the printed resolution (podnet.stats.rounding) and without it.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy import stats


def bca(seed: int = 2, experiments: int = 2000) -> None:
    rng = np.random.default_rng(seed)
    warnings.simplefilter("ignore")
    for dist in ("normal", "lognormal"):
        for n in (3, 5, 10, 15, 20, 25, 30, 40):
            if dist == "normal":
                x, true = rng.normal(10, 1.5, (experiments, n)), 10.0
            else:
                x, true = rng.lognormal(0, 0.25, (experiments, n)), float(np.exp(0.25**2 / 2))
            res = stats.bootstrap(
                (x,), np.mean, axis=-1, vectorized=True, n_resamples=2000, method="BCa", rng=rng, batch=200
            )
            lo, hi = res.confidence_interval
            print(f"BCa {dist:<9} n={n:<3} coverage {np.mean((lo <= true) & (true <= hi)):.4f}", flush=True)


def welch(seed: int = 1, experiments: int = 40000) -> None:
    rng = np.random.default_rng(seed)
    ratios = (1 / 16, 1 / 4, 1, 4, 16)
    cells = [(2, 2), (3, 3), (5, 5), (10, 10), (3, 2), (5, 2), (10, 2), (5, 3), (10, 3), (10, 5)]
    cells += [(4, 3), (6, 3), (7, 5), (20, 5), (30, 3)]
    for n1, n2 in cells:
        out = {}
        for method in ("welch", "hsu"):
            cov = []
            for vr in ratios:
                x = rng.normal(0, 1, (experiments, n1))
                y = rng.normal(0, np.sqrt(vr), (experiments, n2))
                a, b = x.var(1, ddof=1) / n1, y.var(1, ddof=1) / n2
                if method == "welch":
                    df = (a + b) ** 2 / (a**2 / (n1 - 1) + b**2 / (n2 - 1))
                else:
                    df = np.full(experiments, min(n1, n2) - 1.0)
                t = stats.t.ppf(0.975, df)
                cov.append(np.mean(np.abs(x.mean(1) - y.mean(1)) <= t * np.sqrt(a + b)))
            out[method] = min(cov)
        print(f"n = {n1:>2} vs {n2:<2} worst-case coverage: welch {out['welch']:.3f}  hsu {out['hsu']:.3f}")


# per-run CV of iperf3 throughput and ping RTT in the machine's noise floor (noise_floor.csv, METHODS.md)
CV_IPERF3, CV_PING = 0.092, 0.12


def stopping(seed: int = 3, experiments: int = 20000) -> None:
    """Coverage and mean pairs of the adaptive rule's published interval, per min_to_stop and noise."""
    from podnet.stats.precision import min_to_stop
    from podnet.stats.settings import resolve
    from podnet.stats.variants import side_by_side

    s = resolve(None)
    target, conf, n0 = float(s["planning"]["target_rel_half_width"]), float(s["confidence"]), 3
    rng = np.random.default_rng(seed)
    # sd of a pair's log ratio: independent runs of iperf3 / ping (CV * sqrt 2), and paths that
    # share part of their noise within a round (what the make-run comparisons that stopped early had)
    sds = (0.02, 0.05, 0.08, 0.1, round(CV_IPERF3 * 2**0.5, 3), round(CV_PING * 2**0.5, 3), 0.22)
    print(f"adaptive stopping: target ±{target:.0%}, robust.stated at 1 - alpha/2, base {n0} pairs")
    print(f"  coverage % (mean pairs) at pair sd {sds}; default min_to_stop {min_to_stop(s)}")
    for noise in ("normal", "t5"):
        for cap in (30, 40, 60):
            for mts in (3, 5, 8, 10, 12):
                cells, worst = [], 1.0
                for sd in sds:
                    if noise == "normal":
                        d = rng.normal(0, sd, (experiments, cap))
                    else:  # heavier tails: runs that hit a hiccup
                        d = rng.standard_t(5, (experiments, cap)) * sd / np.sqrt(5 / 3)
                    t, b = np.exp(d), np.ones_like(d)  # the true ratio is 1
                    stop = np.full(experiments, cap)
                    cov = np.zeros(experiments, dtype=bool)
                    open_ = np.ones(experiments, dtype=bool)
                    for n in range(n0, cap + 1):
                        r = side_by_side(t[:, :n], b[:, :n], conf)
                        rhw = (r.high - r.low) / (2 * r.ratio)
                        now = open_ & (((rhw <= target) & (n >= max(n0, mts))) | (n == cap))
                        stop[now] = n
                        cov[now] = (r.low[now] <= 1) & (1 <= r.high[now])
                        open_ &= ~now
                    c = cov.mean()
                    worst = min(worst, c)
                    cells.append(f"{100 * c:5.1f} ({stop.mean():4.1f})")
                print(
                    f"  {noise:<6} cap {cap} min_to_stop {mts:>2}: "
                    + "  ".join(cells)
                    + f"  worst {100 * worst:.1f}"
                )


def drift(seed: int = 4, experiments: int = 20000) -> None:
    """Coverage of side-by-side, normalised and sequential variant ratios under measured drift."""
    from podnet.stats.variants import normalised, sequential, side_by_side

    rng = np.random.default_rng(seed)
    true = 0.62  # variant A's path over variant B's, e.g. vxlan over host-gw pod-pod cross-node

    def launch(n: int, size: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """log of (launch-wide factor x slow trend, round effect), shape (E, n): one launch's drift."""
        f = rng.uniform(np.log(0.6), np.log(1.5), size + (1,))
        a = rng.uniform(-0.3, 0.3, size + (1,))
        trend = a * (np.arange(n) / max(n - 1, 1) - 0.5)
        return f + trend, rng.normal(0, 0.05, size + (n,))

    def noise(n: int) -> np.ndarray:
        return rng.normal(0, CV_IPERF3, (experiments, n))

    print(
        f"variant ratios under drift: launch factor 0.6-1.5x, trend ±15 %, round sd 5 %, run CV {CV_IPERF3}"
    )
    print("  beta: how strongly the path feels the launch's drift relative to its host-host baseline")
    for n in (6, 10, 20):
        for beta in (1.0, 1.3):
            e = (experiments,)
            # side by side: one launch holds both variants, one run of each per round
            f, r = launch(n, e)
            a = np.log(true) + beta * (f + r) + noise(n)
            b = beta * (f + r) + noise(n)
            sbs = side_by_side(np.exp(a), np.exp(b), adaptive=False)  # fixed n rounds
            # one launch per variant, each with its own host-host baseline in the same rounds
            fa, ra = launch(n, e)
            fb, rb = launch(n, e)
            pa, ha = np.log(true) + beta * (fa + ra) + noise(n), fa + ra + noise(n)
            pb, hb = beta * (fb + rb) + noise(n), fb + rb + noise(n)
            nrm = normalised(np.exp(pa), np.exp(ha), np.exp(pb), np.exp(hb))
            seq = sequential(np.exp(pa), np.exp(pb))
            out = []
            for name, iv in (("side-by-side", sbs), ("normalised", nrm), ("sequential", seq)):
                cov = np.mean((iv.low <= true) & (true <= iv.high))
                hw = np.median((iv.high - iv.low) / (2 * iv.ratio))
                out.append(f"{name} {100 * cov:5.1f} % (±{100 * hw:4.1f} %)")
            print(f"  n = {n:>2} per variant, beta {beta}: " + "   ".join(out))


def quantised(seed: int = 5, experiments: int = 20000) -> None:
    """Side-by-side intervals of latencies printed in whole microseconds, with and without the quantum."""
    from podnet.stats.variants import side_by_side

    rng = np.random.default_rng(seed)
    q = 1e-6
    print("quantised: ~20 us latencies printed in whole us, side by side, 95 % paired interval (fixed n:")
    print(
        "  Hodges-Lehmann / Wilcoxon from 6 pairs, t of the mean below; rounding in quadrature, robust.stated)"
    )
    print("  base ~ U(18, 22) us per experiment (the grid's position), run CV and a 2 % round effect")
    print("  ratio  CV     n   | with quantum: cover  zero-w  median ±   | without: cover  zero-w")
    worst = 1.0
    for ratio in (1.00, 1.03):
        for cv in (0.0, 0.005, 0.01, 0.02, 0.05, 0.1):
            for n in (3, 10, 30):
                e = (experiments, 1)
                base = rng.uniform(18e-6, 22e-6, e)
                rnd = rng.normal(0, 0.02 if cv else 0.0, (experiments, n))  # common to a round's pair
                b = base * np.exp(rnd + rng.normal(0, cv, (experiments, n)))
                t = ratio * base * np.exp(rnd + rng.normal(0, cv, (experiments, n)))
                b, t = np.round(b / q) * q, np.round(t / q) * q  # what the tool prints
                cells = []
                for quantum in ((q, q), (0.0, 0.0)):
                    iv = side_by_side(t, b, 0.95, quantum=quantum, adaptive=False)  # n fixed
                    cover = np.mean((iv.low <= ratio) & (ratio <= iv.high))
                    zero = np.mean(iv.high - iv.low <= 0)
                    hw = np.median((iv.high - iv.low) / (2 * iv.ratio))
                    cells.append((cover, zero, hw))
                worst = min(worst, cells[0][0])
                (c1, z1, h1), (c0, z0, _) = cells
                print(
                    f"  {ratio:.2f}  {cv:5.3f} {n:3d}   |  {100 * c1:5.1f} %  {100 * z1:5.1f} %  ±{100 * h1:4.1f} %"
                    f"   |  {100 * c0:5.1f} %  {100 * z0:5.1f} %"
                )
    print(f"  worst coverage with the quantum: {100 * worst:.1f} %")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bca", action="store_true")
    ap.add_argument("--welch", action="store_true")
    ap.add_argument("--stopping", action="store_true")
    ap.add_argument("--drift", action="store_true")
    ap.add_argument("--contaminated", action="store_true")
    ap.add_argument("--different", action="store_true")
    ap.add_argument("--quantised", action="store_true")
    ap.add_argument("--mixture", action="store_true", help="two speeds: what an unpinned design costs")
    a = ap.parse_args()
    if a.contaminated or a.different or a.mixture:
        import sim_robust

        if a.contaminated:
            sim_robust.contaminated()
        if a.different:
            sim_robust.different()
        if a.mixture:
            sim_robust.mixture()
        raise SystemExit(0)
    everything = not (a.bca or a.welch or a.stopping or a.drift or a.quantised)
    if a.welch or everything:
        welch()
    if a.bca or everything:
        bca()
    if a.stopping or everything:
        stopping()
    if a.drift or everything:
        drift()
    if a.quantised or everything:
        quantised()
