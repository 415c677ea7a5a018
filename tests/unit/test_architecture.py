"""The layout shows the pipeline: one package per stage, dependencies one way (ARCHITECTURE.md).

What each stage may import is ``podnet.config.stages.DEPENDS`` (the table the code versions are
computed from): config <- tools <- parse <- stats <- report; launch uses config, tools, parse and
stats (its adaptive stop), never report; nothing but cli imports launch. Read from the code's
imports (every ``import``/``from`` anywhere in a module, function-level ones included;
``TYPE_CHECKING`` blocks too), so a violation cannot hide in a function. The workflow's scripts
too: a script run by a rule of ``workflow/rules/<stage>.smk`` imports only that stage and what it
may import, so a rule's code version (its stage's) covers every podnet file its script runs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from podnet.config.stages import DEPENDS, LAUNCH_LAYERS

PODNET = Path(__file__).resolve().parents[2] / "podnet"
WORKFLOW = PODNET.parent / "workflow"

#: what each stage may import (besides itself): DEPENDS; cli may import every stage
ALLOWED = {stage: set(deps) for stage, deps in DEPENDS.items()} | {"cli": set(DEPENDS)}


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
    mod = _module_of(path) if path.is_relative_to(PODNET.parent / "podnet") else "script"
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


def script_stages(workflow: Path | None = None) -> dict[str, set[str]]:
    """workflow/scripts/<name>.py -> the stages whose rules (``workflow/rules/<stage>.smk``) run it."""
    out: dict[str, set[str]] = {}
    for smk in sorted((workflow or WORKFLOW).glob("rules/*.smk")):
        for script in re.findall(r'"\.\./scripts/([\w.]+\.py)"', smk.read_text()):
            out.setdefault(script, set()).add(smk.stem)
    return out


def script_violations(workflow: Path | None = None) -> list[str]:
    """Imports of a workflow script outside its rule's stage and what that stage may import."""
    workflow = workflow or WORKFLOW
    bad = []
    for script, stages in sorted(script_stages(workflow).items()):
        path = workflow / "scripts" / script
        for stage in sorted(stages):
            for line, target in _imports(path):
                dep = _stage(target)
                if dep is not None and dep != stage and dep not in ALLOWED[stage]:
                    bad.append(f"workflow/scripts/{script}:{line}: a {stage} rule's script imports {target}")
    return bad


def test_the_rule_is_the_stage_table():
    assert ALLOWED.keys() - {"cli"} == set(DEPENDS) and all(ALLOWED[s] == set(DEPENDS[s]) for s in DEPENDS)


def test_every_workflow_script_is_run_by_a_rule_of_a_stage():
    scripts = {p.name for p in (WORKFLOW / "scripts").glob("*.py")}
    stages = script_stages()
    assert scripts == set(stages), scripts ^ set(stages)
    assert set().union(*stages.values()) <= set(DEPENDS)


def test_workflow_scripts_import_only_their_stage_and_its_dependencies():
    assert script_violations() == []


def test_a_stats_script_that_imports_launch_or_report_is_a_violation(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "rules/stats.smk").write_text('rule x:\n    script:\n        "../scripts/x.py"\n')
    (tmp_path / "scripts/x.py").write_text(
        "from podnet.launch.spec.plan import test_lengths\nfrom podnet.report import noise_text\nimport podnet.stats\n"
    )
    assert script_violations(tmp_path) == [
        "workflow/scripts/x.py:1: a stats rule's script imports podnet.launch.spec.plan",
        "workflow/scripts/x.py:2: a stats rule's script imports podnet.report",
    ]


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


# -- inside the launch stage: sub-packages in layers, and no import circle anywhere in podnet/ --

LAUNCH = PODNET / "launch"


def _module_exists(module: str) -> bool:
    path = PODNET.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _edges(path: Path) -> set[str]:
    """The podnet modules ``path`` imports (``from a import b``: ``a.b`` when that is a module)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    mod = _module_of(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(
                    parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else [])
                )
            for a in node.names:
                out.add(f"{base}.{a.name}" if _module_exists(f"{base}.{a.name}") else base)
    return {m for m in out if m.split(".")[0] == "podnet" and m != mod}


def _graph() -> dict[str, set[str]]:
    return {_module_of(p): _edges(p) for p in sorted(PODNET.rglob("*.py"))}


def launch_layer_violations() -> list[str]:
    """Imports of a launch sub-package's module that reach a sub-package above its own."""
    rank = {layer: i for i, layer in enumerate(LAUNCH_LAYERS)}
    bad = []
    for path in sorted(LAUNCH.rglob("*.py")):
        rel = path.relative_to(LAUNCH).parts
        if len(rel) == 1:
            continue  # podnet/launch/__init__.py and cli.py: the top
        own = rel[0]
        for target in sorted(_edges(path)):
            parts = target.split(".")
            if parts[:2] != ["podnet", "launch"] or len(parts) < 3:
                continue
            if parts[2] not in rank or rank[parts[2]] > rank[own]:
                bad.append(f"{path.relative_to(PODNET.parent)}: {own} imports {target}")
    return bad


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_launch_sub_packages_are_the_layers():
    packages = {p.name for p in LAUNCH.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(LAUNCH_LAYERS)
    loose = {p.name for p in LAUNCH.glob("*.py")}
    assert loose == {"__init__.py", "cli.py"}, loose


def test_launch_sub_packages_import_only_those_below():
    assert launch_layer_violations() == []


#: circles in packages this change does not touch, left to their own change (none may be added)
KNOWN_CIRCLES: list[list[str]] = []


def test_no_import_circle_in_podnet():
    circles = import_circles(_graph())
    assert [c for c in circles if c not in KNOWN_CIRCLES] == []
    assert not [c for c in circles if c[0].startswith("podnet.launch.")], "a circle in the launch stage"


def test_a_circle_is_found():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


if __name__ == "__main__":
    pytest.main([__file__])
