"""explore.runs / distributions on runs that report a metric per direction (iperf3 --bidir)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from podnet import explore
from podnet.figures import data
from podnet.raw import write_raw
from tests import figures_data
from tests.conftest import FIXTURES


def _experiment(root: Path) -> Path:
    raw = root / "raw"
    for r in (1, 2):
        for scenario, fixture in (
            ("pod-pod", "iperf3/tcp-bidir.json"),
            ("host-host", "iperf3/tcp-forward.json"),
        ):
            meta = {"variant": "bridge", "scenario": scenario, "repeat": r, "tool": "iperf3", "test": "tcp"}
            write_raw(raw / f"{scenario}/r{r}.json", (FIXTURES / fixture).read_bytes(), meta)
    return figures_data.process(raw, root / "processed", "bidir")


def test_runs_keep_both_directions_of_a_bidir_run(tmp_path):
    t = data.load(_experiment(tmp_path))
    r = explore.runs(t)
    bidir = r[r["scenario"] == "pod-pod"]
    assert set(bidir["direction"]) >= {"bidir-forward", "bidir-reverse"} or bidir["direction"].nunique() == 2
    assert len(r) == len(r[["run_id", "direction", "streams"]].drop_duplicates())
    fig = explore.distributions(t)
    assert fig.axes
    plt.close(fig)
