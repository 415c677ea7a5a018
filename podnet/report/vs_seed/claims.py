"""A seed's claims judged one by one (``report.vs_seed.claims``; issue 46).

Where :mod:`.table` sets a seed's CNI *ranking* beside ours, a claim is one statement of the seed:
a cell of a published table set against its baseline (seed 001: flannel vxlan 910 against the
physical network's 942 Mbit/s), a stated conclusion (seed 002: "the ENI pod's outflow is close to
but below the host's"), or a cell of a pasted raw output (seed 004: qperf tcp_bw pod to pod across
hosts against host to host). Each claim is a ratio, treatment over baseline:

- the seed's side: from its numbers (``seed: {measure, treatment, baseline}``, each a selector of
  :func:`seed_values`' rows; the numbers are read from the seed's files, never typed into config),
  or, where the seed printed none (seed 002's figures are images), the direction it states
  (``seed: {relation: ">" | "<" | "~" | ">=" | "<="}``: treatment's value above, below, like the
  baseline's, close to or above it, close to or below it);
- ours: the ratio the stats stage wrote, with the interval the findings state
  (:func:`podnet.stats.precision.as_judged`): ``by: scenario`` reads ``ratios.csv`` (treatment
  scenario over a baseline *scenario*, e.g. host-host, within one variant: a seed's "physical"
  network is our host-host path, not a CNI), ``by: variant`` reads ``variants.csv`` (treatment
  variant over a baseline *variant* on one scenario, the design's preferred row).

The verdict (:func:`judge`), with the claim's margin ``m`` (``margin``, else the seed's tie margin
of ``report.vs_seed``: the gap its single runs cannot separate) and the band [1/(1+m), 1+m]:

- the seed's direction: ``~`` when its ratio lies within the band, else ``>`` or ``<``;
- ``agrees``: the seed states ``>`` (``<``) and our interval lies wholly above (below) 1;
- ``tie within margin``: the seed states ``~`` and our interval lies within the band;
- ``contradicts``: our interval lies wholly on the other side of 1 than the seed's direction, or
  wholly outside the band when the seed states ``~``;
- ``gap not reproduced``: the seed states a direction, our interval lies within the band;
- a stated ``>=`` (``<=``): ``agrees`` when our interval lies wholly above (below) the band's lower
  (upper) edge, ``contradicts`` when wholly beyond it on the other side;
- ``inconclusive here``: anything else (an interval straddling 1 or a band edge, or none);
- ``not run here`` / ``not comparable here``: the claim says why (``not_run``, ``not_comparable``);
  also ``not comparable here`` when the seed's own treatment or baseline run lost at least half of
  what it sent (its UDP receive collapsed: :mod:`.loss`, the reason names its received and sent rates);
- ``not run yet`` (``processed/seeds/`` only, :mod:`.seeds`): the campaign has not published.

``seed_in_ci`` says whether the seed's own ratio lies in our interval (its size reproduced, beyond
its direction). Every published table or figure of the seed is listed in ``report.vs_seed.tables``
and each claim names those it ``covers`` (a test fails on a table no claim covers).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.parse.raw import read_sidecar
from podnet.parse.stage import parse_path
from podnet.report.seed_reports.claims import load_claims
from podnet.stats.precision import as_judged

from .loss import lossy_reason

#: a claim's verdicts (see the module's docstring)
CLAIM_VERDICTS = (
    "agrees",
    "tie within margin",
    "contradicts",
    "gap not reproduced",
    "inconclusive here",
    "not run here",
    "not comparable here",
    "not run yet",
)
#: the verdict of a claim whose campaign has not published yet (``make seeds-publish``, :mod:`.seeds`)
NOT_RUN_YET = "not run yet"

#: the columns of :func:`claims_table`
CLAIM_COLUMNS = [
    "seed",
    "claim",
    "covers",
    "says",
    "seed_measure",
    "seed_value",
    "seed_baseline",
    "seed_ratio",
    "seed_relation",  # > | < | ~ (from the seed's ratio and the margin, or as stated)
    "margin",
    "by",  # scenario (ratios.csv) | variant (variants.csv)
    "variant",
    "scenario",
    "treatment",
    "baseline",
    "measure",
    "ratio",
    "ci_low",
    "ci_high",
    "interval",
    "n",
    "seed_in_ci",
    "verdict",
    "reason",
]

#: the columns of :func:`seed_values`
SEED_VALUE_COLUMNS = ["variant", "scenario", "tool", "test", "direction", "metric", "value", "unit", "file"]


def seed_values(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The seed's numbers in SI units, one row per figure (:data:`SEED_VALUE_COLUMNS`), from its
    published tables (``*.csv`` as ``raw/<exp>/published/`` holds them: variant, tool, test, metric,
    value, unit [, scenario]) and its pasted raw outputs (any other file, parsed by the adapter its
    sidecar names; variant and scenario from the sidecar, test and direction from each measurement).
    A claim selects its figure by any of these columns (``seed.treatment``/``baseline``), e.g.
    ``direction: reverse`` (iperf3 -R) or ``file`` (a table's name, a raw output's path as listed)."""
    rows: list[dict[str, Any]] = []
    for p in map(Path, paths):
        if p.suffix == ".csv":
            c = load_claims([p])
            for _, r in c.iterrows():
                rows.append(
                    {
                        "variant": r["variant"],
                        "scenario": r.get("scenario", "") or "",
                        "tool": r["tool"],
                        "test": r["test"],
                        "direction": r.get("direction", "") or "",
                        "metric": r["metric"],
                        "value": float(r["si"]),
                        "unit": r["si_unit"],
                        "file": p.name,
                    }
                )
            continue
        meta = read_sidecar(p)
        adapter, res = parse_path(p, meta.get("tool"))
        for m in res.measurements:
            rows.append(
                {
                    "variant": str(meta.get("variant", "")),
                    "scenario": str(meta.get("scenario", "")),
                    "tool": adapter.name,
                    "test": str(m.test or res.test or meta.get("test") or ""),
                    "direction": str(m.direction or res.direction or meta.get("direction") or ""),
                    "metric": m.metric,
                    "value": float(m.value),
                    "unit": m.unit,
                    "file": str(p),
                }
            )
    return pd.DataFrame(rows, columns=SEED_VALUE_COLUMNS)


