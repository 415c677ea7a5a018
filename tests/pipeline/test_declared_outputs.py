"""Every output is declared: deleting a file under processed/<exp>/ regenerates exactly it and
what depends on it; `snakemake -n` and `--lint` change nothing on disk (also with a stale launch
manifest); `snakemake --report` builds the HTML report."""

import os
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow_runs import example_config, scratch_example, snakemake

pytestmark = pytest.mark.pipeline


def state(*roots: Path) -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file under ``roots`` (logs and the statistics' content cache aside)."""
    out = {}
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file() and not {"logs", ".cache"} & set(p.relative_to(root).parts):
                st = p.stat()
                out[str(p.relative_to(root.parent))] = (st.st_mtime_ns, st.st_size)
    return out


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    """seed-raven copied to a scratch place, run once (report and seed checks)."""
    tmp = tmp_path_factory.mktemp("declared")
    path, raw, out = scratch_example(tmp, "declared", report={"notebooks": ["report", "seed_discrepancies"]})
    snakemake(path)
    return path, raw, out


# file deleted -> files that must be regenerated (relative to processed/<exp>/)
CASES = {
    "figures/ratios.svg": {"figures/ratios.png", "figures/ratios.svg", "figures/ratios.pdf"},
    "seed_discrepancies.csv": {"seed_discrepancies.csv"},
    "stats_settings.json": {
        "summary.csv",
        "ratios.csv",
        "planning.csv",
        "outliers.csv",
        "within_run.csv",
        "stats_settings.json",
        "METHODS.md",
    },
    "notebooks/report.html": {"notebooks/report.html"},
    "noise_floor.csv": {"noise_floor.csv"},
}
DEPENDENTS = {
    "figures/ratios.svg": {"notebooks/report.ipynb", "notebooks/report.html"},
    "seed_discrepancies.csv": {"notebooks/seed_discrepancies.ipynb", "notebooks/seed_discrepancies.html"},
    "stats_settings.json": {"figures/", "notebooks/"},
    "notebooks/report.html": set(),
    "noise_floor.csv": {"notebooks/report.ipynb", "notebooks/report.html"},
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_deleted_output_is_regenerated_with_its_dependents_only(experiment, name):
    cfg, raw, out = experiment
    before = state(out)
    (out / name).unlink()
    snakemake(cfg)
    after = state(out)
    assert set(after) == set(before), set(before) ^ set(after)
    changed = {k.split("/", 1)[1] for k in after if after[k][0] != before[k][0]}
    assert CASES[name] <= changed, changed
    allowed = CASES[name] | {c for c in changed if any(c.startswith(d) for d in DEPENDENTS[name])}
    assert changed <= allowed, changed - allowed
    assert "tidy.parquet" not in changed


def test_every_file_under_processed_is_a_declared_output(experiment):
    cfg, raw, out = experiment
    dry = snakemake(cfg, "-n", "--detailed-summary")
    declared = {line.split("\t")[0] for line in dry.splitlines() if "\t" in line}
    # logs, and the statistics stage's content cache (.cache/: reused across runs by design)
    files = {str(p) for p in out.rglob("*") if p.is_file() and not {"logs", ".cache"} & set(p.parts)}
    undeclared = {f for f in files if f not in declared and os.path.relpath(f, REPO) not in declared}
    assert not undeclared, sorted(undeclared)


def test_dry_run_and_lint_change_nothing(experiment, tmp_path):
    cfg, raw, out = experiment
    (out / "figures/latency.pdf").unlink()  # something to do
    before = state(out, raw)
    assert "figure" in snakemake(cfg, "-n")
    snakemake(cfg, "--lint", check=False)
    assert state(out, raw) == before
    snakemake(cfg)  # restore


def test_a_stale_launch_manifest_survives_dry_run_and_lint(tmp_path):
    cfg = example_config("quick")
    cfg.update(experiment="stale", raw_dir=str(tmp_path / "raw"), processed_dir=str(tmp_path / "out"))
    cfg["launch"]["variant"] = "bridge"  # known offline: raw/ is judged incomplete (it is empty)
    (tmp_path / "raw").mkdir()
    manifest = tmp_path / "out/launch/manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{}\n")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    dry = snakemake(path, "-n")
    assert "launch" in dry  # the stale launch is scheduled again ...
    snakemake(path, "--lint", check=False)
    assert manifest.exists()  # ... and nothing was removed while parsing


def test_snakemake_report_builds_the_html(experiment, tmp_path):
    cfg, raw, out = experiment
    report = tmp_path / "report.html"
    snakemake(cfg, "--report", str(report))
    html = report.read_text()
    assert report.stat().st_size > 50_000
    for name in ("throughput", "latency", "ratios", "variants"):
        assert f"{name}.png" in html


REPORT_IMAGES_JS = """
(async () => {
  const uris = Object.values(results).map(r => r.data_uri).filter(u => u && u.startsWith("data:image/"));
  const shown = await Promise.all(uris.map(u => new Promise(ok => {
    const i = new Image();
    i.onload = () => ok({w: i.naturalWidth, h: i.naturalHeight});
    i.onerror = () => ok({w: 0, h: 0});
    i.src = u;
  })));
  const page = [...document.images].map(i => ({w: i.naturalWidth, h: i.naturalHeight}));
  return JSON.stringify({embedded: shown, page: page, text: document.body.innerText});
})()
"""


def test_the_reports_open_in_headless_chromium(experiment, tmp_path):
    import json

    from tests.browser import IMAGES_JS, open_page

    cfg, raw, out = experiment
    report = tmp_path / "report.html"
    snakemake(cfg, "--report", str(report))
    r = open_page(report, REPORT_IMAGES_JS)
    assert r["errors"] == [], r["errors"]
    v = json.loads(r["value"])
    assert "Figures" in v["text"] and "Notebooks" in v["text"]
    assert len(v["embedded"]) == 4 and all(i["w"] > 500 and i["h"] > 100 for i in v["embedded"]), v[
        "embedded"
    ]
    assert all(i["w"] > 0 for i in v["page"])
    for nb in ("report", "seed_discrepancies"):
        r = open_page(out / f"notebooks/{nb}.html", IMAGES_JS)
        assert r["errors"] == [], (nb, r["errors"])
        images = json.loads(r["value"])
        assert all(i["complete"] and i["w"] > 0 for i in images), (nb, images)
        if nb == "report":
            assert len(images) >= 4
