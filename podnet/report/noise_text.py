"""The noise floor in words and in a reading table (``noise_floor.csv``, :mod:`podnet.stats.noise`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet import tools as adapters
from podnet.report.figures import data
from podnet.report.numbers import fmt_ratio, ratio_texts
from podnet.stats.noise import KEYS, TARGET

_VERDICT = {
    "within": "within the target",
    "above": "above the target",
    "inconclusive": "inconclusive against the target (its interval straddles it, or there is none)",
}


def _ci(r: pd.Series) -> str:
    if not np.isfinite(r["ci_low"]):
        return "no interval"
    x, lo, hi = ratio_texts(float(r["pooled_ratio"]), float(r["ci_low"]), float(r["ci_high"]))
    return f"pooled {x}x, 95 % CI {lo}-{hi}"


def sentences(table: pd.DataFrame) -> list[str]:
    """One sentence per (variant, tool, test, metric): the median path's CV against the floor's
    (and the primary paths' median when stats.primary names them)."""
    if table is None or table.empty:
        return []
    several = table["variant"].nunique() > 1
    keys = ["variant", *KEYS]
    out = []
    for _, r in table[table["level"] == "median"].iterrows():
        info = adapters.metric_info(str(r["metric"]), str(r["tool"]))
        what = f"{data.measure_label(r)} {data.in_sentence(info.label)}"
        where = f" on {r['variant']}" if several else ""
        length = f"{r['test_length_s']:g}-s tests, " if np.isfinite(r["test_length_s"]) else ""
        text = (
            f"The per-run CV of {what}{where} is {r['cv']:.3f} (median over {int(r['groups'])} paths, "
            f"{int(r['n'])} runs) against the floor's {r['floor_cv']:.3f} (n = {int(r['floor_n'])}, "
            f"{r['floor_source']}; {length}same command): {fmt_ratio(r['cv_ratio'])}x the floor "
            f"({_ci(r)}); target <= {r['target']:g}x: {_VERDICT[str(r['verdict'])]}."
        )
        same = np.logical_and.reduce([table[k] == r[k] for k in keys]) & (table["level"] == "median-primary")
        for _, p in table[same].iterrows():
            text += (
                f" Over the {int(p['groups'])} primary paths: CV {p['cv']:.3f}, {fmt_ratio(p['cv_ratio'])}x "
                f"({_ci(p)}): {_VERDICT[str(p['verdict'])]}."
            )
        out.append(text)
    return out


def markdown(table: pd.DataFrame) -> str:
    """The report's paragraph: the sentences, or why there are none."""
    s = sentences(table)
    if not s:
        return (
            "No noise-floor runs in this experiment (`launch.floor` interleaves them with the cluster's "
            "rounds; `podnet floor` records them apart), so the noise the cluster adds is not measured."
        )
    return "\n".join(f"- {x}" for x in s)


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """``noise_floor.csv`` rounded for reading: CVs in %, ratios with their interval."""
    if table is None or table.empty:
        return pd.DataFrame()

    def pct(x: float) -> str:
        return f"{x * 100:.1f} %" if np.isfinite(x) else "–"

    return pd.DataFrame(
        {
            "variant": table["variant"],
            "path": [
                f"{p} (primary)" if pr and lv == "path" else p
                for p, pr, lv in zip(table["scenario"], table["primary"], table["level"], strict=True)
            ],
            "test": table["tool"] + " " + table["test"].astype(str),
            "metric": table["metric"],
            "n": table["n"],
            "CV": [pct(x) for x in table["cv"]],
            "floor CV (n)": [
                f"{pct(c)} ({int(n)})" for c, n in zip(table["floor_cv"], table["floor_n"], strict=True)
            ],
            "CV ratio": [fmt_ratio(x) for x in table["cv_ratio"]],
            "pooled ratio": [
                ratio_texts(x, a, b)[0]
                for x, a, b in zip(table["pooled_ratio"], table["ci_low"], table["ci_high"], strict=True)
            ],
            "95 % CI (pooled)": [
                "-".join(ratio_texts(x, a, b)[1:]) if np.isfinite(a) else "–"
                for x, a, b in zip(table["pooled_ratio"], table["ci_low"], table["ci_high"], strict=True)
            ],
            f"<= {TARGET:g}x": table["meets"].map({True: "yes", False: "no"}),
            "verdict": table["verdict"],
        }
    )
