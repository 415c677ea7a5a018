"""Where a notebook finds its experiment's files, wherever it runs.

The report stage's notebooks are executed by papermill in their own output folder
(``processed/<experiment>/notebooks/``) with parameters relative to it (:func:`notebook_params`):
``processed_dir = ".."``, ``raw_dir = "../../../raw/<experiment>"``. So a published notebook names no
machine's path, re-runs where nbval and JupyterLab start it (the notebook's folder), and re-runs in a
copy of ``processed/<experiment>/`` moved anywhere. A published log names its files relative to the
project root (:func:`from_root`). Run by hand from a notebook of ``notebooks/``, a
default such as ``processed/seed-cni-1gbe`` is looked up from the working directory and its parents
(:func:`locate`); a path that is nowhere is an error naming it, never an empty table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class NotFound(FileNotFoundError):
    """An experiment's folder or table that is not where a notebook looked."""


def locate(path: str | os.PathLike[str], what: str = "processed_dir") -> Path:
    """``path`` as given when it exists (absolute, or relative to the working directory), else the
    same relative path under the nearest parent of the working directory that has it; :class:`NotFound`
    naming ``what``, the path and where it was looked for otherwise."""
    p = Path(path)
    if p.exists():
        return p
    if not p.is_absolute():
        here = Path.cwd()
        for parent in here.parents:
            if (parent / p).exists():
                return parent / p
    raise NotFound(
        f"{what} {str(path)!r} does not exist (looked from {Path.cwd()} and its parents): run the "
        "pipeline for this experiment first, or pass the folder's path"
    )


def notebook_params(
    notebook: str | os.PathLike[str],
    paths: Mapping[str, str | os.PathLike[str] | None],
    lists: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Parameters of an executed ``notebook``: each of ``paths`` (and each item of ``lists``, e.g.
    compare's ``compare_with``) relative to the notebook's folder, where papermill runs it."""
    here = os.path.dirname(os.path.abspath(notebook))
    out: dict[str, Any] = {
        k: None if v is None else os.path.relpath(os.path.abspath(v), here) for k, v in paths.items()
    }
    for k, items in (lists or {}).items():
        out[k] = [os.path.relpath(os.path.abspath(v), here) for v in items]
    return out


def from_root(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory, the project root where Snakemake runs a job: how
    a published log names a file (a path outside the root starts with ``..``, never with ``/``)."""
    return os.path.relpath(os.path.abspath(path))


def locate_raw(raw_dir: str | os.PathLike[str] | None) -> Path | None:
    """The raw folder as :func:`locate` finds it, or None when it is not here (a copied processed
    folder): the notebook then says which details it cannot show, instead of showing them empty."""
    if raw_dir is None:
        return None
    try:
        return locate(raw_dir, "raw_dir")
    except NotFound:
        return None
