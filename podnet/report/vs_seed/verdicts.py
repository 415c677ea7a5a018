"""A seed's claims as the report shows them: the count of verdicts first, then one row a claim.

``vs_seed_claims.csv`` (:mod:`.claims`) is read back with its text cells as text
(:func:`read_claims`), counted by verdict (:func:`verdict_counts`, :func:`count_sentence`, which
:func:`headline` puts before the ranking's summary) and cut to
the columns a reader needs (:func:`claims_shown`, :func:`claims_view` as the notebook shows it): the
claim, its verdict and why, the seed's value over its baseline and ours in the row's display unit, our
ratio with its interval in one cell. The ``vs_seed`` notebook calls these; ``make seeds``
(:mod:`.seeds`) counts every seed campaign's verdicts with the same :func:`verdict_counts`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from podnet.report import md, tables
from podnet.report.figures import data
from podnet.report.numbers import ratio_ci_text
from podnet.tools import metric_info

from .claims import CLAIM_COLUMNS, CLAIM_VERDICTS
from .words import summary_sentence

#: the text columns of ``vs_seed_claims.csv`` (empty cells stay empty strings)
TEXT_COLUMNS = (
    "seed",
    "claim",
    "covers",
    "says",
    "seed_measure",
    "seed_relation",
    "by",
    "variant",
    "scenario",
    "treatment",
    "baseline",
    "measure",
    "interval",
    "verdict",
    "reason",
)

#: the columns of :func:`claims_shown`, in order: what was claimed and what came of it first, then the
#: numbers of both sides, each row in its own measure's display unit, then what was compared
SHOWN_COLUMNS = [
    "claim",
    "verdict",
    "reason",
    "says",
    "seed: treatment / baseline",
    "seed ratio",
    "ours: treatment / baseline",
    "our ratio [95 % CI]",
    "seed ratio in our CI",
    "compared here",
]


def read_claims(path: str | Path) -> pd.DataFrame:
    """``vs_seed_claims.csv`` as written (:data:`.claims.CLAIM_COLUMNS`; text cells stay text); an
    empty table with those columns when the file is missing or empty (a seed without claims)."""
    p = Path(path)
    if not p.exists() or not p.stat().st_size:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    df = pd.read_csv(p)
    for c in TEXT_COLUMNS:
        if c in df.columns:
            df[c] = as_text(df[c])
    return df


def as_text(s: pd.Series) -> pd.Series:
    """A column as text, empty (NaN) cells as empty strings (whatever dtype it was read as)."""
    return s.astype(object).where(s.notna(), "").astype(str)


def verdict_counts(claims: pd.DataFrame) -> pd.Series:
    """How many claims have each verdict: :data:`.claims.CLAIM_VERDICTS` in their order first, then
    any other verdict (e.g. a ranking's, :data:`.table.VERDICTS`) by count; verdicts no claim has are
    left out."""
    if claims.empty or "verdict" not in claims.columns:
        return pd.Series(dtype="int64", name="n")
    counts = as_text(claims["verdict"]).value_counts()
    known = [v for v in CLAIM_VERDICTS if v in counts.index]
    rest = [v for v in counts.index if v not in CLAIM_VERDICTS]
    return counts.reindex(known + rest).astype("int64").rename("n")


def count_sentence(claims: pd.DataFrame, seed: str | None = None) -> str:
    """One sentence leading the claims: how many there are and how many have each verdict;
    ``seed``: the seed's name (default: the claims' ``seed`` cell, else "the seed"; Markdown text,
    :func:`podnet.report.md.text`)."""
    if seed is None:
        named = claims["seed"].dropna().astype(str) if "seed" in claims.columns else pd.Series(dtype=str)
        seed = str(named.iloc[0]) if len(named) and named.iloc[0] else "the seed"
    seed = md.text(seed)
    counts = verdict_counts(claims)
    if counts.empty:
        return f"No claims of {seed} are judged here (`report.vs_seed.claims` names none)."
    total = int(counts.sum())
    parts = ", ".join(f"{n} {md.text(v)}" for v, n in counts.items())
    return f"Of {total} claim{'s' if total != 1 else ''} of {seed}: {parts}."


def headline(claims: pd.DataFrame, vs: pd.DataFrame, seed: str | None = None) -> str:
    """The notebook's lead: :func:`count_sentence` of the claims, then, where the seed has a CNI
    ranking here (``vs_seed.csv`` not empty), :func:`.words.summary_sentence` of it."""
    lead = count_sentence(claims, seed)
    return lead if vs.empty else f"{lead}\n\n{summary_sentence(vs)}"


def claims_shown(claims: pd.DataFrame, summary: pd.DataFrame | None = None) -> pd.DataFrame:
    """The claims as a reader's table (:data:`SHOWN_COLUMNS`, every cell text): the claim, its verdict
    and why it is not judged (``reason``) first; the seed's value and baseline and ours (``summary``:
    ``summary.csv``, for our values; without it that column is left out) in one display unit per row,
    chosen from the row's own measure and values (910 / 942 Mbit/s, 727 / 245 µs, 10,031 / 12,440
    requests/s), never e-notation; the seed's ratio with its direction; our ratio and its interval in
    one cell to the digits the interval's width needs (:func:`podnet.report.numbers.ratio_ci_text`);
    blank, never NaN, where a side has no number. ``vs_seed_claims.csv`` keeps the SI numbers."""
    cols = [c for c in SHOWN_COLUMNS if summary is not None or not c.startswith("ours:")]
    if claims.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for _, r in claims.iterrows():
        measure = _text(r.get("seed_measure")) or _text(r.get("measure"))
        seed = (_num(r.get("seed_value")), _num(r.get("seed_baseline")))
        ours = _our_values(r, summary) if summary is not None else (np.nan, np.nan)
        factor, unit = _row_unit(measure, [*seed, *ours])
        lo, hi = _num(r.get("ci_low")), _num(r.get("ci_high"))
        in_ci = _text(r.get("seed_in_ci")).lower()
        rows.append(
            {
                "claim": _text(r.get("claim")),
                "verdict": _text(r.get("verdict")),
                "reason": _text(r.get("reason")),
                "says": _text(r.get("says")),
                "seed: treatment / baseline": _pair(seed, factor, unit, exact=True),
                "seed ratio": _seed_ratio(_num(r.get("seed_ratio")), _text(r.get("seed_relation"))),
                "ours: treatment / baseline": _pair(ours, factor, unit),
                "our ratio [95 % CI]": ratio_ci_text(_num(r.get("ratio")), lo, hi),
                "seed ratio in our CI": {"true": "yes", "false": "no"}.get(in_ci, ""),
                "compared here": _compared(r),
            }
        )
    return pd.DataFrame(rows, columns=cols)


#: CSS of :func:`claims_view`: headers left and on top; each cell's own style (:func:`claims_view`)
_CSS = [
    {"selector": "", "props": "border-collapse: collapse; font-size: 0.9em"},
    {"selector": "th", "props": "text-align: left; vertical-align: bottom; padding: 3px 6px"},
]
#: the text columns' widths: text wraps within them (a long variant name anywhere), so the table fits
#: a 1280-px page; the other columns (numbers) are right-aligned and wrap only between a value and its
#: unit or a ratio and its interval (:data:`_KEEP`)
_WIDTHS = {
    "claim": "8em",
    "verdict": "6.5em",
    "reason": "11em",
    "says": "16em",
    "compared here": "12em",
}
_CELL = {"text-align": "left", "vertical-align": "top", "padding": "3px 6px"}
#: the spaces a number's cell never breaks at ("910 / 942", "[0.964, 0.967]")
_KEEP = {" / ": "\u00a0/\u00a0", ", ": ",\u00a0"}


def claims_view(claims: pd.DataFrame, summary: pd.DataFrame | None = None):
    """:func:`claims_shown` as the notebook shows it (a pandas Styler): no index, a reason column only
    when a claim has one, text left and wrapped within set widths, the numbers right, broken only
    between a value and its unit or a ratio and its interval;
    fits a 1280-px page. (The cells are styled by their own ids: a table-wide ``td`` rule would
    outrank them.) Every cell is HTML-escaped (a Styler writes its cells as they are: a claim's
    ``<`` would be taken as a tag)."""
    df = claims_shown(claims, summary)
    df = df.drop(columns=[c for c in ("reason",) if c in df.columns and not (df[c] != "").any()])
    for c in (c for c in df.columns if c not in _WIDTHS):
        for a, b in _KEEP.items():
            df[c] = df[c].str.replace(a, b, regex=False)
    styler = df.style.format(escape="html").hide(axis="index").set_table_styles(_CSS)
    for c in df.columns:
        if c in _WIDTHS:
            w = _WIDTHS[c]
            props = {
                **_CELL,
                "white-space": "normal",
                "overflow-wrap": "anywhere",
                "min-width": w,
                "max-width": w,
            }
        else:
            props = {**_CELL, "text-align": "right"}
        styler = styler.set_properties(subset=[c], **props)
    return styler


def _num(x: object) -> float:
    try:
        return float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def _text(x: object) -> str:
    return "" if x is None or (isinstance(x, float) and np.isnan(x)) else str(x)


def _row_unit(measure: str, values: list[float]) -> tuple[float, str]:
    """One display unit for a row's numbers, from its measure's SI unit: bit/s and seconds scaled by
    :func:`podnet.report.tables.column_unit` (Mbit/s, µs); a rate of things (requests/s) and any other
    unit as it is, its thousands separated (10,031 requests/s, not 10.03 k requests/s)."""
    parts = measure.split(":")
    if len(parts) != 3:
        return 1.0, ""
    tool, _, metric = parts
    unit = metric_info(metric, tool).unit
    if unit in ("bit/s", "s", "bytes", "fraction"):
        return tables.column_unit(values, unit)
    return 1.0, "" if unit == "count" else unit


def _number(x: float, exact: bool) -> str:
    """A number as text, never e-notation: 4 significant digits but never fewer than its whole digits
    (10,031, not 10,030); ``exact`` (the seed's published figure): trailing zeros left out (910, not
    910.0: the seed printed no more)."""
    if not np.isfinite(x):
        return ""
    digits = max(tables.DIGITS, int(np.floor(np.log10(abs(x)))) + 1) if x else tables.DIGITS
    t = data.fmt_value(x, digits)
    return t.rstrip("0").rstrip(".") if exact and "." in t else t


def _pair(values: tuple[float, float], factor: float, unit: str, exact: bool = False) -> str:
    """ "910 / 942 Mbit/s"; one side alone when the other is missing; "" when both are."""
    a, b = (_number(v / factor, exact) for v in values)
    if not (a or b):
        return ""
    return f"{a or '–'} / {b or '–'} {unit}".strip()


def _seed_ratio(ratio: float, relation: str) -> str:
    """ "0.966 (<)"; "states >" where the seed gave a direction and no numbers."""
    if np.isfinite(ratio):
        return f"{data.fmt_value(ratio, 3)} ({relation})" if relation else data.fmt_value(ratio, 3)
    return f"states {relation}" if relation else ""


def _compared(r: pd.Series) -> str:
    """What our ratio is: "pod-pod-cross-node / host-host on flannel-vxlan, iperf2 tcp throughput"."""
    treat, base = _text(r.get("treatment")), _text(r.get("baseline"))
    if not (treat or base):
        return ""
    where = _text(r.get("variant")) if _text(r.get("by")) == "scenario" else _text(r.get("scenario"))
    measure = _text(r.get("measure")).replace(":", " ")
    return f"{treat} / {base}" + (f" on {where}" if where else "") + (f", {measure}" if measure else "")


def _our_values(r: pd.Series, summary: pd.DataFrame) -> tuple[float, float]:
    """Our treatment's and baseline's values (``summary.csv``'s centre) of a claim's ratio; NaN where
    summary.csv has not exactly one row for a side."""
    parts = _text(r.get("measure")).split(":")
    if len(parts) != 3 or summary is None or summary.empty:
        return np.nan, np.nan
    tool, test, metric = parts
    s = summary
    if "source" in s.columns:
        s = s[s["source"].astype(str) == "measured"]
    s = s[
        (s["tool"].astype(str) == tool)
        & (s["test"].astype(str) == test)
        & (s["metric"].astype(str) == metric)
    ]
    by = _text(r.get("by"))

    def one(variant: str, scenario: str) -> float:
        hit = s[(s["variant"].astype(str) == variant) & (s["scenario"].astype(str) == scenario)]
        col = "centre" if "centre" in hit.columns else "mean"
        return float(hit[col].iloc[0]) if len(hit) == 1 else np.nan

    treat, base = _text(r.get("treatment")), _text(r.get("baseline"))
    if by == "scenario":
        return one(_text(r.get("variant")), treat), one(_text(r.get("variant")), base)
    if by == "variant":
        return one(treat, _text(r.get("scenario"))), one(base, _text(r.get("scenario")))
    return np.nan, np.nan
