"""Findings in words and tables in human units, generated from the statistics.

One sentence per primary comparison, e.g. "pod-pod-cross-node reaches 0.84x host-host
iperf3 tcp throughput (95 % CI 0.79-0.90, n = 10 each, Holm-adjusted p = 0.003): different,
precise", in the two words of METHODS.md ("Two words: different and precise"), read from
ratios.csv's ``different`` and ``precise`` columns. Every number comes from ratios.csv /
summary.csv and is only rounded here. A comparison is stated with the interval
:func:`podnet.stats.precision.judged` picks (paired within a launch's interleaved rounds when
there is one): the interval adaptive sampling and the gate judge too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podnet.report import md, netready, ranking
from podnet.report.disturbed import disturbed_sentence
from podnet.report.figures import data
from podnet.report.figures.plots import alpha, primary_ratios
from podnet.report.numbers import fmt_p, ratio_texts
from podnet.report.placement import placement_sentence
from podnet.stats.precision import as_judged, different, half_width_text, is_precise
from podnet.tools import metric_info


def _n(nt: float, nb: float) -> str:
    nt, nb = int(nt), int(nb)
    return f"n = {nt} each" if nt == nb else f"n = {nt} and {nb}"


def _n_of(r: pd.Series) -> str:
    """ "n = 10 each", or for a paired interval "10 interleaved rounds, paired"."""
    if str(r.get("interval", "")) == "paired":
        return f"{int(r['n_pairs'])} interleaved rounds, paired"
    return _n(r["n_treatment"], r["n_baseline"])


def sentence(
    r: pd.Series,
    a: float = 0.05,
    confidence: float = 0.95,
    with_variant: bool = False,
    bounds: dict[tuple[str, str], str] | None = None,
) -> str:
    """The finding of one ratios.csv row (``with_variant``: name the variant, when there are several;
    ``bounds``: what bounds each stream test, :func:`podnet.report.figures.data.stream_bounds`)."""
    info = metric_info(str(r["metric"]), str(r["tool"]))
    what = f"{data.measure_label(r, bounds=bounds)} {data.in_sentence(info.label)}"
    treat = r["scenario"] if r["by"] == "scenario" else r["treatment"]
    if r["by"] != "scenario":
        treat = f"{r['treatment']} ({r['scenario']})"
    elif with_variant:
        treat = f"{treat} on {r['variant']}"
    ratio = float(r["ratio"])
    lo, hi = float(r["ci_low"]), float(r["ci_high"])
    # the ratio and its bounds with the digits the interval's width needs (0.966, 0.964-0.967)
    ratio_t, lo_t, hi_t = ratio_texts(ratio, lo, hi)
    verb = "reaches" if info.better == "higher" else "has"
    head = f"{treat} {verb} {ratio_t}x the {what} of {r['baseline']}"
    n = _n_of(r)
    p = float(r.get("p_adjusted", np.nan))
    conf = f"{confidence * 100:g} % CI"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        why = md.text(r.get("ci_note") or "too few runs for an interval")
        return f"{head} ({n}; {why}): {words(False, False)}."
    if lo > 0:
        ci = f"{conf} {lo_t}-{hi_t}"
    else:  # a ratio of positive quantities: an interval reaching 0 bounds nothing below
        ci = f"{conf} up to {hi_t}, no positive lower bound"
    if str(r.get("role", "")) == "exploratory":
        raw_p = float(r.get("p_value", np.nan))
        pv = f"unadjusted {fmt_p(raw_p)}; " if np.isfinite(raw_p) else ""
        return f"{head} ({ci}, {n}; {pv}exploratory: not a declared primary comparison)."
    if not np.isfinite(p):
        return f"{head} ({ci}, {n}; no test): {words(False, is_precise(r))}."
    adj = f"Holm-adjusted {fmt_p(p)}"
    return f"{head} ({ci}, {n}, {adj}): {words(different(r), is_precise(r))}."


def words(diff: bool, precise: bool) -> str:
    """The two words of a primary comparison (METHODS.md, "Two words: different and precise"):
    "different, precise", "not shown different, not precise", ..."""
    return f"{'different' if diff else 'not shown different'}, {'precise' if precise else 'not precise'}"


def findings(t: data.Tables) -> pd.DataFrame:
    """One row per primary comparison: the sentence and the numbers it states."""
    r = primary_ratios(t.ratios, t.settings)
    if r.empty:
        return pd.DataFrame(
            columns=["sentence", "ratio", "ci_low", "ci_high", "p_adjusted", "different", "precise"]
        )
    a = alpha(t.settings)
    conf = 1 - a
    r = as_judged(r)
    out = r.copy()
    several = r["by"].eq("scenario").any() and r["variant"].nunique() > 1
    bounds = data.stream_bounds(t)
    out["sentence"] = [sentence(row, a, conf, several, bounds) for _, row in r.iterrows()]
    out["different"] = [different(row) for _, row in r.iterrows()]
    out["precise"] = [is_precise(row) for _, row in r.iterrows()]
    return out


def markdown(t: data.Tables) -> str:
    """The findings as a Markdown list (or why there are none)."""
    f = findings(t)
    account = "\n\n".join(
        x
        for x in (
            adaptive_markdown(t.adaptive),
            disturbed_sentence(t.disturbed, t.tidy),
            placement_sentence(t.tidy, t.summary),
            ranking.markdown(t.ranking),
            netready.markdown(t),
        )
        if x
    )
    if f.empty:
        text = "No comparison is configured or computable, so there are no findings to state."
        return text + ("\n\n" + account if account else "")
    n_diff, n_prec = int(f["different"].sum()), int(f["precise"].sum())
    if "role" in f.columns and (f["role"] == "exploratory").all():
        lead = (
            f"No primary comparison is declared (`stats.primary`): {len(f)} exploratory comparisons of the "
            "headline metrics, without adjustment for multiple testing.\n\n"
        )
    else:
        lead = (
            f"{len(f)} primary comparisons; {n_diff} different (Holm-adjusted p below "
            f"{alpha(t.settings):g}), {n_prec} precise (interval within its width target).\n\n"
        )
    text = lead + "\n".join(f"- {s}" for s in f["sentence"])
    return text + ("\n\n" + account if account else "")


def _hms(seconds: float) -> str:
    s = int(round(float(seconds)))
    h, m = divmod(s // 60, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s % 60:02d}s" if m else f"{s}s"


def _what(r: pd.Series) -> str:
    label = data.in_sentence(metric_info(str(r["metric"]), str(r["tool"])).label)
    where = f"{r['treatment']} / {r['baseline']}" if r.get("by") == "scenario" else str(r["scenario"])
    return f"{where}, {data.measure_label(r)} {label}"


def adaptive_markdown(acc: pd.DataFrame) -> str:
    """What adaptive sampling met, per variant's latest launch (``adaptive.csv``), in words; "" without one.

    E.g. "21 of 24 primary comparisons reached their precision target (±5 %); 3 did not: budget
    spent (3). 412 runs in 28m10s of a 30m budget; a fixed 10-repeat protocol: 970 runs (42 %)",
    then one line per comparison that did not, with its half-width and the repeats it would need.
    """
    from podnet.stats.account import latest

    if acc is None or acc.empty:
        return ""
    out = []
    for (variant, launch), g in latest(acc).groupby(["variant", "launch_id"], sort=True):
        head = g.iloc[0]
        noun = "primary comparisons" if head["mode"] == "primary" else "case headline metrics"
        targets = sorted(set(g["target_rel_half_width"].astype(float)))
        goal = half_width_text(targets[0]) if len(targets) == 1 else "per comparison"
        unmet = g[g["status"] != "met"]
        why = unmet["reason"].value_counts()
        lead = f"**Adaptive sampling** (variant {variant}, launch {md.text(launch)}): {len(g) - len(unmet)} of {len(g)} {noun} "
        lead += f"reached their precision target ({goal}, relative half-width of the 95 % interval)"
        lead += (
            "; all of them."
            if unmet.empty
            else "; " + f"{len(unmet)} did not: " + ", ".join(f"{r} ({k})" for r, k in why.items()) + "."
        )
        budget = head.get("budget_s")
        spent = f"{_hms(head['wall_s'])}" + (f" of a {_hms(budget)} budget" if pd.notna(budget) else "")
        runs, fixed = int(head["runs_launched"]), int(head["fixed_protocol_runs"])
        share = f" ({runs / fixed * 100:.0f} %)" if fixed else ""
        lead += f" {runs} runs in {spent}; a fixed {int(head['fixed_repeats'])}-repeat protocol: {fixed} runs{share}."
        lines = [lead]
        for _, r in unmet.iterrows():
            rhw = float(r["rel_half_width"]) if pd.notna(r["rel_half_width"]) else np.nan
            n_need = float(r["n_needed"]) if pd.notna(r["n_needed"]) else np.nan
            if np.isfinite(rhw):
                state = (
                    f"{half_width_text(rhw)} with n = {int(r['n'])}"
                    if pd.notna(r["n"])
                    else half_width_text(rhw)
                )
            else:
                state = "no interval"
            need = f"; needs ~{int(n_need)} repeats at this noise" if np.isfinite(n_need) else ""
            lines.append(f"- {_what(r)}: {state} ({r['reason']}{need}).")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _ci(lo: float, hi: float, factor: float) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    return f"{data.fmt_value(lo / factor)}–{data.fmt_value(hi / factor)}"


def headline_table(t: data.Tables) -> pd.DataFrame:
    """Headline metrics per measure, path and variant in display units: the measure's name, its unit
    in a column of its own (one unit per measure, chosen from all its rows, so its rows compare
    digit by digit; a row 100x below it in a unit of its own: 845 kbit/s, not 0.000845 Gbit/s), n,
    mean, 95 % CI and CV."""
    rows = data.headline_rows(t.summary, None, t.settings)
    if rows.empty:
        return pd.DataFrame(
            columns=["test", "measure", "path", "variant", "n", "mean", "95 % CI", "unit", "CV"]
        )
    bounds = data.stream_bounds(t)
    rows = rows.assign(
        _test=[data.measure_label(r, bounds=bounds) for _, r in rows.iterrows()],
        unit=rows["unit"].fillna("").astype(str),
        metric=rows["metric"].astype(str),
    )
    shown: dict[tuple[str, str, str], tuple[float, str]] = {}
    for key, g in rows.groupby(["_test", "metric", "unit"], sort=False):
        shown[key] = data.display_unit(g["mean"].astype(float), str(key[2]))
    out = []
    for _, r in rows.iterrows():
        factor, unit = shown[(r["_test"], r["metric"], r["unit"])]
        if 0 < abs(float(r["mean"])) / factor < 0.01:  # 100x below its measure's unit: a unit of its own
            factor, unit = data.display_unit([float(r["mean"])], r["unit"])
        cv = float(r["cv"]) if "cv" in r and pd.notna(r["cv"]) else np.nan
        alike = cv == 0 and bool(r.get("quantised", False))  # every run printed the same digits
        out.append(
            {
                "test": r["_test"],
                "measure": metric_info(str(r["metric"]), str(r["tool"])).label,
                "path": r["scenario"],
                "variant": r["variant"],
                "n": int(r["n"]),
                "mean": data.fmt_value(float(r["mean"]) / factor),
                "95 % CI": _ci(float(r["ci_low"]), float(r["ci_high"]), factor),
                "unit": "" if unit == "count" else unit,
                "CV": "printed alike" if alike else f"{cv * 100:.1f} %" if np.isfinite(cv) else "–",
            }
        )
    return pd.DataFrame(out)


def _ratio_ci(ratio: float, lo: float, hi: float) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "–"
    _, lo_t, hi_t = ratio_texts(ratio, lo, hi)
    return f"{lo_t}–{hi_t}" if lo > 0 else f"≤ {hi_t}"


def ratio_table(t: data.Tables) -> pd.DataFrame:
    """Primary comparisons: ratio, 95 % CI, n and adjusted p, rounded for reading."""
    f = findings(t)
    if f.empty:
        return pd.DataFrame()
    bounds = data.stream_bounds(t)  # once: it reads the whole tidy table
    return pd.DataFrame(
        {
            "test": [data.measure_label(r, with_metric=True, bounds=bounds) for _, r in f.iterrows()],
            "treatment": f["treatment"],
            "baseline": f["baseline"],
            "ratio": [
                ratio_texts(x, a, b)[0]
                for x, a, b in zip(
                    f["ratio"].astype(float), f["ci_low"].astype(float), f["ci_high"].astype(float)
                )
            ],
            "95 % CI": [
                _ratio_ci(x, a, b)
                for x, a, b in zip(
                    f["ratio"].astype(float), f["ci_low"].astype(float), f["ci_high"].astype(float)
                )
            ],
            "n": [
                f"{int(r['n_pairs'])} paired" if r["interval"] == "paired" else _n_of(r).removeprefix("n = ")
                for _, r in f.iterrows()
            ],
            "Holm p": [
                fmt_p(p).removeprefix("p = ") if np.isfinite(p) else "–"
                for p in f["p_adjusted"].astype(float)
            ],
            "different": f["different"].map({True: "yes", False: "no"}),
            "precise": f["precise"].map({True: "yes", False: "no"}),
        }
    )


_DESIGN = {
    "side-by-side": "side by side, {n} paired rounds",
    "normalised": "each launch normalised by its own {base}, {n}+ rounds each",
    "sequential": "separate launches, drift included, n = {n}",
}


def variant_sentence(r: pd.Series) -> str:
    """One variants.csv row in words: "flannel-vxlan pod-pod iperf3 tcp throughput is 0.76x
    flannel-host-gw [0.70, 0.82] (side by side, 12 paired rounds)"."""
    info = metric_info(str(r["metric"]), str(r["tool"]))
    design = _DESIGN.get(str(r["design"]), str(r["design"])).format(
        n=int(r["n_pairs"]), base=r.get("normalised_by") or "baseline"
    )
    ratio_t, lo_t, hi_t = ratio_texts(float(r["ratio"]), float(r["ci_low"]), float(r["ci_high"]))
    return (
        f"{r['variant']} {r['scenario']} {data.measure_label(r)} {data.in_sentence(info.label)} is "
        f"{ratio_t}x {r['baseline_variant']} [{lo_t}, {hi_t}] ({design})"
    )


