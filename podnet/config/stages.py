"""The pipeline's stages, what each may import, and each stage's code version.

tools -> launch -> raw -> parse -> stats -> report (ARCHITECTURE.md). Each stage is one package
of ``podnet``; :data:`DEPENDS` says which other packages it may import (``tests/unit/
test_architecture.py`` checks the code's imports, the workflow scripts' too, against it). A stage's
code version is a hash of every file of its package and of the packages it depends on (code, data,
schema, text: a changed ``METHODS.md`` or schema default counts), computed here, never kept by
hand; the workflow's rules carry it as a parameter, so a change re-runs exactly that stage and the
stages after it. The report is finer: each figure has its own version (its module and the shared
ones, :func:`figure_code_version`), the notebooks one without the figures' modules.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

#: stage package -> the packages it may import (besides itself); cli may import every stage
DEPENDS: dict[str, tuple[str, ...]] = {
    "config": (),
    "tools": ("config",),
    "parse": ("config", "tools"),
    "stats": ("config", "tools", "parse"),
    "report": ("config", "tools", "parse", "stats"),
    "launch": ("config", "tools", "parse", "stats"),
}

#: the launch stage's sub-packages, bottom to top: each may import only those before it (then
#: ``podnet.launch.cli`` on top); ``tests/unit/test_architecture.py`` checks the code's imports
LAUNCH_LAYERS: tuple[str, ...] = ("spec", "cluster", "noise", "rounds", "campaign")

ROOT = Path(__file__).resolve().parent.parent


def _files(package: str, root: Path) -> list[Path]:
    base = root / package
    return sorted(
        p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


@cache
def code_version(stage: str, root: Path = ROOT) -> str:
    """sha256 (16 hex digits) of every file of ``stage``'s package and of those it depends on."""
    if stage not in DEPENDS:
        raise KeyError(f"unknown stage {stage!r} (one of {', '.join(DEPENDS)})")
    return _version([f for package in (*DEPENDS[stage], stage) for f in _files(package, root)], root)


def _own_figure_modules() -> set[str]:
    from .lean import FIGURES

    return {v.split(".")[0] for v in FIGURES.values()}


def _version(files: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _figure_module(f: Path, root: Path) -> bool:
    """Whether ``f`` is one figure's own module (``podnet/report/figures/<module>.py``)."""
    return f.parent == root / "report" / "figures" and f.suffix == ".py" and f.stem in _own_figure_modules()


@cache
def notebook_code_version(root: Path = ROOT) -> str:
    """The report stage's code version without the figures' own modules: what the notebooks and the
    seed checks run (a figure's code reaches a notebook only through the figure's files, its input)."""
    files = [f for p in (*DEPENDS["report"], "report") for f in _files(p, root)]
    return _version([f for f in files if not _figure_module(f, root)], root)


@cache
def figure_code_version(name: str, root: Path = ROOT) -> str:
    """The code version of one figure (16 hex digits): the report stage's dependencies, the shared
    modules of ``podnet/report/figures/`` and the figure's own module (:data:`podnet.config.lean.FIGURES`),
    not the other figures' modules nor the rest of the report package (notebooks' helpers, findings)."""
    from .lean import FIGURES

    own = FIGURES[name].split(".")[0]
    files = [f for p in DEPENDS["report"] for f in _files(p, root)]
    files += [f for f in _files("report/figures", root) if not _figure_module(f, root) or f.stem == own]
    return _version(files, root)


#: the ``stats`` settings a launch reads (adaptive sampling judges its primary comparisons with the
#: statistics stage's own intervals); the rest (the gate's thresholds, bootstrap, outliers, drift)
#: is the statistics stage's alone, so changing it re-runs stats and report, never a launch
STATS_KEYS = ("planning", "primary", "comparisons", "confidence", "small_n", "multiple_comparisons")


def launch_view(config: Mapping[str, Any]) -> dict[str, Any]:
    """What of an experiment config a launch depends on: experiment, raw_dir, launch and the
    :data:`STATS_KEYS` of stats (the workflow's launch checkpoint re-runs when this changes)."""
    out = {k: config[k] for k in ("experiment", "raw_dir", "launch") if k in config}
    stats = {k: v for k, v in (config.get("stats") or {}).items() if k in STATS_KEYS}
    if stats:
        out["stats"] = stats
    return out


def stats_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``stats`` mapping of an experiment config as the statistics stage reads it:
    ``paired.adaptive`` is taken from ``launch.adaptive.enabled`` unless the mapping sets it (a
    paired interval after an adaptive stop is stated at 1 - alpha/2; podnet.stats.robust)."""
    out = copy.deepcopy(dict(config.get("stats") or {}))
    paired = dict(out.get("paired") or {})
    if paired.get("adaptive") is None:
        launch = config.get("launch") or {}
        adaptive = launch.get("adaptive") if isinstance(launch, Mapping) else None
        paired["adaptive"] = bool((adaptive or {}).get("enabled", False))
        out["paired"] = paired
    return out
