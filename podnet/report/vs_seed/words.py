"""In words: where our CNI ranking agrees with the seed's and where it does not.

Reads only the tables :func:`podnet.report.vs_seed.table.vs_seed_table` and
:func:`podnet.report.vs_seed.orders.orders_table` wrote (``vs_seed.csv``, ``vs_seed_orders.csv``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report import md
from podnet.report.numbers import fmt_ratio, ratio_texts

_GROUP = ["path", "scenario", "seed_tool", "seed_test", "seed_metric", "tool", "test", "metric"]


def _num(x: object) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def _ci(lo: float, hi: float, x: float = float("nan")) -> str:
    """ "95 % CI 0.964-0.967": the bounds with the digits the interval's width needs, the same as
    ``x``'s (:func:`_x`)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "no interval"
    _, a, b = ratio_texts(x if np.isfinite(x) else lo, lo, hi)
    return f"95 % CI {a}-{b}"


def _with_ci(x: float, lo: float, hi: float, times: str = "x", paren: bool = False) -> str:
    """ "0.966x, 95 % CI 0.964-0.967" (``paren``: "0.966x (95 % CI 0.964-0.967)"): a ratio (or a
    value, ``times=""``) and its interval, each printed to the interval's width
    (:func:`podnet.report.numbers.ratio_texts`)."""
    ci = _ci(lo, hi, x)
    return f"{ratio_texts(x, lo, hi)[0]}{times}" + (f" ({ci})" if paren else f", {ci}")


def _order(g: pd.DataFrame, rank: str, name: str, text) -> str:
    """CNIs by ``rank`` joined with ``>`` (``=`` between ties), each (Markdown text,
    :func:`podnet.report.md.text`) with ``text(row)``."""
    g = g.sort_values([rank, name], kind="stable")
    out = ""
    prev = None
    for _, r in g.iterrows():
        if prev is not None:
            out += " = " if r[rank] == prev else " > "
        out += f"{md.text(r[name])} ({text(r)})"
        prev = r[rank]
    return out


def measure_text(r: pd.Series | dict) -> str:
    """``iperf3 tcp throughput`` (ours) and, when the seed's differs, ``vs seed's netperf ...`` (the
    seed's as Markdown text, :func:`podnet.report.md.text`)."""
    ours = f"{r['tool']} {r['test']} {r['metric']}"
    seed = f"{r['seed_tool']} {r['seed_test']} {r['seed_metric']}"
    return ours if ours == seed else f"{ours} (seed: {md.text(seed)})"


def group_sentence(
    g: pd.DataFrame, seed: str = "seed", baseline: str = "host-host", orders: pd.DataFrame | None = None
) -> str:
    """One sentence for one (path, scenario, measure) group of ``vs_seed.csv``; ``orders``: the
    group's rows of ``vs_seed_orders.csv`` (the seed's orders judged by ranking.csv). Markdown: the
    seed's names and the config's note as :func:`podnet.report.md.text`."""
    r0 = g.iloc[0]
    seed = md.text(seed)
    path = str(r0["path"])
    scen = str(r0["scenario"] or "")
    where = md.text(path) + (f" (here {scen})" if scen and scen != path else "")
    head = f"{where}, {measure_text(r0)}"
    if not scen:
        return f"{head}: {seed}'s path has no counterpart here."
    on_value = str(r0.get("interval", "")) == "baseline" or scen == baseline
    both = g[g["status"] == "both"].copy()
    both = both[np.isfinite(both["rank_seed"].astype(float))]
    if not g["status"].isin(["both", "not in seed"]).any():
        return f"{head}: not measured here (no variant has {scen} {r0['tool']} {r0['test']})."
    missing = _missing(g)
    note = md.text(r0.get("note", "") or "")
    note = f" Set-up: {note}." if note else ""
    if len(both) < 2:
        tail = f" ({missing})" if missing else ""
        return f"{head}: fewer than two CNIs in both, nothing to rank{tail}.{note}"
    seed_txt, _ = (_value_texts if on_value else _ratio_texts)()
    what = _unit(both.iloc[0]) if on_value else f"ratio to {baseline}"
    seed_order = _order(both, "rank_seed", "seed_cni", seed_txt)
    ours = str(r0.get("order_ours", "") or "") or "not ranked (no ranking.csv row)"
    verdict = str(r0["ranking"])
    detail = _pair_words(orders if orders is not None else pd.DataFrame())
    text = (
        f"{head}: {seed} ranks ({what}) {seed_order}; podnet (ranking.csv, paired, Holm) ranks {ours}: "
        f"**{verdict}**{' (' + detail + ')' if detail else ''}."
    )
    return text + (f" {missing[0].upper() + missing[1:]}." if missing else "") + note


