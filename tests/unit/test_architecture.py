"""The layout shows the pipeline: one package per stage, dependencies one way (ARCHITECTURE.md).

config <- tools <- parse <- stats <- report; launch uses config, tools, parse and stats (its
adaptive stop), never report; nothing but cli imports launch. Read from the code's imports (every
``import``/``from`` anywhere in a module, function-level ones included; ``TYPE_CHECKING`` blocks
too), so a violation cannot hide in a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PODNET = Path(__file__).resolve().parents[2] / "podnet"

#: what each stage may import (besides itself)
ALLOWED = {
    "config": set(),
    "tools": {"config"},
    "parse": {"config", "tools"},
    "stats": {"config", "tools", "parse"},
    "report": {"config", "tools", "parse", "stats"},
    "launch": {"config", "tools", "parse", "stats"},
    "cli": {"config", "tools", "parse", "stats", "report", "launch"},
}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "podnet" or len(parts) < 2:
        return None
    return parts[1]


def _module_of(path: Path) -> str:
    rel = path.relative_to(PODNET.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    mod = _module_of(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            if target == "podnet":  # from podnet import X: X is a module
                out += [(node.lineno, f"podnet.{a.name}") for a in node.names]
    return out


def violations() -> list[str]:
    bad = []
    for path in sorted(PODNET.rglob("*.py")):
        stage = _stage(_module_of(path))
        if stage is None:
            continue  # podnet/__init__.py
        for line, target in _imports(path):
            dep = _stage(target)
            if dep is None or dep == stage:
                continue
            if dep not in ALLOWED.get(stage, set()):
                bad.append(f"{path.relative_to(PODNET.parent)}:{line}: {stage} imports {target}")
    return bad


def test_every_module_is_in_a_stage_package():
    loose = [p.name for p in PODNET.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "cli.py")]
    assert not loose, f"modules outside a stage package: {loose}"
    assert {p.name for p in PODNET.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == set(
        ALLOWED
    ) - {"cli"}


def test_dependencies_go_one_way():
    assert violations() == []


def test_the_rule_is_read_from_function_level_imports_too(tmp_path, monkeypatch):
    # a report import hidden in a stats function is a violation
    fake = tmp_path / "podnet" / "stats"
    fake.mkdir(parents=True)
    (fake / "x.py").write_text("def f():\n    from podnet.report import findings\n")
    monkeypatch.setattr(__import__(__name__), "PODNET", tmp_path / "podnet")
    assert violations() == ["podnet/stats/x.py:2: stats imports podnet.report"] or any(
        "stats imports podnet.report" in v for v in violations()
    )


if __name__ == "__main__":
    pytest.main([__file__])
