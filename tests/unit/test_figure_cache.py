"""A figure is drawn again only when what it draws changed: its spec digest (panels' rows and
repeats, orders, texts, figure code) is stable for the same tables, changes with a drawn value,
and ignores values the figure does not show; publish_one keeps an unchanged figure's bytes."""

import dataclasses

import pytest

from podnet.report import figures
from tests import figures_data


@pytest.fixture(scope="module")
def repeats(tmp_path_factory):
    return figures_data.with_repeats(tmp_path_factory.mktemp("figcache"))


def _with_latency_changed(t):
    """The tables with one ping RTT repeat changed (what the latency figure draws as a dot)."""
    tidy = t.tidy.copy()
    m = (tidy["tool"] == "ping") & (tidy["metric"] == "rtt_median")  # ping's headline
    first = tidy.index[m][0]
    tidy.loc[first, "value"] = float(tidy.loc[first, "value"]) * 1.5
    return dataclasses.replace(t, tidy=tidy)


def test_digest_follows_exactly_the_drawn_data(repeats):
    t = figures.load(repeats)
    before = {name: figures.spec_digest(name, t) for name in figures.FIGURES}
    assert before == {name: figures.spec_digest(name, figures.load(repeats)) for name in figures.FIGURES}
    assert len(set(before.values())) == len(before)
    after = {name: figures.spec_digest(name, _with_latency_changed(t)) for name in figures.FIGURES}
    assert after["latency"] != before["latency"]  # a repeat's dot moved
    assert after["throughput"] == before["throughput"]  # iperf3 rows untouched
    # a table no figure reads (the planning table) changes no digest
    t2 = dataclasses.replace(t, planning=t.planning.assign(extra=1))
    assert {name: figures.spec_digest(name, t2) for name in figures.FIGURES} == before


def test_publish_one_keeps_an_unchanged_figure(repeats, tmp_path):
    t = figures.load(repeats)
    out, cache = tmp_path / "figures", tmp_path / "cache"
    assert figures.publish_one("latency", t, out, cache) is True
    files = sorted(out.glob("latency.*"))
    assert [f.suffix for f in files] == [".pdf", ".png", ".svg"]
    data = {f: f.read_bytes() for f in files}
    for f in files:  # Snakemake removes a job's outputs before it runs: the cache has its own copy
        f.unlink()
    assert figures.publish_one("latency", figures.load(repeats), out, cache) is False
    assert {f: f.read_bytes() for f in files} == data
    assert figures.publish_one("latency", _with_latency_changed(t), out, cache) is True
    assert (out / "latency.svg").read_bytes() != data[out / "latency.svg"]
    # a damaged cache (a copy missing) is drawn again even when the data are unchanged
    (cache / "latency.png").unlink()
    assert figures.publish_one("latency", _with_latency_changed(t), out, cache) is True
    assert (out / "latency.png").is_file() and (cache / "latency.png").is_file()
