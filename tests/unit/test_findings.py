"""The findings sentences state the numbers of ratios.csv (rounded as printed), say "different" and
"precise" exactly when ratios.csv does (METHODS.md, "Two words"), and tables are in display units."""

import re

import numpy as np
import pytest

from podnet.report import figures, findings
from tests import figures_data


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("findings")
    return {
        "repeats": figures_data.with_repeats(root),
        "seed-cni-1gbe": figures_data.example("seed-cni-1gbe", root),
        "seed-raven": figures_data.example("seed-raven", root),
    }


def _close(printed: str, value: float) -> bool:
    """``printed`` is ``value`` rounded to the decimals printed."""
    digits = printed.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return abs(float(digits) - value) <= 0.5 * 10.0**-decimals + 1e-12


@pytest.mark.parametrize("name", ["repeats", "seed-cni-1gbe", "seed-raven"])
def test_sentence_numbers_equal_ratios_csv(dirs, name):
    t = figures.load(dirs[name])
    f = findings.findings(t)
    assert len(f) > 0
    for _, r in f.iterrows():
        s = r["sentence"]
        m = re.search(r" ([\d.,]+)x the ", s)
        assert m and _close(m.group(1), r["ratio"]), s
        ci = re.search(r"CI ([\d.,]+)-([\d.,]+)", s)
        if np.isfinite(r["ci_low"]) and r["ci_low"] <= 0:
            up = re.search(r"CI up to ([\d.,]+), no positive lower bound", s)
            assert up and _close(up.group(1), r["ci_high"]), s
        elif np.isfinite(r["ci_low"]):
            assert ci and _close(ci.group(1), r["ci_low"]) and _close(ci.group(2), r["ci_high"]), s
        else:
            assert ci is None and s.endswith("not shown different, not precise."), s
        n = re.search(r"n = (\d+)(?: each| and (\d+))", s)
        assert int(n.group(1)) == r["n_treatment"] and int(n.group(2) or n.group(1)) == r["n_baseline"], s
        p = re.search(r"Holm-adjusted p (=|<) ([\d.]+)", s)
        if p and p.group(1) == "=":
            assert float(p.group(2)) == pytest.approx(r["p_adjusted"], rel=0.05, abs=0.005), s
        if r.get("role") == "exploratory" and np.isfinite(r["ci_low"]):
            assert s.endswith("exploratory: not a declared primary comparison)."), s
            continue
        different = bool(r.get("role") != "exploratory" and r["p_adjusted"] < 0.05)
        assert ("not shown different" not in s) == different, s
        assert bool(r["different"]) == different, s
        assert ("not precise" in s) != bool(r["precise"]), s


def test_repeats_find_the_clear_difference_and_not_the_unclear(dirs):
    f = findings.findings(figures.load(dirs["repeats"]))
    assert f["different"].any(), f["sentence"].tolist()
    assert (~f["different"]).any(), f["sentence"].tolist()


def test_tables_are_in_display_units(dirs):
    """The headline table names each measure's unit in a column of its own, one unit per measure (its
    rows compare digit by digit), never inside the measure's name nor as e-notation."""
    t = figures.load(dirs["seed-raven"])
    h = findings.headline_table(t)
    assert list(h.columns) == ["test", "measure", "path", "variant", "n", "mean", "95 % CI", "unit", "CV"]
    assert {"Mbit/s", "ms"} & set(h["unit"]) or "Gbit/s" in set(h["unit"]), set(h["unit"])
    # one unit per measure, but for a row 100x below it (seed-raven: 3.67 Gbit/s and 845 kbit/s)
    mean = h["mean"].str.replace(",", "").astype(float)
    common = h.groupby(["test", "measure"])["unit"].transform(lambda u: u.mode().iloc[0])
    assert ((h["unit"] == common) | (mean >= 1)).all(), h
    assert ((mean >= 0.01) | (mean == 0)).all(), h
    assert {"Gbit/s", "kbit/s"} <= set(h.loc[h["test"] == "iperf3 tcp reverse", "unit"]), h
    assert not any(u and f"({u}" in m or f", {u})" in m for m, u in zip(h["measure"], h["unit"], strict=True))
    assert not h["mean"].str.contains("e[+-]", regex=True).any()
    raven = h[(h.path == "same-edge") & (h.unit == "Gbit/s")]
    assert len(raven) and set(raven["mean"]) <= {"3.67", "3.34"}


def test_a_cv_of_values_printed_alike_is_said_so_not_zero(dirs):
    """seed-cni-1gbe's physical iperf2 UDP printed 810 Mbit/s twice: its CV is not 0.0 %, it is below
    the printing step (summary.csv `quantised`); a CV that was measured stays a number."""
    h = findings.headline_table(figures.load(dirs["seed-cni-1gbe"]))
    udp = h[(h["test"] == "iperf2 udp") & (h["variant"] == "physical")].iloc[0]
    assert udp["CV"] == "printed alike"
    assert not (h["CV"] == "0.0 %").any(), h
    assert h["CV"].str.endswith(" %").any()


def test_no_variant_ratio_says_which_reason_holds(dirs):
    """Five variants with one run each: not "one variant only" (issue 45's compare.html)."""
    t = figures.load(dirs["seed-cni-1gbe"])
    text = findings.variant_markdown(t)
    if not t.variants.empty:
        pytest.skip("the example gained variant ratios")
    assert "5 variants" in text and "one variant only" not in text
    one = figures.load(dirs["seed-raven"])
    if one.variants.empty and one.summary["variant"].nunique() == 1:
        assert findings.variant_markdown(one).endswith("one variant only.")
