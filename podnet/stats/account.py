"""The adaptive launcher's account of a launch: which primary comparisons met their precision target.

An adaptive launch writes ``raw/<experiment>/<variant>/_adaptive/<launch_id>.json`` (the
``_adaptive`` directory is not read as tool output by the parse stage). Its shape is
:func:`account_schema`; :func:`read_accounts` flattens any number of them into one table
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


def account_schema() -> dict[str, Any]:
    """JSON schema of one account file: ``podnet/config/schemas/account.schema.yaml``."""
    from podnet.config.schema import data_schema

    return data_schema("account")


#: why a comparison (or case) ended as it did (the schema's enum of ``items.reason``)
REASONS: tuple[str, ...] = tuple(
    account_schema()["properties"]["items"]["items"]["properties"]["reason"]["enum"]
)

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
_ITEM_KEYS = list(account_schema()["properties"]["items"]["items"]["properties"])
ACCOUNT_COLUMNS = _LAUNCH_KEYS + [k for k in _ITEM_KEYS if k != "cases"]


def validate(doc: Any, where: str = "account") -> None:
    """Raise ValueError when ``doc`` does not match :func:`account_schema`."""
    import jsonschema

    errors = list(jsonschema.Draft202012Validator(account_schema()).iter_errors(doc))
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
