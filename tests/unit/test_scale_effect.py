"""The cost of scale, read: the time to effect per point is a pipeline table (scale_effect.csv, from the
sidecars of the tidy table's scale runs, every set-up once), P50 and P99 with order-statistic
intervals and a note where the set-ups are too few; scale_curves.csv gives the largest point over 0
objects (paired by round from 2 rounds, else no interval and why); the ``scale`` figure and the
notebooks' tables draw and say the same; and the launcher probes each point once per round."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from podnet import stats
from podnet.launch.cluster import objects as obj
from podnet.parse.raw import write_raw
from podnet.parse.tidy import FAILED_COLUMNS, frame
from podnet.report import figures
from podnet.report import scale as words
from podnet.report.figures import check, grid, style
from podnet.stats import scale as sscale
from tests.unit.test_launch_scale import FakeApi, FakeProber, _cfg, _state

#: each round's drift, shared by its points (the machine), and the largest point's own noise:
#: symmetric, so the paired ratio is the cost itself
DRIFT = [1.00, 0.97, 1.03, 0.99, 1.02, 0.98, 1.01, 1.00]
NOISE = [0.01, -0.01, 0.02, -0.02, 0.005, -0.005, 0.015, -0.015]
POINTS = (0, 200, 1000)
#: the TCP_CRR rate at 1000 Services over the rate at 0, per variant
COST = {"iptables": 0.8, "nftables": 1.0}
RATE0 = 5000.0


def _effect(variant: str, services: int, r: int) -> float:
    """The probe Service's time to effect: grows with the Services (iptables faster), differs per round."""
    return round(0.2 + (0.5 if variant == "iptables" else 0.1) * services / 1000 + 0.01 * r, 4)


def _record(variant: str, services: int, r: int) -> dict:
    probe = {"service_effect_s": _effect(variant, services, r)} if services else {}
    if not services and r:
        probe = {"service_removed_s": 0.15 + 0.01 * r}
    return {
        "wanted": {
            "services": services,
            "endpoints_per_service": 2,
            "network_policies": 0,
            "rules_per_policy": 4,
        },
        "present": {"services": services, "endpoint_slices": services, "network_policies": 0},
        "probe": probe,
        "verified": f"2026-01-01T00:{r:02d}:{POINTS.index(services):02d}.000Z",
        "ready_s": 1.0,
    }


def _experiment(tmp_path) -> pd.DataFrame:
    """Two variants, 8 rounds, 3 points; two tests per point (one set-up, two runs), each run's raw
    file with its sidecar; the tidy rows of their TCP_CRR rate and P99 latency."""
    rows = []
    for variant, cost in COST.items():
        for r in range(len(DRIFT)):
            for services in POINTS:
                own = 1 + (NOISE[r] if services == 1000 else NOISE[::-1][r] if services == 200 else 0.0)
                rate = RATE0 * DRIFT[r] * (1 - (1 - cost) * services / 1000) * own
                for test in ("TCP_CRR", "TCP_RR"):
                    name = f"{test}-services-{services}"
                    meta = {
                        "tool": "netperf",
                        "variant": variant,
                        "scenario": "pod-svc-cross-node",
                        "test": name,
                        "repeat": r + 1,
                        "round_seq": r,
                        "launch": {"id": f"L-{variant}"},
                        "scale": _record(variant, services, r),
                    }
                    path = tmp_path / "raw" / variant / name / f"r{r + 1:03d}.txt"
                    raw = write_raw(path, "netperf\n", meta)
                    common = {
                        "experiment": "scale", "variant": variant, "scenario": "pod-svc-cross-node",
                        "tool": "netperf", "test": name, "protocol": "tcp", "direction": "roundtrip",
                        "streams": 1, "repeat": r + 1, "run_id": f"{variant}/{name}/r{r + 1:03d}",
                        "source": "measured", "raw_path": str(raw), "launch_id": f"L-{variant}",
                        "round_seq": r, "sweep": test, "sweep_param": "services", "sweep_value": services,
                    }  # fmt: skip
                    rate_row = {"metric": "transaction_rate", "value": rate, "unit": "transactions/s"}
                    rows.append({**common, **rate_row})
                    rows.append({**common, "metric": "latency_p99", "value": 3.0 / rate, "unit": "s"})
    return frame(rows)


