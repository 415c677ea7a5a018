"""The ranking (``ranking.csv``, :mod:`podnet.stats.ranking`) as a figure and in words.

The figure is in the manner of seed 003's bar charts: one panel per measure, per path a group of
bars, one per variant in the colour it has in every figure; a bar is the variant's ratio to the
reference variant (paired, same rounds) with its interval (ranking.csv's interval_level), and letters above the bars mark
the order (two variants sharing a letter are not ordered; ``a`` is the best group). Only
paths with data are drawn. The sentences state the order, the first and last with their ratios,
equivalent pairs and the inconclusive ones. Nothing is estimated here: numbers are read from the
table and rounded.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from podnet.report import md
from podnet.report.figures import data, style
from podnet.report.numbers import fmt_p, fmt_ratio, ratio_texts
from podnet.stats.ranking import KEY, RELATIONS, holm_words
from podnet.tools import metric_info

_TEXT = ["row", "scenario", "tool", "test", "protocol", "direction", "metric", "unit", "better"]
_TEXT += ["variant", "other", "letters", "relation", "order", "reason"]
_WORDS = ["within_margin", "different", "precise"]  # bool as written; empty (variant rows): False


def read(path: str | Path) -> pd.DataFrame:
    """``ranking.csv`` as written (text cells stay text, empty ones empty strings)."""
    p = Path(path)
    if not p.exists() or not p.stat().st_size:
        return pd.DataFrame()
    df = pd.read_csv(p)
    for c in _TEXT:
        if c in df.columns:
            df[c] = df[c].fillna("").astype(str)
    for c in _WORDS:
        if c in df.columns:
            df[c] = df[c].map({True: True, "True": True}).fillna(False).astype(bool)
    return df


def _r(x: float) -> str:
    return fmt_ratio(float(x))


def _rci(x: float, lo: float, hi: float, of: str = "") -> str:
    """ "0.966x [0.964, 0.967]" ("0.966x calico [0.964, 0.967]" with ``of``): a ratio and its interval
    with the digits the interval's width needs (:func:`podnet.report.numbers.ratio_texts`)."""
    x, lo, hi = float(x), float(lo), float(hi)
    of = f" {of}" if of else ""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{_r(x)}x{of} no interval"
    r, a, b = ratio_texts(x, lo, hi)
    return f"{r}x{of} [{a}, {b}]"


def _measure(r: pd.Series) -> str:
    label = data.in_sentence(metric_info(str(r["metric"]), str(r["tool"])).label)
    return f"{r['tool']} {r['test']} {label}"


def _words(r: pd.Series) -> tuple[str, str]:
    """(best, worst) words of a ranking's metric: fastest/slowest, or cheapest/costliest for CPU costs."""
    return ("cheapest", "costliest") if "cpu" in str(r["metric"]) else ("fastest", "slowest")


def rankings(table: pd.DataFrame) -> list[pd.DataFrame]:
    """The rows of each ranking (one path and measure) with at least one pair, in the table's order."""
    if table.empty or "row" not in table.columns:
        return []
    t = table[table["row"] != "none"]
    if t.empty:
        return []
    key = t[KEY].astype(str).agg("\x1f".join, axis=1)
    return [g for _, g in t.groupby(key, sort=False) if (g["row"] == "pair").any()]


def ranking_sentences(g: pd.DataFrame) -> list[str]:
    """The findings of one ranking: its order, the first and last, equivalences, what is inconclusive
    (Markdown text: a row's reason as :func:`podnet.report.md.text`)."""
    v = g[g["row"] == "variant"].sort_values("position")
    p = g[g["row"] == "pair"]
    r0 = v.iloc[0]
    margin = f"±{float(r0['margin']) * 100:g} %"
    best_word, worst_word = _words(r0)
    out = [f"On {r0['scenario']}, {_measure(r0)}: {r0['order']}."]
    groups = v.groupby("group", sort=True)["variant"].apply(list)
    ordered = p[p["relation"] == "ordered"]

    def between(a: str, b: str) -> pd.Series | None:
        q = p[(p["variant"] == a) & (p["other"] == b)]
        return q.iloc[0] if len(q) else None

    if len(groups) > 1 and len(groups.iloc[0]) == 1:
        top, second = groups.iloc[0][0], v["variant"].iloc[1]
        q = between(top, second)
        if q is not None:
            out.append(f"{top} is {best_word}, {_rci(q['ratio'], q['ci_low'], q['ci_high'], second)}.")
    if len(groups) > 1 and len(groups.iloc[-1]) == 1:
        last, top = groups.iloc[-1][0], v["variant"].iloc[0]
        q = between(top, last)
        if q is not None:  # stated as last / top
            lo, hi = 1 / float(q["ci_high"]), 1 / float(q["ci_low"])
            out.append(f"{last} is {worst_word}, {_rci(1 / float(q['ratio']), lo, hi, top)}.")
    for q in p[p["relation"] == "equivalent"].itertuples():
        out.append(
            f"{q.variant} and {q.other} are equivalent within {margin} "
            f"({_rci(q.ratio, q.ci_low, q.ci_high)})."
        )
    same = v.set_index("variant")["group"]
    inside = [q for q in ordered.itertuples() if same[q.variant] == same[q.other]]
    if inside:
        out.append(
            "Within a tie group, ordered: "
            + ", ".join(f"{q.variant} > {q.other} ({_rci(q.ratio, q.ci_low, q.ci_high)})" for q in inside)
            + "."
        )
    unres = p[p["relation"].isin(["inconclusive", "too few pairs"])]
    if len(unres):
        pos = v.set_index("variant")["position"]
        near = unres[[abs(int(pos[a]) - int(pos[b])) == 1 for a, b in zip(unres["variant"], unres["other"])]]
        bits = [
            f"{q.variant} vs {q.other} ({_rci(q.ratio, q.ci_low, q.ci_high)}, Holm {_p(q.p_holm)})"
            if q.relation == "inconclusive"
            else f"{q.variant} vs {q.other} ({md.text(q.reason or q.relation)})"
            for q in near.itertuples()
        ]
        more = len(unres) - len(near)
        tail = f" and {more} non-adjacent pair{'s' if more != 1 else ''}" if more and bits else ""
        lead = f"{len(unres)} of {len(p)} pairs neither ordered nor equivalent"
        out.append(f"{lead}: {'; '.join(bits)}{tail}." if bits else f"{lead}.")
    return out