def variant_markdown(t: data.Tables, primary_only: bool = True) -> str:
    """The variant ratios (variants.csv) in words, the design each was read by first, and for a
    family row its two words (different, precise)."""
    v = t.variants
    if v is None or v.empty:
        names = (
            sorted(set(t.summary["variant"].astype(str))) if t.summary is not None and len(t.summary) else []
        )
        if len(names) > 1:
            return (
                f"No variant ratio with an interval: {len(names)} variants ({', '.join(names)}), but no path and "
                "test with at least 2 runs on both sides of a pair of them."
            )
        return "No variant ratio with an interval: one variant only."
    v = v[v["preferred"].astype(bool)]
    if primary_only and (v["role"] == "primary").any():
        v = v[v["role"] == "primary"]
    lines = []
    for _, r in v.iterrows():
        padj, praw = float(r.get("p_adjusted", np.nan)), float(r.get("p_value", np.nan))
        if np.isfinite(padj):  # a family row: the same Holm p as ratios.csv and the findings state
            state = f", Holm-adjusted {fmt_p(padj)}"
        else:
            state = f", unadjusted {fmt_p(praw)}" if np.isfinite(praw) else ""
        if r["role"] == "primary":
            hw = float(r["rel_half_width"])
            target = f"target ±{float(r['target_rel_half_width']) * 100:.0f} %"
            state += f": ±{hw * 100:.1f} % ({target}), {words(different(r), is_precise(r))}"
        lines.append(f"- {variant_sentence(r)}{state}.")
    return "\n".join(lines)


