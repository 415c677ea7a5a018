"""Re-runs are exact: a change to any file of a stage's package (code, data, text) re-runs that
stage and the stages after it, and nothing before it; a gate threshold re-runs stats and report,
never a launch. Proved with Snakemake dry runs on a copy of the repository (its own podnet)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from podnet.config.stages import DEPENDS
from tests.conftest import REPO
from tests.workflow_runs import example_config

pytestmark = pytest.mark.pipeline

SNAKEMAKE = str(REPO / ".venv/bin/snakemake")
#: rules of each stage in the example's workflow
RULES = {
    "parse": {"parse_shard", "tidy", "tidy_csv"},
    "stats": {"stats", "adaptive", "noise_floor"},
    "report": {"figure_plan", "figure", "seed_discrepancies", "notebook", "published"},
}
#: the stages whose rules a change to a file of this package re-runs
AFTER = {
    "config": {"parse", "stats", "report"},
    "tools": {"parse", "stats", "report"},
    "parse": {"parse", "stats", "report"},
    "stats": {"stats", "report"},
    "report": {"report"},
}


def run(repo: Path, cfg: Path, *args: str) -> str:
    """Snakemake on the copy; its jobs (and the warm zygote) import podnet from the copy too."""
    p = subprocess.run(
        [SNAKEMAKE, "-s", str(repo / "Snakefile"), *args, "--cores", "2", "--configfile", str(cfg)],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout + p.stderr


def planned(repo: Path, cfg: Path) -> set[str]:
    """Rules (checkpoints too) a dry run would run (``-n``: nothing is written), the target
    pseudo-rule ``all`` aside; jobs after a checkpoint that would run are planned once it ran."""
    out = run(repo, cfg, "-n")
    jobs = (line for line in out.splitlines() if line.startswith(("rule ", "checkpoint ")))
    return {line.split()[1].rstrip(":") for line in jobs} - {"all"}


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """The repository's workflow and podnet in a scratch place, the seed-raven example run once."""
    tmp = tmp_path_factory.mktemp("versions")
    repo = tmp / "repo"
    repo.mkdir()
    for name in ("Snakefile", "workflow", "podnet", "notebooks", "envs"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(
            src, repo / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if src.is_dir() else {})
        )
    raw, out = tmp / "raw", tmp / "out"
    shutil.copytree(REPO / "raw" / "seed-raven", raw)
    cfg = example_config("seed-raven")
    cfg.update(experiment="versions", raw_dir=str(raw), processed_dir=str(out), report={"notebooks": []})
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    run(repo, path)
    assert planned(repo, path) == set()
    return repo, path


@pytest.mark.parametrize("package", sorted(AFTER))
def test_a_changed_file_reruns_its_stage_and_the_stages_after_it(copy, package):
    repo, cfg = copy
    # a text file too, for the stats (METHODS.md) and config (the schema) packages; for report a module
    # the figures share (a notebook helper alone re-runs no rule of an experiment without notebooks)
    name = {"stats": "METHODS.md", "config": "config.schema.yaml", "report": "figures/grid.py"}.get(
        package, "__init__.py"
    )
    f = repo / "podnet" / package / name
    before = f.read_bytes()
    try:
        f.write_bytes(before + b"\n# changed\n" if name != "METHODS.md" else before + b"\nChanged.\n")
        got = planned(repo, cfg)
    finally:
        f.write_bytes(before)
    want = set().union(*(RULES[s] for s in AFTER[package]))
    assert got and got <= want, (package, got - want)
    for stage in AFTER[package]:
        assert got & RULES[stage], (package, stage, got)
    for stage in set(RULES) - AFTER[package]:
        assert not got & RULES[stage], (package, stage, got)
    assert planned(repo, cfg) == set()


def test_every_stage_package_is_covered():
    assert set(AFTER) == set(DEPENDS) - {"launch"}


def test_a_gate_threshold_reruns_stats_and_report_never_a_launch(copy):
    from podnet.config.stages import launch_view

    repo, cfg = copy
    doc = yaml.safe_load(cfg.read_text())
    changed = {
        **doc,
        "stats": {
            **doc.get("stats", {}),
            "thresholds": [
                {"baseline": "same-edge", "treatment": "cloud-edge", "metric": "throughput", "min": 0.5}
            ],
        },
    }
    # the launch checkpoint's params are launch_view(config): a threshold is not in it
    assert launch_view(changed) == launch_view(doc)
    path = cfg.with_name("threshold.yaml")
    path.write_text(yaml.safe_dump(changed))
    got = planned(repo, path)
    assert got and not got & RULES["parse"] and "launch" not in got, got


def test_a_change_to_one_figures_code_redraws_that_figure_alone(copy):
    """Each figure has its own code version (podnet.config.stages.figure_code_version): a changed
    ratios module re-draws ratios.* and leaves the other figures' files untouched; the report
    notebook, which shows the figures and reads figures/plan.json, does not re-run (the re-drawn files
    and the plan are the same: they are judged after the figure_plan and figure checkpoints)."""
    repo, cfg = copy
    doc = yaml.safe_load(cfg.read_text())
    cfg = cfg.with_name("with-report.yaml")
    cfg.write_text(yaml.safe_dump({**doc, "report": {"notebooks": ["report"]}}))
    run(repo, cfg)
    out = Path(doc["processed_dir"])
    figures = sorted((out / "figures").glob("*.png"))
    assert {p.stem for p in figures} == {"throughput", "latency", "ratios"}  # seed-raven: one variant
    before = {p.name: p.stat().st_mtime_ns for p in (out / "figures").glob("*.*")}
    notebooks = {p.name: p.stat().st_mtime_ns for p in (out / "notebooks").glob("*.*")}
    assert set(notebooks) == {"report.ipynb", "report.html"}
    f = repo / "podnet/report/figures/ratios.py"
    text = f.read_bytes()
    try:
        f.write_bytes(text + b"\n# changed\n")
        log = run(repo, cfg)
    finally:
        f.write_bytes(text)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "figures").glob("*.*")}
    changed = {n for n in after if after[n] != before.get(n)}
    assert changed == {"ratios.png", "ratios.svg", "ratios.pdf", "plan.json"}, (changed, log[-2000:])
    assert {p.name: p.stat().st_mtime_ns for p in (out / "notebooks").glob("*.*")} == notebooks, log[-3000:]
    run(repo, cfg)  # back to the committed module: ratios again
    assert planned(repo, cfg) == set()
