"""Every adapter fills in the tool-facts contract, and the facts agree with what its parser emits."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnet import tools as adapters
from podnet.tools.base import ParseError

FIX = Path(__file__).resolve().parents[1] / "fixtures"
TOOLS = sorted(adapters.all_adapters())


@pytest.mark.parametrize("tool", TOOLS)
def test_facts_are_filled_in(tool):
    a = adapters.get(tool)
    assert a.display_name and a.headline, tool
    assert a.server_kind in ("process", "http", "none")
    if a.server_kind != "none" or a.binary:
        assert a.binary, tool
    if a.binary and a.server_kind != "none":
        # hostNetwork-safe: away from the API server, kubelet and NodePorts
        assert a.default_port is not None and 1024 <= a.default_port < 30000, tool
        assert a.default_port not in (6443, 10250, 10255, 10256, 2379, 2380)
    for metric in a.headline:
        info = a.metric_info(metric)
        assert info.unit and info.better in ("higher", "lower"), (tool, metric)


def test_http_tools_share_one_port():
    http = {a.default_port for a in adapters.all_adapters().values() if a.server_kind == "http"}
    assert len(http) == 1


def _fixture_results():
    for d in sorted(p for p in FIX.iterdir() if p.is_dir() and p.name in adapters.all_adapters()):
        for f in sorted(d.iterdir()):
            if f.is_file() and f.suffix in (".txt", ".json", ".csv"):
                try:
                    yield d.name, f.name, adapters.get(d.name).parse(f.read_text(encoding="utf-8"))
                except (ParseError, ValueError):
                    continue


def test_units_and_headlines_agree_with_the_parsers():
    seen_headline: dict[str, bool] = {}
    n = 0
    for tool, name, res in _fixture_results():
        for m in res.measurements:
            info = adapters.metric_info(m.metric, tool)
            if info.unit == "" and m.metric in adapters.get(tool).metrics:
                continue  # declared as unit-per-row (e.g. netperf's service demand)
            assert info.unit == m.unit, (
                f"{tool} {name}: {m.metric} is {m.unit!r}, metric_info says {info.unit!r}"
            )
            n += 1
        metrics = {m.metric for m in res.measurements}
        seen_headline[tool] = seen_headline.get(tool, False) or bool(
            metrics & set(adapters.get(tool).headline)
        )
    assert n > 500
    # each tool's headline is what its real outputs carry
    assert all(seen_headline.values()), seen_headline


def test_statistics_family_labels():
    assert adapters.metric_info("latency_p99", "wrk").unit == "s"
    assert adapters.metric_info("latency_p99", "wrk").label == "Latency (p99)"
    assert adapters.metric_info("connect_time_mean", "ab").better == "lower"
    assert adapters.headline_metrics("ping") == ["rtt_median"]