def compare_lead(t: data.Tables, by: str, n_ratios: int) -> str:
    """What the compare notebook compares, said first: by what (variants or experiments), which ones
    and how many ratios; with one variant, that there is nothing to set side by side here and where
    the experiment's own comparisons (between paths) are."""
    tidy = t.tidy
    measured = tidy[tidy["source"].astype(str) == "measured"] if len(tidy) and "source" in tidy else tidy
    names = sorted(measured["variant"].astype(str).unique()) if len(measured) else []
    ref = sorted(set(tidy["variant"].astype(str)) - set(names)) if len(tidy) else []
    listed = ", ".join(names) if names else "none measured"
    paths = int((t.ratios["by"].astype(str) == "scenario").sum()) if len(t.ratios) and "by" in t.ratios else 0
    primary = (
        int((t.ratios["role"].astype(str) == "primary").sum()) if len(t.ratios) and "role" in t.ratios else 0
    )
    if by == "experiment":
        return f"Comparing by **experiment**: {n_ratios} ratios between this experiment and the others given."
    if len(names) > 1 or (not names and len(ref) > 1):
        shown = listed if names else ", ".join(ref) + " (published reference values)"
        return f"Comparing by **variant**: {len(names or ref)} variants ({shown}), {n_ratios} ratios."
    return (
        f"This experiment has one measured variant ({listed}): there is no variant to set beside it here "
        f"(give `report.compare_with` other experiments' folders, or run a campaign). Its {paths} "
        f"comparisons between paths ({primary} primary) are in the report's findings."
    )


#: the compare notebook's cells when there is no ratio between variants or experiments (one variant)
NOTHING_BETWEEN = (
    "No ratio between variants or experiments: one variant only (see the lead above); "
    "the comparisons between paths are the report's findings."
)


def compare_words(cmp: data.Tables) -> str:
    """The compare notebook's findings in words: :func:`markdown` over the ratios between variants or
    experiments (``cmp.ratios``), or :data:`NOTHING_BETWEEN` when there are none (never "no comparison
    is configured" while the experiment has comparisons between paths)."""
    return markdown(cmp) if len(cmp.ratios) else NOTHING_BETWEEN
