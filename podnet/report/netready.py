"""Time to network for reading: ``net_ready.csv`` (:mod:`podnet.stats.netready`) and
``net_ready_ratios.csv`` (:mod:`podnet.stats.netready_compare`) as tables per variant (CNI), ranked
by P50, and in words: each variant's P50 and P99 with their intervals and which differences from the
baseline variant resolve after Holm (the notebooks' and the findings' helpers; the ``net_ready``
figure draws the same rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report.figures import data
from podnet.report.figures.netready import GROUP, HEADLINE, STEPS, flag, group_label, ranked, step_label
from podnet.report.figures.plots import alpha
from podnet.report.numbers import fmt_p, fmt_ratio
from podnet.stats.netready_compare import FEW_RUNS

#: the percentiles of the tables, as net_ready.csv names them
SHOWN = ("p50", "p90", "p99")
#: columns of :func:`table`
COLUMNS = [
    "variant",
    "group",
    "P50",
    "P50 95 % CI",
    "P90",
    "P90 95 % CI",
    "P99",
    "P99 95 % CI",
    "runs",
    "pods",
]
#: columns of :func:`ratio_table`
RATIO_COLUMNS = [
    "variant",
    "baseline",
    "group",
    "percentile",
    "ratio",
    "95 % CI",
    "p",
    "Holm p",
    "resolved",
    "runs",
    "note",
]


def _seconds(x: float) -> str:
    return f"{data.fmt_value(x)} s" if np.isfinite(x) else "–"


def _interval(lo: float, hi: float, ratio: bool = False) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    if ratio:
        return f"{fmt_ratio(lo)}–{fmt_ratio(hi)}"
    return f"{data.fmt_value(lo)}–{data.fmt_value(hi)} s"


def _order(t: data.Tables, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` in group order, each group's variants ranked by P50 (:func:`ranked`)."""
    rank = {v: i for i, v in enumerate(ranked(t.net_ready))}
    out = df.assign(_r=df["variant"].astype(str).map(rank).fillna(len(rank)))
    return out.sort_values([*GROUP, "_r", "variant"], kind="stable").drop(columns="_r")


def _headline(t: data.Tables) -> pd.DataFrame:
    u = t.net_ready
    if u.empty or "metric" not in u.columns:
        return u.iloc[0:0]
    return u[u["metric"].astype(str) == HEADLINE]


def table(t: data.Tables) -> pd.DataFrame:
    """Per group and variant (fastest P50 first): net_ready_s P50, P90, P99 with their 95 %
    intervals, and the runs and pods they rest on."""
    h = _headline(t)
    if h.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for key, g in _order(t, h).groupby([*GROUP, "variant"], sort=False):
        row = {"variant": key[-1], "group": group_label(g)}
        for e in SHOWN:
            x = g[g["estimand"].astype(str) == e]
            ok = len(x) > 0
            row[e.upper()] = _seconds(float(x["value"].iloc[0])) if ok else "–"
            row[f"{e.upper()} 95 % CI"] = (
                _interval(float(x["ci_low"].iloc[0]), float(x["ci_high"].iloc[0])) if ok else "–"
            )
        row["runs"], row["pods"] = int(g["n_runs"].iloc[0]), int(g["n_pods"].iloc[0])
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
    """net_ready_ratios.csv by group and baseline, each group's variants ranked by P50 (P50, P99)."""
    r = t.net_ready_ratios
    if r.empty or "ratio" not in r.columns:
        return r.iloc[0:0]
    rank = {v: i for i, v in enumerate(ranked(t.net_ready))}
    r = r.assign(_r=r["variant"].astype(str).map(rank).fillna(len(rank)))
    keys = [*GROUP, "baseline_variant", "_r", "variant", "estimand"]
    return r.sort_values(keys, kind="stable").drop(columns="_r").reset_index(drop=True)


