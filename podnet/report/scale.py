"""The cost of scale for reading: ``scale_curves.csv`` (each measure at 0 objects and at the largest
point, their ratio with its interval, the slope per 1000 objects) and ``scale_effect.csv`` (the time
to effect per point, P50 and P99) as tables per variant, and sentences (the notebooks' helpers; the
``scale`` figure draws the points of ``sweeps.csv`` and the same time to effect)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report import md
from podnet.report.figures import data
from podnet.report.figures.scale import shown
from podnet.report.numbers import fmt_p, ratio_texts

#: the ends table's columns
END_COLUMNS = [
    "variant",
    "path",
    "test",
    "metric",
    "objects",
    "at 0",
    "at largest",
    "ratio",
    "ratio CI",
    "n",
    "interval",
    "p (unadjusted)",
    "per 1000 objects",
]
#: the time-to-effect table's columns
EFFECT_COLUMNS = [
    "variant",
    "probe",
    "objects",
    "n",
    "set-ups",
    "P50",
    "P50 CI",
    "P90",
    "P90 CI",
    "P99",  # a point with its n: no interval (METHODS.md "Scale points")
    "note",
]
#: what each probe times, in words
PROBE_WORDS = {
    "service_effect_s": "new Service reachable",
    "service_removed_s": "removed Service unreachable",
    "policy_effect_s": "deny policy enforced",
    "policy_removed_s": "removed deny policy lifted",
}
_NOUN = {"services": "Services", "network_policies": "NetworkPolicies"}


def _text(x: object) -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else str(x)


def _count(x: object) -> str:
    """An object count as text ("–" when there is none)."""
    v = float(x) if x is not None else float("nan")
    return f"{int(v):,}" if np.isfinite(v) else "–"


def _ordered(df: pd.DataFrame, t: data.Tables, by: list[str]) -> pd.DataFrame:
    vorder = {v: i for i, v in enumerate(data.variant_order(t))}
    out = df.assign(_v=df["variant"].astype(str).map(vorder).fillna(len(vorder)))
    return out.sort_values(["_v", "variant", *by], kind="stable").drop(columns="_v").reset_index(drop=True)


def end_rows(t: data.Tables) -> pd.DataFrame:
    """The rows of scale_curves.csv of the measures the figure draws (each test's headline metric and
    its P99 latency), in variant order."""
    c = t.scale_curves
    if c.empty or "ratio" not in c.columns:
        return pd.DataFrame(columns=list(c.columns))
    keep = [
        g[g["metric"].astype(str).isin(shown(g, str(tool)))] for (tool, _), g in c.groupby(["tool", "sweep"])
    ]
    return _ordered(pd.concat(keep), t, ["sweep_param", "scenario", "tool", "sweep", "metric"])


def _interval(lo: float, hi: float, ratio: float = float("nan")) -> str:
    """A ratio's interval "1.10–1.60", to the digits its width needs (with ``ratio``'s)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    _, a, b = ratio_texts(ratio if np.isfinite(ratio) else lo, lo, hi)
    return f"{a}–{b}"


def ends_table(t: data.Tables) -> pd.DataFrame:
    """Per variant, path, test and drawn metric: the value at 0 objects and at the largest point,
    largest / 0 with its interval and how it was had, its unadjusted p, and the slope per 1000
    objects relative to the value at 0 (with its interval)."""
    r = end_rows(t)
    out = []
    for _, x in r.iterrows():
        metric, tool, unit = str(x["metric"]), str(x["tool"]), str(x["unit"])
        a0, rel = float(x["intercept"]), float(x["rel_slope_per_1000"])
        lo, hi = float(x["slope_low"]), float(x["slope_high"])
        per = "–"
        if np.isfinite(rel) and a0:
            per = f"{rel:+.1%}"
            if np.isfinite(lo) and np.isfinite(hi):
                per += f" ({lo / a0:+.1%} to {hi / a0:+.1%})"
        out.append(
            {
                "variant": x["variant"],
                "path": x["scenario"],
                "test": f"{data.tool_name(tool)} {x['sweep']}",
                "metric": data.in_sentence(data.axis_label(metric, tool, "").strip()),
                "objects": f"{_count(x['largest'])} {_NOUN.get(str(x['sweep_param']), '')}".strip(),
                "at 0": data.human(float(x["at_0"]), metric, tool, unit),
                "at largest": data.human(float(x["at_largest"]), metric, tool, unit),
                "ratio": ratio_texts(float(x["ratio"]), float(x["ratio_low"]), float(x["ratio_high"]))[0],
                "ratio CI": _interval(float(x["ratio_low"]), float(x["ratio_high"]), float(x["ratio"])),
                "n": int(float(x["ratio_n"])) if np.isfinite(float(x["ratio_n"])) else 0,
                "interval": _text(x["ratio_method"]) or _text(x["ratio_note"]),
                "p (unadjusted)": _p_text(x),
                "per 1000 objects": per,
            }
        )
    return pd.DataFrame(out, columns=END_COLUMNS)


