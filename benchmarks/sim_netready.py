"""Time to network (net_ready.csv, net_ready_ratios.csv): coverage of every published interval, the
A/A "different" rate and the power (a P90 row "different") at true ratios of 1.5 and 1.25, and how
often the P90 ratio is "precise", at 4, 6, 8 and 10 runs a side of 20 pods
(podnet/stats/METHODS.md, "Time to network"; printed, about a minute a scenario at the defaults).

    PYTHONPATH=. .venv/bin/python benchmarks/sim_netready.py [--experiments 400] [--resamples 1000]
        [--runs 6 8 10] [--noise design|measured] [--pods 20]

Each experiment is a side-by-side campaign of ``runs`` rounds: in round r each variant runs one
burst of 20 pods; a pod's log time is log(level) + R_r + e_vr + eps, R_r ~ N(0, round_sd) shared by
both variants of the round (the machine's moment), e_vr ~ N(0, run_sd) the variant's own run, eps
~ N(0, pod_sd) the pod (log-normal pods). The marginal of one variant is log-normal with sd
sqrt(round_sd^2 + run_sd^2 + pod_sd^2), so every true percentile of its pooled pods is known (a
variant's own P50 is covered at it). The ratio published (net_ready_ratios.csv, paired by round)
is the geometric mean over rounds of the round's percentile ratio; its true value (:func:`true_ratios`)
is ``ratio`` at P90 and, when both sides have one pod spread, at every percentile. The design scenarios' (``--noise design``,
:data:`SCENARIOS`) pod spreads are those of the embedded cluster's netready bursts
(tests/fixtures/netready/bridge-burst-k5.json: log sd over pods 0.09 for net_ready_s, 0.31 for
first_reply_out_s). ``--noise measured`` (:data:`MEASURED`) takes the spreads of the under-load
campaign's bursts instead: the treatment's pods spread more than the baseline's, its round P90 is
``ratio`` times the baseline's and its other percentiles are not (a ratio's coverage is counted at
its true value). Measured 2026-11-30 (400 experiments a cell; the A/A rows also 3,000 a cell):
the round-paired bootstrap of the pooled pods' P90 it replaced covered 1 in 90.2 % of A/A campaigns
at 9 rounds where runs spread more than pods (`net_ready_s`, measured; its se 13-19 % short at 6-9
rounds), the paired t 94.4-95.6 % in every scenario at 6, 9 and 12 rounds (se 0.4). ``--pods``: pods a burst (20 in the campaigns).

It runs the library's own code: :func:`podnet.stats.netready.bootstrap_quantiles` and
:func:`~podnet.stats.netready.log_t` (net_ready.csv's interval; beside it the expanded percentile
interval it replaced), :func:`~podnet.stats.netready.support` (which percentiles get an interval),
:func:`podnet.stats.netready_compare.percentile_ratio` paired by round (its paired t,
:func:`~podnet.stats.netready_compare.round_t`; for comparison each side's runs bootstrapped on their
own). "different" is Holm over the under-load campaign's family (5 treatments, the A/A
among them, x 2 ranked times = 10 P90 rows; 8 before the A/A variant joined): an A/A row is counted
at Holm's first step (p < 0.05/10; all rows A/A) and at the bound p < 0.05 (every other row a sure
difference); power is p < 0.05/10 (a lower bound).
"precise" is a P90 row's interval within the width target (±5 %) on at least ``min_to_stop``
rounds (``podnet.stats.planning.precise``, as ``netready_compare.with_precise`` states it).
"""

from __future__ import annotations

import argparse
from functools import cache
from typing import NamedTuple

import numpy as np
from scipy import integrate, stats

from podnet.stats.bootstrap import expanded_tail
from podnet.stats.netready import QUANTILES, bootstrap_quantiles, log_t, support
from podnet.stats.netready_compare import percentile_ratio
from podnet.stats.planning import precise
from podnet.stats.settings import Settings

PODS = 20
ALPHA = 0.05
#: the under-load campaign's family: 5 treatments over macvlan (4 CNIs and the A/A) x 2 ranked
#: times, each its P90 (net_ready_ratios.csv's ``m``; 8 before the A/A variant joined)
FAMILY_M = 10


