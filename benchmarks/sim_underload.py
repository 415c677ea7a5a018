"""Latency under load: which rows of a declared Holm family come out "different", and the coverage of
the interval published beside them (podnet/stats/METHODS.md, "The paired t p").

    PYTHONPATH=. .venv/bin/python benchmarks/sim_underload.py [--experiments 2000] [--seed 44]

Each simulated campaign is one family of ``m`` side-by-side rows (m = 4: one CNI each over macvlan,
TCP_RR P99 at 8 streams, config/campaigns/under-load.yaml; m = 24: the family it replaces, 4 CNIs x
1/4/8 streams x P50/P99) with ``n`` pairs each (one pair a round). A row's per-round log ratio is
d = theta + s (e_t - e_b): each side's log value carries its own noise e (sd 1 on the log scale,
``noise``: normal, t3, or a normal mixture whose values are a log-normal mixture: 10 % of runs from a
3x wider normal), s = sd / sqrt(2) so that d has sd ``sd``. One row has the true ratio 1.3 (theta =
ln 1.3) and the other m - 1 are A/A (theta = 0): the row with an effect must pass Holm's first step
by itself, the hardest case. Printed per cell:

- **different** (power): the share of campaigns in which the 1.3x row is "different" (Holm-adjusted p below
  alpha = 0.05 over the family), for three p's: ``stated`` (robust.stated's p, before issue 44: the
  t p below 7 pairs at 97.5 %, the exact Wilcoxon p from there), ``reach`` (the alternative not
  taken: the exact Wilcoxon p where n reaches robust.exact_reach(m), the paired t p below) and
  ``t`` (the paired t p of the mean log ratio at every n, robust.Stated.p_t: what a declared
  family reads now);
- **A/A different**: the share of A/A rows called different, and the share of campaigns with any (FWER);
- **coverage** of the published interval (robust.stated at 95 %, fixed rounds: Hodges-Lehmann /
  Wilcoxon from 6 pairs, the mean's t below; and at 97.5 %, the level after an adaptive stop) and of
  the paired t interval at 95 %, over every row (the true ratio is exp(theta): d is symmetric);
- **precise**: the share of 1.3x rows and of A/A rows whose published 95 % interval meets the width
  target (±5 %) on at least ``min_to_stop`` pairs (``podnet.stats.planning.precise``);
- **ratio to idle** (latency_under_load.csv): the coverage of the median of n paired loaded/idle
  ratios with its order-statistic interval (``podnet.stats.sweeps.median_interval``, the function
  ``podnet.stats.underload`` publishes it with) on the same per-round log ratios d, at the true
  median exp(theta), over the 1.3x row and one A/A row of each family.

The Monte Carlo se of a rate p over E campaigns is sqrt(p (1 - p) / E) (about 0.5 points at 95 %
and E = 2,000 rows). A row is *different* when Holm's adjusted p over its family is below alpha.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np

from podnet.stats import robust
from podnet.stats.planning import precise
from podnet.stats.settings import Settings
from podnet.stats.sweeps import median_interval

ALPHA = 0.05
RATIO = 1.3
SD = 0.10
NOISES = ("normal", "t3", "lognormal-mix")
PAIRS = (6, 7, 8, 10)
FAMILIES = (4, 24)
P_RULES = ("stated", "reach", "t")


def noise(rng: np.random.Generator, kind: str, shape: tuple[int, ...]) -> np.ndarray:
    """Standardised log noise of one side (sd 1): normal, t3, or 10 % of values from a 3x wider normal."""
    if kind == "normal":
        return rng.normal(size=shape)
    if kind == "t3":
        return rng.standard_t(3, shape) / np.sqrt(3.0)
    if kind == "lognormal-mix":
        wide = rng.random(shape) < 0.1
        return rng.normal(size=shape) * np.where(wide, 3.0, 1.0) / np.sqrt(0.9 + 0.1 * 9.0)
    raise ValueError(f"unknown noise {kind!r}")


def holm_rejects(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Holm's step-down decisions over the last axis (NaN counts as p = 1)."""
    q = np.where(np.isfinite(p), p, 1.0)
    m = q.shape[-1]
    order = np.argsort(q, axis=-1, kind="stable")
    qs = np.take_along_axis(q, order, axis=-1)
    ok = np.cumprod(qs < alpha / (m - np.arange(m)), axis=-1).astype(bool)
    out = np.zeros_like(ok)
    np.put_along_axis(out, order, ok, axis=-1)
    return out


class Cell(NamedTuple):
    """One (noise, pairs, family size) cell: power and A/A rates per p rule, coverages."""

    power: dict[str, float]
    aa_row: dict[str, float]
    aa_fwer: dict[str, float]
    cover_95: float
    cover_975: float
    cover_t: float
    precise_effect: float  # 1.3x rows whose published 95 % interval is precise
    precise_aa: float  # A/A rows whose published 95 % interval is precise
    cover_idle: float  # the ratio to idle's order-statistic interval (median of the pairs' ratios)


