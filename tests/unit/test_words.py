"""One word per question, repository-wide (issue 44; METHODS.md, "Two words: different and precise").

"resolved" once meant three things (Holm-significant, precise enough to stop, an order stated);
it is retired. *different* and *precise* are the two words, boolean columns of every table that
asks either question; what is neither ordered, equivalent, passing nor failing is *inconclusive*.
This test fails when a table column, a figure label, a findings sentence, a notebook, a report
caption, the statistics' documentation or a benchmark (its simulations print the tables METHODS.md
quotes) uses "resolve(d)" in any sense but the few allowed below (each with its reason).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORD = re.compile(r"(?i)\b(un)?resolv\w*")

#: (path relative to the root, or a folder ending in "/" for every file under it; text on the
#: line) -> why that use is not the retired word
ALLOWED: dict[tuple[str, str], str] = {
    ("podnet/stats/settings.py", "resolve"): "stats settings resolved: defaults merged into the config",
    ("podnet/stats/__init__.py", '"resolve"'): "the settings function's name, exported lazily",
    ("podnet/stats/planning.py", "resolved settings"): "settings merged with their defaults",
    ("podnet/stats/planning.py", "resolved ``settings``"): "settings merged with their defaults",
    ("podnet/report/explore.py", "resolve("): "a raw file's path resolved (pathlib), not a finding",
    ("podnet/report/explore.py", ".resolve()"): "pathlib's resolve",
    ("podnet/report/figures/data.py", ".resolve()"): "pathlib's resolve",
    ("benchmarks/", "resolve("): "a call: pathlib's Path.resolve() or the stats settings' resolve()",
    ("benchmarks/", "podnet.stats.settings import"): "the stats settings' resolve, imported",
}

#: where the word would reach a reader: the report, the statistics and their documentation, the
#: notebooks, the Snakemake report's captions, the workflow's scripts, the config's descriptions
#: and the benchmarks (their simulations' printed tables, docstrings, configs and README)
SCANNED = [
    *sorted((ROOT / "podnet" / "report").rglob("*.py")),
    *sorted((ROOT / "podnet" / "stats").rglob("*.py")),
    ROOT / "podnet" / "stats" / "METHODS.md",
    *sorted((ROOT / "workflow" / "report").glob("*.rst")),
    *sorted((ROOT / "workflow" / "scripts").glob("*.py")),
    ROOT / "podnet" / "config" / "config.schema.yaml",
    ROOT / "podnet" / "cli.py",
    ROOT / "README.md",
    *sorted(p for ext in ("py", "yaml", "md") for p in (ROOT / "benchmarks").rglob(f"*.{ext}")),
]


def _allowed(rel: str, line: str) -> bool:
    return any(_under(rel, p) and text in line for (p, text) in ALLOWED)


def _under(rel: str, p: str) -> bool:
    return rel == p or (p.endswith("/") and rel.startswith(p))


def _hits(rel: str, lines: list[str]) -> list[str]:
    return [
        f"{rel}:{i}: {x.strip()}" for i, x in enumerate(lines, 1) if WORD.search(x) and not _allowed(rel, x)
    ]


def test_the_allow_list_is_small_and_every_entry_is_used():
    assert len(ALLOWED) <= 10 and all(ALLOWED.values())
    used = set()
    for path in SCANNED:
        rel = str(path.relative_to(ROOT))
        for line in path.read_text(encoding="utf-8").splitlines():
            if WORD.search(line):
                used |= {k for k in ALLOWED if _under(rel, k[0]) and k[1] in line}
    assert used == set(ALLOWED), sorted(set(ALLOWED) - used)


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_of_a_table_figure_or_sentence_says_resolved(path):
    rel = str(path.relative_to(ROOT))
    found = _hits(rel, path.read_text(encoding="utf-8").splitlines())
    assert not found, "\n".join(found)


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_no_notebook_says_resolved(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    lines = [x for cell in nb["cells"] for x in "".join(cell.get("source", [])).splitlines()]
    found = _hits(f"notebooks/{path.name}", lines)
    assert not found, "\n".join(found)


#: every table's columns (module, constant); the two words are its only booleans of either question
TABLES = [
    ("podnet.stats.ratios", "RATIO_COLUMNS"),
    ("podnet.stats.variants", "VARIANT_COLUMNS"),
    ("podnet.stats.ranking", "COLUMNS"),
    ("podnet.stats.planning", "PLAN_COLUMNS"),
    ("podnet.stats.summary", "SUMMARY_COLUMNS"),
    ("podnet.stats.precision", "PRECISION_COLUMNS"),
    ("podnet.stats.gate", "CHECK_COLUMNS"),
    ("podnet.stats.netready_compare", "NET_READY_RATIO_COLUMNS"),
    ("podnet.stats.noise", "NOISE_COLUMNS"),
    ("podnet.stats.underload", "UNDER_LOAD_COLUMNS"),
    ("podnet.stats.account", "ACCOUNT_COLUMNS"),
    ("podnet.report.vs_seed.orders", "ORDER_COLUMNS"),
    ("podnet.report.vs_seed.table", "COLUMNS"),
]

#: which tables ask which question
ASKS = {
    "RATIO_COLUMNS": {"different", "precise"},
    "VARIANT_COLUMNS": {"different", "precise"},
    "COLUMNS@podnet.stats.ranking": {"different", "precise"},
    "PLAN_COLUMNS": {"precise"},
    "SUMMARY_COLUMNS": {"precise"},
    "PRECISION_COLUMNS": {"precise"},
    "CHECK_COLUMNS": {"different", "precise"},
    "NET_READY_RATIO_COLUMNS": {"different", "precise"},
}


@pytest.mark.parametrize("module, name", TABLES)
def test_table_columns_use_the_two_words(module, name):
    cols = list(getattr(importlib.import_module(module), name))
    bad = [c for c in cols if WORD.search(c) or c in ("significant", "met_target", "paired_different")]
    assert not bad, f"{module}.{name}: {bad}"
    want = ASKS.get(name) or ASKS.get(f"{name}@{module}", set())
    assert want <= set(cols), f"{module}.{name} lacks {want - set(cols)}"


def test_verdict_words_say_inconclusive():
    from podnet.report.vs_seed import orders
    from podnet.stats import gate, ranking

    assert "inconclusive" in ranking.RELATIONS and "inconclusive" in gate.EXIT
    assert "inconclusive here" in orders.STATUSES
    for words in (ranking.RELATIONS, tuple(gate.EXIT), orders.STATUSES):
        assert not any(WORD.search(w) for w in words), words