def direction(ratio: float, margin: float) -> str:
    """``>``, ``<`` or ``~`` (within [1/(1+margin), 1+margin]) of a ratio; ``""`` when not finite."""
    if not np.isfinite(ratio) or ratio <= 0:
        return ""
    if abs(np.log(ratio)) < np.log1p(margin):
        return "~"
    return ">" if ratio > 1 else "<"


def judge(relation: str, lo: float, hi: float, margin: float) -> str:
    """The verdict of a claim whose seed side is ``relation`` (``>``, ``<``, ``~``, ``>=``, ``<=``) against our
    interval [lo, hi] of the same ratio (module docstring)."""
    if relation not in (">", "<", "~", ">=", "<=") or not (np.isfinite(lo) and np.isfinite(hi)):
        return "inconclusive here"
    band_lo, band_hi = 1 / (1 + margin), 1 + margin
    inside = band_lo <= lo and hi <= band_hi
    if relation == ">=":  # close to or above: not below the band
        return "agrees" if lo >= band_lo else "contradicts" if hi < band_lo else "inconclusive here"
    if relation == "<=":  # close to or below: not above the band
        return "agrees" if hi <= band_hi else "contradicts" if lo > band_hi else "inconclusive here"
    if relation == "~":
        if inside:
            return "tie within margin"
        return "contradicts" if (lo > band_hi or hi < band_lo) else "inconclusive here"
    above, below = lo > 1, hi < 1
    if (relation == ">" and above) or (relation == "<" and below):
        return "agrees"
    if above or below:
        return "contradicts"
    return "gap not reproduced" if inside else "inconclusive here"


def _pick_all(df: pd.DataFrame, **match: Any) -> pd.DataFrame:
    """The rows of ``df`` whose cells (as text) equal ``match``'s (none when a column is missing)."""
    sel = np.ones(len(df), dtype=bool)
    for k, v in match.items():
        if k not in df.columns:
            return df.iloc[0:0]
        sel &= df[k].fillna("").astype(str).to_numpy() == str(v)
    return df[sel]


