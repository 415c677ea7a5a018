"""Seed 000's own tables and ratio sentences against its raw output (podnet.report.seed_reports)."""

import pandas as pd
import pytest

from podnet.parse import parse_experiment
from podnet.report import seed_reports as seeds
from tests.conftest import REPO

RAW = REPO / "raw/seed-raven"


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    out = tmp_path_factory.mktemp("processed")
    parsed = parse_experiment(RAW, "seed-raven")
    parsed.tidy.to_parquet(out / "tidy.parquet")
    parsed.failed.to_csv(out / "failed_runs.csv", index=False)
    return seeds.discrepancies(out, RAW, include_agreeing=True)


def row(found, kind, scenario, metric, published):
    sel = found[
        (found.kind == kind)
        & (found.scenario == scenario)
        & (found.metric == metric)
        & (found.published == published)
    ]
    assert len(sel) == 1, sel
    return sel.iloc[0]


def test_bandwidth_tables_quote_sender_figures(found):
    r = row(found, "summary vs raw", "edge-cloud-edge", "throughput", "1.47 Mbits/sec")
    assert r.status == "disagrees" and "sender_throughput of edge-cloud-edge/iperf3-reverse" in r.detail
    assert row(found, "summary vs raw", "same-edge", "throughput", "3.67 Gbits/sec").status == "agrees"


def test_flood_cell_copied_from_same_edge(found):
    r = row(found, "summary vs raw", "edge-cloud-edge", "rtt_avg", "0.061/0.065/0.355/0.008 ms")
    assert r.status == "disagrees" and "rtt_avg of same-edge/ping-flood" in r.detail
    assert (
        row(found, "summary vs raw", "cloud-edge", "rtt_avg", "33.865/33.919/44.063/0.147 ms").status
        == "agrees"
    )


def test_ratio_sentences_do_not_follow_from_the_raw_numbers(found):
    ratios = found[found.kind == "ratio vs raw"].set_index(["scenario", "metric"])
    assert (ratios.status == "disagrees").all() and len(ratios) == 4
    lat = ratios.loc[("same-edge / cloud-edge", "rtt_avg")]
    assert float(lat.raw) == pytest.approx(0.065 / 33.919, rel=1e-5)  # printed 0.02: ten times too large
    bw = ratios.loc[("same-edge / edge-cloud-edge", "throughput")]
    assert float(bw.raw) == pytest.approx(3.67e9 / 787e3, rel=1e-5)  # printed 3579.02


def test_claims_load_in_si():
    claims = seeds.load_claims([RAW / "published/tables.csv"])
    assert set(claims.si_unit) == {"bit/s", "s"}
    assert claims[claims.printed == "87.8 Mbits/sec"].si.item() == pytest.approx(87.8e6)
    assert isinstance(seeds.load_ratio_claims([RAW / "published/ratios.csv"]), pd.DataFrame)
