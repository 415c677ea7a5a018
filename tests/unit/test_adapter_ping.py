"""ping adapter: iputils outputs from loopback, a netns with no peer, and the seeds."""

import pytest

from podnet.parse import parse_text
from podnet.tools import Incomplete, ParseError, detect, get
from tests.conftest import FIXTURES

ping = get("ping")


def metrics(text):
    return metrics_of(ping.parse(text))


def metrics_of(result):
    return {m.metric: m.value for m in result.measurements}


def test_flood_summary_with_ipg_ewma():
    m = metrics((FIXTURES / "ping/seed000-flood.txt").read_text())
    assert m["rtt_avg"] == pytest.approx(0.065e-3)
    assert m["rtt_min"] == pytest.approx(0.061e-3) and m["rtt_max"] == pytest.approx(0.355e-3)
    assert m["rtt_mdev"] == pytest.approx(0.008e-3)
    assert m["ipg"] == pytest.approx(0.076e-3) and m["ewma"] == pytest.approx(0.066e-3)
    assert m["packets_transmitted"] == 10000 and m["loss"] == 0.0


def test_pipe_and_trailing_garbage_in_seed():
    text = (FIXTURES.parent.parent / "raw/seed-raven/edge-cloud-edge/ping-flood.txt").read_text()
    m = metrics(text)
    assert m["pipe"] == 2 and m["rtt_avg"] == pytest.approx(63.325e-3)
    plain = (FIXTURES.parent.parent / "raw/seed-raven/edge-cloud-edge/ping-plain.txt").read_text()
    assert metrics(plain)["rtt_avg"] == pytest.approx(63.413e-3)  # the line ends in '****' in the seed


def test_full_loss_is_a_measurement_not_a_failure():
    m = metrics((FIXTURES / "ping/loss-100.txt").read_text())
    assert m["loss"] == 1.0 and m["packets_received"] == 0
    assert not any(k.startswith("rtt_") for k in m)


def test_replies_only_output_is_cut_unless_its_sidecar_declares_an_excerpt():
    # issue 10: ping cut before its statistics block gave RTT statistics as if they were the run's
    text = (FIXTURES / "ping/seed001-replies-only.txt").read_text()
    with pytest.raises(Incomplete, match="no '--- ... ping statistics ---' block"):
        ping.parse(text)
    _, result = parse_text(text, "ping", excerpt=True)
    assert result.info["excerpt"] is True
    m = {x.metric: x.value for x in result.measurements}
    rtts = [0.247e-3, 0.221e-3, 0.200e-3]
    mean = sum(rtts) / 3
    assert m["rtt_avg"] == pytest.approx(mean, rel=1e-12)
    # iputils' mdev: sqrt(mean(x^2) - mean(x)^2)
    assert m["rtt_mdev"] == pytest.approx((sum(x * x for x in rtts) / 3 - mean**2) ** 0.5, rel=1e-9)
    assert "loss" not in m  # unknown without the statistics block: not invented


def test_loopback_outputs_and_detection():
    for name in ("loopback-plain.txt", "loopback-flood.txt"):
        text = (FIXTURES / "ping" / name).read_text()
        assert detect(text).name == "ping"
        assert metrics(text)["packets_received"] > 0


def test_garbage_is_rejected():
    with pytest.raises(ParseError, match="reply lines"):
        ping.parse("PING 1.2.3.4 (1.2.3.4) 56(84) bytes of data.\n")


def test_invocation():
    inv = ping.invocation({"flood": True, "count": 1000}, "10.1.2.3")
    assert (
        inv.client[:4] == ["ping", "-n", "-c", "1000"] and "-A" in inv.client and inv.client[-1] == "10.1.2.3"
    )
    assert inv.test == "flood" and inv.server is None


def test_mean_printed_by_a_pipeline_after_ping():
    text = (FIXTURES.parent.parent / "raw/seed-cni-1gbe/neutron/ping-avg.txt").read_text()
    with pytest.raises(Incomplete, match="excerpt"):
        ping.parse(text)
    _, result = parse_text(text, "ping", excerpt=True)
    assert metrics_of(result) == {"rtt_avg": pytest.approx(0.747789e-3, rel=1e-12)}
    with pytest.raises(ParseError):  # a bare number without the ping pipeline is not ping output
        ping.parse("0.747789ms\n")
