"""A seed report's published table beside a campaign's results (e.g. seed 003's CNI ranking).

A config's ``report.vs_seed`` section maps the seed's CNIs, paths and measures onto this
experiment's variants, scenarios and tool:test:metric (:mod:`.mapping`; the seed-003 campaign
names each choice in comments). The ``vs_seed`` rule then writes

- ``processed/<exp>/vs_seed.csv``: one row per (CNI, path, measure): the seed's value and its ratio
  to its own baseline path, ours with its interval and our ratio to our baseline with its
  interval, the ranks of the CNIs in each source and whether the rankings agree (:mod:`.table`);
- ``processed/<exp>/figures/vs_seed.{png,svg,pdf}``: per measure and path, each CNI's ratio to the
  baseline in the seed and here (:mod:`.figure`);

and the ``vs_seed`` notebook puts the table and :func:`markdown` (where the ranking agrees and where
not, :mod:`.words`) in the report. The seed's numbers are read from its reference tables
(``raw/seed-cni-report``), never typed into code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .mapping import Measure, SeedMapping, published
from .table import COLUMNS, STATUSES, VERDICTS, pairs, vs_seed_table
from .words import headline_table, markdown, sentences, summary_sentence

__all__ = [
    "COLUMNS",
    "STATUSES",
    "VERDICTS",
    "Measure",
    "SeedMapping",
    "build",
    "headline_table",
    "markdown",
    "pairs",
    "published",
    "read",
    "sentences",
    "summary_sentence",
    "vs_seed_table",
    "write",
]


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()


def build(vs_seed: Mapping[str, Any] | SeedMapping, processed_dir: str | Path) -> pd.DataFrame:
    """The comparison table of ``processed_dir`` (its ``summary.csv`` and ``ratios.csv``) against the
    seed's published tables that ``vs_seed`` (a config's ``report.vs_seed``) names."""
    m = vs_seed if isinstance(vs_seed, SeedMapping) else SeedMapping.from_config(vs_seed)
    d = Path(processed_dir)
    return vs_seed_table(m, published(m.published), _csv(d / "summary.csv"), _csv(d / "ratios.csv"))


def write(vs: pd.DataFrame, path: str | Path) -> Path:
    """Write the table (atomically: a half-written file never has the final name)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    vs.to_csv(tmp, index=False)
    tmp.replace(p)
    return p


def read(path: str | Path) -> pd.DataFrame:
    """``vs_seed.csv`` as written (empty scenario cells stay empty strings)."""
    df = pd.read_csv(path, keep_default_na=True)
    for c in ("scenario", "seed_cni", "variant", "interval", "unit", "better"):
        if c in df.columns:
            df[c] = df[c].fillna("").astype(str)
    if "rank_agrees" in df.columns:
        df["rank_agrees"] = (
            df["rank_agrees"].map({True: True, False: False, "True": True, "False": False}).astype("boolean")
        )
    return df
