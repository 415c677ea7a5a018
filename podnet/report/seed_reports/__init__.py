"""Seed reports checked against their own raw outputs.

A seed report pastes raw tool output and then summarises it (a conclusion table). This module
finds every place where

* a published summary figure disagrees with the raw outputs the pipeline parsed
  (:func:`compare_claims`; claims are transcribed as printed into ``raw/<exp>/published/*.csv``),
* a raw output disagrees with itself: its figures do not follow from each other
  (:func:`consistency_checks`: ab's requests/s = complete requests / time taken, ...), or it names
  another host than the one it was run against (:func:`provenance_checks`: iperf 2's target vs
  its connected peer, ab's ``Benchmarking`` vs ``Server Hostname``, one node described
  differently by qperf ``conf`` blocks).

Tolerances come from the printed precision: a figure printed as ``4.886`` stands for
[4.8855, 4.8865]; two figures agree when their intervals overlap. The ``seed_discrepancies`` rule
writes every check (agreeing ones too) to ``seed_discrepancies.csv``; the notebook
``notebooks/seed_discrepancies.ipynb`` reads that file (:func:`read_checks`, :func:`disagreements`)
and computes nothing.

Modules: :mod:`.printed` (precision, agreement), :mod:`.claims` (published vs raw),
:mod:`.self_checks` (raw vs itself), :mod:`.raw_facts` (what each raw output says, cached).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from podnet.report import md
from podnet.report.seed_reports.claims import (
    compare_claims,
    compare_ratio_claims,
    load_claims,
    load_ratio_claims,
)
from podnet.report.seed_reports.printed import COLUMNS, half_ulp, scalar_lines
from podnet.report.seed_reports.self_checks import consistency_checks, provenance_checks

__all__ = [
    "COLUMNS",
    "compare_claims",
    "compare_ratio_claims",
    "consistency_checks",
    "disagreements",
    "discrepancies",
    "half_ulp",
    "lead",
    "load_claims",
    "load_ratio_claims",
    "provenance_checks",
    "read_checks",
    "scalar_lines",
]

#: the statuses of a check that found nothing wrong
AGREEING = ("agrees", "consistent")


def discrepancies(
    processed_dir: Path | str,
    raw_dir: Path | str,
    published: Iterable[Path | str] | None = None,
    include_agreeing: bool = False,
    cache: Path | str | None = None,
) -> pd.DataFrame:
    """Everything :func:`compare_claims`, :func:`consistency_checks` and :func:`provenance_checks` find.

    ``published`` defaults to ``raw_dir/published/*.csv``. Only disagreements are returned unless
    ``include_agreeing``. ``cache``: the raw outputs' facts read before (a file, not an output;
    :mod:`.raw_facts`), so that one added run is the only raw output read again.
    """
    processed_dir, raw_dir = Path(processed_dir), Path(raw_dir)
    tidy_path = processed_dir / "tidy.parquet"
    tidy = pd.read_parquet(tidy_path) if tidy_path.exists() else pd.read_csv(processed_dir / "tidy.csv")
    failed_path = processed_dir / "failed_runs.csv"
    failed = pd.read_csv(failed_path, dtype=str) if failed_path.exists() else None
    paths = (
        sorted((raw_dir / "published").glob("*.csv")) if published is None else [Path(p) for p in published]
    )
    ratio_paths = [p for p in paths if Path(p).name.startswith("ratios")]
    paths = [p for p in paths if p not in ratio_paths]
    implied = consistency_checks(tidy, keep_numbers=True)  # once: the claims read it too
    parts = [
        compare_claims(load_claims(paths), tidy, failed, implied) if paths else pd.DataFrame(columns=COLUMNS),
        compare_ratio_claims(load_ratio_claims(ratio_paths), tidy)
        if ratio_paths
        else pd.DataFrame(columns=COLUMNS),
        implied[COLUMNS],
        provenance_checks(raw_dir, cache),
    ]
    parts = [p for p in parts if len(p)]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    if not include_agreeing:
        out = disagreements(out)
    return out.reset_index(drop=True)


def disagreements(checks: pd.DataFrame) -> pd.DataFrame:
    """The checks of :func:`discrepancies` that found something (every status but agreeing ones)."""
    return checks[~checks["status"].isin(AGREEING)].reset_index(drop=True)


def read_checks(path: Path | str) -> pd.DataFrame:
    """``seed_discrepancies.csv`` as the rule wrote it: every check, each cell as the text written
    (a published figure keeps its printed digits; an empty cell stays empty)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def lead(experiment: str, claim_files: Iterable[Path | str], found: int) -> str:
    """The notebook's first line (Markdown): the published tables read, by file name
    (:func:`podnet.report.md.text`), and how many discrepancies were found."""
    names = [md.text(Path(p).name) for p in claim_files]
    return (
        f"**{md.text(experiment)}**: {len(names)} published table(s) ({', '.join(names) or 'none'}); "
        f"**{found} discrepancies** found."
    )
