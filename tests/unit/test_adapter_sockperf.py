"""sockperf adapter on real outputs: sockperf 3.7 on loopback (ping-pong UDP/TCP, --full-rtt, --mps,
under-load, throughput UDP/TCP); ANSI colour codes are part of the fixtures."""

import pytest

from podnet.tools import ParseError, get
from tests.conftest import FIXTURES

sp = get("sockperf")


def parse(name):
    return sp.parse((FIXTURES / "sockperf" / name).read_text())


def metrics(r):
    return {m.metric: m.value for m in r.measurements}


def test_ping_pong_udp():
    r = parse("ping-pong-udp.txt")
    m = metrics(r)
    assert (r.test, r.protocol, r.direction) == ("ping-pong", "udp", "roundtrip")
    assert m["latency_mean"] == pytest.approx(5.962e-6) and m["latency_stddev"] == pytest.approx(49.755e-6)
    assert m["latency_min"] == pytest.approx(3.163e-6) and m["latency_max"] == pytest.approx(2694.409e-6)
    assert m["latency_p50"] == pytest.approx(3.539e-6) and m["latency_p99_999"] == pytest.approx(2628.058e-6)
    assert m["latency_p99_9"] == pytest.approx(556.682e-6) and m["latency_p25"] == pytest.approx(3.371e-6)
    assert m["dropped_messages"] == 0 and m["out_of_order"] == 0
    assert m["duration"] == pytest.approx(1.552) and m["received_messages"] == 129386
    assert r.info["version"] == "3.7-no.git"


def test_full_rtt_and_under_load():
    m = metrics(parse("ping-pong-fullrtt.txt"))
    assert m["rtt_mean"] == pytest.approx(11.842e-6) and "latency_mean" not in m
    ul = parse("under-load-udp.txt")
    assert ul.test == "under-load" and metrics(ul)["received_messages"] == 153
    assert parse("ping-pong-tcp.txt").protocol == "tcp"
    assert parse("ping-pong-mps.txt").test == "ping-pong"


def test_throughput_is_sender_side():
    u = parse("throughput-udp.txt")
    mu = metrics(u)
    assert (u.test, u.direction) == ("throughput", "forward")
    assert mu["sender_msg_rate"] == 280733 and mu["sender_throughput"] == pytest.approx(394.095 * 2**20 * 8)
    assert "throughput" not in mu  # UDP: what arrived is unknown
    mt = metrics(parse("throughput-tcp.txt"))
    assert mt["throughput"] == pytest.approx(554.339 * 2**20 * 8) and mt["msg_rate"] == 567643


def test_errors():
    with pytest.raises(ParseError, match="No messages were received"):
        parse("error-no-server.txt")


def test_invocation():
    inv = sp.invocation({"protocol": "tcp", "duration": 10, "full_rtt": True}, "10.0.0.5")
    assert inv.client == [
        "sockperf",
        "ping-pong",
        "-i",
        "10.0.0.5",
        "-p",
        "11111",
        "-t",
        "10",
        "--tcp",
        "--full-rtt",
    ]
    assert inv.server == ["sockperf", "sr", "-i", "0.0.0.0", "-p", "11111", "--tcp"] and inv.port == 11111
    assert sp.invocation({"mode": "throughput", "msg_size": 1472}, "h").direction == "forward"
