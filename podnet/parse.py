"""Parse stage: raw outputs + sidecars -> tidy rows, interval rows and failed runs.

Inputs: files under ``raw/<experiment>/`` (see :mod:`podnet.raw`).
Outputs: ``tidy`` (:data:`podnet.tidy.TIDY_COLUMNS`), ``intervals``
(:data:`podnet.tidy.INTERVAL_COLUMNS`) and ``failed`` (:data:`podnet.tidy.FAILED_COLUMNS`).
A file that cannot be parsed becomes a row of ``failed`` with the reason; it
never stops the others. Raw files are parsed in shards (a stable hash of the
path picks the shard) so adding one file re-parses one shard.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from podnet import adapters
from podnet.adapters.base import Adapter, ParseError
from podnet.raw import SidecarError, find_raw_files, read_sidecar, run_id, sha256
from podnet.tidy import (
    FAILED_COLUMNS,
    INTERVAL_COLUMNS,
    ParseResult,
    coerce,
    empty_tidy,
)


def read_text(path: Path | str) -> str:
    """A raw file's text; :class:`ParseError` for empty, binary or non-UTF-8 files."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise ParseError("empty file: the tool printed nothing (did it run?)")
    if b"\x00" in data[:65536]:
        raise ParseError("binary file (NUL bytes): expected a tool's text or JSON output")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text (byte {exc.start}): expected a tool's text or JSON output") from exc


def parse_text(text: str, tool: str | None = None) -> tuple[Adapter, ParseResult]:
    """Parse one output with the named adapter, or the detected one."""
    adapter = adapters.get(tool) if tool else adapters.detect(text)
    return adapter, adapter.parse(text)


def _first(*values: Any) -> Any:
    for v in values:
        if v is not None and v != "":
            return v
    return None


def result_rows(
    adapter: Adapter,
    result: ParseResult,
    meta: dict[str, Any],
    *,
    experiment: str,
    run: str,
    raw_path: str,
) -> tuple[list[dict], list[dict]]:
    """Tidy rows and interval rows of one parsed run, filled from its sidecar."""
    source = "reference" if str(meta.get("kind", "measured")) == "reference" else "measured"
    rows = []
    for m in result.measurements:
        rows.append(
            {
                "experiment": experiment,
                "variant": _first(m.variant, meta.get("variant")),
                "scenario": _first(m.scenario, meta.get("scenario")),
                "tool": _first(m.tool, adapter.name),
                # test is a label: the sidecar's name wins over what the adapter infers
                "test": _first(m.test, meta.get("test"), result.test, ""),
                # protocol/direction/streams are facts the output states, when it does
                "protocol": _first(m.protocol, result.protocol, meta.get("protocol"), ""),
                "direction": _first(m.direction, result.direction, meta.get("direction"), "forward"),
                "streams": _first(m.streams, result.streams, meta.get("streams"), 1),
                "repeat": _first(meta.get("repeat"), 1),
                "run_id": run,
                "metric": m.metric,
                "value": m.value,
                "unit": m.unit,
                "source": source,
                "raw_path": raw_path,
            }
        )
    intervals = [
        {
            "run_id": run,
            "stream": p.stream,
            "direction": _first(p.direction, result.direction, meta.get("direction"), "forward"),
            "t_start": p.t_start,
            "t_end": p.t_end,
            "omitted": p.omitted,
            "metric": p.metric,
            "value": p.value,
            "unit": p.unit,
            "raw_path": raw_path,
        }
        for p in result.intervals
    ]
    return rows, intervals


def parse_run(raw: Path, raw_dir: Path, experiment: str) -> tuple[list[dict], list[dict]]:
    """Parse one raw file with its sidecar. Raises ParseError/SidecarError with the reason."""
    meta = read_sidecar(raw)
    if str(meta.get("status", "ok")) == "failed":
        raise ParseError(f"the run failed when it was launched: {meta.get('error') or 'no reason recorded'}")
    recorded = meta.get("sha256")
    if recorded and recorded != sha256(raw):
        raise ParseError("raw file changed after it was recorded (sha256 differs from the sidecar's)")
    return parse_file(raw, meta, experiment=experiment, run=run_id(raw, raw_dir))


