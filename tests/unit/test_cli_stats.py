"""`podnet stats TIDY --out DIR` on a tidy table made from the seed-raven raw files."""

import subprocess
import sys

import pandas as pd
import pytest

from podnet.parse import parse_experiment
from tests.conftest import REPO


@pytest.fixture(scope="module")
def tidy_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("tidy") / "tidy.csv"
    parse_experiment(REPO / "raw/seed-raven", "seed-raven").tidy.to_csv(path, index=False)
    return path


def stats(*args):
    return subprocess.run(
        [sys.executable, "-m", "podnet.cli", "stats", *args], capture_output=True, text=True, cwd=REPO
    )


def test_stats_with_compare_flag(tidy_csv, tmp_path):
    p = stats(str(tidy_csv), "--out", str(tmp_path), "--compare", "scenario=same-edge")
    assert p.returncode == 0, p.stderr
    s = pd.read_csv(tmp_path / "summary.csv")
    r = pd.read_csv(tmp_path / "ratios.csv")
    assert {"n", "mean", "median", "sd", "ci_low", "ci_high", "ci_method"} <= set(s.columns)
    row = r[(r.metric == "throughput") & (r.treatment == "cloud-edge") & (r.direction == "forward")]
    assert row["ratio"].item() == pytest.approx(87.6e6 / 3.67e9, rel=1e-12)


def test_stats_with_experiment_config(tidy_csv, tmp_path):
    p = stats(
        str(tidy_csv), "--out", str(tmp_path), "--config", str(REPO / "config/examples/seed-raven.yaml")
    )
    assert p.returncode == 0, p.stderr
    assert set(pd.read_csv(tmp_path / "ratios.csv")["baseline"]) == {"same-edge"}


def test_stats_errors_name_the_problem(tmp_path):
    p = stats(str(tmp_path / "missing.parquet"), "--out", str(tmp_path))
    assert p.returncode != 0 and "missing.parquet" in p.stderr
    bad = stats(str(tmp_path / "x.csv"), "--out", str(tmp_path), "--compare", "zone=a")
    assert bad.returncode == 2 and "scenario=NAME" in bad.stderr


# ---- issue 9: bad input exits non-zero with a clear message; foreign tables are accepted ----

HEADER = "experiment,variant,scenario,tool,test,protocol,direction,streams,repeat,run_id,metric,value,unit,source,raw_path"


def _csv(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def _row(variant, scenario, repeat, value, metric="throughput", unit="bit/s"):
    return f"e,{variant},{scenario},iperf3,tcp,tcp,forward,1,{repeat},{variant}-{scenario}-{repeat},{metric},{value},{unit},measured,x"


def test_non_numeric_value_exits_nonzero(tmp_path):
    t = _csv(tmp_path / "t.csv", [HEADER, _row("a", "s", 1, "1e9"), _row("a", "s", 2, "fast")])
    p = stats(str(t), "--out", str(tmp_path / "o"))
    assert p.returncode == 1 and "non-numeric" in p.stderr and "'fast'" in p.stderr
    assert not (tmp_path / "o" / "summary.csv").exists()


def test_missing_compare_baseline_exits_nonzero(tmp_path):
    t = _csv(tmp_path / "t.csv", [HEADER] + [_row("a", "s", r, 1e9 + r) for r in (1, 2, 3)])
    p = stats(str(t), "--out", str(tmp_path / "o"), "--compare", "scenario=nope")
    assert p.returncode == 1 and "no measured rows have scenario 'nope'" in p.stderr


def test_header_only_table_exits_nonzero(tmp_path):
    t = _csv(tmp_path / "t.csv", [HEADER])
    p = stats(str(t), "--out", str(tmp_path / "o"))
    assert p.returncode == 1 and "no rows" in p.stderr


def test_variants_named_none_and_na_are_names(tmp_path):
    lines = [HEADER]
    for v in ("None", "NA", "", "null"):
        lines += [_row(v, "s", r, 1e9 * (1 + 0.01 * r)) for r in (1, 2, 3)]
    t = _csv(tmp_path / "t.csv", lines)
    p = stats(str(t), "--out", str(tmp_path / "o"))
    assert p.returncode == 0, p.stderr
    s = pd.read_csv(tmp_path / "o" / "summary.csv", keep_default_na=False)
    assert sorted(s["variant"]) == ["", "NA", "None", "null"]
    assert (s["n"].astype(int) == 3).all()


def test_table_without_test_run_id_source_is_defaulted(tmp_path):
    head = "experiment,variant,scenario,tool,protocol,direction,streams,repeat,metric,value,unit"
    lines = [head] + [f"e,a,s,iperf3,tcp,forward,1,{r},throughput,{1e9 + r},bit/s" for r in (1, 2, 3)]
    lines += [f"e,a,b,iperf3,tcp,forward,1,{r},throughput,{2e9 + r},bit/s" for r in (1, 2, 3)]
    t = _csv(tmp_path / "t.csv", lines)
    p = stats(str(t), "--out", str(tmp_path / "o"), "--compare", "scenario=b")
    assert p.returncode == 0, p.stderr
    s = pd.read_csv(tmp_path / "o" / "summary.csv")
    assert (s["n"] == 3).all() and (s["source"] == "measured").all()
    assert len(pd.read_csv(tmp_path / "o" / "ratios.csv")) == 1


def test_table_without_a_required_column_names_it(tmp_path):
    t = _csv(tmp_path / "t.csv", ["variant,scenario,tool,metric,value", "a,s,iperf3,throughput,1"])
    p = stats(str(t), "--out", str(tmp_path / "o"))
    assert p.returncode == 1 and "lacks columns: unit" in p.stderr