class Scenario(NamedTuple):
    """One noise model (log sds) and the median time of the baseline (s); ``treat_pod_sd``: the
    treatment's pod spread when it is not the baseline's (its median is then set so that its P90 is
    ``ratio`` times the baseline's: the ranked percentile keeps the true ratio, the others do not)."""

    name: str
    pod_sd: float
    run_sd: float
    round_sd: float
    median_s: float
    treat_pod_sd: float | None = None


SCENARIOS = (
    Scenario("net_ready_s (API-visible)", 0.10, 0.05, 0.10, 2.7),
    Scenario("first_reply_out_s (datapath)", 0.30, 0.10, 0.10, 1.5),
)

#: the under-load campaign's measured bursts (2026-11-29 20:51, 6 a variant, 20 pods each;
#: processed/under-load/tidy.parquet): pod log sd within a burst, macvlan's 0.07 (net_ready_s) and
#: 0.22 (first_reply_out_s), the other CNIs' 0.07-0.29 and 0.24-0.43 (cilium-vxlan 0.55 and 0.68);
#: between bursts beyond the pods' share a run sd of 0.05-0.15 (cilium-vxlan 0.4-0.5) and a round
#: effect shared by the variants of about 0.05 (without cilium-vxlan); macvlan's medians 6.6 and 3.6 s
MEASURED = (
    Scenario("net_ready_s (API-visible, measured)", 0.07, 0.12, 0.05, 6.6, treat_pod_sd=0.28),
    Scenario("first_reply_out_s (datapath, measured)", 0.22, 0.12, 0.05, 3.6, treat_pod_sd=0.40),
    Scenario("first_reply_out_s (datapath, measured, wide runs)", 0.22, 0.20, 0.05, 3.6, treat_pod_sd=0.40),
)


class Cell(NamedTuple):
    """What one design (scenario, runs a side) gives over its experiments."""

    scenario: str
    runs: int
    #: per percentile name: share of experiments with the interval published (a variant's own, a
    #: ratio's), and the own interval's coverage
    published: dict[str, float]
    published_ratio: dict[str, float]
    coverage: dict[str, float]
    #: coverage of the same interval where it is not published, and of the old expanded percentile
    unpublished_coverage: dict[str, float]
    old_coverage: dict[str, float]
    #: per percentile: ratio coverage at 1.0 and at ``ratio`` (round-paired, published only)
    ratio_coverage_aa: dict[str, float]
    ratio_coverage: dict[str, float]
    aa_different: float  # P90 A/A row, p < alpha / m
    aa_p05: float  # P90 A/A row, p < alpha (bound)
    power: float  # P90 at ``ratio``, p < alpha / m (round-paired)
    power_unpaired: float  # the same with each side resampled on its own
    power_second: float  # P90 at ``second``, p < alpha / m (round-paired)
    precise: float  # P90 ratio row at ``ratio`` precise
    precise_aa: float  # P90 A/A row precise
    zero_width: int  # intervals of width zero among all the published ones


@cache
def burst_z(q: float, pods: int) -> float:
    """The expected q-quantile (numpy's linear interpolation) of ``pods`` standard normal draws."""
    h = (pods - 1) * q
    lo = int(np.floor(h))

    def order(i: int) -> float:  # E of the (i+1)-th smallest of ``pods``
        dens = lambda z: z * stats.beta.pdf(stats.norm.cdf(z), i + 1, pods - i) * stats.norm.pdf(z)  # noqa: E731
        return float(integrate.quad(dens, -10, 10)[0])

    return order(lo) if lo + 1 >= pods else (1 - (h - lo)) * order(lo) + (h - lo) * order(lo + 1)


def true_ratios(sc: Scenario, ratio: float, qs: np.ndarray, pods: int = PODS) -> np.ndarray:
    """The published estimand's true value: the geometric mean over rounds of the treatment's
    round percentile over the baseline's (each a ``pods``-pod burst's), ``ratio`` at P90, and at
    every percentile when both have one pod spread."""
    own = sc.pod_sd if sc.treat_pod_sd is None else sc.treat_pod_sd
    z = np.array([burst_z(float(q), pods) for q in qs])
    return ratio * np.exp((z - burst_z(0.9, pods)) * (own - sc.pod_sd))