def _pick(df: pd.DataFrame, what: str, **match: Any) -> pd.Series | None:
    """The one row of ``df`` matching ``match`` (None: none); ValueError when several match."""
    if df.empty:
        return None
    hit = _pick_all(df, **match)
    if len(hit) > 1:
        raise ValueError(f"{what}: {len(hit)} rows match {match}; name a test that has one")
    return None if hit.empty else hit.iloc[0]


def _measure(text: str) -> dict[str, str]:
    tool, test, metric = str(text).split(":")
    return {"tool": tool, "test": test, "metric": metric}


def _seed_side(claim: Mapping[str, Any], values: pd.DataFrame, margin: float) -> dict[str, Any]:
    s = claim.get("seed") or {}
    if s.get("relation"):
        return {"seed_relation": str(s["relation"]), "seed_measure": s.get("measure", "")}
    m = _measure(s["measure"])
    what = f"claim {claim['id']}: the seed's"
    t = _pick(values, what, **m, **dict(s.get("treatment") or {}))
    b = _pick(values, what, **m, **dict(s.get("baseline") or {}))
    if t is None or b is None:
        side = "treatment" if t is None else "baseline"
        raise ValueError(f"claim {claim['id']}: no seed figure for the {side} of {s}")
    ratio = float(t["value"]) / float(b["value"])
    return {
        "seed_measure": s["measure"],
        "seed_value": float(t["value"]),
        "seed_baseline": float(b["value"]),
        "seed_ratio": ratio,
        "seed_relation": direction(ratio, margin),
        "_lossy": lossy_reason(claim, values, t, b),
    }


def _our_ratio(o: Mapping[str, Any], ratios: pd.DataFrame, variants: pd.DataFrame) -> dict[str, Any]:
    m = _measure(o["measure"])
    if o["by"] == "scenario":
        r = ratios
        if not r.empty and "by" in r.columns:
            r = r[(r["by"].astype(str) == "scenario") & (r["baseline"].astype(str) == str(o["baseline"]))]
            r = as_judged(r.reset_index(drop=True))
        hit = _pick(r, "ratios.csv", variant=o["variant"], treatment=o["treatment"], **m)
        n = "n_pairs"
    else:
        v = variants
        if not v.empty and "preferred" in v.columns:
            v = v[v["preferred"].astype(str).str.lower() == "true"]
        hit = _pick(
            v,
            "variants.csv",
            variant=o["treatment"],
            baseline_variant=o["baseline"],
            scenario=o["scenario"],
            **m,
        )
        n = "n_pairs"
    if hit is None:
        return {}
    return {
        "ratio": float(hit["ratio"]),
        "ci_low": float(hit["ci_low"]),
        "ci_high": float(hit["ci_high"]),
        "interval": str(hit.get("interval", "") or hit.get("interval_method", "") or ""),
        "n": float(hit.get(n, np.nan)),
    }