def _p(p: float) -> str:
    return fmt_p(float(p)) if np.isfinite(p) else "p –"


def sentences(table: pd.DataFrame) -> list[str]:
    """One paragraph (joined sentences) per ranking of the table."""
    return [" ".join(ranking_sentences(g)) for g in rankings(table)]


def markdown(table: pd.DataFrame | None) -> str:
    """The ranking's findings as Markdown ("" without a ranking table: none was configured)."""
    if table is None or table.empty:
        return ""
    gs = rankings(table)
    if not gs:
        reason = str(table["reason"].iloc[0]) if "reason" in table.columns and len(table) else ""
        return f"**Ranking** (ranking.csv): nothing ranked ({md.text(reason)})." if reason else ""
    p = table[table["row"] == "pair"]
    counts = p["relation"].value_counts()
    what = ", ".join(f"{int(counts[k])} {k}" for k in RELATIONS if k in counts)
    head = (
        f"**Ranking** (ranking.csv): {len(gs)} path x measure rankings, {len(p)} pairs of variants, each by "
        f"its paired ratio of the same rounds, {holm_words(table)}: {what}. An order "
        "is stated only where a pair is Holm-significant; braces hold a tie group."
    )
    return head + "\n\n" + "\n".join(f"- {s}" for s in sentences(table))


#: the variant rows' columns a reader needs (the notebook shows these)
SHOWN = ["scenario", "tool", "test", "metric", "position", "variant", "group", "letters", "rank_best"]
SHOWN += ["rank_worst", "other", "ratio", "ci_low", "ci_high", "n_pairs", "order"]


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The variant rows of ``ranking.csv`` with the columns a reader needs (:data:`SHOWN`)."""
    if table.empty or "row" not in table.columns:
        return table
    return table[table["row"] == "variant"][[c for c in SHOWN if c in table.columns]]


# ---- the figure --------------------------------------------------------------------------------


def _path_label(name: str, width: int = 11) -> str:
    """A path name broken at its hyphens into lines of about ``width`` characters."""
    return "\n".join(textwrap.wrap(name.replace("-", "- "), width)).replace("- ", "-").replace("-\n", "-\n")


def _panels(table: pd.DataFrame) -> list[pd.DataFrame]:
    """The variant rows of each measure (tool, test, protocol, direction, streams, metric) that has a
    ranking, in the table's order."""
    gs = rankings(table)
    if not gs:
        return []
    v = pd.concat([g[g["row"] == "variant"] for g in gs])
    measure = [c for c in KEY if c != "scenario"]
    return [g for _, g in v.groupby(v[measure].astype(str).agg("\x1f".join, axis=1), sort=False)]


