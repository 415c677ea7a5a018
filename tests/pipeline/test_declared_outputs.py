"""Every output is declared: deleting a file under processed/<exp>/ regenerates exactly it and
what depends on it; `snakemake -n` and `--lint` change nothing on disk (also with a stale launch
manifest); `snakemake --report` builds the HTML report."""

import hashlib
import os
from pathlib import Path

import pytest
import yaml

from podnet.config.lean import FIGURE_NAMES
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


def plant_account(raw: Path, launch_id: str, reason: str) -> Path:
    """An adaptive launch's account, as the launcher writes it (podnet.stats.account.account_schema)."""
    import json

    from podnet.stats.account import validate

    doc = {
        "podnet_adaptive": 1, "experiment": "declared", "variant": "planted", "launch_id": launch_id,
        "ended": f"2026-01-01T00:00:0{len(launch_id)}Z", "mode": "primary", "stop": reason,
        "runs_launched": 40, "fixed_repeats": 10, "fixed_protocol_runs": 80, "wall_s": 1790.0, "budget_s": 1800.0,
        "items": [{"by": "scenario", "baseline": "host-host", "treatment": "pod-pod", "scenario": "pod-pod",
                   "tool": "ping", "test": "plain", "metric": "rtt_avg", "rel_half_width": 0.11,
                   "target_rel_half_width": 0.05, "n": 8, "n_needed": 40, "status": "unmet", "reason": reason}],
    }  # fmt: skip
    validate(doc)
    path = raw / "planted" / "_adaptive" / f"{launch_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    """seed-raven copied to a scratch place, run once (report and seed checks)."""
    tmp = tmp_path_factory.mktemp("declared")
    path, raw, out = scratch_example(
        tmp, "declared", report={"notebooks": ["report", "explore", "seed_discrepancies"]}
    )
    plant_account(raw, "L1", "budget spent")
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
        "variants.csv",
        "sweeps.csv",
        "load_curves.csv",
        "latency_under_load.csv",
        "scale_curves.csv",
        "scale_effect.csv",
        "net_ready.csv",
        "net_ready_ratios.csv",
        "outliers.csv",
        "within_run.csv",
        "stats_settings.json",
        "METHODS.md",
    },
    "notebooks/report.html": {"notebooks/report.html"},
    "adaptive.csv": {"adaptive.csv"},
    "noise_floor.csv": {"noise_floor.csv"},
}
DEPENDENTS = {
    "figures/ratios.svg": {"notebooks/report.ipynb", "notebooks/report.html"},
    "seed_discrepancies.csv": {"notebooks/seed_discrepancies.ipynb", "notebooks/seed_discrepancies.html"},
    "stats_settings.json": {"figures/", "notebooks/"},
    "notebooks/report.html": {"notebooks/report.ipynb"},  # one job executes and renders the notebook
    "adaptive.csv": {"notebooks/"},
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
    # the published list is written again when a file it lists changed (not for byte-identical ones:
    # Snakemake compares their checksums), and says what is there now
    allowed = CASES[name] | {"published.json"}
    allowed |= {c for c in changed if any(c.startswith(d) for d in DEPENDENTS[name])}
    assert changed <= allowed, changed - allowed
    assert "tidy.parquet" not in changed
    listed = {f["path"]: f["sha256"] for i in _published(out)["published"] for f in i["files"]}
    assert {p: hashlib.sha256((out / p).read_bytes()).hexdigest() for p in listed} == listed


def _published(out: Path) -> dict:
    import json

    return json.loads((out / "published.json").read_text())


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
    for name in ("throughput", "latency", "ratios"):
        assert f"{name}.png" in html
    # one variant: no variants figure that only says so (figures/plan.json says why)
    assert "variants.png" not in html


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

    from tests.browser import IMAGES_JS, TABLES_JS, open_page

    cfg, raw, out = experiment
    report = tmp_path / "report.html"
    snakemake(cfg, "--report", str(report))
    r = open_page(report, REPORT_IMAGES_JS)
    assert r["errors"] == [], r["errors"]
    v = json.loads(r["value"])
    assert "Figures" in v["text"] and "Notebooks" in v["text"]
    published = [n for n in FIGURE_NAMES if (out / f"figures/{n}.png").exists()]
    assert published == ["throughput", "latency", "ratios"]
    assert len(v["embedded"]) == len(published) and all(
        i["w"] > 500 and i["h"] > 100 for i in v["embedded"]
    ), v["embedded"]
    assert all(i["w"] > 0 for i in v["page"])
    for nb in ("report", "explore", "seed_discrepancies"):
        r = open_page(out / f"notebooks/{nb}.html", IMAGES_JS)
        assert r["errors"] == [], (nb, r["errors"])
        images = json.loads(r["value"])
        assert all(i["complete"] and i["w"] > 0 for i in images), (nb, images)
        if nb == "report":  # every published figure (a figure with nothing to show is left out)
            assert len(images) >= len(published), (nb, len(images), published)
        if nb == "explore":  # the distributions, and the iperf3 interval series where there is one
            assert len(images) >= _explore_figures(out), (nb, len(images))
            # its tables fit a 1280-px page: one unit per column, shared columns said once (podnet.report.tables)
            page = json.loads(open_page(out / f"notebooks/{nb}.html", TABLES_JS, width=1280)["value"])
            assert page["tables"] and all(t["right"] <= page["page"] for t in page["tables"]), page


def test_every_figure_of_every_published_notebook_is_an_image(experiment):
    """A figure shows as an image/png output, never as the text '<Figure size 700x210 with 4 Axes>'
    (what a backend chosen at import, e.g. Agg, leaves in an executed notebook)."""
    import json
    import re

    cfg, raw, out = experiment
    counts = {}
    for nb in sorted((out / "notebooks").glob("*.ipynb")):
        n = 0
        for i, cell in enumerate(json.loads(nb.read_text())["cells"]):
            for o in cell.get("outputs", []):
                data = o.get("data", {})
                text = "".join(data.get("text/plain", ""))
                if re.search(r"<Figure size [\d.]+x[\d.]+ with \d+ Axes>", text):
                    assert "image/png" in data, f"{nb.name} cell {i}: a figure without its image: {text[:80]}"
                n += "image/png" in data
        counts[nb.stem] = n
    published = [n for n in FIGURE_NAMES if (out / f"figures/{n}.png").exists()]
    assert counts["report"] >= len(published) >= 3 and counts["explore"] >= _explore_figures(out), (
        counts,
        published,
    )


def _explore_figures(out: Path) -> int:
    """Figures explore draws: the distributions, and the per-interval series only when the experiment
    has per-interval rows (otherwise a sentence says why, never an empty axes)."""
    import pandas as pd

    return 1 + (not pd.read_parquet(out / "intervals.parquet").empty)


def test_the_adaptive_accounts_are_declared_inputs_of_the_findings(experiment):
    """raw/<exp>/<variant>/_adaptive/*.json -> adaptive.csv -> the report's findings; a new account re-runs them."""
    import json

    cfg, raw, out = experiment
    text = "".join(
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in json.loads((out / "notebooks/report.ipynb").read_text())["cells"]
        for o in c.get("outputs", [])
    )
    assert "0 of 1 primary comparisons reached their precision target (±5 %" in text
    assert "ping plain RTT (mean): ±11 % with n = 8 (budget spent; needs ~40 repeats at this noise)" in text
    assert not (out / "failed_runs.csv").read_text().count("_adaptive")  # not parsed as tool output
    plant_account(raw, "L22", "max_repeats reached")
    dry = snakemake(cfg, "-n")
    assert "adaptive" in dry and "parse_shard" not in dry
    snakemake(cfg)
    acc = (out / "adaptive.csv").read_text()
    assert "L22" in acc and "max_repeats reached" in acc


def test_the_published_list_is_written_last_from_what_is_there(experiment):
    """published.json (podnet.report.published, the last rule of `all`): every figure, notebook and
    table there, each file with its size and sha256, the figures the plan left out with why."""
    import json

    cfg, raw, out = experiment
    snakemake(cfg)
    doc = json.loads((out / "published.json").read_text())
    assert doc["complete"] is True and doc["not_published"] == []
    kinds = {(i["kind"], i["name"]) for i in doc["published"]}
    assert {("figure", n) for n in ("throughput", "latency", "ratios")} <= kinds
    assert {("notebook", n) for n in ("report", "explore", "seed_discrepancies")} <= kinds
    assert {("table", n) for n in ("summary.csv", "ratios.csv", "tidy.parquet", "METHODS.md")} <= kinds
    files = [f for i in doc["published"] for f in i["files"]]
    listed = {f["path"] for f in files}
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert listed <= on_disk and not {p for p in listed if p.startswith(("logs/", "parsed/", ".cache/"))}
    for f in files:
        data = (out / f["path"]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (f["bytes"], f["sha256"]), f["path"]
    assert "variants" in doc["figures_not_drawn"]


def test_a_failed_figure_job_is_not_published_and_the_run_says_so(experiment):
    """A figure job that fails (its SVG's path taken by a directory, as a disk would refuse it): the
    run fails and says which figure is not published and why; the published list written after the
    failure does not claim it, names its log and the error its job logged; the next run writes the
    list again (it said "complete": false), with the figure once its job succeeds."""
    import json
    import shutil

    cfg, raw, out = experiment
    figs = out / "figures"
    (figs / "latency.png").unlink()
    (figs / "latency.svg").unlink()
    (figs / "latency.svg" / "taken").mkdir(parents=True)  # Snakemake leaves a non-empty directory
    try:
        log = snakemake(cfg, check=False)
        assert "Error in rule figure" in log and "At least one job did not complete successfully" in log
        assert "published.json (the run failed)" in log, log[-3000:]
        assert "not published: figure latency" in log, log[-3000:]
        doc = json.loads((out / "published.json").read_text())
        assert doc["complete"] is False
        assert ("figure", "latency") not in {(i["kind"], i["name"]) for i in doc["published"]}
        assert not [
            f for i in doc["published"] for f in i["files"] if f["path"].startswith("figures/latency.")
        ]
        (gone,) = [g for g in doc["not_published"] if g["name"] == "latency"]
        assert gone["kind"] == "figure" and gone["log"] == "logs/figure-latency.log"
        assert "figures/latency.svg" in gone["missing"] and "IsADirectoryError" in gone["reason"], gone
        assert (
            "IsADirectoryError" in (out / "logs/figure-latency.log").read_text()
        )  # the job's own log says it
        assert {("figure", "throughput"), ("figure", "ratios")} <= {
            (i["kind"], i["name"]) for i in doc["published"]
        }
        assert "published" in snakemake(cfg, "-n")  # a list written after a failure is written again
    finally:
        shutil.rmtree(figs / "latency.svg")
    snakemake(cfg)
    doc = json.loads((out / "published.json").read_text())
    assert doc["complete"] is True and doc["not_published"] == []
    assert ("figure", "latency") in {(i["kind"], i["name"]) for i in doc["published"]}
    assert "Nothing to be done" in snakemake(cfg, "-n")
