"""Coverage of what scale_effect.csv and scale_curves.csv publish as intervals (podnet/stats/METHODS.md,
"Scale points"; printed, seconds to a minute).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_scale_probes.py [--experiments 2000] [--seed 7]

**Time to effect** (:func:`coverage`): each experiment has ``setups`` set-ups x ``changes`` changes,
log time = a_s + e with a_s ~ N(0, icc) per set-up and e ~ N(0, 1 - icc) per change (the marginal is
N(0, 1) whatever the ICC), pooled as ``podnet.stats.scale.effect_table`` pools them; an interval
covers when it holds the marginal's true quantile. Printed: the P50 interval's coverage; P90's as
it was (every change counted as independent) and as published now (the changes counted as
n / design effect where the set-ups differ, none from fewer than 12 set-ups, ``scale.effective_n``;
no interval below 36), with the
share of experiments that publish one; and the share whose note says the changes correlate.

**End ratio** (:func:`end_ratio_coverage`): a curve's two ends (0 objects and the largest count) in
``rounds`` rounds with ``repeats`` runs of each end per round; log value = end's level + the
round's effect on that end's set-up (sd ``round_sd``, its own per end: the point is set up once a
round) + run noise (sd ``run_sd``). Printed: the coverage of the true ratio by the old fallback
(Welch on all runs, ``variants.sequential``: below 2 rounds its runs are one round's) and by what
``scale.end_ratio`` publishes now (paired by round from 2 rounds, ``variants.side_by_side``; none
below).
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np
from scipy import stats

from podnet.stats.scale import DEFF_NOTE, effective_n, icc, quantile_interval
from podnet.stats.sweeps import median_interval
from podnet.stats.variants import sequential, side_by_side

DESIGNS = ((6, 6), (12, 3), (12, 6), (24, 3))  # set-ups x changes
ICCS = (0.0, 0.1, 0.3, 0.6)


class EffectCell(NamedTuple):
    """One (set-ups x changes, ICC) cell of the time-to-effect simulation."""

    p50: float  # coverage of the median's interval
    p90_iid: float  # coverage of P90's interval with every change counted (before issue 44)
    p90: float  # coverage of P90's interval as published (NaN when never published)
    p90_published: float  # share of experiments with a P90 interval
    flagged: float  # share whose note says the changes correlate


def coverage(setups: int, changes: int, rho: float, experiments: int, rng: np.random.Generator) -> EffectCell:
    """Coverage of the P50 and P90 intervals of one design at ICC ``rho`` (loop over experiments)."""
    q50, q90 = 0.0, float(stats.norm.ppf(0.9))
    groups = np.repeat(np.arange(setups), changes)
    hits50 = hits_iid = hits90 = have90 = flagged = 0
    n = setups * changes
    for _ in range(experiments):
        a = rng.normal(0, np.sqrt(rho), setups)
        x = np.repeat(a, changes) + rng.normal(0, np.sqrt(1 - rho), n)
        med = median_interval(x)
        hits50 += med.low <= q50 <= med.high
        _, lo, hi, _ = quantile_interval(x, 0.9)
        hits_iid += lo <= q90 <= hi
        c = icc(x, groups)
        ne = effective_n(n, setups, c)
        flagged += bool(c.design_effect >= DEFF_NOTE and c.p < 0.05)
        _, lo, hi, _ = quantile_interval(x, 0.9, n_effective=ne)
        if np.isfinite(lo) and np.isfinite(hi):
            have90 += 1
            hits90 += lo <= q90 <= hi
    e = float(experiments)
    return EffectCell(
        hits50 / e, hits_iid / e, hits90 / have90 if have90 else float("nan"), have90 / e, flagged / e
    )


class EndCell(NamedTuple):
    """One (rounds, repeats) cell of the end-ratio simulation."""

    welch: float  # coverage of Welch on every run (the old fallback below 2 rounds)
    published: float  # coverage of the published interval (NaN: none published)


def end_ratio_coverage(
    rounds: int,
    repeats: int,
    experiments: int,
    rng: np.random.Generator,
    round_sd: float = 0.05,
    run_sd: float = 0.02,
    ratio: float = 0.8,
) -> EndCell:
    """Coverage of the largest / 0 ratio's interval (vectorised over experiments)."""
    shape = (experiments, rounds, 1)
    top = (
        np.log(ratio) + rng.normal(0, round_sd, shape) + rng.normal(0, run_sd, (experiments, rounds, repeats))
    )
    zero = rng.normal(0, round_sd, shape) + rng.normal(0, run_sd, (experiments, rounds, repeats))
    w = sequential(np.exp(top.reshape(experiments, -1)), np.exp(zero.reshape(experiments, -1)), 0.95)
    welch = float(np.mean((w.low <= ratio) & (ratio <= w.high)))
    if rounds < 2:
        return EndCell(welch, float("nan"))
    # a pair's value is the median of its round's runs at that end (scale.end_ratio)
    p = side_by_side(np.exp(np.median(top, axis=-1)), np.exp(np.median(zero, axis=-1)), 0.95, adaptive=False)
    return EndCell(welch, float(np.mean((p.low <= ratio) & (ratio <= p.high))))


def main(experiments: int = 2000, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    print(f"time to effect: {experiments} experiments a cell; nominal 95 % intervals")
    print(
        "set-ups x changes   ICC   P50 cover   P90 cover (all counted)   P90 cover published"
        "   P90 published   note: correlate"
    )
    for setups, changes in DESIGNS:
        for rho in ICCS:
            c = coverage(setups, changes, rho, experiments, rng)
            pub = "     -" if np.isnan(c.p90) else f"{c.p90:6.3f}"
            print(
                f"{setups:>7} x {changes:<7}   {rho:.1f}   {c.p50:9.3f}   {c.p90_iid:23.3f}   {pub:>19}"
                f"   {c.p90_published:13.3f}   {c.flagged:15.3f}"
            )
    print(
        f"\nend ratio (largest / 0, true 0.8): round effect sd 0.05 per end's set-up, run sd 0.02;"
        f" {experiments} experiments a cell (design effect note from {DEFF_NOTE})"
    )
    print("rounds x repeats   Welch on all runs (old, < 2 rounds)   published (paired by round; - none)")
    for rounds, repeats in ((1, 3), (1, 6), (2, 3), (3, 3), (6, 1), (6, 3)):
        c = end_ratio_coverage(rounds, repeats, experiments, rng)
        pub = "     - (no interval)" if np.isnan(c.published) else f"{c.published:6.3f}"
        print(f"{rounds:>6} x {repeats:<7}   {c.welch:35.3f}   {pub}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    main(a.experiments, a.seed)
