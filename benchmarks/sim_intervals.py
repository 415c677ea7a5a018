"""The simulations behind two choices in podnet/stats/METHODS.md (printed; minutes, not run by the tests).

    .venv/bin/python benchmarks/sim_intervals.py [--bca] [--welch]

--bca:   coverage of scipy's nominal 95 % BCa bootstrap interval of a mean, normal N(10, 1.5) and
         log-normal (sigma 0.25) data, n = 3 ... 40, 2,000 experiments x 2,000 resamples each;
         decides stats.bootstrap.min_n (offered from n = 40).
--welch: worst-case coverage (over variance ratios 1/16 ... 16) of the Welch and the Hsu (min(n) - 1
         df) intervals of a difference of means at small, unequal n, 40,000 experiments per cell;
         decides stats.small_n.welch_min_n.
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


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bca", action="store_true")
    ap.add_argument("--welch", action="store_true")
    a = ap.parse_args()
    if a.welch or not a.bca:
        welch()
    if a.bca or not a.welch:
        bca()
