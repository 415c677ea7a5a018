"""Warm workers (podnet.config.warm) change nothing: an example run with them (jobs and notebook
kernels forked from the zygote) writes the same files as a run in which every job and kernel is a
process of its own (PODNET_WARM=0): the tables and figures byte for byte, the notebooks cell for cell."""

import json
import shutil

import nbformat
import pytest

from tests.workflow_runs import scratch_example, snakemake

pytestmark = pytest.mark.pipeline


def _files(out):
    return {
        str(p.relative_to(out)): p
        for p in sorted(out.rglob("*"))
        if p.is_file() and not {"logs", ".cache"} & set(p.relative_to(out).parts)
    }


def _cells(path):
    """A notebook's cells as they read: source and outputs, without times and execution counts."""
    nb = nbformat.read(path, as_version=4)
    out = []
    for c in nb.cells:
        outputs = [
            {k: v for k, v in o.items() if k not in ("execution_count",)} for o in c.get("outputs", [])
        ]
        out.append((c.cell_type, c.source, json.dumps(outputs, sort_keys=True)))
    return out


def _listed(path):
    """The published list without the notebooks' sizes and hashes (their cells carry run times)."""
    doc = json.loads(path.read_text())
    for item in doc["published"]:
        if item["kind"] == "notebook":
            item["files"] = [f["path"] for f in item["files"]]
    return doc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("warm")
    cfg, raw, out = scratch_example(tmp, "warm", "seed-cni-1gbe")
    log_cold = snakemake(cfg, env={"PODNET_WARM": "0"})
    cold = tmp / "cold"
    shutil.move(out, cold)
    log_warm = snakemake(cfg)
    return cold, out, log_cold, log_warm


def test_the_warm_run_used_warm_workers_for_jobs_and_kernels(runs):
    cold, warm, *_ = runs
    assert not (cold / "logs/warm.log").exists()
    lines = [json.loads(x) for x in (warm / "logs/warm.log").read_text().splitlines() if x.startswith("{")]
    ran = {x["warm_job"].split(".")[-2] if x["warm_job"].endswith(".py") else x["warm_job"] for x in lines}
    # (the first jobs may run before the zygote is ready: then in their own process)
    assert {"figure", "run_notebook", "ipykernel_launcher"} <= ran, ran
    assert all(x["code"] == 0 or x["warm_job"] == "ipykernel_launcher" for x in lines), lines


def test_warm_and_cold_runs_write_the_same_files(runs):
    cold, warm, *_ = runs
    a, b = _files(cold), _files(warm)
    assert sorted(a) == sorted(b)
    differ = [
        name
        for name in a
        if not name.endswith((".ipynb", ".html", "published.json"))
        and a[name].read_bytes() != b[name].read_bytes()
    ]
    assert differ == []
    # the published list names the same files; the notebooks' sizes and hashes differ with their run times
    assert _listed(a["published.json"]) == _listed(b["published.json"])
    for name in (n for n in a if n.endswith(".ipynb")):
        assert _cells(a[name]) == _cells(b[name]), name
