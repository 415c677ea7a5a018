"""Coverage of what scale_effect.csv and scale_curves.csv publish as intervals, and the power of the
curve's end ratio (podnet/stats/METHODS.md, "Scale points"; printed, a few minutes at the defaults).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_scale_probes.py [--experiments 300] [--seed 7]
        [--designs 36x2,24x3] [--effect]

**Time to effect** (:func:`coverage`): each experiment has ``setups`` set-ups x ``changes`` changes,
log time = a_s + e with a_s ~ N(0, icc) per set-up and e ~ N(0, 1 - icc) per change (the marginal is
N(0, 1) whatever the ICC), as scale_probes.csv rows (a removal probe: every change counted) given
to :func:`podnet.stats.scale.effect_table`, the function the pipeline publishes scale_effect.csv
with (the experiments of a cell are the points of one table); an interval covers when it holds the
marginal's true quantile. Printed: the P50 interval's coverage and median width (log(high / low);
the times' log sd is 1) as it was, over every change as if independent
(``sweeps.median_interval``), and as published now, over the set-ups' medians interpolated to 95 %
(``scale.setup_median_interval``; ``!`` where it covers outside 93-97 %), with the share of
experiments that publish a 95 % one and the coverage of the range of the set-ups' medians that fewer
than 6 set-ups publish instead (its own coverage stated, 93.8 % from 5). P90's as it was (every
change counted as independent, ``scale.quantile_interval``) and as published now (the changes
counted as n / design effect where the set-ups differ, none from fewer than 24 set-ups of more
than one change, ``scale.effective_n``; no interval below 36), with the share of experiments that
publish one; and the share whose note says the changes correlate. The changes are removals, every
one counted; ``--effect``: effects, each set-up's first change set apart as ``effect_table`` does
(a set-up of c changes keeps c - 1). ``--designs``: those cells only, no end ratio. ``--skewed`` (:func:`skewed`) prints only this:
set-up shifts skewed, where the median of changes and that of the set-ups' medians part, and how
often the P50 interval holds each.

**End ratio** (:func:`end_ratio_coverage`): a curve's two ends (0 objects and the largest count) in
``rounds`` rounds with ``repeats`` runs of each end per round; log value = end's level + the
round's effect on that end's set-up (sd ``round_sd``, its own per end: the point is set up once a
round) + run noise (sd ``run_sd``), as tidy rows given to :func:`podnet.stats.scale.end_ratio`.
Printed: the coverage of the true ratio by the old fallback (Welch on all runs,
``variants.sequential``: below 2 rounds its runs are one round's) and by what ``end_ratio``
publishes now (paired by round from 2 rounds, ``variants.side_by_side``; none below); and how often
its p (``ratio_p``, the paired t, unadjusted: one curve chosen before the run, no family) is below
0.05 at a true ratio of 0.8 (power) and of 1 (the false rate), and *precise*
(``podnet.stats.planning.precise``: within ±5 % on at least ``min_to_stop`` rounds).
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from podnet.stats.planning import precise
from podnet.stats.scale import DEFF_NOTE, effect_table, end_ratio, quantile_interval, setup_median_interval
from podnet.stats.settings import Settings
from podnet.stats.sweeps import median_interval
from podnet.stats.variants import sequential

#: the least coverage a published 95 % interval may have (issue 44: 93-97 %)
FLOOR = 0.93

#: set-ups x changes counted: the campaigns' (config/campaigns/*scale*.yaml: 6 rounds of 1, 3 or 7
#: changes, the first of each set-up set apart for an effect; config/examples/*-scale.yaml: 5 rounds
#: of 3) and more rounds (an adaptive launch)
DESIGNS = ((5, 2), (5, 3), (6, 1), (6, 2), (6, 3), (6, 6), (6, 7), (12, 3), (12, 6), (24, 3))
ICCS = (0.0, 0.3, 0.6)


class EffectCell(NamedTuple):
    """One (set-ups x changes, ICC) cell of the time-to-effect simulation."""

    p50_old: float  # coverage of the median's interval over every change (before issue 44)
    p50_old_width: float  # its median width, log(high / low) (the times' log sd is 1)
    p50: float  # coverage of the P50 interval as published at 95 % (NaN when never)
    p50_width: float  # its median width, log(high / low)
    p50_published: float  # share of experiments with a 95 % P50 interval (the rest: the range, below)
    p50_range: float  # coverage of the range published below 95 % (too few set-ups; NaN when never)
    p90_iid: float  # coverage of P90's interval with every change counted (before issue 44)
    p90: float  # coverage of P90's interval as published (NaN when never published)
    p90_published: float  # share of experiments with a P90 interval
    flagged: float  # share whose note says the changes correlate


#: the probe simulated -> its scale_probes.csv metric: a removal (every change counted) or an effect
#: (``--effect``: a set-up's first change of more than one set apart by ``effect_table``)
METRICS = {"removed": "policy_removed_s", "effect": "service_effect_s"}


def _changes(
    x: np.ndarray, setups: int, changes: int, point: int = 0, probe: str = "removed"
) -> pd.DataFrame:
    """One point's scale_probes.csv rows: ``changes`` removals (or effects) timed at each of ``setups``
    set-ups (``point``: its Services count, so that experiments are points of one table)."""
    return pd.DataFrame(
        {
            "variant": "v",
            "metric": METRICS[probe],
            "services": point,
            "network_policies": 100,
            "setup": np.repeat([f"s{i}" for i in range(setups)], changes),
            "change_no": np.tile(np.arange(changes), setups),
            "changes": changes,
            "value": np.exp(x),
            "late_up_to_s": 0.0,
        }
    )


def _share(hit: np.ndarray, shown: np.ndarray) -> float:
    return float(hit[shown].mean()) if shown.any() else float("nan")


def coverage(
    setups: int,
    changes: int,
    rho: float,
    experiments: int,
    rng: np.random.Generator,
    probe: str = "removed",
) -> EffectCell:
    """Coverage of the P50 and P90 intervals scale_effect.csv publishes for one design at ICC ``rho``
    (the experiments are the points of one table given to ``effect_table``; ``probe``: a key of
    :data:`METRICS`, "effect" counting what effect_table keeps, each set-up's first change apart)."""
    q50, q90 = 1.0, float(np.exp(stats.norm.ppf(0.9)))  # the true quantiles of the times (log-normal)
    n = setups * changes
    a = rng.normal(0, np.sqrt(rho), (experiments, setups))
    x = np.repeat(a, changes, axis=1) + rng.normal(0, np.sqrt(1 - rho), (experiments, n))
    t = effect_table(pd.concat([_changes(x[i], setups, changes, i, probe) for i in range(experiments)]))
    t = t.sort_values("services")
    kept = x[:, np.tile(np.arange(changes), setups) > 0] if probe == "effect" and changes > 1 else x
    old = [median_interval(np.exp(xi)) for xi in kept]
    old_lo, old_hi = np.array([m.low for m in old]), np.array([m.high for m in old])
    iid = np.array([quantile_interval(np.exp(xi), 0.9)[1:3] for xi in kept])
    lo, hi, cov = (t[c].to_numpy(float) for c in ("p50_low", "p50_high", "p50_coverage"))
    hit50 = (lo <= q50) & (q50 <= hi)
    shown = cov >= 0.95 - 1e-9
    ranged = np.isfinite(lo) & ~shown
    lo90, hi90 = t["p90_low"].to_numpy(float), t["p90_high"].to_numpy(float)
    have90 = np.isfinite(lo90) & np.isfinite(hi90)
    return EffectCell(
        float(np.mean((old_lo <= q50) & (q50 <= old_hi))),
        float(np.median(np.log(old_hi / old_lo))),
        _share(hit50, shown),
        float(np.median(np.log(hi[shown] / lo[shown]))) if shown.any() else float("nan"),
        float(shown.mean()),
        _share(hit50, ranged),
        float(np.mean((iid[:, 0] <= q90) & (q90 <= iid[:, 1]))),
        _share((lo90 <= q90) & (q90 <= hi90), have90),
        float(have90.mean()),
        float(t["note"].astype(str).str.contains("correlate").mean()),
    )


class EndCell(NamedTuple):
    """One (rounds, repeats, true ratio) cell of the end-ratio simulation."""

    welch: float  # coverage of Welch on every run (the old fallback below 2 rounds)
    published: float  # coverage of the published interval (NaN: none published)
    p_below: float  # share whose p (ratio_p, the paired t, unadjusted) is below 0.05
    precise: float  # share whose published interval is within the width target on min_to_stop rounds


def _ends(top: np.ndarray, zero: np.ndarray) -> pd.DataFrame:
    """One curve's tidy runs: ``top[r, k]`` / ``zero[r, k]`` the log values of round r's k-th run."""
    rounds, repeats = top.shape
    frames = []
    for x, logs in ((1000.0, top), (0.0, zero)):
        frames.append(
            pd.DataFrame(
                {
                    "sweep_value": x,
                    "value": np.exp(logs.ravel()),
                    "launch_id": "L",
                    "round_seq": np.repeat(np.arange(rounds), repeats),
                    "repeat": np.arange(rounds * repeats) + 1,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def end_ratio_coverage(
    rounds: int,
    repeats: int,
    experiments: int,
    rng: np.random.Generator,
    round_sd: float = 0.05,
    run_sd: float = 0.02,
    ratio: float = 0.8,
) -> EndCell:
    """Coverage, p < 0.05 and *precise* shares of the largest / 0 ratio scale_curves.csv publishes."""
    s = Settings.of(None)
    shape = (experiments, rounds, 1)
    top = (
        np.log(ratio) + rng.normal(0, round_sd, shape) + rng.normal(0, run_sd, (experiments, rounds, repeats))
    )
    zero = rng.normal(0, round_sd, shape) + rng.normal(0, run_sd, (experiments, rounds, repeats))
    w = sequential(np.exp(top.reshape(experiments, -1)), np.exp(zero.reshape(experiments, -1)), 0.95)
    welch = float(np.mean((w.low <= ratio) & (ratio <= w.high)))
    hit = shown = diff = prec = 0
    for i in range(experiments):
        r = end_ratio(_ends(top[i], zero[i]))
        lo, hi = r["ratio_low"], r["ratio_high"]
        if not (np.isfinite(lo) and np.isfinite(hi)):
            continue
        shown += 1
        hit += lo <= ratio <= hi
        diff += bool(r["ratio_p"] < 0.05)
        rhw = (hi - lo) / (2 * r["ratio"])
        prec += bool(precise(rhw, s.planning.target_rel_half_width, r["ratio_n"], s, lo, hi))
    e = float(experiments)
    if not shown:
        return EndCell(welch, float("nan"), 0.0, 0.0)
    return EndCell(welch, hit / shown, diff / e, prec / e)


def main(
    experiments: int = 300,
    seed: int = 7,
    designs: tuple[tuple[int, int], ...] = DESIGNS,
    iccs: tuple[float, ...] = ICCS,
    ends: tuple[tuple[int, int], ...] = ((1, 3), (1, 6), (2, 3), (3, 3), (6, 1), (6, 3)),
    probe: str = "removed",
) -> tuple[dict[tuple[int, int, float], EffectCell], dict[tuple[int, int, float], EndCell]]:
    """Print (and return) every cell: time to effect per (set-ups, changes, ICC), end ratio per
    (rounds, repeats, true ratio); ``probe``: "removed" (every change counted) or "effect"."""
    rng = np.random.default_rng(seed)
    effects, ratios = {}, {}
    counted = "the first change of a set-up set apart" if probe == "effect" else "every change counted"
    print(
        f"time to effect ({probe}, {counted}): {experiments} experiments a cell; nominal 95 % "
        f"intervals (floor {FLOOR:.0%})"
    )
    print(
        "set-ups x changes   ICC   P50 old cover  width   P50 new cover  width  published  range cover"
        "   P90 cover (all counted)   P90 cover published   P90 published   note: correlate"
    )
    for setups, changes in designs:
        for rho in iccs:
            c = coverage(setups, changes, rho, experiments, rng, probe)
            effects[(setups, changes, rho)] = c
            pub = "     -" if np.isnan(c.p90) else f"{c.p90:6.3f}" + (" below floor" if c.p90 < FLOOR else "")
            new = (
                "    -" if np.isnan(c.p50) else f"{c.p50:5.3f}" + ("!" if not FLOOR <= c.p50 <= 0.97 else " ")
            )
            rng50 = "    -" if np.isnan(c.p50_range) else f"{c.p50_range:5.3f}"
            print(
                f"{setups:>7} x {changes:<7}   {rho:.1f}   {c.p50_old:13.3f}  {c.p50_old_width:5.2f}"
                f"   {new:>13}  {c.p50_width:5.2f}  {c.p50_published:9.3f}  {rng50:>11}"
                f"   {c.p90_iid:23.3f}   {pub:>19}   {c.p90_published:13.3f}   {c.flagged:15.3f}",
                flush=True,
            )
    if not ends:
        return effects, ratios
    print(
        f"\nend ratio (largest / 0): round effect sd 0.05 per end's set-up, run sd 0.02; {experiments}"
        f" experiments a cell (design effect note from {DEFF_NOTE}); p < 0.05: the ratio's p (ratio_p,"
        " unadjusted: one curve, no family); precise: within ±5 % on min_to_stop rounds"
    )
    print(
        "rounds x repeats   true   Welch on all runs (old, < 2 rounds)   published cover (- none)"
        "   p < 0.05   precise"
    )
    for ratio in (0.8, 1.0):
        for rounds, repeats in ends:
            c = end_ratio_coverage(rounds, repeats, experiments, rng, ratio=ratio)
            ratios[(rounds, repeats, ratio)] = c
            pub = "     - (no interval)" if np.isnan(c.published) else f"{c.published:6.3f}"
            print(
                f"{rounds:>6} x {repeats:<7}   {ratio:4.2f}   {c.welch:35.3f}   {pub:>24}"
                f"   {c.p_below:8.3f}   {c.precise:7.3f}",
                flush=True,
            )
    return effects, ratios


def skewed(
    setups: int, changes: int, rho: float, experiments: int, rng: np.random.Generator
) -> tuple[float, float, float, float]:
    """P50's two estimands apart (``--skewed``): set-up shifts sqrt(rho) (Exp(1) - ln 2) (median 0,
    skewed), changes N(0, 1 - rho) in log seconds. -> (the changes' median, the set-ups' medians'
    median, both by Monte Carlo, and the coverage of each by ``scale.setup_median_interval``)."""
    big = 1_000_000

    def shifts(size: Any) -> np.ndarray:
        return np.sqrt(rho) * (rng.exponential(1.0, size) - np.log(2))

    marginal = float(np.median(shifts(big) + rng.normal(0, np.sqrt(1 - rho), big)))
    per = big // changes
    inner = np.median(rng.normal(0, np.sqrt(1 - rho), (per, changes)), axis=1)
    centre = float(np.median(shifts(per) + inner))
    g = np.repeat(np.arange(setups), changes)
    hits = np.zeros(2)
    for _ in range(experiments):
        x = np.repeat(shifts(setups), changes) + rng.normal(0, np.sqrt(1 - rho), setups * changes)
        m = setup_median_interval(np.exp(x), g)
        lo, hi = np.log(m.low), np.log(m.high)
        hits += [lo <= marginal <= hi, lo <= centre <= hi]
    return marginal, centre, hits[0] / experiments, hits[1] / experiments


def main_skewed(experiments: int = 300, seed: int = 7) -> None:
    """Print :func:`skewed` for the designs at ICC 0.3 and 0.6."""
    rng = np.random.default_rng(seed)
    print(f"P50 under skewed set-up shifts: {experiments} experiments a cell (log sd units)")
    print("set-ups x changes   ICC   changes' median   set-ups' medians' median   covers the one   the other")
    for setups, changes in DESIGNS:
        for rho in (0.3, 0.6):
            m, c, hm, hc = skewed(setups, changes, rho, experiments, rng)
            print(
                f"{setups:>7} x {changes:<7}   {rho:.1f}   {m:+15.3f}   {c:+24.3f}   {hm:14.3f}   {hc:9.3f}",
                flush=True,
            )


def _designs(text: str) -> tuple[tuple[int, int], ...]:
    """``36x2,24x3`` -> ((36, 2), (24, 3))."""
    out = []
    for part in text.split(","):
        setups, _, changes = part.strip().lower().partition("x")
        out.append((int(setups), int(changes)))
    return tuple(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--skewed", action="store_true", help="P50's estimands under skewed set-up shifts only")
    ap.add_argument(
        "--designs",
        type=_designs,
        default=None,
        help="set-ups x changes as configured, e.g. 36x2,24x3: these time-to-effect cells only (no end ratio)",
    )
    ap.add_argument(
        "--effect", action="store_true", help="an effect probe: each set-up's first change set apart"
    )
    a = ap.parse_args()
    probe = "effect" if a.effect else "removed"
    if a.skewed:
        main_skewed(a.experiments, a.seed)
    elif a.designs:
        main(a.experiments, a.seed, a.designs, ends=(), probe=probe)
    else:
        main(a.experiments, a.seed, probe=probe)
