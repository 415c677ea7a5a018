"""wrk adapter on real outputs: wrk 4.1.0 against a loopback nginx (with and without --latency)."""

import pytest

from podnet.tools import ParseError, get
from tests.conftest import FIXTURES

wrk = get("wrk")


def parse(name):
    return wrk.parse((FIXTURES / "wrk" / name).read_text())


def metrics(r):
    return {m.metric: m.value for m in r.measurements}


def test_basic():
    r = parse("basic.txt")
    m = metrics(r)
    assert (r.test, r.protocol, r.streams, r.info["threads"]) == ("http", "http", 20, 2)
    assert m["requests_per_second"] == pytest.approx(27685.76)
    assert m["transfer_rate"] == pytest.approx(21.81 * 2**20 * 8)
    assert m["latency_mean"] == pytest.approx(1.38e-3) and m["latency_stddev"] == pytest.approx(2.09e-3)
    assert m["latency_max"] == pytest.approx(29.40e-3) and m["latency_within_stddev"] == pytest.approx(0.8759)
    assert m["thread_requests_per_second_mean"] == pytest.approx(13.94e3)
    assert m["complete_requests"] == 83932 and m["duration"] == pytest.approx(3.03)
    assert m["total_transferred"] == pytest.approx(66.12 * 2**20)
    assert m["non_2xx_responses"] == 0 and m["socket_errors_read"] == 0
    assert "latency_p50" not in m


def test_latency_distribution_and_errors():
    m = metrics(parse("latency.txt"))
    assert m["latency_p50"] == pytest.approx(355e-6) and m["latency_p99"] == pytest.approx(35.17e-3)
    se = metrics(parse("socket-errors.txt"))
    assert se["socket_errors_read"] == 17265 and se["socket_errors_connect"] == 0
    # read errors are requests that did not complete: a fraction of those tried
    assert se["error_fraction"] == pytest.approx(17265 / (34779 + 17265))
    with pytest.raises(
        ParseError, match=r"every request was an error \(40004 non-2xx/3xx responses of 40004\)"
    ):
        parse("non2xx.txt")
    assert m["error_fraction"] == 0
    assert metrics(parse("many.txt"))["latency_max"] == pytest.approx(725.57e-3)


def test_thousands_separators_and_a_pasted_indent():
    # a report pasted from a document: every line indented, figures with thousands separators
    text = (FIXTURES / "wrk/basic.txt").read_text()
    plain = metrics(wrk.parse(text))
    rps = f"{plain['requests_per_second']:.2f}"
    pasted = text.replace(rps, f"{float(rps):,.2f}")
    assert "," in pasted
    pasted = "\n".join("    " + ln for ln in pasted.split("\n"))
    from podnet.parse import parse_text

    adapter, res = parse_text(pasted)
    assert adapter.name == "wrk" and metrics(res) == plain
    assert "margin" in res.info["unpasted"][0]


def test_wrk2_percentiles_are_named_by_value():
    text = (
        (FIXTURES / "wrk/latency.txt")
        .read_text()
        .replace(
            "  Latency Distribution\n",
            "  Latency Distribution (HdrHistogram - Recorded Latency)\n 99.900%    4.10ms\n",
        )
    )
    assert metrics(wrk.parse(text))["latency_p99_9"] == pytest.approx(4.10e-3)


def test_errors():
    with pytest.raises(ParseError, match="unable to connect"):
        parse("error-refused.txt")


def test_invocation():
    inv = wrk.invocation({"threads": 2, "connections": 100, "duration": 30}, "10.1.2.3")
    assert inv.client == ["wrk", "-t", "2", "-c", "100", "-d", "30s", "--latency", "http://10.1.2.3/"]
    assert inv.server is None and inv.port == 80 and inv.streams == 100
