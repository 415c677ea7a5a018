"""A figure per seed in processed/seeds/ (podnet.report.vs_seed.seeds, ``make seeds``; issue 46): each
published campaign's own figures/vs_seed.* copied as figures/<campaign>.*, none for a campaign not
published, and the seeds notebook's parts showing each figure under its count of verdicts; on
made-up processed folders."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path

import pandas as pd

from podnet.report import vs_seed
from podnet.report.vs_seed import seeds

REPO = Path(__file__).resolve().parents[2]


def _png() -> bytes:
    """A real 1x1 PNG (the notebook embeds it as it is)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff"))
        + chunk(b"IEND", b"")
    )


def _claims(seed: str) -> pd.DataFrame:
    row = {"seed": seed, "claim": "c0", "says": "claim 0", "verdict": "agrees", "reason": ""}
    return pd.DataFrame([row]).reindex(columns=vs_seed.CLAIM_COLUMNS)


def _figure(d: Path, exts: tuple[str, ...] = ("png", "svg", "pdf")) -> dict[str, bytes]:
    """figures/vs_seed.<ext> in ``d`` as the campaign's vs_seed rule draws them (made-up bytes)."""
    (d / "figures").mkdir(parents=True, exist_ok=True)
    files = {"png": _png(), "svg": f"<svg>{d.name}</svg>".encode(), "pdf": f"%PDF {d.name}".encode()}
    for ext in exts:
        (d / "figures" / f"vs_seed.{ext}").write_bytes(files[ext])
    return files


def _folders(tmp_path: Path) -> tuple[list[Path], dict[str, bytes]]:
    """seed-001 published with its figure; seed-002 with a figure left from a drawing but no claims
    (not published); seed-004 never run (no folder)."""
    proc = tmp_path / "processed"
    vs_seed.write(_claims("seed 001"), proc / "seed-001" / "vs_seed_claims.csv")
    files = _figure(proc / "seed-001")
    _figure(proc / "seed-002")
    return [proc / "seed-001", proc / "seed-002", proc / "seed-004"], files


def test_a_published_campaigns_figure_is_copied_an_unpublished_ones_is_not(tmp_path):
    dirs, files = _folders(tmp_path)
    out = tmp_path / "seeds"
    seeds.publish(dirs, out)
    figs = out / "figures"
    for ext in ("png", "svg", "pdf"):
        assert (figs / f"seed-001.{ext}").read_bytes() == files[ext]  # copied as drawn, not redrawn
    assert sorted(p.name for p in figs.iterdir()) == ["seed-001.pdf", "seed-001.png", "seed-001.svg"]
    assert seeds.has_published(dirs[0]) and not seeds.has_published(dirs[1])
    assert not seeds.has_published(dirs[2])


def test_only_the_formats_a_campaign_has_and_a_stale_figure_goes(tmp_path):
    proc = tmp_path / "processed"
    d = proc / "seed-003"
    vs_seed.write(_claims("seed 003"), d / "vs_seed_claims.csv")
    _figure(d, ("png",))
    out = tmp_path / "seeds"
    got = seeds.copy_figures([d], out)
    assert got == {"seed-003": [out / "figures" / "seed-003.png"]}
    assert not (out / "figures" / "seed-003.svg").exists()
    # the campaign's verdicts are gone (its folder cleaned): the next publish drops its figure too
    (d / "vs_seed_claims.csv").write_text("")
    assert seeds.copy_figures([d], out) == {}
    assert not (out / "figures" / "seed-003.png").exists()


def test_the_notebook_shows_each_figure_under_its_count(tmp_path):
    dirs, files = _folders(tmp_path)
    out = tmp_path / "seeds"
    _, counts = seeds.publish(dirs, out)
    parts = seeds.figure_parts(counts, out)
    assert parts[:2] == ["### seed-001", "**seed-001** (seed 001): 1 claim: 1 agrees."]
    data, meta = parts[2]._repr_png_()  # what the notebook's output holds: the PNG, no path
    assert base64.b64decode(data) == files["png"] and meta == {"width": 700}
    # seed-002 and seed-004: no claims here, no figure: not run yet
    assert parts[3] == "### seed-002" and "not run yet" in parts[5]
    assert parts[6] == "### seed-004" and "not run yet" in parts[8] and len(parts) == 9
    # a campaign listed from its file, not run yet, and one published without its figure
    listed = pd.DataFrame(
        [
            {"campaign": "seed-005", "seed": "seed 005", "verdict": seeds.NOT_RUN_YET, "n": 3},
            {"campaign": "seed-006", "seed": "seed 006", "verdict": "agrees", "n": 2},
        ]
    )
    later = seeds.figure_parts(listed, out)
    assert later[1] == "**seed-005** (seed 005): 3 claims: 3 not run yet." and "not run yet" in later[2]
    assert "without its figure" in later[5] and "processed/seed-006/figures/vs_seed.png" in later[5]
    # the lead keeps its lines, each a count_line
    assert seeds.headline(counts).splitlines()[0] == "- " + parts[1]


def test_the_seeds_notebook_calls_the_library_for_the_figures():
    nb = json.loads((REPO / "notebooks" / "seeds.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    i = code.index("explore.show(*seeds.figure_parts(counts, seeds_dir))")
    assert "seeds.headline(counts)" in code[i - 2] and "per_campaign" in code[-1]  # after the counts
