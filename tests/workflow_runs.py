"""Snakemake runs for the pipeline tests: one runner, and an example copied to a scratch place."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO

SNAKEMAKE = str(REPO / ".venv/bin/snakemake")


def snakemake(
    configfile: str | Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> str:
    """Run the workflow from the repository on ``configfile`` (targets and options in ``args``;
    ``env``: variables added to the environment); returns its output, asserting success unless
    ``check`` is false."""
    # args before --configfile: it takes several values and would swallow a target after it
    p = subprocess.run(
        [SNAKEMAKE, *map(str, args), "--cores", "2", "--configfile", str(configfile)],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    if check:
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout + p.stderr


def example_config(example: str) -> dict[str, Any]:
    """config/examples/<example>.yaml as a mapping."""
    return yaml.safe_load((REPO / "config" / "examples" / f"{example}.yaml").read_text())


def scratch_example(
    tmp: Path, experiment: str, example: str = "seed-raven", **config: Any
) -> tuple[Path, Path, Path]:
    """The example's raw files copied under ``tmp`` with a config writing to ``tmp/out`` (top-level
    keys in ``config`` replace the example's): (config path, raw dir, processed dir)."""
    raw, out = tmp / "raw", tmp / "out"
    shutil.copytree(REPO / "raw" / example, raw)
    cfg = example_config(example)
    cfg.update(experiment=experiment, raw_dir=str(raw), processed_dir=str(out), **config)
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, raw, out
