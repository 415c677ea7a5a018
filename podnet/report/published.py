"""What an experiment published, listed from what exists at the end of a run (issue 45: a failed
step never says it published).

``figures/plan.json`` is written before any figure is drawn: it says what is *planned*. The list
written here, ``processed/<experiment>/published.json``, says what *is there*: every figure
(PNG, SVG and PDF), notebook (``.ipynb`` and ``.html``) and table that exists, each file with its
size and sha256, and every planned item that is not there, with the job's log and its last line as
the reason. An item is published only when all its files are there (a figure whose SVG is missing
is not published, its PNG notwithstanding).

Two writers, one function (:func:`write`): the workflow's last rule (``published``, the last input
of ``all``) after a run that succeeded, ``"complete": true``; and the workflow's ``onerror`` hook
after a run that failed, ``"complete": false``, so a list from an earlier run never outlives a
failure (:func:`after_error`; the next run writes it again). Reads JSON and files only: the
``onerror`` hook runs it inside Snakemake.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from podnet.config.lean import FIGURE_NAMES
from podnet.parse.raw import sha256

#: the formats of one figure (``podnet.report.figures.style.FORMATS``; not imported: it loads matplotlib)
FIGURE_FORMATS = ("png", "svg", "pdf")
#: the files of one notebook: executed, and rendered beside it
NOTEBOOK_FORMATS = ("ipynb", "html")
#: the list's file name under ``processed/<experiment>/``
NAME = "published.json"


class Item(TypedDict):
    """One thing a reader opens: a figure (three files), a notebook (two) or a table (one)."""

    kind: str  # "figure", "notebook" or "table"
    name: str  # the figure's or notebook's name, the table's path under processed/<experiment>/
    files: list[str]  # paths as the workflow names them (relative to where it runs, or absolute)
    log: str | None  # the log of the job that writes them


def items(files: Mapping[str, str | None], out: str | Path) -> list[Item]:
    """``files`` (path -> the log of the job that writes it) grouped into what a reader opens:
    ``figures/<name>.png|svg|pdf`` one figure, ``notebooks/<name>.ipynb|html`` one notebook, any
    other file a table; in the order given."""
    grouped: dict[tuple[str, str], Item] = {}
    for path, log in files.items():
        rel = Path(os.path.relpath(path, out))
        stem, ext = rel.stem, rel.suffix.lstrip(".")
        if rel.parent == Path("figures") and ext in FIGURE_FORMATS:
            kind, name = "figure", stem
        elif rel.parent == Path("notebooks") and ext in NOTEBOOK_FORMATS:
            kind, name = "notebook", stem
        else:
            kind, name = "table", rel.as_posix()
        item = grouped.setdefault((kind, name), Item(kind=kind, name=name, files=[], log=log))
        item["files"].append(str(path))
        item["log"] = item["log"] or log
    return list(grouped.values())


def planned_figures(plan: str | Path, figure_log: str) -> tuple[list[Item], dict[str, str]]:
    """The figures ``plan`` (``figures/plan.json``) planned, as items with their files beside it and
    their job's log (``figure_log`` with ``{figure}`` in it), and why each other one was not drawn.
    No plan file (its job did not run): none planned, and no reason."""
    path = Path(plan)
    if not path.is_file():
        return [], {}
    entries = json.loads(path.read_text())
    shown: list[Item] = []
    omitted: dict[str, str] = {}
    for name in FIGURE_NAMES:
        entry = entries.get(name)
        if entry is None:
            continue
        if "planned" in entry or "published" in entry:  # "published": plans written before issue 45
            files = [str(path.parent / f"{name}.{ext}") for ext in FIGURE_FORMATS]
            shown.append(Item(kind="figure", name=name, files=files, log=figure_log.format(figure=name)))
        else:
            omitted[name] = str(entry.get("omitted", ""))
    return shown, omitted


def last_line(log: str | Path, limit: int = 300) -> str:
    """The log's last line that says something (a traceback's last line names the error), cut to
    ``limit`` characters; "" when the log is empty or not there."""
    try:
        lines = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    said = [ln.strip() for ln in lines if ln.strip()]
    return said[-1][:limit] if said else ""


def why_missing(item: Item, missing: list[str], out: str | Path) -> str:
    """Why ``item`` is not published: its missing files, and its job's log when there is one."""
    names = ", ".join(os.path.relpath(f, out) for f in missing)
    log = item["log"]
    if log and Path(log).is_file():
        tail = last_line(log)
        said = f"; its last line: {tail}" if tail else ""
        return f"{names} not there: its job failed, or the files were removed after it (see {os.path.relpath(log, out)}{said})"
    return f"{names} not there: no job of this run made them (the run stopped before, or they were removed)"


