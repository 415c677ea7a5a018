"""The P50 interval of time to effect, alternatives side by side (issue 44; podnet/stats/METHODS.md,
"Scale points"): why scale_effect.csv's is over the set-ups' medians. Printed, about a minute a
cell at the default size, nothing asserted.

    PYTHONPATH=. .venv/bin/python benchmarks/sim_scale_p50.py [--experiments 1000] [--seed 1] [--interpolation]

Each experiment: k set-ups x c changes, log time = a_s + e, a_s ~ N(0, icc), e ~ N(0, 1 - icc) (the
model of ``sim_scale_probes.py``, on the log scale: the true median is 0). Per (k x c, ICC): each
interval's coverage and median width (log sd units):

- ``naive``: the order statistics of every change as if independent (before issue 44);
- ``smed``: the order statistics of the set-ups' medians (exact binomial coverage);
- ``smed_hs``: those interpolated (Hettmansperger-Sheather) where the exact rank is above 1;
  scale_effect.csv interpolates at rank 1 too (``scale.setup_median_interval``);
- ``switch``: ``naive`` unless the one-way F test (5 %) finds the set-ups differ with a design
  effect of at least 1.25, then ``smed``;
- ``effn``: the ranks of n / design effect (ICC estimated from the point), scaled to n outwards (the
  P90's effective n, always); ``effn_pre``: only where the F test finds the set-ups differ (P90's rule);
- ``csign_z`` / ``csign_t``: the clustered sign test inverted (per set-up, the signs about a
  candidate summed; their sum over the root of their squares against the normal, or their mean's t
  against t(k - 1)): the median of changes as estimand;
- ``cboot``: a cluster bootstrap (set-ups resampled, 400 times, the pooled median's percentiles).

``--interpolation``: the coverage of the interpolated interval of scale_effect.csv against the exact
order statistics for skewed distributions of the set-ups' medians (:func:`interpolation`).
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.stats as sps

DESIGNS = ((5, 2), (5, 3), (6, 1), (6, 2), (6, 3), (6, 6), (6, 7), (12, 3), (12, 6), (24, 3))
ICCS = (0.0, 0.1, 0.3, 0.6)


def os_k(n: int, conf: float = 0.95) -> tuple[int, float]:
    """The largest rank k whose [x(k), x(n-k+1)] covers the median at least ``conf``, and its coverage."""
    k = 1
    for j in range(1, n // 2 + 1):
        if 1 - 2 * sps.binom.cdf(j - 1, n, 0.5) >= conf:
            k = j
    return k, 1 - 2 * sps.binom.cdf(k - 1, n, 0.5)


def naive(x: np.ndarray) -> tuple[float, float]:
    s = np.sort(x.ravel())
    k, _ = os_k(len(s))
    return s[k - 1], s[len(s) - k]


def smed(x: np.ndarray) -> tuple[float, float]:
    m = np.sort(np.median(x, axis=1))
    k, _ = os_k(len(m))
    return m[k - 1], m[len(m) - k]


def smed_hs(x: np.ndarray, conf: float = 0.95) -> tuple[float, float]:
    m = np.sort(np.median(x, axis=1))
    n = len(m)
    k, gk = os_k(n)
    if k == 1 or gk < conf:
        return m[0], m[-1]
    gk1 = 1 - 2 * sps.binom.cdf(k, n, 0.5)
    if gk1 >= conf:
        return m[k - 1], m[n - k]
    i = (gk - conf) / (gk - gk1)
    lam = (n - k) * i / (k + (n - 2 * k) * i)
    return lam * m[k] + (1 - lam) * m[k - 1], lam * m[n - k - 1] + (1 - lam) * m[n - k]


def anova(x: np.ndarray) -> tuple[float, float, float]:
    """(ICC, design effect, F test p) of equal set-ups."""
    k, c = x.shape
    if c < 2:
        return 0.0, 1.0, 1.0
    mw = ((x - x.mean(1, keepdims=True)) ** 2).sum() / (k * (c - 1))
    mb = c * ((x.mean(1) - x.mean()) ** 2).sum() / (k - 1)
    r = max(0.0, (mb - mw) / (mb + (c - 1) * mw))
    p = sps.f.sf(mb / mw, k - 1, k * (c - 1))
    return r, 1 + (c - 1) * r, p


def switch(x: np.ndarray) -> tuple[float, float]:
    _, deff, p = anova(x)
    return smed(x) if deff >= 1.25 and p < 0.05 else naive(x)


def effn(x: np.ndarray, pretest: bool = False) -> tuple[float, float]:
    _, deff, p = anova(x)
    if pretest and not (deff >= 1.25 and p < 0.05):
        deff = 1.0
    s = np.sort(x.ravel())
    n = len(s)
    m = int(np.floor(n / deff + 1e-9))
    k, _ = os_k(max(m, 1))
    lo, hi = k, m - k + 1
    if m < n:
        lo, hi = max(1, int(np.floor(lo * n / m))), min(n, int(np.ceil(hi * n / m)))
    return s[lo - 1], s[hi - 1]


def csign(x: np.ndarray, t: bool = False, conf: float = 0.95) -> tuple[float, float]:
    """The clustered sign test inverted over the gaps between the pooled order statistics."""
    k, c = x.shape
    s = np.sort(x.ravel())
    n = len(s)
    ranks = np.searchsorted(s, x, side="right")  # each value's rank, 1-based
    cnt = (ranks[:, :, None] <= np.arange(n + 1)[None, None, :]).sum(1)  # below gap j, per set-up
    T = 2 * cnt - c  # below minus above
    with np.errstate(divide="ignore", invalid="ignore"):
        if t:
            mean, sd = T.mean(0), T.std(0, ddof=1)
            stat = np.where(sd > 0, mean / (sd / np.sqrt(k)), np.where(mean == 0, 0, np.inf))
            crit = sps.t.ppf(0.5 + conf / 2, k - 1)
        else:
            V = (T**2).sum(0)
            stat = np.where(V > 0, T.sum(0) / np.sqrt(V), 0)
            crit = sps.norm.ppf(0.5 + conf / 2)
    ok = np.nonzero(np.abs(stat) <= crit)[0]
    if not len(ok):
        return np.nan, np.nan
    lo, hi = ok.min(), ok.max()
    return (s[lo - 1] if lo >= 1 else -np.inf), (s[hi] if hi <= n - 1 else np.inf)


def cboot(x: np.ndarray, rng: np.random.Generator, B: int = 400) -> tuple[float, float]:
    k, _ = x.shape
    idx = rng.integers(0, k, (B, k))
    meds = np.median(x[idx].reshape(B, -1), axis=1)
    return np.quantile(meds, 0.025), np.quantile(meds, 0.975)


METHODS = {
    "naive": naive,
    "smed": smed,
    "smed_hs": smed_hs,
    "switch": switch,
    "effn": effn,
    "effn_pre": lambda x: effn(x, True),
    "csign_z": csign,
    "csign_t": lambda x: csign(x, True),
}


def main(experiments: int = 1000, seed: int = 1, designs=DESIGNS, iccs=ICCS) -> dict:
    """Print (and return) coverage and median width per (k, c, ICC) and interval."""
    rng = np.random.default_rng(seed)
    out = {}
    names = [*METHODS, "cboot"]
    print(f"{experiments} experiments a cell: coverage, w median width (log sd units)")
    print("design icc " + " ".join(f"{m:>15}" for m in names))
    for k, c in designs:
        for rho in iccs:
            hits = dict.fromkeys(names, 0)
            wid: dict[str, list] = {m: [] for m in names}
            for _ in range(experiments):
                a = rng.normal(0, np.sqrt(rho), k)
                x = a[:, None] + rng.normal(0, np.sqrt(1 - rho), (k, c))
                for m, f in METHODS.items():
                    lo, hi = f(x)
                    hits[m] += lo <= 0 <= hi
                    wid[m].append(hi - lo)
                lo, hi = cboot(x, rng)
                hits["cboot"] += lo <= 0 <= hi
                wid["cboot"].append(hi - lo)
            out[(k, c, rho)] = {m: (hits[m] / experiments, float(np.median(wid[m]))) for m in names}
            cells = " ".join(
                f"{hits[m] / experiments:6.3f} w{np.median(wid[m]):6.2f}".rjust(15) for m in names
            )
            print(f"{k:>2}x{c:<2} {rho:.1f} {cells}", flush=True)
    return out


def interpolation(
    samples: int = 4000, seed: int = 2, ks: tuple[int, ...] = (6, 7, 8, 10, 12, 13, 24)
) -> dict:
    """``--interpolation``: k set-ups' medians (one value each) from a normal, an exponential and a
    log-normal (log sd 1.5) distribution: coverage of their median by the exact order statistics and
    by ``scale.setup_median_interval`` (interpolated to 95 %)."""
    from podnet.stats.scale import setup_median_interval

    rng = np.random.default_rng(seed)
    out = {}
    print(f"{samples} samples a cell: coverage of the true median, exact order statistics / interpolated")
    for k in ks:
        j, cover = os_k(k)
        cells = []
        for name, draw, true in (
            ("normal", lambda size: rng.normal(size=size), 0.0),
            ("exponential", lambda size: rng.exponential(size=size), float(np.log(2))),
            ("log-normal 1.5", lambda size: np.exp(rng.normal(0, 1.5, size=size)), 1.0),
        ):
            x = np.sort(draw((samples, k)), axis=1)
            exact = float(np.mean((x[:, j - 1] <= true) & (true <= x[:, k - j])))
            hs = [setup_median_interval(row, np.arange(k)) for row in x]
            inter = float(np.mean([m.low <= true <= m.high for m in hs]))
            out[(k, name)] = (exact, inter)
            cells.append(f"{name} {exact:.3f} / {inter:.3f}")
        print(f"k = {k:>2} (exact {cover:.3f}): " + "   ".join(cells), flush=True)
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiments", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--interpolation", action="store_true", help="only the interpolation's coverage")
    a = ap.parse_args()
    if a.interpolation:
        interpolation()
    else:
        main(a.experiments, a.seed)