def _p(x: pd.Series) -> float:
    """A curve's ratio p (scale_curves.csv ``ratio_p``; NaN when it has none)."""
    return float(pd.to_numeric(x.get("ratio_p", np.nan), errors="coerce"))


def _p_text(x: pd.Series) -> str:
    return fmt_p(_p(x)).removeprefix("p = ") if np.isfinite(_p(x)) else "–"


def _seconds(v: float) -> str:
    return data.human(v, "", None, "s") if np.isfinite(v) else "–"


def _span(lo: float, hi: float) -> str:
    return f"{_seconds(lo)} – {_seconds(hi)}" if np.isfinite(lo) and np.isfinite(hi) else "–"


def _no_interval(note: str) -> str:
    """A ratio note as "no interval: why" (scale.end_ratio's notes may begin so already)."""
    return note if note.startswith("no interval") else f"no interval: {note}"


def _num(x: pd.Series, key: str) -> float:
    """A column's value of one row, NaN where the table has no such column (an older stats run)."""
    v = x.get(key)
    return float(v) if v is not None else float("nan")


def effect_table(t: data.Tables) -> pd.DataFrame:
    """Per variant, probe and point: the changes and set-ups, P50 and P90 of the time to effect with
    their order-statistic intervals (P50's only where it covers 95 %), P99 as a point (the note says
    what is missing)."""
    e = t.scale_effect
    if e.empty or "metric" not in e.columns:
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    e = _ordered(e, t, ["kind", "change", "point"])
    confidence = float((t.settings or {}).get("confidence", 0.95))
    out = []
    for _, x in e.iterrows():
        covered = float(x["p50_coverage"]) >= confidence - 1e-9
        param = "network_policies" if str(x["kind"]) == "NetworkPolicy" else "services"
        out.append(
            {
                "variant": x["variant"],
                "probe": PROBE_WORDS.get(str(x["metric"]), str(x["metric"])),
                "objects": f"{_count(x['point'])} {_NOUN[param]}",
                "n": int(x["n"]),
                "set-ups": int(_num(x, "setups")) if np.isfinite(_num(x, "setups")) else int(x["n"]),
                "P50": _seconds(float(x["p50"])),
                "P50 CI": _span(float(x["p50_low"]), float(x["p50_high"])) if covered else "–",
                "P90": _seconds(_num(x, "p90")),
                "P90 CI": _span(_num(x, "p90_low"), _num(x, "p90_high")),
                "P99": _seconds(float(x["p99"])),
                "note": _text(x["note"]),
            }
        )
    return pd.DataFrame(out, columns=EFFECT_COLUMNS)


