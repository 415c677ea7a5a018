"""What a reader opens is right where they open it (issue 45): notebooks find their experiment's
folder from where they run or stop naming it, executed notebooks carry paths relative to their own
folder, the report links METHODS.md, a planned figure whose files are gone is not published."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from podnet.report import explore, figures, paths
from podnet.report.figures import data


def test_locate_finds_a_relative_folder_from_a_subfolder_or_names_it(tmp_path, monkeypatch):
    (tmp_path / "processed" / "exp").mkdir(parents=True)
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")  # where `jupyter lab notebooks/` starts a kernel
    assert paths.locate("processed/exp").resolve() == (tmp_path / "processed" / "exp").resolve()
    with pytest.raises(paths.NotFound, match="processed_dir 'processed/nope' does not exist"):
        paths.locate("processed/nope")
    assert paths.locate_raw("raw/nope") is None and paths.locate_raw(None) is None


def test_load_of_a_folder_that_is_nowhere_or_holds_no_table_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(paths.NotFound, match="processed/missing"):
        data.load("processed/missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(paths.NotFound, match="holds none of the tables"):
        data.load("empty")
    (tmp_path / "some").mkdir()
    (tmp_path / "some" / "summary.csv").write_text("variant,scenario\nv,s\n")
    assert len(data.load("some").summary) == 1  # a folder with a table loads; absent tables are empty


def test_a_declared_table_that_is_missing_or_empty_is_an_error_naming_its_path(tmp_path):
    d = tmp_path / "exp"
    d.mkdir()
    (d / "summary.csv").write_text("variant,scenario\nv,s\n")
    with pytest.raises(paths.NotFound, match="lacks ratios.csv"):
        data.load(d, only=["summary", "ratios"])  # a table the job declared is not there
    (d / "ratios.csv").write_text("")
    with pytest.raises(paths.NotFound, match=re.escape(f"{d / 'ratios.csv'} is empty")):
        data.load(d, only=["summary", "ratios"])
    with pytest.raises(paths.NotFound, match="ratios.csv is empty"):
        data.load(d)  # an empty file is an error whether asked for or not
    (d / "ratios.csv").write_text("\n")
    with pytest.raises(paths.NotFound, match="ratios.csv is empty"):
        data.load(d)
    (d / "ratios.csv").unlink()
    (d / "tidy.parquet").write_bytes(b"")
    with pytest.raises(paths.NotFound, match="tidy.parquet is empty"):
        data.load(d)
    (d / "tidy.parquet").unlink()
    (d / "stats_settings.json").write_text("")
    with pytest.raises(paths.NotFound, match="stats_settings.json is empty"):
        data.load(d, only=["summary", "settings"])


def test_notebook_params_are_relative_to_the_executed_notebooks_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = "processed/exp/notebooks/report.ipynb"
    p = paths.notebook_params(
        out,
        {"processed_dir": "processed/exp", "raw_dir": "raw/exp", "none": None},
        {"compare_with": ["processed/b"]},
    )
    assert p == {
        "processed_dir": "..",
        "raw_dir": os.path.join("..", "..", "..", "raw", "exp"),
        "none": None,
        "compare_with": [os.path.join("..", "..", "b")],
    }
    assert not any(str(tmp_path) in str(v) for v in p.values())


def test_the_report_links_methods_by_its_sections_instead_of_pasting_it(tmp_path):
    m = tmp_path / "METHODS.md"
    m.write_text(
        "# Statistical methods\n\ntext `launch.tools.<tool>`\n\n## Data used\n\nx\n\n## Placement (`launch.affinity`)\n"
    )
    text = explore.methods_links(m, "../METHODS.md")
    assert text.startswith("[METHODS.md](../METHODS.md) (2 sections)")
    assert "- Data used" in text and "- Placement (`launch.affinity`)" in text and "x\n" not in text
    assert "not found" in explore.methods_links(tmp_path / "nope.md", "../METHODS.md")


def test_a_planned_figure_whose_files_are_gone_is_not_published_and_says_why(tmp_path):
    plan = tmp_path / "plan.json"
    names = [n for n in figures.lean.FIGURES][:3]
    plan.write_text(
        json.dumps(
            {names[0]: {"published": True}, names[1]: {"published": True}, names[2]: {"omitted": "no data"}}
        )
    )
    for ext in ("png", "svg", "pdf"):
        (tmp_path / f"{names[0]}.{ext}").write_bytes(b"x")
    (tmp_path / f"{names[1]}.png").write_bytes(b"x")  # its job died after the PNG
    assert figures.published(plan) == [names[0]]
    text = figures.omitted_markdown(plan)
    assert f"**{names[2]}**: no data" in text
    assert "**Not published**, although planned" in text and f"{names[1]}.svg" in text
    assert figures.omitted_markdown(plan, [names[0]]) == ""


def test_the_published_notebooks_find_their_folder_through_paths(tmp_path):
    root = Path(__file__).resolve().parents[2]
    for name in ("report", "explore", "compare", "planning", "seed_discrepancies", "vs_seed"):
        nb = json.loads((root / "notebooks" / f"{name}.ipynb").read_text())
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "processed_dir = paths.locate(processed_dir)" in code, name


def test_compare_says_what_it_compares():
    import pandas as pd

    from podnet.report.findings import compare_lead

    tidy = pd.DataFrame({"variant": ["bridge"] * 3, "source": ["measured"] * 3, "run_id": ["a", "b", "c"]})
    ratios = pd.DataFrame({"by": ["scenario"] * 4, "role": ["primary"] * 3 + ["exploratory"]})
    t = data.Tables(tidy=tidy, summary=pd.DataFrame(), ratios=ratios, failed=pd.DataFrame())
    text = compare_lead(t, "variant", 0)
    assert "one measured variant (bridge)" in text and "Its 4 comparisons between paths (3 primary)" in text
    two = data.Tables(
        tidy=pd.concat([tidy, tidy.assign(variant="vxlan")]),
        summary=pd.DataFrame(),
        ratios=ratios,
        failed=pd.DataFrame(),
    )
    assert (
        compare_lead(two, "variant", 12) == "Comparing by **variant**: 2 variants (bridge, vxlan), 12 ratios."
    )
    assert "by **experiment**: 5 ratios" in compare_lead(t, "experiment", 5)


def test_compare_with_one_variant_never_says_no_comparison_is_configured():
    import pandas as pd

    from podnet.report.findings import NOTHING_BETWEEN, compare_words

    empty = data.Tables(
        tidy=pd.DataFrame(), summary=pd.DataFrame(), ratios=pd.DataFrame(), failed=pd.DataFrame()
    )
    assert compare_words(empty) == NOTHING_BETWEEN
    assert "report's findings" in NOTHING_BETWEEN and "configured" not in NOTHING_BETWEEN


def test_the_plan_never_says_published_and_a_deleted_figure_is_not(tmp_path):
    """The plan is written before the figures are drawn: it says planned, never published. One
    figure's job output deleted after it ran (as a job dying mid-run leaves it): the figures published
    are those whose files are there, and the report names the missing one."""
    from tests import figures_data

    t = data.load(figures_data.with_repeats(tmp_path / "exp"))
    out = tmp_path / "figures"
    out.mkdir()
    specs = {n: out / f"{n}.sha256" for n in figures.FIGURES}
    plan = figures.write_plan(t, out / "plan.json", specs)
    wanted = [n for n, e in plan.items() if "digest" in e]
    assert len(wanted) >= 2, plan
    written = json.loads((out / "plan.json").read_text())
    assert all("published" not in e for e in written.values()), written
    assert all(written[n].get("planned") is True for n in wanted)
    for name in wanted:
        figures.publish_one(name, t, out)
    assert figures.published(out / "plan.json") == wanted
    gone = wanted[0]
    (out / f"{gone}.svg").unlink()
    assert figures.published(out / "plan.json") == wanted[1:]
    text = figures.omitted_markdown(out / "plan.json")
    assert f"**{gone}**: planned, but its files are not there ({gone}.svg)" in text, text
    assert json.loads((out / "plan.json").read_text()) == written  # the plan itself claims nothing


def _lab_recipe() -> str:
    """The Makefile's ``lab`` recipe as a shell script (make's ``$$`` as ``$``, no ``LAB_ARGS``)."""
    lines = (Path(__file__).resolve().parents[2] / "Makefile").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("lab:"))
    body = []
    for ln in lines[start + 1 :]:
        if not ln.startswith("\t"):
            break
        body.append(ln[1:].lstrip("@"))
    examples = next(ln for ln in lines if ln.startswith("EXAMPLES :=")).split(":=")[1].split()
    return (
        "\n".join(body)
        .replace("$(LAB_ARGS)", "")
        .replace("$(EXAMPLES_RE)", "|".join(examples))
        .replace("$$", "$")
    )


def test_make_lab_opens_the_last_explore_notebook_and_allows_root_only_as_root(tmp_path):
    """The recipe run with a stand-in jupyter: the explore notebook published last, --allow-root
    exactly when the user is root (JupyterLab refuses root without it), the project as its root."""
    import subprocess
    import time

    fake = tmp_path / ".venv" / "bin" / "jupyter"
    fake.parent.mkdir(parents=True)
    fake.write_text('#!/bin/sh\necho "ARGS $*"\n')
    fake.chmod(0o755)
    for name in ("older", "newer"):
        nb = tmp_path / "processed" / name / "notebooks" / "explore.ipynb"
        nb.parent.mkdir(parents=True)
        nb.write_text("{}")
        time.sleep(0.05)
    recipe = _lab_recipe()
    out = subprocess.run(
        ["sh", "-c", recipe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    args = next(ln for ln in out.splitlines() if ln.startswith("ARGS ")).split()[1:]
    assert args[0] == "lab" and args[-1] == "processed/newer/notebooks/explore.ipynb", args
    # `make run` publishes the imported examples after the main experiment: they are not "the last"
    ex = tmp_path / "processed" / "seed-raven" / "notebooks" / "explore.ipynb"
    ex.parent.mkdir(parents=True)
    ex.write_text("{}")
    out = subprocess.run(
        ["sh", "-c", recipe], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[-1].endswith("processed/newer/notebooks/explore.ipynb"), out
    ex.unlink()
    assert ("--allow-root" in args) == (os.getuid() == 0), args
    assert "--ServerApp.root_dir=." in args
    other = "0" if os.getuid() else "1000"  # the other kind of user: id -u answers it
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "id").write_text(f"#!/bin/sh\necho {other}\n")
    (tmp_path / "bin" / "id").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    out = subprocess.run(
        ["sh", "-c", recipe], cwd=tmp_path, capture_output=True, text=True, check=True, env=env
    ).stdout
    args = next(ln for ln in out.splitlines() if ln.startswith("ARGS ")).split()[1:]
    assert ("--allow-root" in args) == (other == "0"), args
