"""The cost of scale as numbers: probe times from the sidecars (one per set-up of a point, warm-ups
and repeated records of one set-up counted once), the slope per 1000 objects with its interval, and
P50 / P99 of the time to take effect with order-statistic intervals (none for P99 below n = 368)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podnet.parse import scale as pscale
from podnet.stats import scale as sscale


def _side(verified: str, services: int, effect: float, **extra) -> dict:
    rec = {
        "wanted": {
            "services": services,
            "endpoints_per_service": 2,
            "network_policies": 0,
            "rules_per_policy": 4,
        },
        "present": {"services": services, "endpoint_slices": services, "network_policies": 0},
        "applied": {"calls": 2 * services, "seconds": 4.0, "objects_per_s": 100.0},
        "probe": {"service_effect_s": effect},
        "rules": {"n1": {"iptables_total": 10 + 7 * services, "nft_rules": 3, "nft_elements": 0}, "n2": {}},
        "verified": verified,
        "ready_s": 5.0,
    }
    return {"variant": "v", "launch": {"id": "L1"}, "round_seq": 1, "scale": rec, **extra}


def test_one_row_per_set_up_and_probe():
    sides = [
        _side("t1", 200, 0.5),
        _side("t1", 200, 0.5),  # a second run of the same set-up
        _side("t2", 200, 0.7, warmup=True),
        _side("t3", 1000, 1.5),
        {"variant": "v", "scale": {"wanted": {}, "error": "present: 3 services of 5"}},  # failed: no set-up
    ]
    e = pscale.effect_rows(sides)
    assert list(e.columns) == pscale.EFFECT_COLUMNS
    assert e[["services", "metric", "value"]].values.tolist() == [
        [200, "service_effect_s", 0.5],
        [1000, "service_effect_s", 1.5],
    ]
    p = pscale.present_rows(sides)
    assert len(p) == 4 and set(p["node"]) == {"n1", "n2"}
    assert p.loc[(p["services"] == 1000) & (p["node"] == "n1"), "iptables_rules"].item() == 7010


def test_the_slope_per_1000_objects_and_its_interval():
    rng = np.random.default_rng(3)
    rows = []
    for count in (0, 200, 1000):
        for _r in range(8):
            rows.append(
                {
                    "variant": "v",
                    "scenario": "pod-svc",
                    "tool": "netperf",
                    "sweep": "TCP_CRR",
                    "metric": "transaction_rate",
                    "unit": "1/s",
                    "sweep_param": "services",
                    "sweep_value": float(count),
                    "value": 5000 - 1.0 * count + rng.normal(0, 50),
                    "source": "measured",
                }
            )
    rows.append({**rows[0], "sweep_param": "streams"})  # another sweep: not a scale curve
    (c,) = sscale.scale_curves(pd.DataFrame(rows)).to_dict("records")
    assert c["points"] == 3 and c["n"] == 24
    assert c["slope_low"] < -1000 < c["slope_high"] and c["slope_high"] - c["slope_low"] < 200
    assert c["rel_slope_per_1000"] == pytest.approx(-0.2, abs=0.03)
    assert sscale.scale_curves(pd.DataFrame(columns=["sweep_param"])).empty
    a, b, lo, hi = sscale.slope(np.array([0.0, 0.0, 0.0]), np.array([1.0, 2.0, 3.0]))
    assert np.isnan(b) and np.isnan(lo)


def test_p50_and_p99_of_the_time_to_take_effect():
    small = pd.DataFrame(
        {
            "variant": "v",
            "metric": "service_effect_s",
            "services": 200,
            "network_policies": 0,
            "value": [0.4, 0.5, 0.6, 0.5, 0.45, 0.55],
        }
    )
    (row,) = sscale.effect_table(small).to_dict("records")
    assert row["n"] == 6 and row["p50"] == 0.5 and row["p50_coverage"] == pytest.approx(0.95)
    lam = 5 * 0.1 / (1 + 4 * 0.1)  # one change per set-up: [x(1), x(6)] (96.9 %) interpolated to 95 %
    assert (row["p50_low"], row["p50_high"]) == pytest.approx((0.4 + lam * 0.05, 0.6 - lam * 0.05))
    assert "p99_low" not in row and row["p99"] == pytest.approx(0.5975)  # P99: a point
    x = np.random.default_rng(1).exponential(1.0, 1000)
    est, lo, hi, cover = sscale.quantile_interval(x, 0.99)
    assert lo < est < hi and cover >= 0.95 and lo < np.log(100) < hi  # the true P99 of Exp(1)
    assert np.isnan(sscale.quantile_interval(x[:367], 0.99)[1])  # 0.99 ** 367 > 2.5 %
    assert not np.isnan(sscale.quantile_interval(x[:368], 0.99)[2])
