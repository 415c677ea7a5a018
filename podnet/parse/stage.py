"""Parse stage: raw outputs + sidecars -> tidy rows, interval rows and failed runs.

Inputs: files under ``raw/<experiment>/`` (see :mod:`podnet.parse.raw`).
Outputs: ``tidy`` (:data:`podnet.parse.tidy.TIDY_COLUMNS`), ``intervals``
(:data:`podnet.parse.tidy.INTERVAL_COLUMNS`) and ``failed`` (:data:`podnet.parse.tidy.FAILED_COLUMNS`).
A file that cannot be parsed becomes a row of ``failed`` with the reason; it
never stops the others. Raw files are parsed in shards (a stable hash of the
path picks the shard) so adding one file re-parses one shard.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from podnet import tools as adapters
from podnet.parse.cost import cost_measurements
from podnet.parse.decode import HEAD_BYTES, DecodeError, decode, iter_text, read_head, unpaste
from podnet.parse.disturbed import split_disturbed
from podnet.parse.parsed import Parsed
from podnet.parse.raw import (
    BadEntry,
    SidecarError,
    display_path,
    entry_problem,
    read_sidecar,
    run_id,
    scan_raw_dir,
    sha256,
)
from podnet.parse.shards import shard_entries, shard_files, shard_of  # noqa: F401 (re-exported)
from podnet.parse.tidy import (
    FAILED_COLUMNS,
    INTERVAL_COLUMNS,
    ParseResult,
    coerce,
    empty_tidy,
)
from podnet.parse.underload import LOAD, PROBE, check_load
from podnet.tools.base import Adapter, Incomplete, ParseError, last_line_complete
from podnet.tools.units import param_number

#: files bigger than this are parsed line by line when their adapter can (``parse_lines``)
STREAM_BYTES = 32 * 1024 * 1024


def read_text(path: Path | str) -> str:
    """A raw file's text (:func:`podnet.parse.decode.decode`); :class:`ParseError` for empty or binary files."""
    try:
        return decode(Path(path).read_bytes())
    except DecodeError as exc:
        raise ParseError(str(exc)) from None


def choose_adapter(head: str, tool: str | None = None) -> Adapter:
    """The adapter for an output whose first bytes are ``head``: ``tool`` if given, else detected.

    A forced ``tool`` on output that is plainly another tool's (that tool recognises it,
    the forced one does not) is a :class:`ParseError`, not a relabelled run.
    """
    if not tool:
        return adapters.detect(head)
    adapter = adapters.get(tool)
    mine = adapter.sniff(head)
    best, other = max(
        ((a.sniff(head), n) for n, a in adapters.all_adapters().items() if n != tool), default=(0, "")
    )
    if mine <= 0 and best >= 0.5:
        raise ParseError(f"tool {tool!r} was asked for, but this output is {other}'s (and not {tool}'s)")
    return adapter


def complete_lines(text: str, adapter: Adapter | None = None) -> tuple[str, str]:
    """``text`` without a last line that has no newline and may be cut, and that line.

    Tools end every line they print with a newline; an output that stops inside a
    line was cut, and its last figure may have lost digits (``27685.76`` -> ``2``).
    A last line that is whole by :func:`~podnet.tools.base.last_line_complete`
    (the final line of the tool's format, whole: outputs pasted without their last newline) is
    kept, with the newline added; a last line of only blanks is returned as the cut.
    """
    if text.endswith("\n") or text.lstrip().startswith(("{", "[")):
        return text, ""  # JSON is self-delimiting: a cut document does not load
    head, _, last = text.rpartition("\n")
    if last_line_complete(last, adapter.final_line if adapter is not None else None):
        return text + "\n", ""
    return (head + "\n" if head else ""), last[-40:]


