"""The adaptive launcher's account of a launch: which primary comparisons met their precision target.

An adaptive launch writes ``raw/<experiment>/<variant>/_adaptive/<launch_id>.json`` (the
``_adaptive`` directory is not read as tool output by the parse stage). Its shape is
:data:`ACCOUNT_SCHEMA`; :func:`read_accounts` flattens any number of them into one table
(``processed/<experiment>/adaptive.csv``, one row per judged comparison or case), which the report's
findings put into words (:func:`podnet.report.findings.adaptive_markdown`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

ACCOUNT_VERSION = 1

#: why a comparison (or case) ended as it did
REASONS = ("met", "budget spent", "max_repeats reached", "failed runs", "interrupted", "launch error")

_NUM = {"type": ["number", "null"]}
_ITEM = {
    "type": "object",
    "required": ["scenario", "tool", "test", "metric", "rel_half_width", "target_rel_half_width", "n"]
    + ["status", "reason"],
    "properties": {
        "by": {"enum": ["scenario", "case"]},
        "baseline": {"type": ["string", "null"]},
        "treatment": {"type": ["string", "null"]},
        "scenario": {"type": "string"},
        "tool": {"type": "string"},
        "test": {"type": "string"},
        "metric": {"type": "string"},
        "direction": {"type": ["string", "null"]},
        "streams": _NUM,
        "interval": {"enum": ["paired", "unpaired", ""]},
        "ratio": _NUM,
        "low": _NUM,
        "high": _NUM,
        "rel_half_width": _NUM,
        "target_rel_half_width": {"type": "number"},
        "n": _NUM,
        "n_needed": _NUM,
        "status": {"enum": ["met", "unmet"]},
        "reason": {"enum": list(REASONS)},
        "cases": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    },
}

#: JSON schema of one account file
ACCOUNT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["podnet_adaptive", "experiment", "variant", "launch_id", "mode", "items", "stop"]
    + ["runs_launched", "fixed_repeats", "fixed_protocol_runs", "wall_s", "budget_s"],
    "properties": {
        "podnet_adaptive": {"const": ACCOUNT_VERSION},
        "experiment": {"type": "string"},
        "variant": {"type": "string"},
        "launch_id": {"type": "string"},
        "started": {"type": "string"},
        "ended": {"type": "string"},
        "mode": {"enum": ["primary", "cases"], "description": "judged on stats.primary, or each case"},
        "target_rel_half_width": {"type": "number"},
        "max_repeats": {"type": "integer"},
        "budget_s": _NUM,
        "max_runs": {"type": ["integer", "null"]},
        "wall_s": {"type": "number", "description": "seconds from the launch's start to the account"},
        "base_rounds": {"type": "integer"},
        "adaptive_rounds": {"type": "integer"},
        "stop": {"type": "string", "description": "why no further round was started"},
        "cases": {"type": "integer", "description": "cases of the config"},
        "runs_launched": {"type": "integer", "description": "runs this launch started (retries included)"},
        "runs_recorded": {"type": "integer", "description": "attempts raw/ holds for these cases"},
        "fixed_repeats": {"type": "integer"},
        "fixed_protocol_runs": {"type": "integer", "description": "cases x fixed_repeats"},
        "items": {"type": "array", "items": _ITEM},
    },
}

_LAUNCH_KEYS = [
    "experiment",
    "variant",
    "launch_id",
    "ended",
    "mode",
    "stop",
    "wall_s",
    "budget_s",
    "runs_launched",
    "fixed_repeats",
    "fixed_protocol_runs",
]
_ITEM_KEYS = list(_ITEM["properties"])
ACCOUNT_COLUMNS = _LAUNCH_KEYS + [k for k in _ITEM_KEYS if k != "cases"]


def validate(doc: Any, where: str = "account") -> None:
    """Raise ValueError when ``doc`` does not match :data:`ACCOUNT_SCHEMA`."""
    import jsonschema

    errors = list(jsonschema.Draft202012Validator(ACCOUNT_SCHEMA).iter_errors(doc))
    if errors:
        e = errors[0]
        path = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise ValueError(f"{where}: {path}: {e.message}")


def read_accounts(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per item of every account file (launch-level keys repeated), in :data:`ACCOUNT_COLUMNS`."""
    rows = []
    for p in sorted(Path(x) for x in paths):
        doc = json.loads(p.read_text(encoding="utf-8"))
        validate(doc, str(p))
        head = {k: doc.get(k) for k in _LAUNCH_KEYS}
        for item in doc["items"]:
            rows.append({**head, **{k: item.get(k) for k in _ITEM_KEYS if k != "cases"}})
    return pd.DataFrame(rows, columns=ACCOUNT_COLUMNS)


def latest(acc: pd.DataFrame) -> pd.DataFrame:
    """The rows of each variant's most recent launch (by its end time, then its id)."""
    if acc.empty:
        return acc
    order = acc[["variant", "ended", "launch_id"]].astype(str).drop_duplicates()
    last = order.sort_values(["ended", "launch_id"]).groupby("variant").tail(1)["launch_id"]
    return acc[acc["launch_id"].astype(str).isin(set(last))].reset_index(drop=True)


def write_csv(paths: Iterable[str | Path], out: str | Path) -> Path:
    """``adaptive.csv`` from the account files (a header only when there are none)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    read_accounts(paths).to_csv(tmp, index=False)
    tmp.replace(out)
    return out
