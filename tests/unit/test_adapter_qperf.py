"""qperf adapter on real outputs: loopback runs of qperf 0.4.11 (plain, -v, -vv, -vvs, -ub, -uu, -vu,
-oo loops) and seed 004's pasted text."""

import pytest

from podnet.tools import ParseError, get
from tests.conftest import FIXTURES

qperf = get("qperf")


def parse(name):
    return qperf.parse((FIXTURES / "qperf" / name).read_text())


def by_test(result):
    out = {}
    for m in result.measurements:
        out.setdefault(m.test, {})[m.metric] = (m.value, m.unit)
    return out


def test_seed_same_host_pods_in_si():
    r = by_test(parse("seed004-pod-pod-same-node.txt"))
    assert set(r) == {"tcp_bw", "udp_bw", "tcp_lat", "udp_lat"}
    assert r["tcp_bw"]["throughput"] == (pytest.approx(3.24e9 * 8), "bit/s")  # 3.24 GB/sec, decimal
    assert r["tcp_bw"]["msg_rate"] == (pytest.approx(49.4e3), "messages/s")
    assert r["tcp_bw"]["send_cost"] == (pytest.approx(542e-3 / 1e9), "s/byte")  # 542 ms/GB, GB = 1e9 bytes
    assert r["tcp_bw"]["cpu_send"] == (pytest.approx(1.76), "fraction")  # 176 % cpus
    assert r["tcp_bw"]["duration"] == (30.0, "s")
    assert r["udp_bw"]["throughput"] == (pytest.approx(2.37e9 * 8), "bit/s")  # recv_bw is the headline
    assert r["udp_bw"]["sender_throughput"] == (pytest.approx(2.62e9 * 8), "bit/s")
    assert r["tcp_lat"]["latency"] == (pytest.approx(17.3e-6), "s")
    assert r["tcp_lat"]["cpu_local"] == (pytest.approx(1.10), "fraction")
    assert r["udp_lat"]["cpu_remote"] == (pytest.approx(1.11), "fraction")


def test_seed_baseline_units_and_conf():
    res = parse("seed004-host-host.txt")
    r = by_test(res)
    assert r["tcp_bw"]["throughput"][0] == pytest.approx(116e6 * 8)
    assert r["tcp_bw"]["send_cost"][0] == pytest.approx(2.26e-9)
    assert r["tcp_bw"]["recv_cost"][0] == pytest.approx(465e-3 / 1e9)
    assert r["tcp_bw"]["cpu_send"][0] == pytest.approx(0.262)
    assert r["udp_bw"]["throughput"][0] == pytest.approx(140e3 * 8)  # 140 KB/sec received
    assert r["udp_bw"]["msg_rate"][0] == pytest.approx(4.27)  # '4.27 /sec'
    assert r["udp_bw"]["recv_cost"][0] == pytest.approx(35.8e-9)
    assert r["tcp_lat"]["latency"][0] == pytest.approx(402e-6)
    conf = res.info["conf"]
    assert conf["loc_node"] == "k8s-node-02" and conf["rem_qperf"] == "0.4.11"
    assert conf["loc_cpu"] == "4 Cores: Intel Xeon E3-1271 v3 @ 3.60GHz"
    assert res.info["version"] == "0.4.9"


def test_directions_and_tests_per_measurement():
    res = parse("verbose.txt")
    assert res.test is None  # several tests: each measurement has its own
    for m in res.measurements:
        assert m.direction == ("roundtrip" if m.test.endswith("_lat") else "forward")
        assert m.protocol == m.test.split("_")[0]
    assert parse("units.txt").test == "tcp_lat"


def test_plain_output():
    r = by_test(parse("plain.txt"))
    assert r["tcp_bw"] == {"throughput": (pytest.approx(3.89e9 * 8), "bit/s")}
    assert r["udp_lat"] == {"latency": (pytest.approx(6.3e-6), "s")}