def _sides(o: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (variant, scenario) of a claim's treatment and baseline."""
    if o.get("by") == "scenario":
        return [(str(o["variant"]), str(o["treatment"])), (str(o["variant"]), str(o["baseline"]))]
    return [(str(o["treatment"]), str(o["scenario"])), (str(o["baseline"]), str(o["scenario"]))]


def _runs(summary: pd.DataFrame, variant: str, scenario: str, m: Mapping[str, str]) -> float:
    """How many runs ``summary.csv`` counts for one side (NaN: no row)."""
    if summary.empty or "n" not in summary.columns:
        return np.nan
    hit = _pick_all(summary, variant=variant, scenario=scenario, **m)
    return float(pd.to_numeric(hit["n"], errors="coerce").max()) if len(hit) else np.nan


def why_not_judged(
    o: Mapping[str, Any], has_ratio: bool, summary: pd.DataFrame, disturbed: pd.DataFrame
) -> str:
    """Why a claim's ratio is missing or has no interval, from ``summary.csv`` (runs per side) and
    ``disturbed_runs.csv`` (runs judged disturbed and kept out of every statistic): a side not
    measured (the campaign runs no such test there), every run of it disturbed, too few runs for an
    interval, or (by variant) no rounds the two variants ran side by side; "" without a summary."""
    if summary.empty:
        return ""
    m = _measure(o["measure"])
    case = {"tool": m["tool"], "test": m["test"]}
    bits, n = [], []
    for variant, scenario in _sides(o):
        k = _runs(summary, variant, scenario, m)
        out = 0
        if not disturbed.empty and "action" in disturbed.columns:
            d = _pick_all(disturbed, variant=variant, scenario=scenario, **case)
            out = int((d["action"].astype(str) == "kept").sum())
        what = f"{variant} {scenario} {m['tool']}:{m['test']}"
        if not np.isfinite(k):
            bits.append(
                f"every run of {what} judged disturbed ({out} kept out: disturbed_runs.csv)"
                if out
                else f"no {m['metric']} of {what} in summary.csv (not measured here)"
            )
        else:
            n.append(int(k))
            if out:
                bits.append(f"{what}: {int(k)} run(s), {out} more judged disturbed and kept out")
    if len(n) < 2:
        return "; ".join(bits)
    if has_ratio:
        head = f"no interval: {n[0]} and {n[1]} run(s) of treatment and baseline"
    elif o.get("by") == "variant":
        head = "no variants.csv row: no rounds of the two variants paired side by side"
    else:
        head = "no ratios.csv row for this treatment and baseline"
    return "; ".join([head, *bits])


def claims_table(
    claims: Iterable[Mapping[str, Any]],
    values: pd.DataFrame,
    ratios: pd.DataFrame,
    variants: pd.DataFrame,
    tie_margin: float,
    seed: str = "seed",
    summary: pd.DataFrame | None = None,
    disturbed: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per claim (:data:`CLAIM_COLUMNS`): the seed's ratio or stated direction beside ours,
    and the verdict (:func:`judge`). ``values``: :func:`seed_values`; ``ratios``, ``variants``: the
    stats stage's ``ratios.csv`` and ``variants.csv`` (either may be empty); ``summary``,
    ``disturbed``: its ``summary.csv`` and the parse stage's ``disturbed_runs.csv``, for the reason
    of a claim without a ratio or an interval (:func:`why_not_judged`)."""
    summary = pd.DataFrame() if summary is None else summary
    disturbed = pd.DataFrame() if disturbed is None else disturbed
    rows = []
    for c in claims:
        margin = float(c.get("margin", tie_margin))
        o = dict(c.get("ours") or {})
        row: dict[str, Any] = {
            "seed": seed,
            "claim": c["id"],
            "covers": " ".join(c.get("covers") or []),
            "says": c.get("says", ""),
            "margin": margin,
            "by": o.get("by", ""),
            "variant": o.get("variant", ""),
            "scenario": o.get("scenario", o.get("treatment", "") if o.get("by") == "scenario" else ""),
            "treatment": o.get("treatment", ""),
            "baseline": o.get("baseline", ""),
            "measure": o.get("measure", ""),
        }
        if c.get("seed"):
            row.update(_seed_side(c, values, margin))
        lossy = row.pop("_lossy", "")
        for key, verdict in (("not_comparable", "not comparable here"), ("not_run", "not run here")):
            if c.get(key):
                row.update(verdict=verdict, reason=str(c[key]))
        if lossy and "verdict" not in row:
            row.update(verdict="not comparable here", reason=lossy)
        if "verdict" not in row:
            row.update(_our_ratio(o, ratios, variants))
            lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
            row["verdict"] = judge(row.get("seed_relation", ""), lo, hi, margin)
            if not (np.isfinite(lo) and np.isfinite(hi)):
                row["reason"] = why_not_judged(o, "ratio" in row, summary, disturbed) or (
                    "no such ratio in this run's tables (not measured or no interval)"
                )
            sr = row.get("seed_ratio", np.nan)
            if np.isfinite(sr) and np.isfinite(lo) and np.isfinite(hi):
                row["seed_in_ci"] = bool(lo <= sr <= hi)
        rows.append(row)
    return pd.DataFrame(rows).reindex(columns=CLAIM_COLUMNS)


def uncovered(tables: Iterable[Mapping[str, Any]], claims: Iterable[Mapping[str, Any]]) -> list[str]:
    """The ids of the seed's published tables and figures (``report.vs_seed.tables``) that no claim
    covers, and any id a claim covers that is not listed (as ``?id``)."""
    listed = [str(t["id"]) for t in tables]
    covered = {str(x) for c in claims for x in (c.get("covers") or [])}
    return [t for t in listed if t not in covered] + sorted(f"?{x}" for x in covered - set(listed))