def _value_texts() -> tuple:
    """(seed text, our text) of a row on the baseline path: values in display units."""

    def seed(r: pd.Series) -> str:
        return fmt_ratio(_num(r["seed_value"]) / _scale(r))

    def ours(r: pd.Series) -> str:
        k = _scale(r)
        return _with_ci(_num(r["value"]) / k, _num(r["ci_low"]) / k, _num(r["ci_high"]) / k, times="")

    return seed, ours


def _ratio_texts() -> tuple:
    """(seed text, our text) of a row on another path: ratios to the baseline path."""

    def seed(r: pd.Series) -> str:
        return f"{fmt_ratio(_num(r['seed_ratio']))}x"

    def ours(r: pd.Series) -> str:
        return _with_ci(_num(r["ratio"]), _num(r["ratio_ci_low"]), _num(r["ratio_ci_high"]))

    return seed, ours


def _scale(r: pd.Series) -> float:
    return 1e9 if str(r.get("unit", "")) == "bit/s" else 1e-6 if str(r.get("unit", "")) == "s" else 1.0


def _unit(r: pd.Series) -> str:
    return {"bit/s": "Gbit/s", "s": "µs"}.get(str(r.get("unit", "")), str(r.get("unit", "")))


def _pair_words(o: pd.DataFrame) -> str:
    """The seed's orders (``vs_seed_orders.csv`` rows of one group) grouped by status, in words."""
    if o is None or o.empty:
        return ""
    parts = []
    for status, label in (
        ("agrees", "agrees on"),
        ("contradicts", "contradicts"),
        ("gap not reproduced", "does not reproduce the gap of"),
        ("inconclusive here", "inconclusive here on"),
        ("tie", "the seed ties"),
    ):
        q = o[o["status"] == status]
        if not len(q):
            continue
        bits = []
        for r in q.itertuples():
            seed = f"{md.text(r.seed_a)} {'>' if r.seed_order == '>' else '~'} {md.text(r.seed_b)}"
            if np.isfinite(_num(r.ratio)):
                ours = f"{r.a} / {r.b} {_with_ci(_num(r.ratio), _num(r.ci_low), _num(r.ci_high))}"
            else:
                ours = "no paired ratio"
            if status == "agrees":
                bits.append(f"{seed} (here {ours})")
            elif status == "contradicts":
                bits.append(f"{seed} (here {r.b} > {r.a}: {ours})")
            elif status == "gap not reproduced":
                bits.append(f"{seed} (seed {fmt_ratio(_num(r.seed_ratio))}x; here equivalent: {ours})")
            elif status == "tie":
                bits.append(f"{seed} (seed {fmt_ratio(_num(r.seed_ratio))}x; here {r.relation}: {ours})")
            else:
                bits.append(f"{seed} (here {r.relation}: {ours})")
        parts.append(f"{label} {', '.join(bits)}")
    return "; ".join(parts)


def _missing(g: pd.DataFrame) -> str:
    bits = []
    nr = g[g["status"] == "not run here"]
    if len(nr):
        bits.append(
            "not run here: " + ", ".join(f"{md.text(r.seed_cni)} ({r.variant})" for r in nr.itertuples())
        )
    nc = g[g["status"] == "no counterpart"]
    if len(nc):
        bits.append("no counterpart here: " + ", ".join(md.text(x) for x in nc["seed_cni"]))
    return "; ".join(bits)


def sentences(
    vs: pd.DataFrame, seed: str | None = None, baseline: str = "host-host", orders: pd.DataFrame | None = None
) -> list[str]:
    """One sentence per (path, scenario, measure) group of ``vs_seed.csv``, in the table's order;
    ``orders``: ``vs_seed_orders.csv`` (each seed order judged; without it, verdicts alone)."""
    if vs.empty:
        return []
    seed = seed or str(vs["seed"].iloc[0])
    vs = vs.copy()
    vs["scenario"] = vs["scenario"].fillna("")
    out = []
    for key, g in vs.groupby(_GROUP, sort=False, dropna=False):
        o = None
        if orders is not None and len(orders):
            m = np.ones(len(orders), dtype=bool)
            for c, v in zip(_GROUP, key):
                m &= orders[c].fillna("").astype(str).to_numpy() == str(v)
            o = orders[m]
        out.append(group_sentence(g, seed, baseline, o))
    return out