def collect(items: list[Item], out: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(published, not published) of ``items``: a published item with each file's path (relative
    to ``out``), bytes and sha256; one that is not with its missing files, its log and why."""
    shown: list[dict[str, Any]] = []
    gone: list[dict[str, Any]] = []
    for item in items:
        missing = [f for f in item["files"] if not Path(f).is_file()]
        head = {"kind": item["kind"], "name": item["name"]}
        if missing:
            log = item["log"]
            gone.append(
                {
                    **head,
                    "missing": [os.path.relpath(f, out) for f in missing],
                    "log": os.path.relpath(log, out) if log and Path(log).is_file() else None,
                    "reason": why_missing(item, missing, out),
                }
            )
            continue
        files = [
            {
                "path": Path(os.path.relpath(f, out)).as_posix(),
                "bytes": Path(f).stat().st_size,
                "sha256": sha256(f),
            }
            for f in item["files"]
        ]
        shown.append({**head, "files": files})
    return shown, gone


def write(
    path: str | Path,
    experiment: str,
    files: Mapping[str, str | None],
    plan: str | Path,
    figure_log: str,
    complete: bool,
) -> dict[str, Any]:
    """Write the published list to ``path`` (``processed/<experiment>/published.json``) from what
    exists now, and return it.

    ``files``: what the experiment publishes besides the planned figures, each with the log of the
    job that writes it (:func:`items` groups them); ``plan``: ``figures/plan.json`` (its planned
    figures are expected, each with ``figure_log.format(figure=name)``); ``complete``: whether the
    run that writes the list succeeded. Paths in the list are relative to its folder."""
    out = Path(path).parent
    figures, omitted = planned_figures(plan, figure_log)
    order = {"figure": 0, "notebook": 1, "table": 2}  # what a reader opens first; stable within a kind
    ordered = sorted(figures + items(files, out), key=lambda i: order.get(i["kind"], 3))
    shown, gone = collect(ordered, out)
    doc: dict[str, Any] = {
        "experiment": experiment,
        "complete": complete,
        "about": (
            "Written from the files there at the end of the run: every figure, notebook and table "
            "that exists (each file with its size and sha256), every planned one that does not, and why. "
            + (
                "The run succeeded: this is its last step."
                if complete
                else "The run FAILED: what is listed as published may be from an earlier run."
            )
        ),
        "published": shown,
        "not_published": gone,
        "figures_not_drawn": omitted,
    }
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)
    return doc


def summary(doc: Mapping[str, Any]) -> str:
    """The list in a few lines: how many of each kind are published, and each item that is not,
    with why (for the job's log and the run's own output)."""
    counts: dict[str, int] = {}
    for item in doc["published"]:
        counts[item["kind"]] = counts.get(item["kind"], 0) + 1
    kinds = ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items()) or "nothing"
    state = "" if doc["complete"] else " (the run failed)"
    lines = [f"{NAME}{state}: published {kinds}"]
    lines += [f"  not published: {g['kind']} {g['name']}: {g['reason']}" for g in doc["not_published"]]
    return "\n".join(lines)


def after_error(
    path: str | Path, experiment: str, files: Mapping[str, str | None], plan: str | Path, figure_log: str
) -> bool:
    """After a failed run (the workflow's ``onerror`` hook): :func:`write` the list from what is
    there now, ``"complete": false``, dated 1970 (older than any input: the next run writes it again;
    the hook also drops Snakemake's record of it, whose input checksums would say nothing changed),
    and its :func:`summary` on standard error, so the run's output says what is not published and
    why. Returns whether it wrote the list; never an error of its own over the run's. Nothing when
    the experiment's folder is not there (the run stopped before making it)."""
    if not Path(path).parent.is_dir():
        return False
    try:
        doc = write(path, experiment, files, plan, figure_log, complete=False)
        os.utime(path, (0, 0))
        print(summary(doc), file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - the run's own error is the one to report
        print(f"{path} not written: {e!r}", file=sys.stderr)
        return False
    return True