def ratio_table(t: data.Tables) -> pd.DataFrame:
    """Each variant's P50 and P99 over the baseline variant's: ratio, 95 % interval, p, Holm p and
    whether the difference resolves."""
    r = ratio_rows(t)
    if r.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    labels = {tuple(map(str, k)): group_label(g) for k, g in t.net_ready.groupby(GROUP, sort=True)}
    out = []
    for _, x in r.iterrows():
        p, padj = float(x["p_value"]), float(x["p_adjusted"])
        out.append(
            {
                "variant": x["variant"],
                "baseline": x["baseline_variant"],
                "group": labels.get(tuple(str(x[c]) for c in GROUP), str(x["scenario"])),
                "percentile": str(x["estimand"]).upper(),
                "ratio": fmt_ratio(float(x["ratio"])),
                "95 % CI": _interval(float(x["ci_low"]), float(x["ci_high"]), ratio=True),
                "p": fmt_p(p).removeprefix("p = ") if np.isfinite(p) else "–",
                "Holm p": fmt_p(padj).removeprefix("p = ") if np.isfinite(padj) else "–",
                "resolved": "yes" if flag(x["resolved"]) else "no",
                "runs": f"{int(x['n_runs'])} / {int(x['n_runs_baseline'])}",
                "note": "" if pd.isna(x["note"]) else str(x["note"]),
            }
        )
    return pd.DataFrame(out, columns=RATIO_COLUMNS)


def _value_ci(x: pd.DataFrame) -> str:
    """ "1.23 s (95 % CI 1.10–1.40 s)" of one net_ready.csv row (or "no interval")."""
    if x.empty:
        return "–"
    v, lo, hi = (float(x[c].iloc[0]) for c in ("value", "ci_low", "ci_high"))
    ci = f"95 % CI {_interval(lo, hi)}" if np.isfinite(lo) and np.isfinite(hi) else "no interval"
    return f"{_seconds(v)} ({ci})"


def markdown(t: data.Tables) -> str:
    """Time to network in words ("" without netready runs): per group, each variant's P50 and P99
    with their intervals, fastest P50 first; then each comparison with the baseline variant, and how
    many differences resolve after Holm."""
    h = _headline(t)
    if h.empty:
        return ""
    lines = []
    for _, g in _order(t, h).groupby(GROUP, sort=False):
        parts = []
        for variant, x in g.groupby("variant", sort=False):
            p50 = _value_ci(x[x["estimand"].astype(str) == "p50"])
            p99 = _value_ci(x[x["estimand"].astype(str) == "p99"])
            runs = f"{int(x['n_runs'].iloc[0])} runs, {int(x['n_pods'].iloc[0])} pods"
            parts.append(f"  - {variant}: P50 {p50}, P99 {p99}; {runs}")
        lines.append(f"- **Time to network**, {group_label(g)}, fastest P50 first:\n" + "\n".join(parts))
    r = ratio_rows(t)
    if len(r):
        a = alpha(t.settings)
        n_res = int(sum(flag(x) for x in r["resolved"]))
        lines.append(
            f"- Against {', '.join(dict.fromkeys(r['baseline_variant'].astype(str)))}: {n_res} of {len(r)} "
            f"differences (P50 and P99 of each variant) resolve (Holm over {len(r)}, α = {a:g}):"
        )
        for _, x in r.iterrows():
            lines.append(f"  - {ratio_sentence(x)}")
        few = np.nanmin(
            np.fmin(r["n_runs"].to_numpy(dtype=float), r["n_runs_baseline"].to_numpy(dtype=float))
        )
        if few < FEW_RUNS:
            lines.append(
                f"  - With {few:.0f} runs on a side, a bootstrap over runs under-covers (for a mean: about "
                "0.81 at 4 runs, 0.90 at 10; METHODS.md): these intervals and p-values are optimistic."
            )
    return "\n".join(lines)


def ratio_sentence(x: pd.Series) -> str:
    """One net_ready_ratios.csv row in words: "calico-bgp P50 is 1.32x macvlan's (95 % CI 1.10–1.60,
    Holm p = 0.004): resolved"."""
    est = str(x["estimand"]).upper()
    head = f"{x['variant']} {est} is {fmt_ratio(float(x['ratio']))}x {x['baseline_variant']}'s"
    lo, hi = float(x["ci_low"]), float(x["ci_high"])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        why = "" if pd.isna(x["note"]) else str(x["note"]).split("; ")[0]
        return f"{head} ({why or 'no interval'}): not resolved"
    padj = float(x["p_adjusted"])
    state = "resolved" if flag(x["resolved"]) else "not resolved"
    return f"{head} (95 % CI {_interval(lo, hi, ratio=True)}, Holm {fmt_p(padj)}): {state}"
