"""The p a declared Holm family reads (METHODS.md, "The paired t p"): the paired t on the
log ratios (podnet.stats.robust.Stated.p_t) at every n, so a row's chance of being "different" never
falls as pairs are added (issue 44: by the exact Wilcoxon p, 24 rows at 7 pairs could not be
different whatever the data; robust.exact_reach says from how many pairs it could)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

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
    and not at 7; by the family's p it is different at every n from 6 on (that its power rises with
    n is benchmarks/sim_underload.py's, in tests/pipeline/test_sim_underload.py)."""
    stated_ok, family_p = [], []
    for n in range(6, 13):
        s = robust.stated(_d(n), 0.95, adaptive=True)
        stated_ok.append(bool(core.holm(np.full(m, float(s.p)))[0] < 0.05))
        family_p.append(float(core.holm(np.full(m, float(s.p_t)))[0]))
    assert max(family_p) < 0.05
    assert stated_ok[0] and not stated_ok[1]  # what the old p did: lost at 7 pairs


def test_p_t_is_the_paired_t_of_the_mean_log_ratio_and_a_mean_row_states_it():
    d = _d(10)
    s = robust.stated(d, 0.95, adaptive=True)
    assert s.method == "hodges-lehmann" and s.p_t == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue)
    s6 = robust.stated(_d(6), 0.95, adaptive=True)  # 6 pairs at 97.5 %: the mean's t interval
    assert s6.method == "mean" and s6.p == s6.p_t
    flat = robust.stated(np.full(8, 0.1), flat=True)  # zero spread, no resolution: no p
    assert np.isnan(flat.p_t)


def _campaign(n: int, ratios: dict[str, float], seed: int = 5, family: list[str] = CNIS):
    rng = np.random.default_rng(seed)
    drift = rng.lognormal(0, 0.2, n)  # a round's drift, shared by every variant of it
    base = rows(1e9 * drift * rng.lognormal(0, 0.03, n), variant="macvlan", launch_id="C1")
    out = [base]
    for v in CNIS:
        out.append(rows(1e9 * ratios[v] * drift * rng.lognormal(0, 0.03, n), variant=v, launch_id="C1"))
    settings = {
        "comparisons": [{"by": "variant", "baseline": "macvlan"}],
        "primary": [{"by": "variant", "baseline": "macvlan", "treatments": family}],
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


def test_family_and_exploratory_rows_state_the_same_p_the_t():
    """One comparison, one p: the design (side by side) picks the paired t, in the family or not."""
    v = _campaign(10, dict.fromkeys(CNIS, 1.3), family=CNIS[:2])
    v = v[v["design"] == "side-by-side"].set_index("variant")
    fam, expl = v.loc[CNIS[:2]], v.loc[CNIS[2:]]
    assert (fam["verdict"] == "different").all() and (fam["p_test"] == "t").all()
    assert (fam["p_value"] < 2 / 2**10).all()  # below the exact p's least value at 10 pairs
    assert (expl["role"] == "exploratory").all() and (expl["p_test"] == "t").all()
    assert (expl["p_value"] < 2 / 2**10).all() and expl["p_adjusted"].isna().all()
    assert (expl["verdict"] == "").all() and not expl["different"].any()
