"""A seed's claims as the report shows them: the count of verdicts first, then one row a claim.

``vs_seed_claims.csv`` (:mod:`.claims`) is read back with its text cells as text
(:func:`read_claims`), counted by verdict (:func:`verdict_counts`, :func:`count_sentence`, which
:func:`headline` puts before the ranking's summary) and cut to
the columns a reader needs (:func:`claims_shown`): the claim, the seed's value over its baseline, our
ratio with its interval, and the verdict. The ``vs_seed`` notebook calls these; ``make seeds``
(:mod:`.seeds`) counts every seed campaign's verdicts with the same :func:`verdict_counts`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

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

#: the columns :func:`claims_shown` keeps, in order
SHOWN_COLUMNS = [
    "claim",
    "says",
    "seed_value",
    "seed_baseline",
    "seed_ratio",
    "seed_relation",
    "treatment",
    "baseline",
    "measure",
    "ratio",
    "ci_low",
    "ci_high",
    "verdict",
    "reason",
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
    ``seed``: the seed's name (default: the claims' ``seed`` cell, else "the seed")."""
    if seed is None:
        named = claims["seed"].dropna().astype(str) if "seed" in claims.columns else pd.Series(dtype=str)
        seed = str(named.iloc[0]) if len(named) and named.iloc[0] else "the seed"
    counts = verdict_counts(claims)
    if counts.empty:
        return f"No claims of {seed} are judged here (`report.vs_seed.claims` names none)."
    total = int(counts.sum())
    parts = ", ".join(f"{n} {v}" for v, n in counts.items())
    return f"Of {total} claim{'s' if total != 1 else ''} of {seed}: {parts}."


def headline(claims: pd.DataFrame, vs: pd.DataFrame, seed: str | None = None) -> str:
    """The notebook's lead: :func:`count_sentence` of the claims, then, where the seed has a CNI
    ranking here (``vs_seed.csv`` not empty), :func:`.words.summary_sentence` of it."""
    lead = count_sentence(claims, seed)
    return lead if vs.empty else f"{lead}\n\n{summary_sentence(vs)}"


def claims_shown(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims cut to :data:`SHOWN_COLUMNS`, numbers rounded for reading (3 significant figures for
    the seed's values, 3 decimals for ratios), the claim as the index."""
    if claims.empty:
        return pd.DataFrame(columns=SHOWN_COLUMNS).set_index("claim")
    df = claims.reindex(columns=SHOWN_COLUMNS).copy()
    for c in ("seed_value", "seed_baseline"):
        v = pd.to_numeric(df[c], errors="coerce")
        df[c] = [float(f"{x:.3g}") if np.isfinite(x) else np.nan for x in v]
    for c in ("seed_ratio", "ratio", "ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c], errors="coerce").round(3)
    for c in ("says", "seed_relation", "treatment", "baseline", "measure", "verdict", "reason"):
        df[c] = as_text(df[c])
    return df.set_index("claim")
