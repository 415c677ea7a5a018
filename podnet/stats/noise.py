"""How much noise the cluster adds: per-run CV of the cluster's runs against the floor's.

The floor is the same test between two bare network namespaces on the launcher's machine
(:mod:`podnet.launch.noise.floor`, interleaved with the launch's rounds: scenario
``floor-netns-veth`` of the launch's variant). Per variant, tool, test and headline metric,
:func:`noise_table` gives

- one row per cluster path (``level = path``): its per-run CV, the floor's CV from the same
  launch(es), their ratio and an interval for it;
- one row for all paths (``level = median``): the median of the paths' CVs over the floor's
  CV, and the pooled CV (``sqrt`` of the df-weighted mean of the paths' squared CVs) with an
  interval for its ratio.

The interval of a CV ratio treats each CV as ``sd / mean`` with the mean known and the runs
normal: ``(c1/c2)^2 / F(df1, df2)``, so ratio / sqrt(F quantiles). It is wide with few repeats
(n = 3 each: a factor of about 6 either way), which is the honest answer. ``meets`` compares
the point ratio with the target (1.25); ``verdict`` says whether the interval lies below it
(``within``), above it (``above``) or straddles it (``inconclusive``).

Only the floor's runs from the launches the cluster's rows come from are used (same session);
without interleaved floor runs, ``podnet floor``'s (variant ``floor``) are used and
``floor_source`` says they are from a separate session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from podnet import tools as adapters
from podnet.parse.tidy import FLOOR_SCENARIO
from podnet.parse.tidy import FLOOR_STANDALONE_SCENARIO as STANDALONE_SCENARIO
from podnet.parse.tidy import FLOOR_VARIANT as STANDALONE_VARIANT
from podnet.stats.core import cv as sample_cv

TARGET = 1.25
KEYS = ["tool", "test", "protocol", "direction", "streams", "metric", "unit"]
NOISE_COLUMNS = [
    "level",  # path | median (all paths) | median-primary (the declared primary paths)
    "variant",
    "scenario",  # the path (level path) or "all paths"
    *KEYS,
    "primary",  # the path is a declared primary path for this test (stats.primary, by scenario)
    "groups",  # paths in the row
    "n",  # runs of the cluster's rows
    "cv",  # per-run CV (level median: median over the paths)
    "pooled_cv",  # df-weighted root mean square of the paths' CVs (level path: = cv)
    "floor_n",
    "floor_cv",
    "cv_ratio",  # cv / floor_cv
    "pooled_ratio",  # pooled_cv / floor_cv
    "ci_low",  # interval of pooled_ratio (= cv_ratio for a path)
    "ci_high",
    "target",
    "meets",  # cv_ratio <= target
    "verdict",  # within | above | inconclusive (the interval against the target)
    "test_length_s",
    "floor_source",  # same launch | separate session (podnet floor)
    "launches",
]


def ratio_interval(ratio: float, df1: int, df2: int, confidence: float = 0.95) -> tuple[float, float]:
    """Interval of a ratio of two CVs with ``df1`` and ``df2`` degrees of freedom (F distribution)."""
    if not (np.isfinite(ratio) and df1 >= 1 and df2 >= 1):
        return np.nan, np.nan
    a = 1 - confidence
    hi_q, lo_q = stats.f.ppf(1 - a / 2, df1, df2), stats.f.ppf(a / 2, df1, df2)
    return float(ratio / np.sqrt(hi_q)), float(ratio / np.sqrt(lo_q))


def _verdict(lo: float, hi: float, target: float) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive"
    return "within" if hi <= target else "above" if lo > target else "inconclusive"


def _headline(tidy: pd.DataFrame) -> pd.DataFrame:
    keep = [m in adapters.headline_metrics(t) for t, m in zip(tidy["tool"], tidy["metric"], strict=True)]
    return tidy[np.asarray(keep, dtype=bool)]


def primary_paths(primary: Sequence[Mapping[str, Any]], tool: str, test: str) -> set[str] | None:
    """Scenarios ``stats.primary`` declares for ``tool:test`` (treatments and baseline of its
    by-scenario entries); None when an entry names no treatments (every path is primary)."""
    out: set[str] = set()
    for p in primary or []:
        if p.get("by") != "scenario":
            continue
        tests = [str(x) for x in p.get("tests") or []]
        if tests and f"{tool}:{test}" not in tests and tool not in tests:
            continue
        if not p.get("treatments"):
            return None
        out |= {str(x) for x in p["treatments"]} | {str(p["baseline"])}
    return out


def noise_table(
    tidy: pd.DataFrame,
    test_lengths: Mapping[tuple[str, str], float] | None = None,
    target: float = TARGET,
    confidence: float = 0.95,
    primary: Sequence[Mapping[str, Any]] = (),
) -> pd.DataFrame:
    """The cluster's per-run CV against the floor's, per variant, tool, test and headline metric.

    ``primary`` is the config's ``stats.primary``: its paths are flagged and get their own median row.
    """
    if tidy is None or len(tidy) == 0:
        return pd.DataFrame(columns=NOISE_COLUMNS)
    t = tidy
    if "source" in t.columns:
        t = t[t["source"].fillna("measured") == "measured"]
    t = _headline(t.copy())
    if "launch_id" not in t.columns:
        t["launch_id"] = ""
    t["launch_id"] = t["launch_id"].fillna("").astype(str)
    standalone = t[(t["variant"] == STANDALONE_VARIANT) & (t["scenario"] == STANDALONE_SCENARIO)]
    rows: list[dict[str, Any]] = []
    lengths = dict(test_lengths or {})
    for variant, vt in t[t["variant"] != STANDALONE_VARIANT].groupby("variant", sort=True):
        cluster = vt[vt["scenario"] != FLOOR_SCENARIO]
        launches = set(cluster["launch_id"]) - {""}
        floor = vt[(vt["scenario"] == FLOOR_SCENARIO) & vt["launch_id"].isin(launches)]
        source = "same launch"
        if floor.empty:
            floor, source = standalone, "separate session (podnet floor)"
        if floor.empty:
            continue
        for key, fl in floor.groupby(KEYS, sort=True, dropna=False):
            sel = np.logical_and.reduce([cluster[k] == v for k, v in zip(KEYS, key, strict=True)])
            cl = cluster[sel]
            if cl.empty:
                continue
            fcv, fn = sample_cv(fl["value"]), len(fl)
            base = {
                "variant": variant,
                **dict(zip(KEYS, key, strict=True)),
                "floor_n": fn,
                "floor_cv": fcv,
                "target": target,
                "test_length_s": lengths.get((key[0], key[1]), np.nan),
                "floor_source": source,
                "launches": len(set(fl["launch_id"]) | set(cl["launch_id"])),
            }
            prim = primary_paths(primary, str(key[0]), str(key[1]))
            paths = []
            for scenario, g in cl.groupby("scenario", sort=True):
                is_primary = bool(primary) and (prim is None or str(scenario) in prim)
                paths.append((scenario, len(g), sample_cv(g["value"]), is_primary))
            for scenario, n, cv, is_primary in paths:
                rows.append(_row(base, "path", scenario, [(n, cv)], confidence, primary=is_primary))
            rows.append(_row(base, "median", "all paths", [(n, cv) for _, n, cv, _ in paths], confidence))
            chosen = [(n, cv) for _, n, cv, p in paths if p]
            if chosen:
                rows.append(_row(base, "median-primary", "primary paths", chosen, confidence, primary=True))
    out = pd.DataFrame(rows, columns=NOISE_COLUMNS)
    return out.sort_values(["variant", "tool", "test", "metric", "level", "scenario"], ignore_index=True)


def _row(
    base: dict[str, Any],
    level: str,
    scenario: str,
    paths: Sequence[tuple[int, float]],
    confidence: float,
    primary: bool = False,
) -> dict[str, Any]:
    """One row over ``paths`` ((runs, CV) each): the median CV, the pooled CV and its ratio's interval."""
    good = [(n, c) for n, c in paths if np.isfinite(c)]
    df = sum(n - 1 for n, _ in good)
    pooled = float(np.sqrt(sum((n - 1) * c**2 for n, c in good) / df)) if df else np.nan
    cv = float(np.median([c for _, c in good])) if good else np.nan
    fcv = base["floor_cv"]
    ratio = cv / fcv if fcv else np.nan
    pooled_ratio = pooled / fcv if fcv else np.nan
    lo, hi = ratio_interval(pooled_ratio, df, base["floor_n"] - 1, confidence)
    return {
        **base,
        "level": level,
        "scenario": scenario,
        "primary": primary,
        "groups": len(paths),
        "n": sum(n for n, _ in paths),
        "cv": cv,
        "pooled_cv": pooled,
        "cv_ratio": ratio,
        "pooled_ratio": pooled_ratio,
        "ci_low": lo,
        "ci_high": hi,
        "meets": bool(np.isfinite(ratio) and ratio <= base["target"]),
        "verdict": _verdict(lo, hi, base["target"]),
    }
