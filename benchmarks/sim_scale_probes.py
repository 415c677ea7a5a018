"""Coverage of scale_effect.csv's order-statistic intervals of P50 and P90 when a point's changes come
in set-ups that share a level (podnet/stats/METHODS.md, "Scale points"; printed, seconds).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_scale_probes.py

Each experiment: ``setups`` set-ups x ``changes`` changes, log time = a_s + e with a_s ~ N(0, icc)
per set-up and e ~ N(0, 1 - icc) per change (the marginal is N(0, 1) whatever the ICC), pooled as
``podnet.stats.scale.effect_table`` pools them; the interval covers when it holds the marginal's
true quantile. Also the share of experiments whose note says the changes correlate (design effect
>= 1.25 and the F test at 5 %).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from podnet.stats.scale import DEFF_NOTE, icc, quantile_interval
from podnet.stats.sweeps import median_interval


def coverage(setups: int, changes: int, rho: float, experiments: int, rng: np.random.Generator) -> dict:
    truth = {0.5: 0.0, 0.9: float(stats.norm.ppf(0.9))}
    hits = {q: 0 for q in truth}
    have = {q: 0 for q in truth}
    flagged = 0
    groups = np.repeat(np.arange(setups), changes)
    for _ in range(experiments):
        a = rng.normal(0, np.sqrt(rho), setups)
        x = np.repeat(a, changes) + rng.normal(0, np.sqrt(1 - rho), setups * changes)
        med = median_interval(x)
        bounds = {0.5: (med.low, med.high), 0.9: quantile_interval(x, 0.9)[1:3]}
        for q, (lo, hi) in bounds.items():
            if np.isfinite(lo) and np.isfinite(hi):
                have[q] += 1
                hits[q] += lo <= truth[q] <= hi
        c = icc(x, groups)
        flagged += bool(c.design_effect >= DEFF_NOTE and c.p < 0.05)
    out = {f"P{int(q * 100)}": hits[q] / have[q] if have[q] else float("nan") for q in truth}
    out["flagged"] = flagged / experiments
    return out


def main(seed: int = 7, experiments: int = 2000) -> None:
    rng = np.random.default_rng(seed)
    print("set-ups x changes   ICC   P50 coverage   P90 coverage   note says correlate")
    for setups, changes in ((6, 6), (6, 3), (12, 3)):
        for rho in (0.0, 0.1, 0.3, 0.6):
            c = coverage(setups, changes, rho, experiments, rng)
            print(
                f"{setups:>7} x {changes:<7}   {rho:.1f}   {c['P50']:>12.3f}   {c['P90']:>12.3f}"
                f"   {c['flagged']:>19.3f}"
            )


if __name__ == "__main__":
    main()
