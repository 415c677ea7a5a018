"""Settings of the statistics stage: the schema's defaults with a config's ``stats`` mapping merged over them.

The defaults have one source: the ``default:`` values of the ``stats`` property
of ``podnet/config/config.schema.yaml``. :data:`DEFAULTS` is read from there. A
config's ``stats`` mapping is merged over it key by key (nested mappings are
merged, lists and scalars replaced). Unknown keys are an error so that a typo
does not silently fall back to a default.

:func:`resolve` returns the merged mapping (what ``stats_settings.json`` writes); :meth:`Settings.of`
builds from it, once, the typed value the formulas read (``s.bootstrap.resamples``,
``s.planning.min_repeats``...), each setting cast to its type where it is built.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Bootstrap:
    """``stats.bootstrap``: resamples, random seed, resamples per batch, fewest values, BCa | percentile."""

    resamples: int
    seed: int
    batch: int
    min_n: int
    method: str


@dataclass(frozen=True)
class Planning:
    """``stats.planning``: the precision target and the adaptive stop's bounds."""

    target_rel_half_width: float
    min_repeats: int
    min_to_stop: int
    equivalence_margin: float
    stop_when_different: bool
    max_repeats: int
    headline_metrics: tuple[str, ...] | None

    @property
    def fewest_to_stop(self) -> int:
        """``max(min_repeats, min_to_stop)``: the fewest pairs on which a comparison may be met."""
        return max(self.min_repeats, self.min_to_stop)


@dataclass(frozen=True)
class Outliers:
    """``stats.outliers``: tukey | mad, the fence's k, the fewest values judged."""

    rule: str
    k: float
    min_n: int


@dataclass(frozen=True)
class Drift:
    """``stats.drift``: the trend test's level and the fewest values tested."""

    alpha: float
    min_n: int


@dataclass(frozen=True)
class Paired:
    """``stats.paired``: whether ratios pair only groups with the same repeats; whether the rounds
    stopped adaptively (null counts as fixed rounds)."""

    require_same_repeats: bool
    adaptive: bool


@dataclass(frozen=True)
class SmallN:
    """``stats.small_n``: Welch's fewest values per side, the rounding-noise share of a spread."""

    welch_min_n: int
    zero_rel_sd: float


@dataclass(frozen=True)
class WithinRun:
    """``stats.within_run``: one run's interval series, how it is trimmed and judged stable."""

    drop_omitted: bool
    warmup_seconds: float
    max_rel_change: float
    max_cv: float
    min_intervals: int


@dataclass(frozen=True)
class RankingSection:
    """``stats.ranking`` as configured (:func:`podnet.stats.ranking.settings_of` completes it)."""

    measures: tuple[str, ...]
    scenarios: tuple[str, ...]
    equivalence_margin: float
    family: str = "ranking"  # Holm's family: each path x measure ranking, or every pair of the campaign
    min_pairs: int = 4  # a variant with fewer common rounds is set apart, not ranked


@dataclass(frozen=True)
class Settings:
    """The statistics stage's settings, resolved and typed (:meth:`of`). ``comparisons``,
    ``primary`` and ``thresholds`` stay the config's entries (checked by :func:`resolve`);
    ``mapping`` is the resolved mapping itself (stats_settings.json, the cache's salt)."""

    confidence: float
    bootstrap: Bootstrap
    planning: Planning
    outliers: Outliers
    drift: Drift
    paired: Paired
    small_n: SmallN
    within_run: WithinRun
    ranking: RankingSection
    max_loss: float
    family: tuple[str, ...]
    comparisons: tuple[Mapping[str, Any], ...]
    primary: tuple[Mapping[str, Any], ...]
    thresholds: tuple[Mapping[str, Any], ...]
    mapping: Mapping[str, Any]

    @property
    def alpha(self) -> float:
        """1 - confidence."""
        return 1.0 - self.confidence

    @classmethod
    def of(cls, settings: Settings | Mapping[str, Any] | None = None) -> Settings:
        """``settings`` as typed settings: a :class:`Settings` as it is, a mapping (a config's
        ``stats``, resolved or not) through :func:`resolve`."""
        if isinstance(settings, Settings):
            return settings
        s = resolve(settings)
        b, p, o, d, w, r = (
            s[k] for k in ("bootstrap", "planning", "outliers", "drift", "within_run", "ranking")
        )
        heads = p["headline_metrics"]
        return cls(
            confidence=float(s["confidence"]),
            bootstrap=Bootstrap(
                int(b["resamples"]), int(b["seed"]), int(b["batch"]), int(b["min_n"]), b["method"]
            ),
            planning=Planning(
                target_rel_half_width=float(p["target_rel_half_width"]),
                min_repeats=int(p["min_repeats"]),
                min_to_stop=int(p["min_to_stop"]),
                equivalence_margin=float(p["equivalence_margin"]),
                stop_when_different=bool(p.get("stop_when_different")),
                max_repeats=int(p["max_repeats"]),
                headline_metrics=None if heads is None else tuple(heads),
            ),
            outliers=Outliers(o["rule"], float(o["k"]), int(o["min_n"])),
            drift=Drift(float(d["alpha"]), int(d["min_n"])),
            paired=Paired(bool(s["paired"]["require_same_repeats"]), adaptive_rounds(s)),
            small_n=SmallN(int(s["small_n"]["welch_min_n"]), float(s["small_n"]["zero_rel_sd"])),
            within_run=WithinRun(
                bool(w["drop_omitted"]),
                float(w["warmup_seconds"]),
                float(w["max_rel_change"]),
                float(w["max_cv"]),
                int(w["min_intervals"]),
            ),
            ranking=RankingSection(
                tuple(r["measures"] or []),
                tuple(str(x) for x in r["scenarios"] or []),
                float(r["equivalence_margin"]),
                str(r["family"]),
                int(r["min_pairs"]),
            ),
            max_loss=float((s.get("load_curve") or {}).get("max_loss", 0.001)),
            family=tuple(s["multiple_comparisons"]["family"]),
            comparisons=tuple(s["comparisons"]),
            primary=tuple(s["primary"]),
            thresholds=tuple(s["thresholds"]),
            mapping=s,
        )
