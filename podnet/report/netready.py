"""Time to network for reading: ``net_ready.csv`` (:mod:`podnet.stats.netready`) and
``net_ready_ratios.csv`` (:mod:`podnet.stats.netready_compare`) as tables per variant (CNI), ranked
by P50, for the two ranked times (the API-visible ``net_ready_s`` and the datapath's own
``first_reply_out_s``), and in words: each variant's P50 and P90 with their intervals (P99 as a
point) and which treatments are "different" from the baseline on the declared family (the
notebooks' and the findings' helpers; the ``net_ready`` figure draws the same rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report import md
from podnet.report.figures import data
from podnet.report.figures.netready import GROUP, HEADLINE, STEPS, flag, group_label, ranked, step_label
from podnet.report.figures.plots import alpha
from podnet.report.numbers import fmt_p, ratio_texts
from podnet.stats.netready_compare import FAMILY, METRICS

#: the percentiles of the tables, as net_ready.csv names them
SHOWN = ("p50", "p90", "p99")
#: each ranked metric's name in the tables
TIMES = {"net_ready_s": "API-visible (net_ready_s)", "first_reply_out_s": "datapath (first_reply_out_s)"}
#: columns of :func:`table`
COLUMNS = [
    "variant",
    "group",
    "time",
    "P50",
    "P50 95 % CI",
    "P90",
    "P90 95 % CI",
    "P99",
    "P99 95 % CI",
    "runs",
    "pods",
    "note",
]
#: columns of :func:`ratio_table`
RATIO_COLUMNS = [
    "variant",
    "baseline",
    "group",
    "time",
    "percentile",
    "ratio",
    "95 % CI",
    "p",
    "Holm p",
    "different",
    "runs",
    "note",
]


def _seconds(x: float) -> str:
    return f"{data.fmt_value(x)} s" if np.isfinite(x) else "–"


def _interval(lo: float, hi: float, ratio: float | None = None) -> str:
    """The interval "1.10–1.60"; of a ratio (``ratio``: its value) to the digits its width needs."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    if ratio is not None:
        _, a, b = ratio_texts(ratio, lo, hi)
        return f"{a}–{b}"
    return f"{data.fmt_value(lo)}–{data.fmt_value(hi)} s"


def _text(x: object) -> str:
    return "" if pd.isna(x) else str(x)