def parse_file(
    path: Path, meta: dict[str, Any], *, experiment: str, run: str, tool: str | None = None
) -> tuple[list[dict], list[dict]]:
    """Read, parse (``tool`` or the sidecar's, else detected) and tabulate one raw file."""
    adapter, result = parse_text(read_text(path), tool or meta.get("tool"))
    if not result.measurements:
        raise ParseError(f"{adapter.name} output held no measurement")
    return result_rows(adapter, result, meta, experiment=experiment, run=run, raw_path=str(path))


@dataclass
class Parsed:
    """The three tables the parse stage produces."""

    tidy: pd.DataFrame
    intervals: pd.DataFrame
    failed: pd.DataFrame


def parse_files(files: Iterable[Path | str], raw_dir: Path | str, experiment: str) -> Parsed:
    """Parse many raw files; failures are collected, never raised."""
    raw_dir = Path(raw_dir)
    rows: list[dict] = []
    intervals: list[dict] = []
    failed: list[dict] = []
    for f in map(Path, files):
        try:
            r, i = parse_run(f, raw_dir, experiment)
        except (ParseError, SidecarError, KeyError, OSError) as exc:
            tool = ""
            try:
                tool = str(read_sidecar(f).get("tool") or "")
            except SidecarError:
                pass
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            failed.append({"experiment": experiment, "raw_path": str(f), "tool": tool, "reason": reason})
            continue
        rows.extend(r)
        intervals.extend(i)
    tidy = coerce(pd.DataFrame(rows)) if rows else empty_tidy()
    return Parsed(
        tidy=tidy,
        intervals=pd.DataFrame(intervals, columns=INTERVAL_COLUMNS).astype(
            {"t_start": "float64", "t_end": "float64", "value": "float64", "omitted": "bool"}
        ),
        failed=pd.DataFrame(failed, columns=FAILED_COLUMNS),
    )


def shard_of(path: Path | str, raw_dir: Path | str, shards: int) -> int:
    """The shard a raw file is parsed in: a stable hash of its path below raw_dir."""
    rel = Path(path).relative_to(raw_dir).as_posix()
    return zlib.crc32(rel.encode("utf-8")) % shards


def shard_files(raw_dir: Path | str, shards: int, ignore: list[str] | None = None) -> dict[int, list[Path]]:
    """Raw files of an experiment grouped by shard (every shard present, maybe empty)."""
    out: dict[int, list[Path]] = {k: [] for k in range(shards)}
    for f in find_raw_files(raw_dir, ignore):
        out[shard_of(f, raw_dir, shards)].append(f)
    return out


def write_parsed(
    parsed: Parsed, tidy_out: Path | str, intervals_out: Path | str, failed_out: Path | str
) -> None:
    """Write one shard's (or the combined) tables: parquet for tidy/intervals, CSV for failed."""
    for p in (tidy_out, intervals_out, failed_out):
        Path(p).parent.mkdir(parents=True, exist_ok=True)
    parsed.tidy.to_parquet(tidy_out, index=False)
    parsed.intervals.to_parquet(intervals_out, index=False)
    parsed.failed.to_csv(failed_out, index=False)


def combine(tidy_parts: list, interval_parts: list, failed_parts: list) -> Parsed:
    """Concatenate shard outputs into one experiment's tables, in a stable order."""
    tidy = [pd.read_parquet(p) for p in tidy_parts]
    tidy = [t for t in tidy if len(t)]
    t = coerce(pd.concat(tidy, ignore_index=True)) if tidy else empty_tidy()
    t = t.sort_values(
        ["variant", "scenario", "tool", "test", "direction", "repeat", "run_id", "metric"], kind="stable"
    )
    iv = [pd.read_parquet(p) for p in interval_parts]
    iv = [x for x in iv if len(x)]
    i = pd.concat(iv, ignore_index=True) if iv else pd.DataFrame(columns=INTERVAL_COLUMNS)
    fl = [pd.read_csv(p, dtype=str) for p in failed_parts]
    fl = [x for x in fl if len(x)]
    f = pd.concat(fl, ignore_index=True) if fl else pd.DataFrame(columns=FAILED_COLUMNS)
    if len(f):
        f = f.sort_values("raw_path", kind="stable")
    return Parsed(
        tidy=t.reset_index(drop=True), intervals=i.reset_index(drop=True), failed=f.reset_index(drop=True)
    )


def parse_experiment(raw_dir: Path | str, experiment: str, ignore: list[str] | None = None) -> Parsed:
    """Parse every raw file of an experiment in one go (no shards): for tests and small sets."""
    return parse_files(find_raw_files(raw_dir, ignore), raw_dir, experiment)
