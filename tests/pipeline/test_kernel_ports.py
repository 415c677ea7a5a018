"""Notebook kernels started at the same moment never share a port (issue 43: `make run` ended with
"Address already in use" when two notebook jobs started their kernels together).

The report's kernels talk over Unix sockets in a directory of their own (podnet.config.warm's
kernel manager), so more notebooks than cores, started at once, all finish; with and without a
warm zygote."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
N = 6  # more than the machine's cores (2): the kernels start together


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    nb.cells = [
        nbformat.v4.new_code_cell("n = 0", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("import os\nprint('square', n * n, os.getpid())"),
    ]
    nbformat.write(nb, path)


RUN = """
import sys, papermill
from podnet.config.warm import kernel_manager_class
km = kernel_manager_class()
nb = papermill.execute_notebook(sys.argv[1], sys.argv[2], parameters={"n": int(sys.argv[3])},
    kernel_name="python3", progress_bar=False, kernel_manager_class=km)
print(km.__name__, "transport", km().transport)
"""


def test_a_kernel_talks_over_unix_sockets_in_a_directory_of_its_own_removed_after(monkeypatch):
    from podnet.config.warm import kernel_manager_class

    monkeypatch.setenv("PODNET_WARM", "0")

    async def run() -> tuple[str, str, bool, bool]:
        km = kernel_manager_class()(kernel_name="python3")
        await km.start_kernel()
        try:
            kc = km.client()
            kc.start_channels()
            await kc.wait_for_ready(timeout=60)
            kc.stop_channels()
            there = os.path.isdir(os.path.dirname(km.ip))
        finally:
            await km.shutdown_kernel(now=True)
        return km.transport, km.ip, there, os.path.exists(os.path.dirname(km.ip))

    transport, ip, during, after = asyncio.run(run())
    assert transport == "ipc" and os.path.basename(os.path.dirname(ip)).startswith("podnet-kernel-")
    assert during and not after


@pytest.mark.parametrize("warm", ["0", "zygote"])
def test_more_notebooks_than_cores_started_at_once_all_finish(tmp_path, warm, monkeypatch):
    monkeypatch.delenv("PODNET_WARM", raising=False)
    src = tmp_path / "nb.ipynb"
    _notebook(src)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    zygote = None
    if warm == "zygote":
        from podnet.config import warm as warm_mod

        zygote = warm_mod.start(["papermill", "ipykernel"])  # the report's kernels as forks of it
        assert zygote is not None
        env[warm_mod.ENV] = zygote
    else:
        env["PODNET_WARM"] = "0"
    try:

        def one(i: int) -> subprocess.CompletedProcess:
            out = tmp_path / f"out-{i}.ipynb"
            return subprocess.run(
                [sys.executable, "-c", RUN, str(src), str(out), str(i)],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )

        with ThreadPoolExecutor(N) as pool:
            done = list(pool.map(one, range(N)))
    finally:
        if zygote is not None:
            from podnet.config import warm as warm_mod

            warm_mod.stop()
    for i, r in enumerate(done):
        assert r.returncode == 0, r.stderr[-3000:]
        assert "Address already in use" not in r.stderr
        assert "transport ipc" in r.stdout
        cells = json.loads((tmp_path / f"out-{i}.ipynb").read_text())["cells"]
        assert any(
            f"square {i * i}" in "".join(o.get("text", "")) for c in cells for o in c.get("outputs", [])
        )
