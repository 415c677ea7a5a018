"""A seed report's published table beside a campaign's results (e.g. seed 003's CNI ranking).

A config's ``report.vs_seed`` section maps the seed's CNIs, paths and measures onto this
experiment's variants, scenarios and tool:test:metric (:mod:`.mapping`; the seed-003 campaign
names each choice in comments). The ``vs_seed`` rule then writes

- ``processed/<exp>/vs_seed.csv``: one row per (CNI, path, measure): the seed's value and its ratio
  to its own baseline path, ours with its interval and our ratio to our baseline with its
  interval, the seed's rank, our tie group and letters from ``ranking.csv`` and the group's
  verdict (:mod:`.table`);
- ``processed/<exp>/vs_seed_orders.csv``: every order the seed states between two CNIs, judged by
  the paired ratio of their counterparts in ``ranking.csv``: agrees, contradicts, gap not
  reproduced, tie (the seed cannot separate them: ``report.vs_seed.seed_cv`` or
  ``seed_tie_margin``) or inconclusive here (:mod:`.orders`);
- ``processed/<exp>/figures/vs_seed.{png,svg,pdf}``: per measure and path, each CNI's ratio to the
  baseline in the seed and here (:mod:`.figure`);

- ``processed/<exp>/vs_seed_claims.csv``: each of the seed's claims (``report.vs_seed.claims``: a
  published cell or a stated conclusion as a ratio over its baseline, a scenario such as host-host
  from ``ratios.csv`` or a variant from ``variants.csv``) with its verdict (:mod:`.claims`);

and the ``vs_seed`` notebook puts the claims (:mod:`.verdicts`: the count of verdicts, then each
claim), the table and :func:`markdown` (where the ranking agrees and where not, :mod:`.words`) in
the report. ``make seeds`` gathers every seed campaign's claims and verdict counts into
``processed/seeds/`` (:mod:`.seeds`). The seed's numbers are read from its reference tables
(``raw/seed-cni-report``), never typed into code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from podnet.stats import write_csv

from .claims import CLAIM_COLUMNS, CLAIM_VERDICTS, claims_table, judge, seed_values, uncovered
from .mapping import Measure, Note, SeedMapping, published
from .notebook import no_ranking, ranking_parts
from .orders import ORDER_COLUMNS, orders_table, shown, verdict
from .table import COLUMNS, STATUSES, VERDICTS, vs_seed_table
from .verdicts import claims_shown, claims_view, count_sentence, headline, read_claims, verdict_counts
from .words import headline_table, markdown, sentences, summary_sentence

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_VERDICTS",
    "COLUMNS",
    "ORDER_COLUMNS",
    "STATUSES",
    "VERDICTS",
    "Measure",
    "Note",
    "SeedMapping",
    "build",
    "build_claims",
    "build_orders",
    "claims_shown",
    "claims_view",
    "claims_table",
    "count_sentence",
    "headline",
    "headline_table",
    "judge",
    "markdown",
    "no_ranking",
    "orders_table",
    "published",
    "ranking_parts",
    "read",
    "read_claims",
    "read_orders",
    "read_summary",
    "seed_values",
    "sentences",
    "shown",
    "summary_sentence",
    "uncovered",
    "verdict",
    "verdict_counts",
    "vs_seed_table",
    "write",
]


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()


def _mapping(vs_seed: Mapping[str, Any] | SeedMapping) -> SeedMapping:
    return vs_seed if isinstance(vs_seed, SeedMapping) else SeedMapping.from_config(vs_seed)


def build(vs_seed: Mapping[str, Any] | SeedMapping, processed_dir: str | Path) -> pd.DataFrame:
    """The comparison table of ``processed_dir`` (its ``summary.csv``, ``ratios.csv`` and
    ``ranking.csv``) against the seed's published tables that ``vs_seed`` (a config's
    ``report.vs_seed``) names."""
    m = _mapping(vs_seed)
    d = Path(processed_dir)
    return vs_seed_table(
        m, published(m.published), _csv(d / "summary.csv"), _csv(d / "ratios.csv"), _csv(d / "ranking.csv")
    )


def build_orders(
    vs_seed: Mapping[str, Any] | SeedMapping, processed_dir: str | Path, table: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every order the seed states between two CNIs, judged by ``processed_dir/ranking.csv``
    (:func:`.orders.orders_table`); ``table``: :func:`build`'s, when already built."""
    m = _mapping(vs_seed)
    vs = build(m, processed_dir) if table is None else table
    return orders_table(vs, _csv(Path(processed_dir) / "ranking.csv"), m)


def build_claims(vs_seed: Mapping[str, Any], processed_dir: str | Path) -> pd.DataFrame:
    """Each claim of ``vs_seed`` (a config's ``report.vs_seed``) judged by ``processed_dir``'s
    ``ratios.csv`` and ``variants.csv``, with ``summary.csv`` and ``disturbed_runs.csv`` saying why
    a claim has no ratio or interval (:func:`.claims.claims_table`)."""
    d = Path(processed_dir)
    cfg = dict(vs_seed)
    tie = SeedMapping.tie_margin_of_config(cfg)
    return claims_table(
        cfg.get("claims") or [],
        seed_values(cfg.get("seed_sources") or []),
        _csv(d / "ratios.csv"),
        _csv(d / "variants.csv"),
        tie,
        str(cfg.get("seed", "seed")),
        _csv(d / "summary.csv"),
        _csv(d / "disturbed_runs.csv"),
    )


def write(vs: pd.DataFrame, path: str | Path) -> Path:
    """Write the table (atomically: a half-written file never has the final name)."""
    return write_csv(vs, path)


def read(path: str | Path) -> pd.DataFrame:
    """``vs_seed.csv`` as written (empty scenario cells stay empty strings)."""
    df = pd.read_csv(path, keep_default_na=True)
    for c in (
        "scenario",
        "seed_cni",
        "variant",
        "interval",
        "unit",
        "better",
        "letters_ours",
        "order_ours",
        "note",
    ):
        if c in df.columns:
            df[c] = df[c].fillna("").astype(str)
    return df


def read_summary(path: str | Path) -> pd.DataFrame:
    """``summary.csv`` (our values, for :func:`.verdicts.claims_view`); empty when missing."""
    return _csv(Path(path))


def read_orders(path: str | Path) -> pd.DataFrame:
    """``vs_seed_orders.csv`` as written (text cells stay text, empty ones empty strings)."""
    p = Path(path)
    if not p.exists() or not p.stat().st_size:
        return pd.DataFrame(columns=ORDER_COLUMNS)
    df = pd.read_csv(p)
    for c in ("scenario", "a", "b", "seed_a", "seed_b", "relation", "ours", "status", "note", "seed_order"):
        if c in df.columns:
            df[c] = df[c].fillna("").astype(str)
    return df