def parse_text(
    text: str,
    tool: str | None = None,
    *,
    excerpt: bool = False,
    command: str | None = None,
    excerpt_lines: int | None = None,
) -> tuple[Adapter, ParseResult]:
    """Parse one output with the named adapter, or the detected one.

    An :class:`~podnet.tools.base.Incomplete` output is an error unless ``excerpt``
    (the sidecar says it was pasted as an excerpt on purpose); then its partial
    result is returned with ``info["excerpt"] = True``, provided it has the sidecar's
    ``excerpt_lines`` result lines when the sidecar gives that count.
    """
    text, pasted = unpaste(text)
    adapter = choose_adapter(text[:HEAD_BYTES], tool)
    text, cut = complete_lines(text, adapter)
    _no_repeated_lines(text)
    where = f" (the output ends inside a line, {cut!r}: cut off?)" if cut else ""
    try:
        result = adapter.parse(text)
        if command:
            adapter.complete_for(result, _command_text(command))
        if cut:
            # every tool ends its lines with a newline: a last line without one was cut, and what
            # the cut took (an out-of-order count, a later stream) may change the numbers
            # (not an Incomplete: an excerpt pasted on purpose ends its lines too)
            raise ParseError(f"{adapter.name} output ends inside a line ({cut!r}): cut off")
        if pasted:
            result.info["unpasted"] = pasted
        return adapter, result
    except Incomplete as exc:
        if excerpt and exc.partial is not None and not cut:
            return adapter, _mark_excerpt(exc.partial, str(exc), excerpt_lines)
        raise Incomplete(f"{exc}{where}", exc.partial) from None
    except ParseError as exc:
        raise ParseError(f"{exc}{where}") from None


def _no_repeated_lines(text: str) -> None:
    """A result line printed twice in a row is a spliced or corrupted file: tools never do that."""
    prev = None
    for n, line in enumerate(text.split("\n"), start=1):
        if line == prev and any(c.isdigit() for c in line):
            raise ParseError(
                f"line {n} repeats the line before it ({line.strip()[:60]!r}): a tool never prints the same "
                "result line twice in a row; the file was corrupted or spliced"
            )
        prev = line


def _command_text(command: Any) -> str:
    return " ".join(map(str, command)) if isinstance(command, list) else str(command)


def _mark_excerpt(partial: ParseResult, reason: str, lines: int | None = None) -> ParseResult:
    if lines is not None:
        seen = partial.info.get("excerpt_lines")
        if seen is None:
            raise ParseError(
                f"the sidecar gives excerpt_lines: {lines}, but this excerpt's lines are not counted"
            )
        if seen != lines:
            raise ParseError(
                f"the excerpt has {seen} result lines, the sidecar says {lines} were pasted: cut off or spliced"
            )
    partial.info["excerpt"] = True
    partial.info["excerpt_reason"] = reason
    return partial


