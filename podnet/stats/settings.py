"""Defaults of the statistics stage and how a config's ``stats`` mapping overrides them.

The config's ``stats`` property (see ``config/config.schema.yaml``) is merged
over :data:`DEFAULTS` key by key (nested mappings are merged, lists and scalars
replaced). Unknown keys are an error so that a typo does not silently fall back
to a default.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

#: Metrics that decide whether a case needs another repeat (whichever exist).
HEADLINE_METRICS = [
    "throughput",
    "rtt_avg",
    "latency_mean",
    "requests_per_second",
    "transaction_rate",
    "latency",
]

DEFAULTS: dict[str, Any] = {
    # two-sided confidence level of every interval; tests use alpha = 1 - confidence
    "confidence": 0.95,
    # ratios to compute: list of {by, baseline, treatments?, metrics?}
    "comparisons": [],
    "bootstrap": {
        "resamples": 10000,
        # fixed and recorded (stats_settings.json); every group's resampling
        # indices depend only on (seed, n), so a group's interval does not
        # change when other groups are added or removed
        "seed": 20240611,
        # resamples generated per vectorised step (also fixes the random stream)
        "batch": 2000,
        # groups with fewer measured values get no bootstrap interval
        "min_n": 3,
        # "BCa" (falls back to percentile where BCa is undefined) or "percentile"
        "method": "BCa",
    },
    "planning": {
        # target relative half-width of the primary (t) interval of the mean
        "target_rel_half_width": 0.05,
        # a case is not judged before it has this many repeats
        "min_repeats": 3,
        # and never gets more than this many
        "max_repeats": 30,
        "headline_metrics": list(HEADLINE_METRICS),
    },
    "outliers": {
        # "tukey": outside [Q1 - k IQR, Q3 + k IQR] (k = 1.5);
        # "mad": |x - median| / (1.4826 MAD) > k (k = 3.5)
        "rule": "tukey",
        "k": 1.5,
        "min_n": 4,
    },
    "drift": {
        # Kendall's tau of value vs repeat number, two-sided test
        "alpha": 0.05,
        "min_n": 5,
    },
    "paired": {
        # pair by repeat only when both sides have exactly the same repeats;
        # false: pair the repeats both sides have
        "require_same_repeats": True,
    },
    "multiple_comparisons": {
        # the family of hypotheses adjusted together: comparisons sharing these columns
        "family": ["experiment"],
    },
    "within_run": {
        # drop intervals iperf3 marked as omitted (-O)
        "drop_omitted": True,
        # and intervals that start before this many seconds
        "warmup_seconds": 0.0,
        # a run is unstable when |slope * span / mean| exceeds this ...
        "max_rel_change": 0.10,
        # ... or the CV across its intervals exceeds this
        "max_cv": 0.10,
        # fewer kept intervals than this: no stability verdict
        "min_intervals": 3,
    },
}


def _merge(base: dict[str, Any], override: Mapping[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if key not in base:
            raise ValueError(f"unknown stats setting {path}{key!r}")
        if value is None:  # an empty YAML key: keep the default
            continue
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise ValueError(f"stats setting {path}{key!r} must be a mapping")
            out[key] = _merge(base[key], value, f"{path}{key}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def resolve(settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return DEFAULTS with ``settings`` merged over them, validated."""
    if settings is not None and not isinstance(settings, Mapping):
        raise ValueError(f"stats settings must be a mapping, not {type(settings).__name__}")
    s = _merge(DEFAULTS, settings or {}, "")
    conf = float(s["confidence"])
    if not 0.0 < conf < 1.0:
        raise ValueError(f"stats.confidence must be in (0, 1), got {conf}")
    s["confidence"] = conf
    b = s["bootstrap"]
    if b["method"] not in ("BCa", "percentile"):
        raise ValueError("stats.bootstrap.method must be 'BCa' or 'percentile'")
    if int(b["resamples"]) < 100:
        raise ValueError("stats.bootstrap.resamples must be >= 100")
    if s["outliers"]["rule"] not in ("tukey", "mad"):
        raise ValueError("stats.outliers.rule must be 'tukey' or 'mad'")
    p = s["planning"]
    if not float(p["target_rel_half_width"]) > 0:
        raise ValueError("stats.planning.target_rel_half_width must be > 0")
    if int(p["min_repeats"]) < 2 or int(p["max_repeats"]) < int(p["min_repeats"]):
        raise ValueError("stats.planning needs 2 <= min_repeats <= max_repeats")
    allowed = {
        "experiment",
        "variant",
        "scenario",
        "tool",
        "test",
        "protocol",
        "direction",
        "streams",
        "metric",
        "unit",
        "comparison",
        "by",
        "baseline",
    }
    bad = [c for c in s["multiple_comparisons"]["family"] if c not in allowed]
    if bad:
        raise ValueError(f"stats.multiple_comparisons.family: unknown columns {bad}")
    for c in s["comparisons"]:
        if not isinstance(c, Mapping) or c.get("by") not in ("scenario", "variant") or "baseline" not in c:
            raise ValueError(f"stats.comparisons entry {c!r} needs by: scenario|variant and baseline")
        extra = set(c) - {"by", "baseline", "treatments", "metrics"}
        if extra:
            raise ValueError(f"stats.comparisons entry has unknown keys {sorted(extra)}")
    return s
