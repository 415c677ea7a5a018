"""A ratio and its interval are printed with the digits the interval's width needs (issue 45): the
bounds differ and the width shows its first significant digit, never "0.97 (95 % CI 0.96-0.97)" for
a ratio measured 0.9656 [0.9638, 0.9674]."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from podnet.report import findings, ranking
from podnet.report.numbers import fmt_ratio, ratio_ci_text, ratio_decimals, ratio_texts


@pytest.mark.parametrize(
    ("ratio", "lo", "hi", "want"),
    [
        (0.9655537, 0.9637538, 0.9673570, ("0.966", "0.964", "0.967")),  # seed 001's flannel vxlan
        (0.9650477, 0.9645968, 0.9654988, ("0.9650", "0.9646", "0.9655")),  # width 0.0009: 4 decimals
        (1.0004248, 0.9987733, 1.0022794, ("1.000", "0.999", "1.002")),
        (0.84, 0.79, 0.90, ("0.84", "0.79", "0.90")),  # a wide interval: fmt_ratio's own digits
        (12.34, 11.8, 12.9, ("12.3", "11.8", "12.9")),
        (522.0, 400.0, 700.0, ("522", "400", "700")),
        (0.052, 0.050, 0.054, ("0.052", "0.050", "0.054")),
    ],
)
def test_ratio_texts_to_the_intervals_width(ratio, lo, hi, want):
    assert ratio_texts(ratio, lo, hi) == want


@pytest.mark.parametrize("width", [0.3, 0.02, 0.0036, 0.0009, 0.00004])
def test_bounds_differ_and_show_the_widths_first_digit(width):
    lo, hi = 0.97 - width / 2 + 1e-9, 0.97 + width / 2 + 1e-9
    r, a, b = ratio_texts(0.97, lo, hi)
    assert a != b
    decimals = len(a.split(".")[1])
    assert 10.0**-decimals <= width  # the width's first significant digit is printed
    assert len(r.split(".")[1]) == decimals == len(b.split(".")[1])  # one precision for all three


def test_no_interval_keeps_fmt_ratio():
    assert ratio_decimals(0.9656, math.nan, math.nan) is None
    assert ratio_texts(0.9656, math.nan, math.nan) == ("0.97", "–", "–")
    assert ratio_ci_text(0.9656, math.nan, math.nan) == "0.97"
    assert ratio_ci_text(1.2, -0.1, 2.3) == "1.20 [≤ 2.30]"
    assert ratio_ci_text(math.nan, 0.9, 1.1) == ""
    assert ratio_ci_text(0.9655537, 0.9637538, 0.9673570) == "0.966 [0.964, 0.967]"
    assert fmt_ratio(5.2e-11) == "0.000000000052" and "e" not in fmt_ratio(5.2e-11)


def _row(**kw) -> pd.Series:
    base = {
        "tool": "iperf2",
        "test": "tcp",
        "metric": "throughput",
        "by": "scenario",
        "scenario": "pod-pod-cross-node",
        "treatment": "pod-pod-cross-node",
        "baseline": "host-host",
        "variant": "flannel",
        "ratio": 0.9655537,
        "ci_low": 0.9637538,
        "ci_high": 0.9673570,
        "interval": "paired",
        "n_pairs": 8,
        "n_treatment": 8,
        "n_baseline": 8,
        "p_adjusted": 0.001,
        "role": "primary",
        "direction": "",
        "protocol": "tcp",
        "streams": 1,
    }
    return pd.Series({**base, **kw})


def test_finding_prints_the_ratio_to_its_intervals_width():
    s = findings.sentence(_row())
    assert "reaches 0.966x" in s and "95 % CI 0.964-0.967" in s, s
    wide = findings.sentence(_row(ratio=0.84, ci_low=0.79, ci_high=0.90))
    assert "reaches 0.84x" in wide and "95 % CI 0.79-0.90" in wide, wide


def test_variant_sentence_and_ranking_words_to_the_intervals_width():
    v = _row(
        variant="flannel",
        baseline_variant="calico",
        ratio=0.9650477,
        ci_low=0.9645968,
        ci_high=0.9654988,
        design="side-by-side",
    )
    assert "0.9650x calico [0.9646, 0.9655]" in findings.variant_sentence(v)
    assert ranking._rci(0.9650477, 0.9645968, 0.9654988, "calico") == "0.9650x calico [0.9646, 0.9655]"
    assert ranking._rci(0.9650477, math.nan, math.nan) == "0.97x no interval"


def test_every_printed_interval_has_distinct_bounds():
    """Across magnitudes, a printed interval never reads [x, x] while its bounds differ."""
    for ratio in (0.0123, 0.5, 0.9656, 1.0, 3.3, 47.0, 1234.0):
        for rel in (0.5, 0.05, 0.002, 0.0001):
            lo, hi = ratio * (1 - rel), ratio * (1 + rel)
            text = ratio_ci_text(ratio, lo, hi)
            a, b = re.search(r"\[(.+), (.+)\]", text).groups()
            assert a != b, text
