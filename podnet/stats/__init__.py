"""Statistics stage: tidy table -> summary.csv, ratios.csv, planning.csv, within_run.csv.

Entry points: :func:`summarize`, :func:`compare`, :func:`plan`,
:func:`cases_needing_more`, :func:`within_run` and :func:`run`. Methods and
formulas: ``podnet/stats/METHODS.md``; defaults: :data:`DEFAULTS`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

#: the methods text (markdown) shown by the report notebook
METHODS_PATH = Path(__file__).with_name("METHODS.md")

#: entry point -> its module, imported on first use: a process that needs one statistic (a
#: notebook's sentences, the noise floor) does not load every module and scipy.stats with them
_WHERE = {
    "write_csv": "_data",
    "run": "pipeline",
    "PLAN_COLUMNS": "planning",
    "cases_needing_more": "planning",
    "plan": "planning",
    "RATIO_COLUMNS": "ratios",
    "compare": "ratios",
    "DEFAULTS": "settings",
    "Settings": "settings",
    "resolve": "settings",
    "SUMMARY_COLUMNS": "summary",
    "summarize": "summary",
    "WITHIN_COLUMNS": "within",
    "within_run": "within",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
