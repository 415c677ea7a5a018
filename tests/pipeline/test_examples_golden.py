"""The seed examples' tables, parse -> tidy -> stats (-> seed checks), equal the committed ones.

tests/golden/examples/<experiment>/*.csv were written by the pipeline's library code; a refactor that
changes any value, row or column fails here with the cells that differ. After an intended change,
regenerate with ``pytest tests/pipeline/test_examples_golden.py --update-golden`` and review the diff.

The stages run as the Snakemake rules run them (parse shards -> combine -> stats.run ->
seed_reports.discrepancies), without Snakemake, figures or notebooks, so the test takes seconds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from podnet import stats
from podnet.config.stages import stats_of
from podnet.parse import combine, parse_files, shard_entries, write_parsed
from podnet.report import seed_reports
from tests.conftest import REPO

pytestmark = pytest.mark.pipeline

EXAMPLES = ["seed-raven", "seed-cni-1gbe", "seed-qperf", "seed-cni-report"]
GOLDEN = REPO / "tests" / "golden" / "examples"
# published by the stats stage and compared here (stats_settings.json/METHODS.md are text, not results)
STATS_TABLES = ("summary", "ratios", "planning", "outliers", "within_run")
MAX_SHOWN = 20  # differing cells shown on failure


def build_tables(experiment: str, out: Path) -> dict[str, Path]:
    """Run the example ``experiment`` through parse, combine, stats (and seed checks) into ``out``."""
    cfg = yaml.safe_load((REPO / "config" / "examples" / f"{experiment}.yaml").read_text())
    raw = Path(cfg.get("raw_dir") or f"raw/{experiment}")  # relative, as the pipeline sees it
    shards = int(cfg.get("parse", {}).get("shards", 8))
    parts = {"tidy": [], "intervals": [], "failed": []}
    for k, entries in shard_entries(raw, shards).items():
        paths = [
            out / "parsed" / f"shard-{k}.{x}" for x in ("tidy.parquet", "intervals.parquet", "failed.csv")
        ]
        write_parsed(parse_files(entries, raw, experiment), *paths)
        for name, p in zip(parts, paths):
            parts[name].append(p)
    parsed = combine(parts["tidy"], parts["intervals"], parts["failed"])
    parsed.tidy.to_parquet(out / "tidy.parquet", index=False)
    parsed.tidy.to_csv(out / "tidy.csv", index=False)
    parsed.intervals.to_parquet(out / "intervals.parquet", index=False)
    parsed.failed.to_csv(out / "failed_runs.csv", index=False)
    stats.run(out / "tidy.parquet", out, stats_of(cfg), intervals_path=out / "intervals.parquet")
    tables = {name: out / f"{name}.csv" for name in ("tidy", "failed_runs", *STATS_TABLES)}
    if "seed_discrepancies" in cfg.get("report", {}).get("notebooks", []):
        # every check, agreeing ones included (the published seed_discrepancies.csv is a subset)
        checks = seed_reports.discrepancies(out, raw, include_agreeing=True)
        checks.to_csv(out / "seed_checks.csv", index=False)
        tables["seed_checks"] = out / "seed_checks.csv"
    return {k: p for k, p in tables.items() if p.exists()}


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def table_differences(expected: pd.DataFrame, got: pd.DataFrame, rel: float = 1e-12) -> list[str]:
    """Readable differences between two tables read as text: columns, row count, then cells.

    Cells that both parse as numbers compare with a relative tolerance ``rel`` (the last printed
    digit of a float may differ between numeric libraries); all other cells must be equal text.
    """
    if list(expected.columns) != list(got.columns):
        missing = [c for c in expected.columns if c not in got.columns]
        extra = [c for c in got.columns if c not in expected.columns]
        return [f"columns differ: missing {missing}, new {extra}, order {list(got.columns)}"]
    if len(expected) != len(got):
        return [f"{len(got)} rows, expected {len(expected)}"]
    out = []
    for col in expected.columns:
        a, b = expected[col], got[col]
        na, nb = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
        numeric = na.notna() & nb.notna()
        close = (na - nb).abs() <= rel * pd.concat([na.abs(), nb.abs()], axis=1).max(axis=1)
        same = (a == b) | (numeric & close)
        for i in same.index[~same]:
            out.append(f"row {i}, column {col!r}: expected {a[i]!r}, got {b[i]!r}")
    return out


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    cwd = os.getcwd()
    os.chdir(REPO)  # raw paths relative to the repository, as Snakemake runs
    try:
        tables = build_tables(request.param, out)
    finally:
        os.chdir(cwd)
    return request.param, tables


def test_example_tables_equal_the_golden_ones(example, request):
    experiment, tables = example
    golden = GOLDEN / experiment
    if request.config.getoption("--update-golden") or os.environ.get("PODNET_UPDATE_GOLDEN"):
        golden.mkdir(parents=True, exist_ok=True)
        for old in golden.glob("*.csv"):
            old.unlink()
        for name, path in tables.items():
            (golden / f"{name}.csv").write_bytes(path.read_bytes())
    expected = sorted(p.stem for p in golden.glob("*.csv"))
    assert expected, f"no golden tables for {experiment}: run pytest {__file__} --update-golden"
    assert sorted(tables) == expected, f"{experiment}: tables {sorted(tables)}, golden {expected}"
    problems = []
    for name in expected:
        diffs = table_differences(_read(golden / f"{name}.csv"), _read(tables[name]))
        problems += [f"{name}.csv: {d}" for d in diffs]
    shown = "\n".join(problems[:MAX_SHOWN])
    more = f"\n... and {len(problems) - MAX_SHOWN} more" if len(problems) > MAX_SHOWN else ""
    assert not problems, f"{experiment} differs from {golden}:\n{shown}{more}"


def test_a_changed_value_is_reported_with_its_cell():
    a = pd.DataFrame({"metric": ["throughput", "rtt"], "value": ["1.5", "2e-3"]})
    b = a.copy()
    assert table_differences(a, b) == []
    b.loc[1, "value"] = "2.0000001e-3"
    assert table_differences(a, b) == ["row 1, column 'value': expected '2e-3', got '2.0000001e-3'"]
    b = a.assign(value=["1.5000000000000002", "2e-3"])  # within the last printed digit
    assert table_differences(a, b) == []
    assert "columns differ" in table_differences(a, a.drop(columns="value"))[0]
    assert table_differences(a, a.iloc[:1]) == ["1 rows, expected 2"]
