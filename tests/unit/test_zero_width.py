"""An interval of width zero is neither precise nor passing (issue 44): values equal within
rounding measured no spread, so they give no precision and no verdict."""

from __future__ import annotations

import numpy as np

from podnet.stats.gate import _verdict
from podnet.stats.planning import met


def test_a_zero_width_interval_is_not_met_even_when_its_half_width_is_below_target():
    s = {"planning": {"min_to_stop": 3}}
    got = met([0.0, 0.03, np.nan], [0.05, 0.05, 0.05], [10, 10, 10], s)
    assert got.tolist() == [False, True, False]
    # given its ends: equal ends are not met, whatever else holds
    got = met([0.03, 0.03], [0.05, 0.05], [10, 10], s, low=[1.2, 0.97], high=[1.2, 1.03])
    assert got.tolist() == [False, True]


def test_the_gate_gives_no_verdict_on_a_zero_width_interval():
    assert _verdict(0.9, 0.9, 0.8, None)[0] == "inconclusive"
    assert "width zero" in _verdict(0.9, 0.9, 0.8, None)[1]
    assert _verdict(0.85, 0.95, 0.8, None)[0] == "pass"
    assert _verdict(0.6, 0.7, 0.8, None)[0] == "fail"