def figure(table: pd.DataFrame, variants: list[str] | None = None) -> plt.Figure:
    """The figure (not saved; :func:`podnet.report.figures.style.save` writes it). ``variants``: the
    experiment's order of variants (:func:`podnet.report.figures.data.variant_order`), so each keeps
    the colour it has in the other figures."""
    style.apply()
    panels = _panels(table)
    if not panels:
        fig, ax = plt.subplots(figsize=(style.COLUMN, 0.8), layout="constrained")
        ax.set_axis_off()
        reason = str(table["reason"].iloc[0]) if len(table) and "reason" in table.columns else ""
        ax.text(0.5, 0.5, textwrap.fill(f"Nothing ranked: {reason}", 60), ha="center", va="center")
        return fig
    drawn = list(dict.fromkeys(x for p in panels for x in p["variant"]))
    order = [v for v in (variants or []) if v in drawn] + sorted(set(drawn) - set(variants or []))
    colors = style.variant_colors(list(variants or []) + [v for v in order if v not in (variants or [])])
    # panels side by side while their paths fit one row (a panel's width follows its paths)
    sizes = [len(set(p["scenario"])) for p in panels]
    cap = max(4, *sizes)
    rows: list[list[int]] = [[]]
    for i, n in enumerate(sizes):
        if rows[-1] and sum(sizes[j] for j in rows[-1]) + n > cap:
            rows.append([])
        rows[-1].append(i)
    fig = plt.figure(
        figsize=(style.PAGE, min(style.PAGE_HEIGHT, len(rows) * 1.9 + 0.9)), layout="constrained"
    )
    gs = fig.add_gridspec(len(rows), cap)
    refs = set()
    for r, members in enumerate(rows):
        start = 0
        for k, i in enumerate(members):
            span = sizes[i] if k < len(members) - 1 else cap - start
            ax = fig.add_subplot(gs[r, start : start + span])
            start += span
            refs |= set(panels[i]["other"].astype(str))
            _panel(ax, panels[i], order, colors, int(17 * style.PAGE * span / cap))
    fig.supylabel(f"Ratio to {', '.join(sorted(refs))}", fontsize=7)
    margin = float(panels[0]["margin"].iloc[0])
    lv = pd.to_numeric(panels[0].get("interval_level", pd.Series(dtype=float)), errors="coerce").dropna()
    level = f"{100 * float(lv.iloc[0]):g} % CI" if len(lv) else "CI"
    handles = [Patch(facecolor=colors[v], edgecolor="0.2", lw=0.4, label=v) for v in order]
    note = (
        f"Bars: each variant's ratio to {', '.join(sorted(refs))} (paired, same rounds), {level}. "
        "Letters: variants of one path sharing a letter are not ordered "
        f"({holm_words(table)}; equivalent within ±{margin * 100:g} % or inconclusive); a is the best group."
    )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=_legend_columns(order, style.PAGE),
        frameon=False,
        title=textwrap.fill(note, 150),
        title_fontsize=6,
    )
    fig.suptitle("Variants ranked per path: ratio to the reference variant, Holm order as letters")
    return fig


def _legend_columns(labels: list[str], width_in: float) -> int:
    """As many legend columns as fit the figure's width (a patch and ~0.06 in a character at the
    legend's font size), so no entry runs off the page."""
    widest = max((len(x) for x in labels), default=1) * 0.06 + 0.45
    return max(1, min(len(labels), int(width_in * 0.95 // widest)))


def _panel(ax: plt.Axes, p: pd.DataFrame, order: list[str], colors: dict, chars: int = 120) -> None:
    paths = list(dict.fromkeys(p["scenario"]))
    present = [v for v in order if v in set(p["variant"])]
    width = min(0.8 / max(len(present), 1), 0.22)
    offs = {v: (i - (len(present) - 1) / 2) * width for i, v in enumerate(present)}
    top = np.nanmax(pd.to_numeric(p[["ratio", "ci_high"]].stack(), errors="coerce").to_numpy(dtype=float))
    top = max(float(top) if np.isfinite(top) else 1.0, 1.0)
    for r in p.itertuples():
        x = paths.index(r.scenario) + offs[r.variant]
        ratio, lo, hi = float(r.ratio), float(r.ci_low), float(r.ci_high)
        y_text = 0.0
        if np.isfinite(ratio):
            ax.bar(x, ratio, width * 0.92, color=colors[r.variant], edgecolor="0.2", lw=0.4, zorder=2)
            y_text = ratio
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([x, x], [lo, hi], color="0.1", lw=0.8, zorder=3, solid_capstyle="butt")
                ax.plot([x - width * 0.2, x + width * 0.2], [hi, hi], color="0.1", lw=0.8, zorder=3)
                y_text = max(hi, ratio)
        ax.annotate(
            str(r.letters),
            (x, y_text),
            xytext=(0, 2.5),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=5.5,
            rotation=90 if len(str(r.letters)) > 2 else 0,
            zorder=4,
        )
    ax.axhline(1.0, color="0.35", lw=0.7, ls="--", zorder=1)
    ax.set_xticks(range(len(paths)), [_path_label(s) for s in paths])
    ax.set_xlim(-0.5, len(paths) - 0.5)
    tall = any(len(str(x)) > 2 for x in p["letters"])  # rotated letters need more room
    ax.set_ylim(0, top * (1.35 if tall else 1.22))
    ax.tick_params(axis="x", length=0)
    r0 = p.iloc[0]
    info = metric_info(str(r0["metric"]), str(r0["tool"]))
    title = f"{data.measure_label(r0)}: {info.label} ({r0['better']} is better)"
    ax.set_title(textwrap.fill(title, max(chars, 16)), loc="left")
    ax.grid(axis="y", lw=0.4, alpha=0.4)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(style.ratio_label))