def test_every_unit_qperf_prints():
    bits = by_test(parse("bits.txt"))
    assert bits["tcp_bw"]["throughput"][0] == pytest.approx(7.51e9)  # -ub: Gb/sec
    uni = by_test(parse("unify.txt"))
    assert uni["tcp_bw"]["throughput"][0] == pytest.approx(1563754496 * 8)  # -uu: bytes/sec
    assert uni["tcp_bw"]["send_cost"][0] == pytest.approx(1282841136e-9 / 1e9)  # ns/GB
    assert uni["udp_lat"]["latency"][0] == pytest.approx(7139e-9)
    assert uni["udp_lat"]["duration"][0] == pytest.approx(1.0)  # 1000000000 ns
    vv = by_test(parse("vv.txt"))
    assert vv["tcp_bw"]["send_bytes"] == (pytest.approx(4.13e9), "bytes")
    assert vv["tcp_bw"]["send_msgs"] == (62969, "count")  # '62,969 '
    assert vv["tcp_lat"]["loc_recv_bytes"] == (pytest.approx(120e3), "bytes")
    assert vv["tcp_bw"]["send_cpu_time"] == (pytest.approx(4.01), "s")
    assert parse("vv.txt").info["tests"]["tcp_bw"]["msg_size"] == "64 KiB (65,536)"
    loop = by_test(parse("loop.txt"))
    assert loop["tcp_bw[msg_size=1]"]["send_cost"][0] == pytest.approx(2987e-9)  # '2,987 sec/GB'
    assert loop["udp_lat[msg_size=32768]"]["latency"][0] == pytest.approx(11.2e-6)
    assert by_test(parse("vvs.txt"))["udp_bw"]["recv_msgs"][0] == 65976


def test_test_without_results_is_listed_not_zero():
    res = parse("ip.txt")  # sctp_bw: the server could not make an SCTP socket
    assert "sctp_bw" in res.info["tests_without_results"]
    assert not any(m.test == "sctp_bw" for m in res.measurements)


def test_errors():
    with pytest.raises(ParseError, match="failed to connect"):
        parse("error-refused.txt")
    with pytest.raises(ParseError, match="ends with the header 'tcp_bw:' and no result"):
        qperf.parse("tcp_bw:\n")
    with pytest.raises(ParseError, match="unknown unit"):
        qperf.parse("tcp_bw:\n    bw  =  3.2 furlongs/sec\n")


def test_cut_just_after_a_tests_header_is_rejected_with_that_test():
    # tcp_bw complete, then 'tcp_lat:', a newline and a space: the cut came while tcp_lat ran
    from podnet.parse import parse_text

    text = (FIXTURES / "qperf/plain.txt").read_text()
    for cut in (text.split("tcp_lat:")[0] + "tcp_lat:\n ", text.split("tcp_lat:")[0] + "tcp_lat:\n"):
        with pytest.raises(ParseError, match="'tcp_lat:' and no result under it"):
            parse_text(cut)


def test_invocation():
    inv = qperf.invocation({"duration": 30}, "10.0.0.9")
    assert inv.client == [
        "qperf",
        "-v",
        "10.0.0.9",
        "-lp",
        "19765",
        "-ip",
        "19766",
        "-t",
        "30",
        "tcp_bw",
        "udp_bw",
        "tcp_lat",
        "udp_lat",
        "conf",
    ]
    assert inv.server == ["qperf", "-lp", "19765"] and inv.port == 19765
    assert inv.version == ["qperf", "--version"]
    one = qperf.invocation({"tests": ["tcp_lat"], "msg_size": 64}, "h")
    assert one.test == "tcp_lat" and one.direction == "roundtrip" and "-m" in one.client


def test_a_stalled_latency_test_is_rejected_not_read_as_three_seconds():
    """udp_lat from a pod to its own host (seed-004 campaign): one exchange in 3 s, printed as
    "latency = 3 sec". No round trip was measured: a per-file failure naming why, not a 3-s latency."""
    text = (FIXTURES / "qperf" / "stalled-udp-lat.txt").read_text()
    with pytest.raises(ParseError, match=r"udp_lat: a latency of 3 s from 1 exchange\(s\) in 3 s"):
        qperf.parse(text)
    # a healthy udp_lat of the same run length is kept
    ok = text.replace("latency        =       3 sec", "latency        =    13.9 us").replace(
        "msg_rate       =    0.33 /sec", "msg_rate       =    36 K/sec"
    )
    lat = [m for m in qperf.parse(ok).measurements if m.metric == "latency"]
    assert lat and lat[0].value == pytest.approx(13.9e-6)
