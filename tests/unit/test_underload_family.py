"""The p a declared Holm family reads (podnet.stats.robust.family_p; METHODS.md, "The p of a declared
family"): the exact Wilcoxon p only from the pairs that can pass the family's first Holm step, the
paired t on the log ratios below, so a row's chance of being "different" never falls as pairs are
added (issue 44: 24 rows at 7 pairs could not be different whatever the data)."""

from __future__ import annotations

import numpy as np
import pytest

from podnet.stats import core, robust
from podnet.stats.variants import variant_table
from tests.stats_tables import one, rows, tidy

CNIS = ["calico-bgp", "calico-vxlan", "cilium-vxlan", "flannel-vxlan"]


@pytest.mark.parametrize(("m", "n"), [(1, 6), (4, 8), (24, 10), (12, 9)])
def test_exact_reach_is_the_fewest_pairs_whose_least_exact_p_passes_the_first_step(m, n):
    assert robust.exact_reach(m) == n
    assert 2 / 2**n < 0.05 / m <= 2 / 2 ** (n - 1)


def _d(n: int, ratio: float = 1.3, sd: float = 0.05, seed: int = 3) -> np.ndarray:
    """n per-round log ratios of a clear effect (every pair above 1)."""
    d = np.log(ratio) + sd * np.random.default_rng(seed).standard_normal(n)
    assert (d > 0).all()
    return d


@pytest.mark.parametrize("m", [4, 24])
def test_a_clear_effect_stays_different_as_pairs_are_added(m):
    """Holm over m rows of the same p: different iff p < alpha / m. By the stated p (the exact
    Wilcoxon p from 7 pairs at 97.5 %) a 1.3x effect seen in every pair was different at 6 pairs
    and not at 7; by the family's p it is different at every n from 6 on."""
    stated_ok, family_ok = [], []
    for n in range(6, 13):
        s = robust.stated(_d(n), 0.95, adaptive=True)
        fp = robust.family_p(s.p, s.p_t, n, s.method, m)
        stated_ok.append(bool(core.holm(np.full(m, float(s.p)))[0] < 0.05))
        family_ok.append(bool(core.holm(np.full(m, float(fp.p)))[0] < 0.05))
        want = "wilcoxon" if n >= robust.exact_reach(m) else "t"
        assert fp.method == want
    assert all(family_ok)
    assert stated_ok[0] and not stated_ok[1]  # what the old p did: lost at 7 pairs


def test_family_p_keeps_the_exact_p_where_it_can_reach_and_a_mean_row_keeps_its_t():
    s = robust.stated(_d(10), 0.95, adaptive=True)
    fp = robust.family_p(s.p, s.p_t, 10, s.method, 4)
    assert s.method == "hodges-lehmann" and fp.method == "wilcoxon" and fp.p == s.p
    s6 = robust.stated(_d(6), 0.95, adaptive=True)  # 6 pairs at 97.5 %: the mean's t interval
    assert s6.method == "mean" and s6.p == s6.p_t
    assert robust.family_p(s6.p, s6.p_t, 6, s6.method, 1).method == "t"


def _campaign(n: int, ratios: dict[str, float], seed: int = 5):
    rng = np.random.default_rng(seed)
    drift = rng.lognormal(0, 0.2, n)  # a round's drift, shared by every variant of it
    base = rows(1e9 * drift * rng.lognormal(0, 0.03, n), variant="macvlan", launch_id="C1")
    out = [base]
    for v in CNIS:
        out.append(rows(1e9 * ratios[v] * drift * rng.lognormal(0, 0.03, n), variant=v, launch_id="C1"))
    settings = {
        "comparisons": [{"by": "variant", "baseline": "macvlan"}],
        "primary": [{"by": "variant", "baseline": "macvlan", "treatments": CNIS}],
        "paired": {"adaptive": True},
    }
    return variant_table(tidy(*out), settings)


def test_a_four_row_family_at_7_pairs_calls_every_cni_at_1_3x_different_and_the_aa_row_not():
    """The campaign's count (7 pairs) and family (4 rows): the exact p of 7 pairs (>= 0.0156) x 4 in
    Holm's first step cannot be below 0.05, so by the old p no row was different."""
    v = _campaign(7, {"calico-bgp": 1.3, "calico-vxlan": 1.3, "cilium-vxlan": 1.3, "flannel-vxlan": 1.0})
    v = v[v["design"] == "side-by-side"]
    assert (v["role"] == "primary").all() and (v["interval_method"] == "hodges-lehmann").all()
    for cni in CNIS[:3]:
        assert one(v, variant=cni)["verdict"] == "different"
    assert (v["p_test"] == "t").all()
    aa = one(v, variant="flannel-vxlan")
    assert aa["verdict"] != "different" and aa["ci_low"] < 1 < aa["ci_high"]


def test_at_10_pairs_the_family_reads_the_exact_wilcoxon_p():
    v = _campaign(10, dict.fromkeys(CNIS, 1.3))
    v = v[v["design"] == "side-by-side"]
    assert (v["verdict"] == "different").all() and (v["p_test"] == "wilcoxon").all()
    assert np.allclose(v["p_value"], 2 / 2**10)  # every pair above 1: the exact p's least value