def _side(
    rng: np.random.Generator,
    sc: Scenario,
    rounds: np.ndarray,
    ratio: float,
    treated: bool = False,
    pods: int = PODS,
) -> list[np.ndarray]:
    """One variant's bursts, one per round; ``treated``: with the treatment's pod spread (the P90 at ``ratio``)."""
    runs = len(rounds)
    pod_sd, shift = sc.pod_sd, 0.0
    if treated and sc.treat_pod_sd is not None:  # its round P90 ``ratio`` times the baseline's
        pod_sd, shift = sc.treat_pod_sd, -burst_z(0.9, pods) * (sc.treat_pod_sd - sc.pod_sd)
    level = np.log(sc.median_s * ratio) + shift + rounds + rng.normal(0.0, sc.run_sd, runs)
    return list(np.exp(level[:, None] + rng.normal(0.0, pod_sd, (runs, pods))))


def simulate(
    sc: Scenario,
    runs: int,
    experiments: int,
    resamples: int,
    ratio: float,
    seed: int,
    second: float = 1.25,
    pods: int = PODS,
) -> Cell:
    """One design's coverage, A/A rate and power over ``experiments`` simulated campaigns."""
    rng = np.random.default_rng(seed)
    qs = np.array([q for q, _ in QUANTILES])
    names = [n for _, n in QUANTILES]
    total = np.sqrt(sc.round_sd**2 + sc.run_sd**2 + sc.pod_sd**2)
    truth = sc.median_s * np.exp(stats.norm.ppf(qs) * total)
    shown = np.array([not support(q, runs, runs * pods) for q in qs])
    between = np.array([not support(q, runs, runs * pods, own=False) for q in qs])
    cover, cover_all, cover_old = np.zeros(len(qs)), np.zeros(len(qs)), np.zeros(len(qs))
    rc_aa, rc = np.zeros(len(qs)), np.zeros(len(qs))
    aa_m = aa_05 = power = power_u = power_2 = prec = prec_aa = zero = 0
    st = Settings.of(None)

    def is_precise(r) -> bool:
        lo, hi, est = r.low[i90], r.high[i90], r.ratio[i90]
        rhw = (hi - lo) / (2 * est) if np.isfinite(lo) and np.isfinite(hi) else np.nan
        return bool(precise(rhw, st.planning.target_rel_half_width, runs, st, lo, hi))

    i90 = names.index("p90")
    true_r = true_ratios(sc, ratio, qs, pods)
    a_old = expanded_tail(runs, 1.0 - ALPHA)
    for _ in range(experiments):
        rounds = rng.normal(0.0, sc.round_sd, runs)
        base = _side(rng, sc, rounds, 1.0, pods=pods)
        twin = _side(rng, sc, rounds, 1.0, pods=pods)
        slow = _side(rng, sc, rounds, ratio, treated=True, pods=pods)
        est = np.quantile(np.concatenate(base), qs)
        dist = bootstrap_quantiles(base, qs, resamples, rng)
        iv = log_t(est, dist, runs, 1.0 - ALPHA)
        hit = (iv.low <= truth) & (truth <= iv.high)
        cover_all += hit
        cover += hit & shown
        zero += int(np.sum(shown & (iv.high <= iv.low)))
        old = np.quantile(dist, [a_old, 1.0 - a_old], axis=1)
        cover_old += (old[0] <= truth) & (truth <= old[1])
        aa = percentile_ratio(twin, base, qs, 1.0 - ALPHA, resamples, rng, paired=True)
        rc_aa += between & (aa.low <= 1.0) & (1.0 <= aa.high)
        aa_m += bool(aa.p[i90] < ALPHA / FAMILY_M)
        aa_05 += bool(aa.p[i90] < ALPHA)
        prec_aa += is_precise(aa)
        d = percentile_ratio(slow, base, qs, 1.0 - ALPHA, resamples, rng, paired=True)
        rc += between & (d.low <= true_r) & (true_r <= d.high)
        power += bool(d.p[i90] < ALPHA / FAMILY_M)
        prec += is_precise(d)
        other = _side(rng, sc, rounds, second, treated=True, pods=pods)
        d2 = percentile_ratio(other, base, qs[i90 : i90 + 1], 1.0 - ALPHA, resamples, rng, paired=True)
        power_2 += bool(d2.p[0] < ALPHA / FAMILY_M)
        zero += int(np.sum(between & ((aa.high <= aa.low) | (d.high <= d.low))))
        u = percentile_ratio(slow, base, qs[i90 : i90 + 1], 1.0 - ALPHA, resamples, rng)
        power_u += bool(u.p[0] < ALPHA / FAMILY_M)
    e = float(experiments)

    def per(x: np.ndarray, mask: np.ndarray) -> dict[str, float]:
        return {n: (float(x[i]) / e if mask[i] else float("nan")) for i, n in enumerate(names)}

    every = np.ones(len(qs), dtype=bool)
    return Cell(
        sc.name,
        runs,
        published={n: float(shown[i]) for i, n in enumerate(names)},
        published_ratio={n: float(between[i]) for i, n in enumerate(names)},
        coverage=per(cover, shown),
        unpublished_coverage=per(cover_all, ~shown),
        old_coverage=per(cover_old, every),
        ratio_coverage_aa=per(rc_aa, between),
        ratio_coverage=per(rc, between),
        aa_different=aa_m / e,
        aa_p05=aa_05 / e,
        power=power / e,
        power_unpaired=power_u / e,
        power_second=power_2 / e,
        precise=prec / e,
        precise_aa=prec_aa / e,
        zero_width=zero,
    )


