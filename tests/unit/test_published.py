"""The published list (issue 45: a failed step never says it published): written from what exists,
a figure, notebook or table published only with all its files there, each with its size and sha256;
a planned one that is not there named with its job's log and the log's last line; a job's uncaught
error reaches that log (podnet.config.joblog)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from podnet.config import joblog
from podnet.report import published


def _experiment(tmp_path: Path) -> tuple[Path, dict[str, str | None], Path]:
    out = tmp_path / "processed" / "exp"
    (out / "figures").mkdir(parents=True)
    (out / "notebooks").mkdir()
    (out / "logs").mkdir()
    plan = out / "figures" / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "throughput": {"planned": True},
                "latency": {"planned": True, "intervals": False},
                "ratios": {"published": True},  # a plan written before issue 45
                "variants": {"omitted": "one variant (v): nothing to compare"},
            }
        )
    )
    for name in ("throughput", "ratios"):
        for ext in published.FIGURE_FORMATS:
            (out / "figures" / f"{name}.{ext}").write_bytes(f"{name}.{ext}".encode())
    (out / "figures" / "latency.png").write_bytes(b"png")  # its job died after the PNG
    (out / "logs" / "figure-latency.log").write_text("drawing latency\nIsADirectoryError: latency.svg\n\n")
    (out / "summary.csv").write_text("a,b\n1,2\n")
    (out / "notebooks" / "report.ipynb").write_text("{}")
    (out / "notebooks" / "report.html").write_text("<html></html>")
    (out / "notebooks" / "explore.ipynb").write_text("{}")  # its HTML is missing, no log
    files = {
        str(out / "summary.csv"): str(out / "logs" / "stats.log"),
        str(out / "ratios.csv"): None,
        str(plan): str(out / "logs" / "figure_plan.log"),
        **{
            str(out / "notebooks" / f"{nb}.{ext}"): None
            for nb in ("report", "explore")
            for ext in ("ipynb", "html")
        },
    }
    return out, files, plan


def test_the_list_claims_only_what_is_there_whole_and_says_why_the_rest_is_not(tmp_path):
    out, files, plan = _experiment(tmp_path)
    figure_log = str(out / "logs" / "figure-{figure}.log")
    doc = published.write(out / "published.json", "exp", files, plan, figure_log, complete=False)
    assert json.loads((out / "published.json").read_text()) == doc
    shown = [(i["kind"], i["name"]) for i in doc["published"]]
    assert shown == [
        ("figure", "throughput"),
        ("figure", "ratios"),
        ("notebook", "report"),
        ("table", "summary.csv"),
        ("table", "figures/plan.json"),
    ]
    summary = next(i for i in doc["published"] if i["name"] == "summary.csv")["files"][0]
    assert summary == {
        "path": "summary.csv",
        "bytes": 8,
        "sha256": hashlib.sha256(b"a,b\n1,2\n").hexdigest(),
    }
    thr = next(i for i in doc["published"] if i["name"] == "throughput")
    assert [f["path"] for f in thr["files"]] == [
        "figures/throughput.png",
        "figures/throughput.svg",
        "figures/throughput.pdf",
    ]
    gone = {(g["kind"], g["name"]): g for g in doc["not_published"]}
    assert set(gone) == {("figure", "latency"), ("notebook", "explore"), ("table", "ratios.csv")}
    lat = gone[("figure", "latency")]
    assert (
        lat["missing"] == ["figures/latency.svg", "figures/latency.pdf"]
        and lat["log"] == "logs/figure-latency.log"
    )
    assert "its job failed" in lat["reason"] and "IsADirectoryError: latency.svg" in lat["reason"]
    assert gone[("notebook", "explore")]["log"] is None
    assert "no job of this run made them" in gone[("notebook", "explore")]["reason"]
    assert doc["figures_not_drawn"] == {"variants": "one variant (v): nothing to compare"}
    assert doc["complete"] is False and "FAILED" in doc["about"]
    assert str(tmp_path) not in (out / "published.json").read_text()  # paths relative to its folder
    text = published.summary(doc)
    assert text.startswith("published.json (the run failed): published 2 figures, 1 notebook, 2 tables")
    assert "not published: figure latency: figures/latency.svg, figures/latency.pdf not there" in text


def test_after_a_failed_run_the_list_is_written_older_than_any_input(tmp_path, capsys):
    out, files, plan = _experiment(tmp_path)
    path = out / "published.json"
    assert published.after_error(path, "exp", files, plan, str(out / "logs/figure-{figure}.log"))
    assert json.loads(path.read_text())["complete"] is False and path.stat().st_mtime == 0
    assert "published.json (the run failed)" in capsys.readouterr().err
    assert not published.after_error(tmp_path / "none" / "published.json", "exp", {}, plan, "x")


def test_no_plan_plans_no_figure(tmp_path):
    figures, omitted = published.planned_figures(tmp_path / "plan.json", "logs/figure-{figure}.log")
    assert figures == [] and omitted == {}


def test_an_uncaught_error_of_a_job_reaches_its_log(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("started\n")
    code = (
        "from podnet.config import joblog\n"
        f"joblog.log_failures([{str(log)!r}])\n"
        "raise IsADirectoryError('figures/latency.svg')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 1 and "IsADirectoryError" in p.stderr  # on standard error as before ...
    text = log.read_text()
    assert text.startswith("started\nTraceback") and text.rstrip().endswith(
        "IsADirectoryError: figures/latency.svg"
    )
    assert published.last_line(log) == "IsADirectoryError: figures/latency.svg"  # ... and the list's reason
    assert joblog.job_logs() == []  # outside a Snakemake job: no log, nothing changes