def _order(t: data.Tables, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` in group order, each group's variants ranked by P50 (:func:`ranked`), the API-visible
    time before the datapath's."""
    rank = {v: i for i, v in enumerate(ranked(t.net_ready))}
    out = df.assign(
        _r=df["variant"].astype(str).map(rank).fillna(len(rank)),
        _m=df["metric"].astype(str).map({m: i for i, m in enumerate(METRICS)}).fillna(len(METRICS)),
    )
    return out.sort_values([*GROUP, "_r", "variant", "_m"], kind="stable").drop(columns=["_r", "_m"])


def _ranked_rows(t: data.Tables) -> pd.DataFrame:
    u = t.net_ready
    if u.empty or "metric" not in u.columns:
        return u.iloc[0:0]
    return u[u["metric"].astype(str).isin(METRICS)]


def table(t: data.Tables) -> pd.DataFrame:
    """Per group, variant (fastest P50 first) and ranked time: P50, P90, P99 with their 95 %
    intervals where runs and pods support one (the note says why not), the runs and pods."""
    h = _ranked_rows(t)
    if h.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for key, g in _order(t, h).groupby([*GROUP, "variant", "metric"], sort=False):
        row = {"variant": key[-2], "group": group_label(g), "time": TIMES.get(str(key[-1]), str(key[-1]))}
        notes = []
        for e in SHOWN:
            x = g[g["estimand"].astype(str) == e]
            ok = len(x) > 0
            row[e.upper()] = _seconds(float(x["value"].iloc[0])) if ok else "–"
            row[f"{e.upper()} 95 % CI"] = (
                _interval(float(x["ci_low"].iloc[0]), float(x["ci_high"].iloc[0])) if ok else "–"
            )
            if ok and _text(x["note"].iloc[0]):
                notes.append(_text(x["note"].iloc[0]))
        row["runs"], row["pods"] = int(g["n_runs"].iloc[0]), int(g["n_pods"].iloc[0])
        row["note"] = "; ".join(dict.fromkeys(notes))
        out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


def steps_table(t: data.Tables) -> pd.DataFrame:
    """Per group and variant (fastest first): the P50 of each step's time from the create call (s)."""
    u = t.net_ready
    if u.empty or "metric" not in u.columns:
        return pd.DataFrame()
    s = u[(u["estimand"].astype(str) == "p50") & u["metric"].astype(str).isin(STEPS)]
    if s.empty:
        return pd.DataFrame()
    out = []
    for key, g in _order(t, s).groupby([*GROUP, "variant"], sort=False):
        row = {"variant": key[-1], "group": group_label(g)}
        by = dict(zip(g["metric"].astype(str), g["value"].astype(float)))
        row.update({step_label(m): _seconds(by[m]) for m in STEPS if m in by})
        out.append(row)
    return pd.DataFrame(out)


def ratio_rows(t: data.Tables) -> pd.DataFrame:
    """net_ready_ratios.csv by group, baseline and ranked time, each group's variants ranked by P50."""
    r = t.net_ready_ratios
    if r.empty or "ratio" not in r.columns:
        return r.iloc[0:0]
    rank = {v: i for i, v in enumerate(ranked(t.net_ready))}
    r = r.assign(
        _m=r["metric"].astype(str).map({m: i for i, m in enumerate(METRICS)}).fillna(len(METRICS)),
        _r=r["variant"].astype(str).map(rank).fillna(len(rank)),
    )
    keys = [*GROUP, "baseline_variant", "_m", "_r", "variant", "quantile"]
    return r.sort_values(keys, kind="stable").drop(columns=["_r", "_m"]).reset_index(drop=True)


def _p(x: float) -> str:
    return fmt_p(x).removeprefix("p = ") if np.isfinite(x) else "–"


def ratio_table(t: data.Tables) -> pd.DataFrame:
    """Each variant's P50, P90 and P99 of each ranked time over the baseline variant's: ratio, 95 %
    interval, p, Holm p (family rows: the P90s) and whether it is "different"."""
    r = ratio_rows(t)
    if r.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    labels = {tuple(map(str, k)): group_label(g) for k, g in t.net_ready.groupby(GROUP, sort=True)}
    out = []
    for _, x in r.iterrows():
        primary = str(x["role"]) == "primary"
        rounds = int(x["n_rounds"]) if pd.notna(x["n_rounds"]) else 0
        runs = f"{int(x['n_runs'])} / {int(x['n_runs_baseline'])}" + (f", {rounds} rounds" if rounds else "")
        out.append(
            {
                "variant": x["variant"],
                "baseline": x["baseline_variant"],
                "group": labels.get(tuple(str(x[c]) for c in GROUP), str(x["scenario"])),
                "time": TIMES.get(str(x["metric"]), str(x["metric"])),
                "percentile": str(x["estimand"]).upper(),
                "ratio": ratio_texts(float(x["ratio"]), float(x["ci_low"]), float(x["ci_high"]))[0],
                "95 % CI": _interval(float(x["ci_low"]), float(x["ci_high"]), ratio=float(x["ratio"])),
                "p": _p(float(x["p_value"])),
                "Holm p": _p(float(x["p_adjusted"])),
                "different": ("yes" if flag(x["different"]) else "no") if primary else "(exploratory)",
                "runs": runs,
                "note": _text(x["note"]),
            }
        )
    return pd.DataFrame(out, columns=RATIO_COLUMNS)


def _value_ci(x: pd.DataFrame) -> str:
    """ "1.23 s (95 % CI 1.10–1.40 s)" of one net_ready.csv row (or "a point" / "no interval")."""
    if x.empty:
        return "–"
    v, lo, hi = (float(x[c].iloc[0]) for c in ("value", "ci_low", "ci_high"))
    ci = f"95 % CI {_interval(lo, hi)}" if np.isfinite(lo) and np.isfinite(hi) else "no interval"
    return f"{_seconds(v)} ({ci})"


def markdown(t: data.Tables) -> str:
    """Time to network in words ("" without netready runs): per group, each variant's P50 and P90
    of the API-visible time with their intervals and its P99 as a point, fastest P50 first; then
    each treatment's family rows (the P90 of each ranked time over the baseline's) and how many are
    "different" after Holm."""
    h = _ranked_rows(t)
    h = h[h["metric"].astype(str) == HEADLINE] if len(h) else h
    if h.empty:
        return ""
    lines = []
    for _, g in _order(t, h).groupby(GROUP, sort=False):
        parts = []
        for variant, x in g.groupby("variant", sort=False):
            p50 = _value_ci(x[x["estimand"].astype(str) == "p50"])
            p90 = _value_ci(x[x["estimand"].astype(str) == "p90"])
            p99 = x[x["estimand"].astype(str) == "p99"]
            p99s = f", P99 {_seconds(float(p99['value'].iloc[0]))} (a point)" if len(p99) else ""
            runs = f"{int(x['n_runs'].iloc[0])} runs, {int(x['n_pods'].iloc[0])} pods"
            parts.append(f"  - {variant}: P50 {p50}, P90 {p90}{p99s}; {runs}")
        lines.append(
            f"- **Time to network** (API-visible), {group_label(g)}, fastest P50 first:\n" + "\n".join(parts)
        )
    r = ratio_rows(t)
    fam = r[r["role"].astype(str) == "primary"] if len(r) else r
    if len(fam):
        a = alpha(t.settings)
        n_diff = int(sum(flag(x) for x in fam["different"]))
        m = int(fam["m"].max())
        lines.append(
            f"- Against {', '.join(dict.fromkeys(fam['baseline_variant'].astype(str)))}: {n_diff} of {len(fam)} "
            f"family rows ({FAMILY.upper()} of the API-visible and the datapath's time per variant) are "
            f"different (Holm over {m}, α = {a:g}):"
        )
        for _, x in fam.iterrows():
            lines.append(f"  - {ratio_sentence(x)}")
    return "\n".join(lines)


def ratio_sentence(x: pd.Series) -> str:
    """One net_ready_ratios.csv row in words: "calico-bgp P90 (API-visible (net_ready_s)) is 1.32x
    macvlan's (95 % CI 1.10–1.60, Holm p = 0.004): different"."""
    est = str(x["estimand"]).upper()
    what = TIMES.get(str(x["metric"]), str(x["metric"]))
    lo, hi = float(x["ci_low"]), float(x["ci_high"])
    ratio = ratio_texts(float(x["ratio"]), lo, hi)[0]
    head = f"{x['variant']} {est} ({what}) is {ratio}x {x['baseline_variant']}'s"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        why = md.text(_text(x["note"]).split("; ")[0])
        return f"{head} ({why or 'no interval'}): not different"
    padj = float(x["p_adjusted"])
    ci = _interval(lo, hi, ratio=float(x["ratio"]))
    if str(x["role"]) != "primary":
        return f"{head} (95 % CI {ci}, {fmt_p(float(x['p_value']))}; exploratory)"
    state = "different" if flag(x["different"]) else "not different"
    return f"{head} (95 % CI {ci}, Holm {fmt_p(padj)}): {state}"