def cell(rng: np.random.Generator, kind: str, n: int, m: int, experiments: int, sd: float = SD) -> Cell:
    """Simulate ``experiments`` families of ``m`` rows with ``n`` pairs each (row 0: ratio 1.3)."""
    theta = np.zeros(m)
    theta[0] = np.log(RATIO)
    shape = (experiments, m, n)
    d = theta[None, :, None] + sd / np.sqrt(2.0) * (noise(rng, kind, shape) - noise(rng, kind, shape))
    fixed = robust.stated(d, 0.95, adaptive=False)
    after_stop = robust.stated(d, 0.95, adaptive=True)
    t95 = robust.mean_t(d, 0.95)
    exact = (after_stop.method == "hodges-lehmann") & (n >= robust.exact_reach(m, ALPHA))
    ps = {"stated": after_stop.p, "reach": np.where(exact, after_stop.p, after_stop.p_t), "t": after_stop.p_t}
    power, aa_row, aa_fwer = {}, {}, {}
    for name, p in ps.items():
        rej = holm_rejects(p)
        power[name] = float(rej[:, 0].mean())
        aa_row[name] = float(rej[:, 1:].mean())
        aa_fwer[name] = float(rej[:, 1:].any(axis=1).mean())

    def cover(low: np.ndarray, high: np.ndarray) -> float:
        return float(((low <= theta[None, :]) & (theta[None, :] <= high)).mean())

    st = Settings.of(None)
    with np.errstate(invalid="ignore", divide="ignore"):
        rhw = (np.exp(fixed.high) - np.exp(fixed.low)) / (2 * np.exp(fixed.estimate))
    prec = precise(rhw, st.planning.target_rel_half_width, np.full(rhw.shape, n), st, fixed.low, fixed.high)
    idle_hits = 0
    for e in range(experiments):
        for row in (0, 1):  # the 1.3x row and one A/A row
            mi = median_interval(np.exp(d[e, row]))
            idle_hits += mi.low <= np.exp(theta[row]) <= mi.high
    return Cell(
        power,
        aa_row,
        aa_fwer,
        cover(fixed.low, fixed.high),
        cover(after_stop.low, after_stop.high),
        cover(t95.low, t95.high),
        float(prec[:, 0].mean()),
        float(prec[:, 1:].mean()),
        idle_hits / (2.0 * experiments),
    )


def table(
    experiments: int = 2000,
    seed: int = 44,
    noises: tuple[str, ...] = NOISES,
    pairs: tuple[int, ...] = PAIRS,
    families: tuple[int, ...] = FAMILIES,
    sd: float = SD,
) -> dict[tuple[str, int, int], Cell]:
    """Every cell, printed as one line each; returned for the pipeline test."""
    rng = np.random.default_rng(seed)
    print(
        f"latency under load: one row at {RATIO}x and m - 1 A/A rows per family, pair log sd {sd},"
        f" Holm at alpha {ALPHA}; {experiments} campaigns a cell"
    )
    print(
        "  noise          n   m  reach |  1.3x different % stated/reach/t  |  A/A rows different %"
        " stated/reach/t  |  FWER % t  |  coverage %: stated 95 / 97.5, t 95  |  precise % 1.3x / A/A"
        "  |  ratio to idle covered %"
    )
    out = {}
    for kind in noises:
        for m in families:
            for n in pairs:
                c = cell(rng, kind, n, m, experiments, sd)
                out[(kind, n, m)] = c
                pw = "/".join(f"{100 * c.power[r]:5.1f}" for r in P_RULES)
                aa = "/".join(f"{100 * c.aa_row[r]:4.2f}" for r in P_RULES)
                print(
                    f"  {kind:<13} {n:>2} {m:>3}  {robust.exact_reach(m, ALPHA):>4}  | {pw} | {aa}"
                    f" | {100 * c.aa_fwer['t']:5.2f}    | {100 * c.cover_95:5.1f} /"
                    f" {100 * c.cover_975:5.1f}, {100 * c.cover_t:5.1f}"
                    f"  | {100 * c.precise_effect:5.1f} / {100 * c.precise_aa:5.1f}  | {100 * c.cover_idle:5.1f}",
                    flush=True,
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--sd", type=float, default=SD, help="pair log sd (measured: see the campaign's header)")
    ap.add_argument("--pairs", type=int, nargs="+", default=list(PAIRS))
    ap.add_argument("--families", type=int, nargs="+", default=list(FAMILIES))
    a = ap.parse_args()
    table(a.experiments, a.seed, pairs=tuple(a.pairs), families=tuple(a.families), sd=a.sd)


if __name__ == "__main__":
    main()
