"""No source file of the package or the workflow over 500 lines, except the data tables listed here.

A long module is split along its seams (see podnet/tools/_iperf2_*.py, _netperf_omni.py,
podnet/report/seed_reports/); a module that is one table of data (tool header texts, published values) may
be longer, and is named in DATA_TABLES with what it holds.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO

MAX_LINES = 500
#: path below the repository -> what the table is (only data, no logic)
DATA_TABLES: dict[str, str] = {}


def source_files() -> list[Path]:
    """Python modules of the package, the workflow's rules and scripts."""
    files = [*(REPO / "podnet").rglob("*.py"), *(REPO / "workflow").rglob("*.py")]
    files += [*(REPO / "workflow").rglob("*.smk"), REPO / "Snakefile"]
    return sorted(f for f in files if f.is_file() and "__pycache__" not in f.parts)


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def too_long(files: list[Path], exempt: dict[str, str], limit: int = MAX_LINES) -> list[str]:
    """``path: N lines`` for each file over ``limit`` lines that is not in ``exempt``."""
    out = []
    for f in files:
        rel = f.relative_to(REPO).as_posix()
        n = line_count(f)
        if n > limit and rel not in exempt:
            out.append(f"{rel}: {n} lines")
    return out


def test_no_source_file_is_over_500_lines():
    long = too_long(source_files(), DATA_TABLES)
    assert not long, f"over {MAX_LINES} lines (split along a seam, or list a pure data table): {long}"


def test_every_listed_data_table_exists_and_needs_the_exemption():
    for rel in DATA_TABLES:
        path = REPO / rel
        assert path.is_file(), f"{rel} is listed as a data table but does not exist"
        assert line_count(path) > MAX_LINES, f"{rel} is short enough now: drop it from DATA_TABLES"


def test_the_check_sees_a_long_file():
    # the check itself: a file one line over the limit is reported, unless listed
    f = REPO / "podnet" / "__init__.py"
    assert f in source_files()
    assert too_long([f], {}, limit=line_count(f) - 1) == [f"podnet/__init__.py: {line_count(f)} lines"]
    assert too_long([f], {"podnet/__init__.py": "test"}, limit=line_count(f) - 1) == []
