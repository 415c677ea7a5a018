"""iperf3 adapter on real outputs (loopback runs of iperf 3.12 and the seed's pasted text)."""

import json

import pytest

from podnet.tools import ParseError, detect, get
from tests.conftest import FIXTURES

iperf3 = get("iperf3")


def metrics(result, direction=None):
    return {m.metric: m.value for m in result.measurements if direction is None or m.direction == direction}


def test_json_forward_uses_receiver_goodput():
    doc = json.loads((FIXTURES / "iperf3/tcp-forward.json").read_text())
    r = iperf3.parse((FIXTURES / "iperf3/tcp-forward.json").read_text())
    m = metrics(r)
    assert m["throughput"] == pytest.approx(doc["end"]["sum_received"]["bits_per_second"], rel=1e-12)
    assert m["sender_throughput"] == pytest.approx(doc["end"]["sum_sent"]["bits_per_second"], rel=1e-12)
    assert m["retransmits"] == doc["end"]["sum_sent"]["retransmits"]
    assert (r.test, r.protocol, r.direction, r.streams) == ("tcp", "tcp", "forward", 1)
    assert len(r.intervals) == len(doc["intervals"])


def test_json_reverse_and_parallel_and_omit():
    r = iperf3.parse((FIXTURES / "iperf3/tcp-reverse.json").read_text())
    assert r.direction == "reverse"
    assert "tcp_rtt_mean" not in metrics(r)  # the client does not send with -R: no tcp_info RTT
    p2 = iperf3.parse((FIXTURES / "iperf3/tcp-p2-omit.json").read_text())
    assert p2.streams == 2
    assert any(i.omitted for i in p2.intervals) and not all(i.omitted for i in p2.intervals)


def test_json_bidir_has_both_legs():
    r = iperf3.parse((FIXTURES / "iperf3/tcp-bidir.json").read_text())
    doc = json.loads((FIXTURES / "iperf3/tcp-bidir.json").read_text())["end"]
    assert metrics(r, "bidir-forward")["throughput"] == pytest.approx(doc["sum_received"]["bits_per_second"])
    assert metrics(r, "bidir-reverse")["throughput"] == pytest.approx(
        doc["sum_received_bidir_reverse"]["bits_per_second"]
    )


def test_json_udp_small_packets():
    doc = json.loads((FIXTURES / "iperf3/udp-l16.json").read_text())["end"]
    m = metrics(iperf3.parse((FIXTURES / "iperf3/udp-l16.json").read_text()))
    assert m["throughput"] == pytest.approx(doc["sum_received"]["bits_per_second"])
    assert m["loss"] == pytest.approx(doc["sum"]["lost_percent"] / 100)
    assert m["jitter"] == pytest.approx(doc["sum"]["jitter_ms"] / 1000)
    assert m["sender_pps"] == pytest.approx(doc["sum_sent"]["packets"] / doc["sum_sent"]["seconds"])
    assert 0 < m["pps"] < m["sender_pps"]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("tcp-forward.txt", {"throughput": 27.0e9, "sender_throughput": 27.0e9, "retransmits": 3}),
        ("tcp-p3.txt", {"throughput": 19.3e9, "retransmits": 1}),
        ("udp.txt", {"throughput": 10.1e6, "loss": 0.0, "jitter": 0.009e-3, "packets": 77}),
    ],
)
def test_text_summaries(name, expected):
    r = iperf3.parse((FIXTURES / "iperf3" / name).read_text())
    m = metrics(r)
    for k, v in expected.items():
        assert m[k] == pytest.approx(v, rel=1e-9, abs=1e-15), k


def test_text_parallel_counts_streams_and_uses_sum_lines():
    r = iperf3.parse((FIXTURES / "iperf3/tcp-p3.txt").read_text())
    assert r.streams == 3
    assert {i.stream for i in r.intervals} == {"sum"} and len(r.intervals) == 2


def test_text_bidir_and_reverse_and_omitted():
    r = iperf3.parse((FIXTURES / "iperf3/tcp-bidir.txt").read_text())
    assert metrics(r, "bidir-forward")["throughput"] == pytest.approx(10.3e9)
    assert metrics(r, "bidir-reverse")["throughput"] == pytest.approx(12.5e9)
    assert iperf3.parse((FIXTURES / "iperf3/tcp-reverse.txt").read_text()).direction == "reverse"
    omit = iperf3.parse((FIXTURES / "iperf3/tcp-omit.txt").read_text())
    assert sum(i.omitted for i in omit.intervals) == 1


def test_seed_text_only_summary_lines():
    text = (FIXTURES.parent.parent / "raw/seed-raven/cloud-edge/iperf3-reverse.txt").read_text()
    m = metrics(iperf3.parse(text))
    assert m["throughput"] == pytest.approx(845e3)
    assert m["sender_throughput"] == pytest.approx(1.10e6)
    assert m["retransmits"] == 1692
    assert not iperf3.parse(text).intervals


@pytest.mark.parametrize("name", ["error-refused.json", "error-refused.txt"])
def test_errors_are_parse_errors_with_the_reason(name):
    with pytest.raises(ParseError, match="Connection refused"):
        iperf3.parse((FIXTURES / "iperf3" / name).read_text())


def test_truncated_json_and_missing_receiver():
    text = (FIXTURES / "iperf3/tcp-forward.json").read_text()
    with pytest.raises(ParseError, match="cut off"):
        iperf3.parse(text[: len(text) // 2])
    lines = [
        ln for ln in (FIXTURES / "iperf3/tcp-forward.txt").read_text().splitlines() if "receiver" not in ln
    ]
    with pytest.raises(ParseError, match="receiver"):
        iperf3.parse("\n".join(lines))


def test_detect_picks_iperf3():
    for f in (FIXTURES / "iperf3").iterdir():
        if f.name.endswith(".expected.json") or f.suffix == ".md":
            continue  # golden values and SOURCES.md, not outputs
        assert detect(f.read_text()).name == "iperf3", f.name


def test_invocation_is_argv_with_json():
    inv = iperf3.invocation({"streams": 4, "reverse": True, "duration": 5, "omit": 1}, "10.0.0.2")
    assert inv.client[:3] == ["iperf3", "-c", "10.0.0.2"]
    assert "-J" in inv.client and "-R" in inv.client and inv.client[inv.client.index("-P") + 1] == "4"
    assert inv.server == ["iperf3", "-s", "-p", "5201"] and inv.port == 5201
    assert (inv.direction, inv.streams) == ("reverse", 4)
    udp = iperf3.invocation({"protocol": "udp", "length": 16, "bandwidth": "100M"}, "10.0.0.2")
    assert udp.client[udp.client.index("-l") + 1] == "16" and "-u" in udp.client
    fixed = iperf3.invocation({"window": "256K"}, "10.0.0.2")
    assert fixed.client[fixed.client.index("-w") + 1] == "256K" and "-w" not in inv.client


def test_timestamped_lines_and_udp_variants():
    m = metrics(iperf3.parse((FIXTURES / "iperf3/tcp-timestamps.txt").read_text()))
    assert m["throughput"] == pytest.approx(22.0e9) and m["sender_throughput"] == pytest.approx(22.1e9)
    p2 = iperf3.parse((FIXTURES / "iperf3/udp-p2.txt").read_text())
    assert p2.streams == 2 and p2.protocol == "udp"
    bidir = iperf3.parse((FIXTURES / "iperf3/udp-bidir.json").read_text())
    assert {m.direction for m in bidir.measurements if m.metric == "throughput"} == {
        "bidir-forward",
        "bidir-reverse",
    }
