"""Settings of the statistics stage: the schema's defaults with a config's ``stats`` mapping merged over them.

The defaults have one source: the ``default:`` values of the ``stats`` property
of ``podnet/config/config.schema.yaml``. :data:`DEFAULTS` is read from there. A
config's ``stats`` mapping is merged over it key by key (nested mappings are
merged, lists and scalars replaced). Unknown keys are an error so that a typo
does not silently fall back to a default.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from podnet.config import schema  # the config schema, package data (podnet/config/config.schema.yaml)
from podnet.parse.tidy import GROUP_COLUMNS


def _defaults_of(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Nested dict of the ``default:`` values of an object schema's properties (objects recurse)."""
    out: dict[str, Any] = {}
    for key, sub in (node.get("properties") or {}).items():
        if sub.get("type") == "object" and "properties" in sub:
            out[key] = _defaults_of(sub, f"{path}{key}.")
        elif "default" in sub:
            out[key] = copy.deepcopy(sub["default"])
        else:
            raise ValueError(f"config schema: stats setting {path}{key} has no default")
    return out


@lru_cache(maxsize=1)
def schema_defaults() -> dict[str, Any]:
    """The ``stats`` defaults as the schema states them."""
    return _defaults_of(schema.section("stats"), "stats.")


DEFAULTS: dict[str, Any] = schema_defaults()

_FAMILY_COLUMNS = {*GROUP_COLUMNS, "comparison", "by", "baseline"}


def _merge(base: dict[str, Any], override: Mapping[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if key not in base:
            raise ValueError(f"unknown stats setting {path}{key!r}")
        if value is None and not (key == "headline_metrics"):  # an empty YAML key: keep the default
            continue
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise ValueError(f"stats setting {path}{key!r} must be a mapping")
            out[key] = _merge(base[key], value, f"{path}{key}.")
        else:
            out[key] = copy.deepcopy(value)
    return out


def _check_entries(s: dict[str, Any]) -> None:
    """Comparisons, primary hypotheses and thresholds are well formed and refer to each other."""
    for c in s["comparisons"]:
        if not isinstance(c, Mapping) or c.get("by") not in ("scenario", "variant") or "baseline" not in c:
            raise ValueError(f"stats.comparisons entry {c!r} needs by: scenario|variant and baseline")
        extra = set(c) - {"by", "baseline", "treatments", "metrics"}
        if extra:
            raise ValueError(f"stats.comparisons entry has unknown keys {sorted(extra)}")
    declared = {(c["by"], str(c["baseline"])) for c in s["comparisons"]}
    for p in s["primary"]:
        keys = {"by", "baseline", "treatments", "tests", "metrics", "target_rel_half_width"}
        if not isinstance(p, Mapping) or set(p) - keys:
            raise ValueError(f"stats.primary entry {p!r}: keys are {', '.join(sorted(keys))}")
        if "target_rel_half_width" in p and not float(p["target_rel_half_width"]) > 0:
            raise ValueError(f"stats.primary entry {p!r}: target_rel_half_width must be > 0")
        if (p.get("by"), str(p.get("baseline"))) not in declared:
            raise ValueError(
                f"stats.primary entry {p.get('by')}={p.get('baseline')!r} is not one of stats.comparisons"
            )
    for t in s["thresholds"]:
        keys = {"by", "baseline", "treatment", "test", "metric", "min", "max"}
        if not isinstance(t, Mapping) or set(t) - keys or not {"baseline", "treatment", "metric"} <= set(t):
            raise ValueError(f"stats.thresholds entry {t!r} needs baseline, treatment, metric and min or max")
        if "min" not in t and "max" not in t:
            raise ValueError(f"stats.thresholds entry {t!r} needs min or max")


def adaptive_rounds(settings: Mapping[str, Any]) -> bool:
    """Whether paired intervals are stated for an adaptive stop (resolved ``stats.paired.adaptive``;
    null, a bare stats mapping without its experiment config, counts as fixed rounds)."""
    return bool(settings["paired"].get("adaptive"))


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
    if int(p["min_to_stop"]) < 2:
        raise ValueError("stats.planning.min_to_stop must be >= 2")
    bad = [c for c in s["multiple_comparisons"]["family"] if c not in _FAMILY_COLUMNS]
    if bad:
        raise ValueError(f"stats.multiple_comparisons.family: unknown columns {bad}")
    _check_entries(s)
    return s