def parse_path(
    path: Path | str,
    tool: str | None = None,
    *,
    excerpt: bool = False,
    command: str | None = None,
    excerpt_lines: int | None = None,
) -> tuple[Adapter, ParseResult]:
    """Read and parse one raw file; big files stream when the adapter can, in bounded memory."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size <= STREAM_BYTES:
            return parse_text(
                read_text(path), tool, excerpt=excerpt, command=command, excerpt_lines=excerpt_lines
            )
        adapter = choose_adapter(read_head(path), tool)
    except DecodeError as exc:
        raise ParseError(str(exc)) from None
    lines = getattr(adapter, "parse_lines", None)
    if lines is None:
        return parse_text(
            read_text(path), adapter.name, excerpt=excerpt, command=command, excerpt_lines=excerpt_lines
        )
    try:
        result = lines(iter_text(path))
        if command:
            adapter.complete_for(result, _command_text(command))
        return adapter, result
    except DecodeError as exc:
        raise ParseError(str(exc)) from None
    except Incomplete as exc:
        if not excerpt or exc.partial is None:
            raise
        return adapter, _mark_excerpt(exc.partial, str(exc), excerpt_lines)


def _first(*values: Any) -> Any:
    for v in values:
        if v is not None and v != "":
            return v
    return None


def sweep_columns(sweep: Any) -> dict[str, Any]:
    """The tidy ``sweep``, ``sweep_param`` and ``sweep_value`` of a sidecar's ``sweep`` (a number in SI
    units, :func:`podnet.tools.units.param_number`); empty when the run is not a sweep point."""
    if not isinstance(sweep, dict):
        return {"sweep": "", "sweep_param": "", "sweep_value": float("nan")}
    param = str(sweep["param"])
    return {
        "sweep": str(sweep["test"]),
        "sweep_param": param,
        "sweep_value": param_number(param, sweep["value"]),
    }


def result_rows(
    adapter: Adapter,
    result: ParseResult,
    meta: dict[str, Any],
    *,
    experiment: str,
    run: str,
    raw_path: str,
) -> tuple[list[dict], list[dict]]:
    """Tidy rows and interval rows of one parsed run, filled from its sidecar (with the run's CPU
    cost per bit or transaction, :mod:`podnet.parse.cost`)."""
    result.measurements = [*result.measurements, *cost_measurements(result, meta)]
    source = "reference" if str(meta.get("kind", "measured")) == "reference" else "measured"
    excerpt = bool(result.info.get("excerpt", False))
    launch = meta.get("launch")
    launch_id = str(launch.get("id") or "") if isinstance(launch, dict) else ""
    sweep = sweep_columns(meta.get("sweep"))
    seq = meta.get("round_seq")
    place = str((meta.get("cpus") or {}).get("placement") or "")  # where its processes ran
    flags = {"round_seq": seq if seq is not None else pd.NA, "disturbed": meta.get("disturbed") is True}
    flags["placement"] = place
    test_of = adapter.tidy_tests(meta.get("test"), result)  # once per file (Adapter.tidy_tests)
    rows = []
    for m in result.measurements:
        rows.append(
            {
                "experiment": experiment,
                "variant": _first(m.variant, meta.get("variant")),
                "scenario": _first(m.scenario, meta.get("scenario")),
                "tool": _first(m.tool, adapter.name),
                # test is a label: the sidecar's name wins over what the adapter infers (a measurement's
                # own test only where its adapter says so: Adapter.tidy_tests)
                "test": _first(test_of(m.test), meta.get("test"), result.test, ""),
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
                "excerpt": excerpt,
                "launch_id": launch_id,
                **sweep,
                **flags,
                **({"pod": m.pod} if m.pod is not None else {}),
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


class Disturbed(ParseError):
    """A run the launcher judged disturbed and re-ran (sidecar ``status: disturbed``): never a value;
    listed in disturbed_runs.csv (:mod:`podnet.parse.disturbed`), not among the failed runs."""


def check_run(raw: Path, meta: dict[str, Any]) -> None:
    """What the sidecar says about the run before its output is read: launch status and sha256."""
    if meta.get("warmup") is True:
        raise ParseError("a warm-up run (sidecar warmup: true): not counted, so never tidy rows")
    if str(meta.get("status", "ok")) == "disturbed":
        raise Disturbed(str(meta.get("error") or "disturbed: re-run in its round"))
    if str(meta.get("status", "ok")) == "failed":
        raise ParseError(f"the run failed when it was launched: {meta.get('error') or 'no reason recorded'}")
    if "sha256" in meta and meta["sha256"] != sha256(raw):
        raise ParseError("raw file changed after it was recorded (sha256 differs from the sidecar's)")


def parse_run(raw: Path, raw_dir: Path, experiment: str) -> tuple[list[dict], list[dict]]:
    """Parse one raw file with its sidecar. Raises ParseError/SidecarError with the reason."""
    why = entry_problem(raw)
    if why:
        raise ParseError(why)
    meta = read_sidecar(raw)
    return parse_file(raw, meta, experiment=experiment, run=run_id(raw, raw_dir))


def parse_file(
    path: Path, meta: dict[str, Any], *, experiment: str, run: str, tool: str | None = None
) -> tuple[list[dict], list[dict]]:
    """Check, read, parse (``tool`` or the sidecar's, else detected) and tabulate one raw file."""
    check_run(path, meta)
    paired = isinstance(meta.get("load"), dict)  # a latency-under-load run: its rows get a role
    load = check_load(path, meta) if paired else None
    adapter, result = parse_path(
        path,
        tool or meta.get("tool"),
        excerpt=bool(meta.get("excerpt")),
        command=meta.get("command"),
        excerpt_lines=meta.get("excerpt_lines"),
    )
    if not result.measurements:
        raise ParseError(f"{adapter.name} output held no measurement")
    rows, intervals = result_rows(
        adapter, result, meta, experiment=experiment, run=run, raw_path=display_path(path)
    )
    if not paired:
        return rows, intervals
    loaded, load_intervals = _load_rows(*load, meta, experiment, run) if load is not None else ([], [])
    return [{**r, "role": PROBE} for r in rows] + loaded, intervals + load_intervals


def _load_rows(
    path: Path, rec: dict[str, Any], meta: dict[str, Any], experiment: str, run: str
) -> tuple[list[dict], list[dict]]:
    """The tidy rows (role ``load``) of a latency-under-load run's load output (checked by
    :func:`podnet.parse.underload.check_load`): the same run, its own tool; no CPU cost (the run's
    interference record is the probe's window) and its interval rows (raw_path: the load's file)."""
    try:
        adapter, result = parse_path(path, str(rec.get("tool") or "iperf3"), command=rec.get("command"))
    except ParseError as exc:
        raise ParseError(f"the load output {path.name} is incomplete or unparsable: {exc}") from None
    if not result.measurements:
        raise ParseError(f"the load output {path.name} held no measurement")
    bare = {k: v for k, v in meta.items() if k not in ("interference", "load")}
    rows, intervals = result_rows(
        adapter, result, bare, experiment=experiment, run=run, raw_path=display_path(path)
    )
    return [{**r, "role": LOAD} for r in rows], intervals


def failure(experiment: str, path: Path | str, exc: BaseException, tool: str = "") -> dict[str, str]:
    """A failed_runs.csv row: the file, the adapter, the exception type and a reason."""
    if isinstance(exc, KeyError) and exc.args:
        reason = str(exc.args[0])
    elif isinstance(exc, (ParseError, SidecarError, DecodeError)):
        reason = str(exc)
    elif isinstance(exc, OSError):
        reason = f"cannot read the file: {exc.strerror or exc}"
    else:
        # a parser bug: say where, so it can be fixed; the run is still only this file's failure
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        reason = f"parser error {type(exc).__name__}{where}: {exc}"
    return {
        "experiment": experiment,
        "raw_path": display_path(path),
        "tool": tool,
        "error": type(exc).__name__,
        "reason": reason,
    }


def _tool_of(path: Path) -> str:
    try:
        return str(read_sidecar(path).get("tool") or "")
    except Exception:  # noqa: BLE001 (only a label for the failure row)
        return ""


def parse_files(files: Iterable[Path | str | BadEntry], raw_dir: Path | str, experiment: str) -> Parsed:
    """Parse many raw files; failures (and :class:`BadEntry` items) are collected, never raised."""
    raw_dir = Path(raw_dir)
    rows: list[dict] = []
    intervals: list[dict] = []
    failed: list[dict] = []
    for f in files:
        if isinstance(f, BadEntry):
            failed.append({**failure(experiment, f.path, ParseError(f.reason)), "error": "BadEntry"})
            continue
        f = Path(f)
        try:
            r, i = parse_run(f, raw_dir, experiment)
        except Exception as exc:  # noqa: BLE001 (every failure is this file's, never the stage's)
            failed.append(failure(experiment, f, exc, _tool_of(f)))
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


def error_fraction_problem(fraction: float, max_error_fraction: float) -> str:
    """Why a run with this error fraction is failed under ``parse.max_error_fraction``."""
    return (
        f"{fraction:.2%} of the requests were errors (non-2xx responses or socket errors; "
        f"error_fraction {fraction:.4g} > parse.max_error_fraction {float(max_error_fraction):g}): "
        "the run measured a service answering with errors"
    )


def apply_error_threshold(parsed: Parsed, max_error_fraction: float) -> Parsed:
    """Runs whose ``error_fraction`` (HTTP benchmarks: non-2xx responses and socket errors) is
    above ``max_error_fraction`` (config ``parse.max_error_fraction``; default 0, any error) become
    failed runs with that reason: a benchmark of a service that answered with errors measured the
    errors, not the service. Their tidy and interval rows go; the rest is untouched."""
    t = parsed.tidy
    if not len(t):
        return parsed
    ef = t[t["metric"] == "error_fraction"]
    bad = ef[ef["value"].astype(float) > float(max_error_fraction)]
    if bad.empty:
        return parsed
    rows = []
    for _, r in bad.drop_duplicates("run_id").iterrows():
        frac = float(r["value"])
        rows.append(
            {
                "experiment": r["experiment"],
                "raw_path": r["raw_path"],
                "tool": r["tool"],
                "error": "ErrorFraction",
                "reason": error_fraction_problem(frac, max_error_fraction),
            }
        )
    ids = set(bad["run_id"])
    return Parsed(
        tidy=t[~t["run_id"].isin(ids)].reset_index(drop=True),
        intervals=parsed.intervals[~parsed.intervals["run_id"].isin(ids)].reset_index(drop=True),
        failed=pd.concat([parsed.failed, pd.DataFrame(rows, columns=FAILED_COLUMNS)], ignore_index=True),
    )


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
    return split_disturbed(
        Parsed(
            tidy=t.reset_index(drop=True),
            intervals=i.reset_index(drop=True),
            failed=f.reset_index(drop=True),
        )
    )


def parse_experiment(raw_dir: Path | str, experiment: str, ignore: list[str] | None = None) -> Parsed:
    """Parse every raw file of an experiment in one go (no shards): for tests and small sets."""
    good, bad = scan_raw_dir(raw_dir, ignore)
    return split_disturbed(parse_files([*good, *bad], raw_dir, experiment))
