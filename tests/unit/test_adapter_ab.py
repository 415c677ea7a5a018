"""ab adapter on real outputs: ApacheBench 2.3 against a loopback nginx, and seed 001's pasted text."""

import pytest

from podnet.tools import ParseError, get
from tests.conftest import FIXTURES

ab = get("ab")


def parse(name):
    return ab.parse((FIXTURES / "ab" / name).read_text())


def metrics(r):
    return {m.metric: m.value for m in r.measurements}


def test_seed_calico_report():
    r = parse("seed001-calico.txt")
    m = metrics(r)
    assert (r.test, r.protocol, r.streams) == ("http", "http", 50)
    assert m["requests_per_second"] == pytest.approx(10031.23)
    assert m["time_per_request"] == pytest.approx(4.886e-3)
    assert m["time_per_request_all"] == pytest.approx(0.093e-3)
    assert m["transfer_rate"] == pytest.approx(8915.77 * 1024 * 8)
    assert m["complete_requests"] == 90000 and m["failed_requests"] == 0 and m["non_2xx_responses"] == 0
    assert m["total_transferred"] == 76050000 and m["html_transferred"] == 55080000
    assert m["duration"] == pytest.approx(8.330)
    assert m["connect_time_stddev"] == pytest.approx(0.2e-3)
    assert m["processing_time_median"] == pytest.approx(5e-3)
    assert m["latency_mean"] == pytest.approx(5e-3) and m["latency_max"] == pytest.approx(10e-3)
    assert m["latency_p50"] == pytest.approx(5e-3) and m["latency_p99"] == pytest.approx(6e-3)
    assert r.info["server_software"] == "nginx/1.11.5" and r.info["version"] == "2.3 r1528965"


def test_collapsed_spacing_in_seed():
    m = metrics(parse("seed001-ovs-collapsed.txt"))  # 'Requests per second:11457.32'
    assert m["requests_per_second"] == pytest.approx(11457.32)
    assert m["time_per_request"] == pytest.approx(4.364e-3)


def test_loopback_runs():
    m = metrics(parse("basic.txt"))
    assert m["requests_per_second"] == pytest.approx(10350.11)
    assert m["latency_p66"] == pytest.approx(5e-3) and m["latency_p98"] == pytest.approx(9e-3)
    fl = metrics(parse("failed-length.txt"))
    assert fl["failed_requests"] == 2964 and fl["failed_length"] == 2964 and fl["failed_connect"] == 0
    assert fl["keep_alive_requests"] == 2998
    assert fl["error_fraction"] == 0  # length failures are dynamic pages, not errors
    assert m["error_fraction"] == 0
    post = metrics(parse("post.txt"))
    assert post["body_sent"] == 723000 and post["sent_rate"] == pytest.approx(6417.63 * 1024 * 8)
    assert metrics(parse("timelimit.txt"))["complete_requests"] == 10986
    assert metrics(parse("keepalive.txt"))["keep_alive_requests"] == 5000


def test_only_errors_measure_nothing_and_some_errors_are_a_fraction():
    # 2000 of 2000 responses were 404: the printed requests/s is no service's throughput
    with pytest.raises(ParseError, match=r"every request was an error \(2000 non-2xx responses of 2000\)"):
        parse("non2xx.txt")
    text = (
        (FIXTURES / "ab/non2xx.txt")
        .read_text()
        .replace("Non-2xx responses:      2000", "Non-2xx responses:      500")
    )
    m = metrics(ab.parse(text))
    assert m["error_fraction"] == pytest.approx(0.25) and m["requests_per_second"] > 0


def test_errors():
    with pytest.raises(ParseError, match="Connection refused"):
        parse("error-refused.txt")
    cut = (FIXTURES / "ab/basic.txt").read_text().split("Requests per second")[0]
    with pytest.raises(ParseError, match="Requests per second"):
        ab.parse(cut)


def test_invocation():
    inv = ab.invocation({"requests": 90000, "concurrency": 50}, "10.1.2.3")
    assert inv.client == ["ab", "-n", "90000", "-c", "50", "http://10.1.2.3/"]
    assert inv.server is None and inv.port == 80 and inv.streams == 50 and inv.test == "http"
    assert ab.invocation({"port": 18080, "keepalive": True}, "h").client[-2:] == ["-k", "http://h:18080/"]