def summary_sentence(vs: pd.DataFrame, seed: str | None = None) -> str:
    """How many (path, measure) rankings agree, disagree or are inconclusive here, and which disagree
    (Markdown: the seed's name as :func:`podnet.report.md.text`)."""
    if vs.empty:
        return "Nothing to compare: the table is empty."
    seed = md.text(seed or vs["seed"].iloc[0])
    g = vs.assign(scenario=vs["scenario"].fillna("")).drop_duplicates(_GROUP)
    g = g[g["ranking"] != "nothing to rank"]
    if g.empty:
        return f"No path and measure has two CNIs in both {seed} and podnet: no ranking to compare."
    counts = g["ranking"].value_counts()
    parts = [f"{int(counts[v])} {v}" for v in counts.index]
    dis = g[g["ranking"].isin(["contradicts", "mixed"])]
    tail = ""
    if len(dis):
        tail = (
            " Contradicting (all or in part): "
            + "; ".join(f"{r.scenario} {r.tool} {r.test} {r.metric}" for r in dis.itertuples())
            + "."
        )
    return f"Of {len(g)} path x measure rankings with two CNIs or more in both {seed} and podnet: {', '.join(parts)}.{tail}"


def markdown(
    vs: pd.DataFrame, seed: str | None = None, baseline: str = "host-host", orders: pd.DataFrame | None = None
) -> str:
    """The summary sentence, the orders' count and every group's sentence as a Markdown list."""
    lines = [summary_sentence(vs, seed)]
    if orders is not None and len(orders):
        c = orders["status"].value_counts()
        lines[0] += (
            f" Of {len(orders)} orders between two CNIs (the seed's, judged by the paired ratios of "
            "ranking.csv): " + ", ".join(f"{int(c[k])} {k}" for k in c.index) + "."
        )
    lines.append("")
    lines += [f"- {s}" for s in sentences(vs, seed, baseline, orders)]
    return "\n".join(lines)


def headline_table(
    vs: pd.DataFrame,
    path: str = "pod-pod-cross-node",
    measures: tuple[tuple[str, str, str], ...] = (
        ("iperf3", "tcp", "throughput"),
        ("netperf", "TCP_RR", "latency_p50"),
    ),
) -> pd.DataFrame:
    """Per CNI, on one seed ``path``: for each of our ``measures``, the seed's ratio to its baseline
    beside ours with its 95 % interval (text cells, for the report and the closing note)."""
    v = vs[
        (vs["path"] == path) & vs["status"].isin(["both", "not run here", "no counterpart", "not in seed"])
    ]
    if v.empty:
        return pd.DataFrame()
    out: dict[tuple[str, str], dict[str, str]] = {}
    for tool, test, metric in measures:
        q = v[(v["tool"] == tool) & (v["test"] == test) & (v["metric"] == metric)]
        if path in set(q["scenario"]):
            q = q[q["scenario"] == path]
        else:  # the seed's path measured by several of ours: the first
            q = q[q["scenario"] == q["scenario"].iloc[0]] if len(q) else q
        label = f"{tool} {test} {metric}"
        for r in q.itertuples():
            key = (str(r.seed_cni or "–"), str(r.variant or "–"))
            row = out.setdefault(key, {})
            seed_label = f"{label}: {r.seed} ({r.seed_tool} {r.seed_test} {r.seed_metric})"
            row[seed_label] = f"{fmt_ratio(_num(r.seed_ratio))}x" if np.isfinite(_num(r.seed_ratio)) else "–"
            if np.isfinite(_num(r.ratio)):
                row[f"{label}: podnet"] = _with_ci(
                    _num(r.ratio), _num(r.ratio_ci_low), _num(r.ratio_ci_high), paren=True
                )
            else:
                row[f"{label}: podnet"] = str(r.status)
    t = pd.DataFrame.from_dict(out, orient="index")
    t.index = pd.MultiIndex.from_tuples(t.index, names=["seed CNI", "podnet variant"])
    return t.fillna("–")