def markdown(t: data.Tables) -> str:
    """Per variant and drawn measure: its value at 0 objects and at the largest point and the ratio
    with its interval and its unadjusted p (a scale curve is in no declared family: never "different");
    per variant and probe: P50, P90 and P99 of the time to effect at the largest point ("" without a
    scale sweep)."""
    lines = []
    for _, x in end_rows(t).iterrows():
        metric, tool, unit = str(x["metric"]), str(x["tool"]), str(x["unit"])
        lo, hi = float(x["ratio_low"]), float(x["ratio_high"])
        ci = (
            f" (interval {_interval(lo, hi, float(x['ratio']))}, n = {int(float(x['ratio_n']))}"
            f"{', unadjusted ' + fmt_p(_p(x)) if np.isfinite(_p(x)) else ''})"
            if np.isfinite(lo) and np.isfinite(hi)
            else f" ({md.text(_no_interval(_text(x['ratio_note'])))})"
        )
        noun = _NOUN.get(str(x["sweep_param"]), "objects")
        label = data.in_sentence(data.axis_label(metric, tool, "").strip())
        lines.append(
            f"- **{x['variant']}**, {x['scenario']}, {data.tool_name(tool)} {x['sweep']} {label}: "
            f"{data.human(float(x['at_0']), metric, tool, unit)} with no {noun}, "
            f"{data.human(float(x['at_largest']), metric, tool, unit)} with {_count(x['largest'])}: "
            f"{ratio_texts(float(x['ratio']), lo, hi)[0]}x{ci}."
        )
    e = t.scale_effect
    if len(e) and "metric" in e.columns:
        e = e[e["metric"].astype(str).isin(["service_effect_s", "policy_effect_s"])]
        for (variant, metric), g in _ordered(e, t, ["metric"]).groupby(["variant", "metric"], sort=False):
            lines.append(_effect_sentence(str(variant), str(metric), g))
    return "\n".join(lines)


def _effect_sentence(variant: str, metric: str, g: pd.DataFrame) -> str:
    """One probe's time to effect at its largest point, in words."""
    top = g[g["point"].astype(float) == g["point"].astype(float).max()].iloc[0]
    param = "network_policies" if str(top["kind"]) == "NetworkPolicy" else "services"
    n = int(top["n"])
    p50 = f"P50 {_seconds(float(top['p50']))}"
    if np.isfinite(float(top["p50_low"])):
        p50 += (
            f" (interval {_span(float(top['p50_low']), float(top['p50_high']))}, "
            f"coverage {float(top['p50_coverage']):.0%})"
        )
    tails = []
    for name in ("p90", "p99"):
        est, lo, hi = _num(top, name), _num(top, f"{name}_low"), _num(top, f"{name}_high")
        if not np.isfinite(est):
            continue
        if np.isfinite(lo) and np.isfinite(hi):
            tails.append(f"{name.upper()} {_seconds(est)} (interval {_span(lo, hi)})")
        else:
            tails.append(f"{name.upper()} {_seconds(est)} (a point of n = {n}, no interval)")
    setups = _num(top, "setups")
    count = f"{n} changes in {int(setups)} set-ups" if np.isfinite(setups) else f"{n} set-ups"
    return (
        f"- **{variant}**, time to effect ({PROBE_WORDS[metric]}) with {_count(top['point'])} "
        f"{_NOUN[param]}: {', '.join([p50, *tails])}; {count}."
    )


def lead(t: data.Tables) -> str:
    """The compare notebook's first words on scale: per variant, what the largest point costs each new
    connection (a connect-per-transaction test's rate, largest / 0 paired by round, with its interval);
    "" without such a curve."""
    r = end_rows(t)
    if r.empty:
        return ""
    crr = r["sweep"].astype(str).str.upper().str.contains("CRR")
    r = r[crr & (r["metric"].astype(str) == "transaction_rate")]
    parts = []
    for (param, largest), g in r.groupby(["sweep_param", "largest"], sort=True):
        each = [
            f"{x['variant']} {ratio_texts(float(x['ratio']), float(x['ratio_low']), float(x['ratio_high']))[0]}x "
            f"({_interval(float(x['ratio_low']), float(x['ratio_high']), float(x['ratio']))})"
            for _, x in g.iterrows()
        ]
        head = f"**What {_count(largest)} {_NOUN.get(str(param), 'objects')} cost each new connection**"
        how = "connection rate with them over the rate without, paired by round, 95 % interval"
        parts.append(f"{head} ({how}): {', '.join(each)}.")
    return "\n\n".join(parts)


__all__ = ["effect_table", "end_rows", "ends_table", "lead", "markdown"]
