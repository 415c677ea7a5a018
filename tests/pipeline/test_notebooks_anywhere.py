"""A published experiment names no machine's path and its notebooks re-run wherever its folder goes
(issue 45): the executed notebooks' parameters are relative to their own folder
(podnet.report.paths), so a copy of ``processed/<experiment>/`` moved elsewhere re-runs, and a
notebook pointed at a folder that is not there stops with an error naming it. Its logs too name
files relative to the project root (papermill's "Working directory: ..." once named the clone's)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow_runs import scratch_example, snakemake

pytestmark = pytest.mark.pipeline


@pytest.fixture(scope="module")
def published():
    """The seed-raven example published in place, as `make examples` does (relative paths)."""
    snakemake(REPO / "config" / "examples" / "seed-raven.yaml")
    return REPO / "processed" / "seed-raven"


def _naming(out, *paths):
    """The files of the published tree ``out`` (logs included) naming one of the absolute ``paths``
    (as an absolute path: ``../../tmp/x`` names ``/tmp/x`` relative to the project root, not as a path
    of this machine), with the first such line."""
    found = {}
    pattern = re.compile(rb"(?<![.\w])(" + b"|".join(re.escape(str(p).encode()) for p in paths) + rb")")
    for p in sorted(out.rglob("*")):
        if p.is_file() and ".cache" not in p.relative_to(out).parts:
            data = p.read_bytes()
            m = pattern.search(data)
            if m:
                start = data.rfind(b"\n", 0, m.start()) + 1
                found[str(p.relative_to(out))] = data[start : data.find(b"\n", m.end())][:200]
    return found


def test_no_published_file_names_the_machines_paths(published):
    out = published
    nbs = sorted((out / "notebooks").glob("*.ipynb"))
    assert nbs
    for nb in nbs:
        meta = json.loads(nb.read_text())["metadata"]["papermill"]["parameters"]
        assert meta["processed_dir"] == "..", nb
    assert (out / "logs" / "notebook-report.log").exists()
    leaked = _naming(out, REPO)
    assert not leaked, f"published files naming this machine's paths: {leaked}"
    log = (out / "logs" / "notebook-report.log").read_text()
    assert "Working directory: processed/seed-raven/notebooks" in log, log


def test_an_example_published_elsewhere_names_neither_the_clone_nor_its_folder(tmp_path):
    """Published into a scratch folder outside the clone, its raw and processed folders given
    relative to the project root (``../../tmp/...``): no file names the clone's absolute path or the
    scratch folder's. (A config that gives absolute folders has them named as given.)"""
    cfg, raw, out = scratch_example(tmp_path, "elsewhere", "seed-qperf")
    doc = yaml.safe_load(cfg.read_text())
    doc.update(raw_dir=os.path.relpath(raw, REPO), processed_dir=os.path.relpath(out, REPO))
    cfg.write_text(yaml.safe_dump(doc))
    snakemake(cfg)
    assert (out / "logs" / "notebook-explore.log").exists()
    leaked = _naming(out, REPO, tmp_path)
    assert not leaked, f"published files naming this machine's paths: {leaked}"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("report", ["runs parsed", "The raw files are not here"]),
        ("explore", ["runs** in the slice", "The raw files are not here"]),
    ],
)
def test_a_copied_processed_folder_re_runs_its_notebooks_there(published, tmp_path, name, said):
    out = published
    moved = tmp_path / "elsewhere" / "anywhere"
    shutil.copytree(out, moved)
    nb = moved / "notebooks" / f"{name}.ipynb"
    run = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--stdout", str(nb)],
        cwd=moved / "notebooks",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    cells = json.loads(run.stdout)["cells"]
    shown = "".join(
        "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", ""))
        for c in cells
        for o in c.get("outputs", [])
    )
    assert all(s in shown for s in said), shown[:3000]
    assert "0 runs parsed" not in shown and "**0 runs**" not in shown  # said, not shown empty


def test_a_notebook_pointed_at_a_folder_that_is_nowhere_stops_naming_it(tmp_path):
    import papermill

    with pytest.raises(papermill.PapermillExecutionError, match="processed/nowhere"):
        papermill.execute_notebook(
            str(REPO / "notebooks" / "explore.ipynb"),
            str(tmp_path / "out.ipynb"),
            parameters={"processed_dir": "processed/nowhere", "raw_dir": "raw/nowhere"},
            cwd=str(tmp_path),
            progress_bar=False,
            kernel_name="python3",
        )
