"""Statistics stage: tidy table -> summary.csv, ratios.csv, planning.csv, within_run.csv.

Entry points: :func:`summarize`, :func:`compare`, :func:`plan`,
:func:`cases_needing_more`, :func:`within_run` and :func:`run`. Methods and
formulas: ``podnet/stats/METHODS.md``; defaults: :data:`DEFAULTS`.
"""

from __future__ import annotations

from pathlib import Path

from ._data import write_csv
from .pipeline import run
from .planning import PLAN_COLUMNS, cases_needing_more, plan
from .ratios import RATIO_COLUMNS, compare
from .settings import DEFAULTS, Settings, resolve
from .summary import SUMMARY_COLUMNS, summarize
from .within import WITHIN_COLUMNS, within_run

#: the methods text (markdown) shown by the report notebook
METHODS_PATH = Path(__file__).with_name("METHODS.md")

__all__ = [
    "DEFAULTS",
    "METHODS_PATH",
    "PLAN_COLUMNS",
    "RATIO_COLUMNS",
    "SUMMARY_COLUMNS",
    "Settings",
    "WITHIN_COLUMNS",
    "cases_needing_more",
    "compare",
    "plan",
    "resolve",
    "run",
    "summarize",
    "within_run",
    "write_csv",
]