def _pct(x: float) -> str:
    return "    –" if not np.isfinite(x) else f"{100 * x:5.1f}"


def main(
    runs: tuple[int, ...] = (4, 6, 8, 10),
    experiments: int = 400,
    resamples: int = 1000,
    ratio: float = 1.5,
    second: float = 1.25,
    scenarios: tuple[Scenario, ...] = SCENARIOS,
    pods: int = PODS,
) -> list[Cell]:
    """Print (and return) every design's cell; the published intervals' coverage targets 93-97 %."""
    cells = []
    print(
        f"{pods} pods a run, runs = rounds a side; {experiments} experiments x {resamples} resamples a cell; "
        f"coverage in % (– : not published); different (power) and A/A at P90, family of {FAMILY_M}"
        f" (Holm's first step); precise: P90 ratio within ±5 % on min_to_stop rounds"
    )
    for k, sc in enumerate(scenarios):
        treat = f" (the treatment's {sc.treat_pod_sd})" if sc.treat_pod_sd is not None else ""
        print(
            f"\n{sc.name}: log sd pod {sc.pod_sd}{treat}, run {sc.run_sd}, round {sc.round_sd} (shared by the variants)"
        )
        print(
            " runs | single P50  P90  P99 | not published P90  P99 | old expanded P50  P90  P99"
            f" | ratio A/A P50  P90 | ratio {ratio} P50  P90 | A/A different p<.05"
            f" | {ratio}x different paired unpaired | {second}x different | precise {ratio}x  A/A"
        )
        for n in runs:
            c = simulate(sc, n, experiments, resamples, ratio, seed=1000 * k + n, second=second, pods=pods)
            cells.append(c)
            cv, un, old = c.coverage, c.unpublished_coverage, c.old_coverage
            print(
                f" {n:4d} | {_pct(cv['p50'])} {_pct(cv['p90'])} {_pct(cv['p99'])} |"
                f" {_pct(un['p90']):>17} {_pct(un['p99'])} |"
                f" {_pct(old['p50']):>16} {_pct(old['p90'])} {_pct(old['p99'])} |"
                f" {_pct(c.ratio_coverage_aa['p50']):>13} {_pct(c.ratio_coverage_aa['p90'])} |"
                f" {_pct(c.ratio_coverage['p50']):>13} {_pct(c.ratio_coverage['p90'])} |"
                f" {_pct(c.aa_different):>13} {_pct(c.aa_p05)} | {_pct(c.power):>21} {_pct(c.power_unpaired):>8}"
                f" | {_pct(c.power_second):>15} | {_pct(c.precise):>12} {_pct(c.precise_aa):>4}",
                flush=True,
            )
            if c.zero_width:
                print(f"      {c.zero_width} published intervals of width zero")
    return cells


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiments", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--runs", type=int, nargs="+", default=[4, 6, 8, 10])
    ap.add_argument("--ratio", type=float, default=1.5)
    ap.add_argument("--second", type=float, default=1.25, help="a second true ratio: its P90 power")
    ap.add_argument(
        "--noise", choices=["design", "measured"], default="design",
        help="design: the fixture's pod spreads (SCENARIOS); measured: the under-load campaign's bursts (MEASURED)",
    )  # fmt: skip
    ap.add_argument("--pods", type=int, default=PODS, help="pods a burst")
    a = ap.parse_args()
    chosen = SCENARIOS if a.noise == "design" else MEASURED
    main(tuple(a.runs), a.experiments, a.resamples, a.ratio, a.second, chosen, a.pods)
