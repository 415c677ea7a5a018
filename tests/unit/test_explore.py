"""explore.runs / distributions on runs that report a metric per direction (iperf3 --bidir)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from podnet.parse.raw import write_raw
from podnet.report import explore, interference, intervals
from podnet.report.figures import data
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


def test_interference_sets_slow_runs_beside_what_competed_with_them(tmp_path):
    """Runs whose sidecars record more daemon CPU are the slower ones: rho > 0; imported runs: empty."""
    import json

    import numpy as np
    import pytest

    doc = json.loads((FIXTURES / "iperf3/tcp-forward.json").read_text())
    raw = tmp_path / "raw"
    for r, (gbps, daemons) in enumerate(
        [(9.0, 0.1), (8.0, 0.5), (9.5, 0.05), (7.0, 0.9), (8.5, 0.3), (9.2, 0.2)], 1
    ):
        doc["end"]["sum_received"]["bits_per_second"] = gbps * 1e9
        meta = {
            "variant": "bridge",
            "scenario": "pod-pod",
            "repeat": r,
            "tool": "iperf3",
            "test": "tcp",
            "interference": {
                "busy": 0.5 + daemons / 2,
                "steal": 0.01,
                "nodes": {"n1": {"seen_by": "client", "busy": 0.5 + daemons / 2}},
                "exec_wall_s": 10.0,
                "launcher_cpu_s": 0.1,
                "daemons": {"cpu_s": daemons * 10, "control_plane_cpu_s": daemons * 5, "by_daemon": {}},
            },
        }
        write_raw(raw / f"pod-pod/r{r}.json", json.dumps(doc), meta)
    meta = {"variant": "bridge", "scenario": "host-host", "repeat": 1, "tool": "iperf3", "test": "tcp"}
    write_raw(raw / "host-host/r1.json", json.dumps(doc), meta)
    t = data.load(figures_data.process(raw, tmp_path / "processed", "inter"))
    runs = interference.interference(t)
    pod = runs[runs["scenario"] == "pod-pod"]
    worst = pod.iloc[0]
    assert worst["value"] == 7.0e9 and worst["daemons_cpu"] == 0.9
    assert worst["worse_by"] == pytest.approx(
        1 - 7.0e9 / pod["value"].median()
    )  # throughput: higher is better
    assert runs.loc[runs["scenario"] == "host-host", "daemons_cpu"].isna().all()
    corr = interference.interference_correlation(runs).set_index("measure")
    assert corr.loc["daemons_cpu", "runs"] == 6 and corr.loc["daemons_cpu", "spearman_rho"] > 0.9
    assert np.isnan(corr.loc["cpu_steal", "spearman_rho"])  # no spread
    shown = interference.view(t, tmp_path / "raw")
    tables = [x for x in shown if not isinstance(x, str)]
    # only runs with a record: all of pod-pod, said once above the table
    assert len(tables) == 2 and "scenario" not in tables[0] and "scenario pod-pod" in shown[0]
    assert "left out: 1 run without a record" in shown[0], shown[0]
    assert tables[0]["value"].iloc[0] == "7.000 Gbit/s" and "daemons cpu" in tables[0]
    assert "run_id" not in tables[0] and "tool" not in tables[0] and "streams" not in tables[0]  # said once
    assert "All rows: variant bridge, scenario pod-pod" in shown[0], shown[0]
    assert tables[0]["worse_by"].map(_significant_digits).max() <= 3
    assert tables[1]["spearman_rho"].notna().all() and "cpu_steal" not in set(tables[1]["measure"])
    assert any("not computable for cpu_steal" in x for x in shown if isinstance(x, str))


def test_explores_panels_pass_the_layout_checks_and_show_only_paths_with_data():
    """The seed-cni-1gbe example (five CNIs, iperf 2, ping, ab) and one with two paths: tick labels
    neither repeat nor collide, and a panel lists only the paths it has runs for."""
    from podnet.report.figures import check

    root = Path(__import__("tempfile").mkdtemp())
    for d in (figures_data.example("seed-cni-1gbe", root), figures_data.with_repeats(root)):
        t = data.load(d)
        for fig in (explore.distributions(t), intervals.series(t)):  # a figure even when empty
            found = check.problems(fig)
            for ax in fig.axes:
                if ax.axison and ax.get_ylabel() == "":
                    shown = {x.get_text() for x in ax.get_yticklabels()}
                    title = ax.get_title().split(" · ")[0]
                    runs = t.tidy[(t.tidy["tool"] + " " + t.tidy["test"]) == title]
                    assert shown <= set(runs["scenario"]), (title, shown)
            plt.close(fig)
            assert not found, found[:5]


def test_the_sidecar_cache_gives_what_the_sidecars_say_and_follows_a_changed_one(tmp_path):
    import pandas as pd
    import yaml

    from podnet.parse.raw import sidecar_path

    d = _experiment(tmp_path)
    t = data.load(d)
    paths = t.tidy["raw_path"].astype(str).unique()
    cache = tmp_path / "cache.pickle"
    plain = explore.sidecars(paths)
    cold, warm = explore.sidecars(paths, cache=cache), explore.sidecars(paths, cache=cache)
    pd.testing.assert_frame_equal(cold, plain)
    pd.testing.assert_frame_equal(warm, plain)
    side = sidecar_path(paths[0])
    meta = yaml.safe_load(side.read_text())
    meta["attempt"] = 7
    side.write_text(yaml.safe_dump(meta, sort_keys=False) + "# edited\n")
    again = explore.sidecars(paths, cache=cache)
    assert again.loc[again["raw_path"] == paths[0], "attempt"].tolist() == [7]
    assert explore.provenance(t).equals(explore.provenance(data.load(d)))
    assert (d / ".cache/sidecars.pickle").is_file()


def test_runs_of_an_under_load_campaign_with_time_to_network(tmp_path):
    """A latency-under-load run (probe and load rows of one run) and a netready run (one row per pod)
    beside it: one row per run, output (role) and pod, never a duplicate index (the under-load
    campaign's explore notebook failed on exactly this)."""
    from tests import underload_fixture as F
    from tests.unit.test_netready_parse import FIX, _run

    variants = {k: F.VARIANTS[k] for k in ("macvlan.iptables", "calico-vxlan.iptables")}
    raw = F.write_raw_campaign(tmp_path / "raw", repeats=2, variants=variants)
    for repeat in (1, 2):
        _run(raw, FIX.read_text(), repeat=repeat, variant="macvlan.iptables")
    t = data.load(figures_data.process(raw, tmp_path / "out", "ul"))
    r = explore.runs(t)
    keys = ["run_id", "tool", "role", "pod"]
    assert len(r) == len(r[keys].drop_duplicates())
    pods = r[r["tool"] == "netready"]
    assert len(pods) == 2 * 3  # two runs of three pods
    loaded = r[r["test"].astype(str).str.endswith("load_streams-4")]
    assert set(loaded["role"]) == {"probe", "load"}
    fig = explore.distributions(t)  # the notebook's next cell: values only, no key column as a value
    assert len(fig.axes) >= 3
    plt.close(fig)


def test_distributions_draw_the_same_dots_whatever_numpy_global_random_state(tmp_path):
    """The strip plot's jitter is seeded: the same tables give the same image in any process (a warm
    worker forked from the zygote and a fresh process start from different random states)."""
    import io

    import numpy as np

    t = data.load(_experiment(tmp_path))
    images = []
    for seed in (1, 2):
        np.random.seed(seed)
        fig = explore.distributions(t)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        images.append(buf.getvalue())
    assert images[0] == images[1]
    np.random.seed(3)
    before = np.random.get_state()[1].copy()
    plt.close(explore.distributions(t))
    assert (np.random.get_state()[1] == before).all()  # the caller's random state is left as it was


def test_the_counts_say_what_they_count_runs_and_the_per_run_tables_rows(tmp_path):
    """4 runs, 2 of them iperf3 --bidir with a row per direction: "4 runs" and "6 rows", and why."""
    t = data.load(_experiment(tmp_path))
    text = explore.slice_counts(t)
    assert len(explore.runs(t)) == 6
    assert "**4 runs** in the slice" in text and "**6 rows**" in text, text
    assert "`direction` for 2 runs (bidir-forward, bidir-reverse)" in text, text
    one = explore.slice_counts(t, scenario="host-host")
    assert "**2 runs**" in one and "one row per run (2 rows)" in one, one


def test_tables_show_display_units_not_si_floats():
    import pandas as pd

    df = pd.DataFrame(
        {
            "metric": ["rtt_avg", "rtt_avg", "throughput", "machine_cpu_per_bit"],
            "value": [5.1e-05, 8.8e-05, 1.2345678e10, 1.444706e-10],
            "fence_high": [8.0e-05, 8.0e-05, 1.3e10, 1.324584e-10],
            "unit": ["s", "s", "bit/s", "s/bit"],
        }
    )
    out = explore.in_display_units(df, ("value", "fence_high"))
    assert out["unit"].tolist() == ["µs", "µs", "Gbit/s", "s/Gbit"]
    assert out["value"].tolist() == [51.0, 88.0, 12.35, 0.1445]
    assert out["fence_high"].tolist() == [80.0, 80.0, 13.0, 0.1325]
    assert df["unit"].iloc[0] == "s"  # the table given is left as it was


def _significant_digits(x: float) -> int:
    """How many significant digits ``x`` is written with (9.412 -> 4, 51.0 -> 2)."""
    return len(f"{x:.15g}".replace("-", "").replace(".", "").lstrip("0").rstrip("0") or "0")


def test_the_per_run_table_rounds_to_four_significant_digits(tmp_path):
    """Not 9.412345678 Gbit/s (pandas then prints 6 decimals): at most 4 significant digits."""
    t = data.load(_experiment(tmp_path))
    r = explore.runs(t)
    values = r[[c for c in r.columns if c not in explore.RUN_KEYS]]
    assert len(values.columns) and values.notna().any().all()
    assert values.stack().map(_significant_digits).max() <= 4, values.head()


def test_a_slice_without_per_interval_data_says_so_instead_of_an_empty_plot(tmp_path):
    t = data.load(_experiment(tmp_path))
    fig = intervals.view(t)
    assert isinstance(fig, plt.Figure)
    # a panel per test and direction (forward, bidir-forward, bidir-reverse), a line per run in each
    assert sum(len(ax.lines) for ax in fig.axes) == 6 and len(fig.axes) == 4  # the fourth left blank
    plt.close(fig)
    many = data.load(figures_data.with_repeats(tmp_path / "ex"))  # 14 iperf3 runs: 4 paths x variants
    fig = intervals.view(many)
    assert len(fig.axes[0].lines) == 4 and "median per path and variant" in fig.axes[0].get_title()
    plt.close(fig)
    text = intervals.view(many, tool="ping")
    assert isinstance(text, str) and "has no such run" in text, text
    bare = data.Tables(tidy=t.tidy, summary=t.summary, ratios=t.ratios, failed=t.failed)  # no intervals
    said = intervals.view(bare)
    assert isinstance(said, str) and "4 iperf3 or iperf 2 runs record no per-interval `throughput`" in said, (
        said
    )


def test_no_recorded_interference_is_said_not_shown_as_a_table_of_nan(tmp_path):
    d = _experiment(tmp_path)  # sidecars without an interference record (as imported outputs)
    shown = interference.view(data.load(d), tmp_path / "raw")
    assert len(shown) == 1 and isinstance(shown[0], str), shown
    assert "No run of the 4 in the slice records interference" in shown[0]
    assert "copied processed folder" in interference.view(data.load(d), None)[0]
