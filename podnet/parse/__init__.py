"""The parse stage: raw outputs + sidecars -> tidy rows, interval rows and failed runs.

Inputs: files under ``raw/<experiment>/`` (:mod:`podnet.parse.raw`). Outputs: ``tidy``,
``intervals`` and ``failed`` (:mod:`podnet.parse.tidy`). The stage's functions live in
:mod:`podnet.parse.stage` and are importable from here; importing a light part
(``podnet.parse.shards``, ``podnet.parse.raw``) does not import them (nor pandas), which the
workflow's many short processes rely on (podnet/config/lean.py).
"""

from __future__ import annotations

from typing import Any

#: names of :mod:`podnet.parse.stage` importable from ``podnet.parse``
_STAGE = [
    "Adapter",
    "BadEntry",
    "DecodeError",
    "FAILED_COLUMNS",
    "HEAD_BYTES",
    "INTERVAL_COLUMNS",
    "Incomplete",
    "ParseError",
    "ParseResult",
    "Parsed",
    "STREAM_BYTES",
    "SidecarError",
    "_command_text",
    "_first",
    "_mark_excerpt",
    "_no_repeated_lines",
    "_tool_of",
    "adapters",
    "apply_error_threshold",
    "check_run",
    "choose_adapter",
    "coerce",
    "combine",
    "complete_lines",
    "decode",
    "display_path",
    "empty_tidy",
    "entry_problem",
    "error_fraction_problem",
    "failure",
    "iter_text",
    "last_line_complete",
    "parse_experiment",
    "parse_file",
    "parse_files",
    "parse_path",
    "parse_run",
    "parse_text",
    "read_head",
    "read_sidecar",
    "read_text",
    "result_rows",
    "run_id",
    "scan_raw_dir",
    "sha256",
    "shard_entries",
    "shard_files",
    "shard_of",
    "unpaste",
    "write_parsed",
]


def __getattr__(name: str) -> Any:
    if name in _STAGE:
        from podnet.parse import stage

        return getattr(stage, name)
    raise AttributeError(f"module 'podnet.parse' has no attribute {name!r}")
