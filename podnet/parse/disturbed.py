"""disturbed_runs.csv: every run the launcher judged disturbed (:mod:`podnet.launch.spec.disturbance`).

Two kinds, one row per run (:data:`podnet.parse.tidy.DISTURBED_COLUMNS`):

- ``re-run``: sidecar ``status: disturbed``. The run was repeated at once in the same round; this
  attempt is kept on disk but is never a value. The parse shards carry it as a failed row with error
  ``Disturbed``; :func:`split_disturbed` moves it here, out of failed_runs.csv (it did not fail).
- ``kept``: ``status: ok`` with ``disturbed: true`` (no re-run was left in its round). Its values are
  in the tidy table, whose ``disturbed`` column marks them.

The share and threshold come from the run's sidecar (``disturbance``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from podnet.parse.parsed import Parsed
from podnet.parse.raw import SidecarError, read_sidecar
from podnet.parse.tidy import DISTURBED_COLUMNS, DISTURBED_ERROR


def _row(experiment: str, raw_path: str, action: str, meta: dict[str, Any]) -> dict[str, Any]:
    d = meta.get("disturbance") if isinstance(meta.get("disturbance"), dict) else {}
    launch = meta.get("launch") if isinstance(meta.get("launch"), dict) else {}
    return {
        "experiment": experiment,
        "raw_path": raw_path,
        "variant": meta.get("variant"),
        "scenario": meta.get("scenario"),
        "tool": meta.get("tool"),
        "test": meta.get("test"),
        "repeat": meta.get("repeat"),
        "round_seq": meta.get("round_seq"),
        "launch_id": launch.get("id", ""),
        "share": d.get("share"),
        "threshold": d.get("threshold"),
        "action": action,
    }


def _meta(raw_path: str) -> dict[str, Any]:
    try:
        return read_sidecar(raw_path)
    except (SidecarError, OSError):
        return {}


def disturbed_table(parsed: Parsed) -> pd.DataFrame:
    """The disturbed runs of parsed tables whose failed rows still hold the re-run ones."""
    rows = []
    f = parsed.failed
    if len(f):
        for r in f[f["error"] == DISTURBED_ERROR].itertuples():
            rows.append(_row(str(r.experiment), str(r.raw_path), "re-run", _meta(str(r.raw_path))))
    t = parsed.tidy
    if len(t) and "disturbed" in t.columns:
        kept = t[t["disturbed"].astype(bool)].drop_duplicates("run_id")
        for r in kept.itertuples():
            rows.append(_row(str(r.experiment), str(r.raw_path), "kept", _meta(str(r.raw_path))))
    out = pd.DataFrame(rows, columns=DISTURBED_COLUMNS)
    out["repeat"] = pd.to_numeric(out["repeat"], errors="coerce").astype("Int64")
    out["round_seq"] = pd.to_numeric(out["round_seq"], errors="coerce").astype("Int64")
    out["share"] = pd.to_numeric(out["share"], errors="coerce").astype("float64")
    out["threshold"] = pd.to_numeric(out["threshold"], errors="coerce").astype("float64")
    return out.sort_values(["raw_path"], kind="stable").reset_index(drop=True)


def split_disturbed(parsed: Parsed) -> Parsed:
    """``parsed`` with its disturbed runs in ``disturbed`` and the re-run ones out of ``failed``."""
    table = disturbed_table(parsed)
    f = parsed.failed
    failed = f[f["error"] != DISTURBED_ERROR].reset_index(drop=True) if len(f) else f
    return Parsed(tidy=parsed.tidy, intervals=parsed.intervals, failed=failed, disturbed=table)