@pytest.fixture(scope="module")
def processed(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    out = root / "out"
    out.mkdir()
    _experiment(root).to_parquet(out / "tidy.parquet")
    pd.DataFrame(columns=FAILED_COLUMNS).to_csv(out / "failed_runs.csv", index=False)
    paths = stats.run(out / "tidy.parquet", out, {}, cache=False)
    return root, paths


# -- the tables -----------------------------------------------------------------------------------
def test_the_stats_stage_writes_the_time_to_effect_with_every_set_up_once(processed):
    _, paths = processed
    e = pd.read_csv(paths["scale_effect"])
    assert list(e.columns) == sscale.EFFECT_COLUMNS
    at = e[(e["variant"] == "iptables") & (e["metric"] == "service_effect_s") & (e["point"] == 1000)].iloc[0]
    values = sorted(_effect("iptables", 1000, r) for r in range(8))
    assert (at["kind"], at["change"], at["n"]) == ("Service", "created", 8)  # 2 runs per set-up, counted once
    assert at["p50"] == pytest.approx(np.median(values))
    # one change per set-up: the 8 values' interval, interpolated between x(1), x(2) to 95 %
    assert values[0] < at["p50_low"] < values[1] and values[-2] < at["p50_high"] < values[-1]
    assert at["p50_coverage"] == pytest.approx(0.95)
    assert "p99_low" not in e.columns and "368" in at["note"] and "P50" not in at["note"]
    removed = e[e["metric"] == "service_removed_s"]
    assert set(removed["point"]) == {0} and set(removed["n"]) == {7}  # round 0 had no probe to remove
    assert set(e["point"]) == set(POINTS)


def test_a_point_with_too_few_set_ups_says_so_and_has_no_95_interval():
    few = pd.DataFrame(
        {
            "variant": "v",
            "metric": "policy_effect_s",
            "services": 0,
            "network_policies": 20,
            "value": [0.3, 0.5, 0.4],
        }
    )
    (row,) = sscale.effect_table(few).to_dict("records")
    assert (row["kind"], row["point"], row["n"]) == ("NetworkPolicy", 20, 3)
    assert row["p50_coverage"] == pytest.approx(0.75) and "needs 6" in row["note"]
    assert "p99_low" not in row and "P99 is a point of 3 changes" in row["note"] and "368" in row["note"]
    assert sscale.needed(0.5) == 6 and sscale.needed(0.99) == 368
    one = sscale.effect_table(few.iloc[:1]).iloc[0]
    assert one["n"] == 1 and "no interval" in one["note"]


def test_the_largest_point_over_0_is_paired_by_round_and_resolves_where_it_costs(processed):
    _, paths = processed
    c = pd.read_csv(paths["scale_curves"])
    assert list(c.columns) == sscale.CURVE_COLUMNS
    crr = c[(c["sweep"] == "TCP_CRR") & (c["metric"] == "transaction_rate")].set_index("variant")
    ipt, nft = crr.loc["iptables"], crr.loc["nftables"]
    assert ipt["largest"] == 1000 and ipt["ratio_n"] == 8
    assert ipt["ratio_method"].startswith("paired by round")
    # its one p (the paired t, unadjusted: no family, never "different")
    assert ipt["ratio_low"] < 0.8 < ipt["ratio_high"] < 0.9 and ipt["ratio_p"] < 0.05
    assert nft["ratio_low"] < 1 < nft["ratio_high"] and nft["ratio_p"] > 0.05
    assert "different" not in c.columns and "ratio_differs" not in c.columns
    assert ipt["at_0"] == pytest.approx(np.median([RATE0 * d for d in DRIFT]))


def test_without_2_shared_rounds_the_ratio_has_no_interval_never_welch_within_a_round():
    g = pd.DataFrame(
        {
            "sweep_value": [0, 0, 0, 1000, 1000, 1000],
            "value": [100.0, 104.0, 98.0, 80.0, 82.0, 79.0],
            "launch_id": ["L1", "L1", "L1", "L2", "L2", "L2"],
            "round_seq": [0, 1, 2, 0, 1, 2],
            "repeat": [1, 2, 3, 1, 2, 3],
        }
    )
    u = sscale.end_ratio(g)  # the ends in different launches: no round ran both
    assert u["ratio_method"] == "" and "no interval: 0 rounds" in u["ratio_note"]
    assert np.isnan(u["ratio_low"]) and np.isnan(u["ratio_p"]) and u["ratio"] == pytest.approx(80 / 100)
    one = sscale.end_ratio(g.iloc[[0, 3]])
    assert np.isnan(one["ratio_low"]) and one["ratio"] == pytest.approx(0.8)
    assert "no interval" in one["ratio_note"]
    assert "no point at 0" in sscale.end_ratio(g.iloc[3:])["ratio_note"]


def test_disturbed_runs_are_in_no_curve():
    g = _experiment_rows_small()
    clean = sscale.scale_curves(g.drop(index=0))
    g.loc[0, "value"] = 1e9
    g["disturbed"] = False
    g.loc[0, "disturbed"] = True
    assert sscale.scale_curves(g)["slope_per_1000"].iloc[0] == pytest.approx(clean["slope_per_1000"].iloc[0])


def _experiment_rows_small() -> pd.DataFrame:
    rows = [
        {"variant": "v", "scenario": "p", "tool": "netperf", "sweep": "TCP_CRR", "metric": "transaction_rate",
         "unit": "transactions/s", "sweep_param": "services", "sweep_value": float(s),
         "value": 100.0 - s / 100 + r,
         "source": "measured", "launch_id": "L", "round_seq": r, "repeat": r + 1}
        for r in range(4) for s in POINTS
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_scale_row_without_its_sidecar_is_an_error_not_an_empty_table(tmp_path):
    g = _experiment_rows_small().assign(raw_path=str(tmp_path / "gone.txt"))
    with pytest.raises(ValueError, match="sidecar"):
        sscale.scale_effect(g)
    assert sscale.scale_effect(g.assign(sweep_param="streams")).empty


# -- the figure and the notebooks' tables -----------------------------------------------------------
def _no_tables() -> figures.data.Tables:
    none = pd.DataFrame()
    return figures.data.Tables(tidy=none, summary=none, ratios=none, failed=none)


def test_the_figure_draws_rate_latency_and_time_to_effect_per_variant(processed):
    root, _ = processed
    t = figures.load(root / "out")
    plan = figures.plan(t)
    assert "digest" in plan["scale"], plan["scale"]
    with grid.specs_only():
        spec = figures.FIGURES["scale"](t)
    titles = [p.title for p in spec.panels]
    assert len(titles) == 7, titles  # 2 tests x (rate, P99), time to effect P50, P90 and P99
    assert [t.split(" (")[0] for t in titles[-3:]] == [f"Time to effect, {q}" for q in ("P50", "P90", "P99")]
    assert "36 (P90)" in spec.note, spec.note  # where a P90 bar can be
    assert set(spec.panels[0].rows["hue"]) == set(COST)
    # the quantiles are over changes (one or more per set-up): the note counts both
    assert "changes per point, from" in spec.note and "set-ups per point" not in spec.note, spec.note
    fig = figures.FIGURES["scale"](t)
    found = check.problems(fig)
    w = fig.get_size_inches()[0]
    plt.close(fig)
    assert not found, found[:5]
    assert w == style.PAGE


def test_the_figure_is_left_out_with_its_reason_without_scale_rows():
    t = _no_tables()
    with grid.specs_only():
        spec = figures.FIGURES["scale"](t)
    assert spec.kind == "empty" and "Services or NetworkPolicies" in spec.note
    assert figures.CAPTIONS["scale"]


def test_a_log_count_axis_keeps_the_point_at_0(processed):
    root, _ = processed
    t = figures.load(root / "out")
    t.sweeps = t.sweeps.assign(sweep_value=t.sweeps["sweep_value"].replace({200: 10, 1000: 10000}))
    t.scale_effect = t.scale_effect.iloc[0:0]
    fig = figures.FIGURES["scale"](t)
    scales = {ax.get_xscale() for ax in fig.axes if ax.axison}
    found = check.problems(fig)
    plt.close(fig)
    assert scales == {"symlog"} and not found, (scales, found[:5])


def test_the_notebooks_tables_and_sentences(processed):
    root, _ = processed
    t = figures.load(root / "out")
    ends = words.ends_table(t)
    assert list(ends.columns) == words.END_COLUMNS and len(ends) == 8  # 2 variants x 2 tests x 2 metrics
    crr = ends[(ends["test"] == "netperf TCP_CRR") & (ends["metric"].str.startswith("transaction"))]
    assert list(crr["variant"]) == ["iptables", "nftables"] and "differs" not in crr.columns
    pv = [float(x.removeprefix("p < ")) for x in crr["p (unadjusted)"]]
    assert pv[0] < 0.05 < pv[1]
    eff = words.effect_table(t)
    assert list(eff.columns) == words.EFFECT_COLUMNS and len(eff) == 6
    assert "P99 CI" not in eff.columns and (eff.loc[eff["n"] == 8, "P50 CI"] != "–").all()
    text = words.markdown(t)
    assert re.search(r"TCP_CRR transaction rate: .* with 1,000: 0\.(79|80|81)x \(interval", text), text
    assert "unadjusted p" in text and "differs" not in text and "different" not in text
    assert "time to effect (new Service reachable) with 1,000 Services: P50" in text and "no interval" in text
    first = words.lead(t)
    assert first.startswith("**What 1,000 Services cost each new connection**"), first
    assert re.search(r"iptables 0\.(79|80|81)x \(0\.\d+–0\.\d+\), nftables 1\.00x", first), first
    empty = _no_tables()
    assert words.markdown(empty) == "" and words.ends_table(empty).empty and words.effect_table(empty).empty
    assert words.lead(empty) == ""


# -- the launcher -----------------------------------------------------------------------------------
def test_each_round_probes_its_point_again_and_keeps_its_objects():
    cfg = _cfg({"services": [0, 200]})
    api, prober = FakeApi(), FakeProber()
    st = _state(cfg, api, prober)
    point = cfg.cases[1].test.scale
    each = 2 * point.changes  # a change: its effect and its removal
    assert st.ensure(point, 0) is None and len(prober.calls) == each
    made = len(api.log)
    assert st.ensure(point, 0) is None and len(prober.calls) == each  # the same round: as is
    assert st.ensure(point) is None and len(prober.calls) == each  # no round given: as is
    assert st.ensure(point, 1) is None and len(prober.calls) == 2 * each  # the next round: probed again
    fillers = {obj.service_name(i) for i in range(1, 201)}
    assert not [e for e in api.log[made:] if e[2] in fillers]  # no filler created or deleted again
    assert st.meta()["probe"]["service_effect_s"] == [0.25] * point.changes
    assert st.meta()["present"]["services"] == 200
