"""A non-editable install works outside the source tree: the schema is package data, no test double ships."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.pipeline

REPO = Path(__file__).resolve().parents[2]


def test_pip_install_then_podnet_parse(tmp_path):
    src = tmp_path / "src"  # a copy: the build must not leave build/ in the working tree
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "podnet", src / "podnet", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(src)], capture_output=True, text=True
    )
    assert pip.returncode == 0, pip.stderr
    site = next((venv / "lib").glob("python3*/site-packages"))
    pkg = site / "podnet"
    assert (pkg / "config" / "config.schema.yaml").is_file() and (pkg / "stats" / "METHODS.md").is_file()
    for name in ("sidecar", "account"):  # podnet's own files' JSON schemas (podnet.config.schema.data_schema)
        assert (pkg / "config" / "schemas" / f"{name}.schema.yaml").is_file(), name
    assert not (pkg / "launch" / "fake.py").exists()
    for manifest in ("rbac.yaml", "admission.yaml", "rbac-namespaces.yaml"):  # podnet.launch.cluster.rbac's
        assert (pkg / "launch" / "policy" / manifest).is_file(), manifest
    # third-party dependencies from this environment (PYTHONPATH skips its editable podnet hook)
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    fixture = REPO / "tests" / "fixtures" / "iperf3" / "tcp-forward.json"
    out = subprocess.run(
        [str(venv / "bin" / "podnet"), "parse", str(fixture)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert ",iperf3,tcp,tcp,forward," in out.stdout and "throughput" in out.stdout
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import podnet.config.schema as s, podnet.launch.cluster.rbac as r; print(s.SCHEMA_PATH); print(r.RBAC_PATH)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    paths = where.stdout.split()
    assert len(paths) == 2 and all(p.startswith(str(site)) for p in paths), where.stdout + where.stderr
    assert Path(paths[1]).is_file()
