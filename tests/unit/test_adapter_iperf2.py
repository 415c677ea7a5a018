"""iperf2 adapter on real outputs: loopback runs of iperf 2.1.8 (client and server side) and seed 001's
pasted iperf 2.0.5 text. Also: detect() over every fixture directory (iperf2 and iperf3 look alike)."""

from pathlib import Path

import pytest

from podnet.tools import ParseError, all_adapters, detect, get
from tests.conftest import FIXTURES

iperf2 = get("iperf2")
SI = {"Mbit": 1e6, "Gbit": 1e9, "MiB": 2**20, "GiB": 2**30}


def parse(name):
    return iperf2.parse((FIXTURES / "iperf2" / name).read_text())


def metrics(result, direction=None):
    return {m.metric: m.value for m in result.measurements if direction is None or m.direction == direction}


# fixture -> (test, direction, streams, {metric: value})
EXPECTED = {
    "tcp-i1.txt": (
        "tcp",
        "forward",
        1,
        {"throughput": 31.8e9, "bytes_transferred": 11.2 * SI["GiB"], "duration": 3.0139},
    ),
    "tcp-i1-server.txt": ("tcp", "forward", 1, {"throughput": 32.0e9, "duration": 3.0008}),
    "tcp-P2.txt": ("tcp", "forward", 2, {"throughput": 13.4e9, "bytes_transferred": 4.67 * SI["GiB"]}),
    "tcp-P2-server.txt": ("tcp", "forward", 2, {"throughput": 13.4e9}),
    "tcp-e.txt": (
        "tcp",
        "forward",
        1,
        {
            "throughput": 36.7e9,
            "writes": 105451,
            "write_errors": 0,
            "retransmits": 1,
            "cwnd": 4604 * 1024,
            "tcp_rtt_mean": 1677e-6,
            "tcp_rtt_var": 3131e-6,
            "netpwr": 2736125 * 8e6,
            "connect_time": 0.10e-3,
        },
    ),
    "tcp-e-server.txt": ("tcp", "forward", 1, {"throughput": 36.9e9, "reads": 107179}),
    "tcp-e-P2.txt": (
        "tcp",
        "forward",
        2,
        {"throughput": 59.6e9, "writes": 170481, "retransmits": 1, "tcp_rtt_mean": (244e-6 + 920e-6) / 2},
    ),
    "tcp-e-P2-server.txt": ("tcp", "forward", 2, {"throughput": 59.6e9, "reads": 173202}),
    "tcp-fK.txt": (
        "tcp",
        "forward",
        1,
        {"throughput": 2870676 * 1024 * 8, "bytes_transferred": 5763200 * 1024},
    ),
    "tcp-fK-server.txt": ("tcp", "forward", 1, {"throughput": 2814 * 2**20 * 8}),
    "tcp-R.txt": ("tcp", "reverse", 1, {"throughput": 33.1e9}),
    "tcp-R-server.txt": ("tcp", "reverse", 1, {"throughput": 33.0e9}),
    "tcp-csv.txt": (
        "tcp",
        "forward",
        1,
        {"throughput": 25768601231, "bytes_transferred": 9672196156, "duration": 3.0},
    ),
    "tcp-csv-server.txt": ("tcp", "forward", 1, {"throughput": 25797192374}),
    "tcp-csv-P2.txt": ("tcp", "forward", 2, {"throughput": 26210919861 + 22747248071}),
    "tcp-e-csv.txt": ("tcp", "forward", 1, {"throughput": 25715129168}),
    "udp.txt": (
        "udp",
        "forward",
        1,
        {
            "throughput": 105e6,
            "sender_throughput": 105e6,
            "jitter": 0.002e-3,
            "lost_packets": 0,
            "total_packets": 26752,
            "loss": 0.0,
            "out_of_order": 0,
            "sent_datagrams": 26753,
        },
    ),
    "udp-server.txt": ("udp", "forward", 1, {"throughput": 105e6, "total_packets": 26752}),
    "udp-i1-server.txt": ("udp", "forward", 1, {"throughput": 210e6, "total_packets": 56178}),
    "udp-e.txt": (
        "udp",
        "forward",
        1,
        {
            "throughput": 105e6,
            "latency_mean": 0.002e-3,
            "latency_max": 0.275e-3,
            "pps": 8917,
            "sender_pps": 8918,
            "writes": 26751,
            "netpwr": 6129530 * 8e6,
        },
    ),
    "udp-e-server.txt": ("udp", "forward", 1, {"throughput": 105e6, "latency_stddev": 0.003e-3, "pps": 8917}),
    "udp-loss.txt": (
        "udp",
        "forward",
        1,
        {
            "throughput": 1.47e9,
            "sender_throughput": 3.34e9,
            "lost_packets": 317469,
            "total_packets": 567301,
            "loss": 317469 / 567301,
        },
    ),
    "udp-loss-e.txt": (
        "udp",
        "forward",
        1,
        {"throughput": 1.07e9, "sender_throughput": 13.3e9, "loss": 233647 / 416438},
    ),
    "udp-P2.txt": (
        "udp",
        "forward",
        2,
        {
            "throughput": 2 * 52.4e6,
            "sender_throughput": 105e6,
            "total_packets": 17840,
            "sent_datagrams": 17842,
        },
    ),
    "udp-P2-server.txt": (
        "udp",
        "forward",
        2,
        {"throughput": 105e6, "total_packets": 17840, "lost_packets": 0},
    ),
    "udp-csv-server.txt": (
        "udp",
        "forward",
        1,
        {"throughput": 104862631, "jitter": 0.002e-3, "total_packets": 26752},
    ),
    "udp-e-csv-server.txt": (
        "udp",
        "forward",
        1,
        {"throughput": 52321457, "lost_packets": 20, "total_packets": 8920},
    ),
    # seed 001 (iperf 2.0.5 as pasted: collapsed spaces, 'GBytes810' glued, 'local172.16.78.2')
    "seed001-tcp-i1.txt": (
        "tcp",
        "forward",
        1,
        {"throughput": 942e6, "bytes_transferred": 1.10 * SI["GiB"], "duration": 10.0},
    ),
    "seed001-udp-glued.txt": (
        "udp",
        "forward",
        1,
        {
            "throughput": 810e6,
            "sender_throughput": 811e6,
            "jitter": 0.009e-3,
            "lost_packets": 7469,
            "total_packets": 4139126,
            "loss": 7469 / 4139126,
            "out_of_order": 1,
            "sent_datagrams": 4139127,
        },
    ),
    "seed001-udp-10s.txt": (
        "udp",
        "forward",
        1,
        {"throughput": 811e6, "loss": 762 / 690166, "out_of_order": 1},
    ),
    "seed001-tcp-server.txt": ("tcp", "forward", 1, {"throughput": 941e6, "duration": 30.0}),
    "seed001-tcp-local-glued.txt": ("tcp", "forward", 1, {"throughput": 910e6}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_values(name):
    test, direction, streams, expected = EXPECTED[name]
    r = parse(name)
    assert (r.test, r.protocol, r.direction, r.streams) == (test, test, direction, streams)
    m = metrics(r)
    for metric, value in expected.items():
        assert m[metric] == pytest.approx(value, rel=1e-9, abs=1e-12), metric


@pytest.mark.parametrize(
    "name, expected",
    [
        # sequential -r legs: forward then reverse; -d and --full-duplex are simultaneous (bidir-*)
        ("tcp-r.txt", {"forward": 19.5e9, "reverse": 24.4e9}),
        ("tcp-r-server.txt", {"forward": 19.5e9, "reverse": 24.3e9}),
        ("tcp-d.txt", {"bidir-forward": 30.7e9, "bidir-reverse": 33.0e9}),
        ("tcp-d-server.txt", {"bidir-forward": 30.8e9, "bidir-reverse": 32.9e9}),
        ("tcp-fd.txt", {"bidir-forward": 13.4e9, "bidir-reverse": 13.8e9}),
        ("tcp-fd-server.txt", {"bidir-forward": 13.3e9, "bidir-reverse": 13.8e9}),
    ],
)
def test_two_way_runs_tag_each_row_with_its_direction(name, expected):
    r = parse(name)
    got = {m.direction: m.value for m in r.measurements if m.metric == "throughput"}
    assert got == pytest.approx(expected, rel=1e-9)
    assert r.direction is None  # per-row directions


def test_udp_without_server_report_reports_sender_side_only():
    for name in ("seed001-udp-no-ack.txt", "udp-csv.txt", "udp-no-server-report.txt"):
        r = parse(name)
        m = metrics(r)
        assert "throughput" not in m and "loss" not in m and "jitter" not in m, name
        assert m["sender_throughput"] > 0
        assert any("no server report" in w for w in r.info["warnings"])
    assert metrics(parse("seed001-udp-no-ack.txt"))["sender_throughput"] == pytest.approx(810e6)


def test_intervals_are_kept_per_stream_and_sum():
    r = parse("tcp-P2.txt")
    thr = [p for p in r.intervals if p.metric == "throughput"]
    assert {p.stream for p in thr} == {"1", "2", "sum"}
    sums = sorted((p.t_start, p.value) for p in thr if p.stream == "sum")
    assert sums == [(0.0, 14.2e9), (1.0, 11.0e9), (2.0, 14.9e9)]
    seed = parse("seed001-tcp-i1.txt")
    pts = [p for p in seed.intervals if p.metric == "throughput"]
    assert len(pts) == 10 and pts[0].value == 945e6 and pts[-1].t_end == 10.0
    e = parse("tcp-e.txt")
    assert [p.value for p in e.intervals if p.metric == "tcp_rtt_mean"] == pytest.approx(
        [115e-6, 63e-6, 175e-6]
    )
    srv = parse("udp-i1-server.txt")
    assert [p.value for p in srv.intervals if p.metric == "loss"] == [0.0, 0.0, 0.0]


def test_info_holds_what_the_output_says():
    r = parse("seed001-tcp-i1.txt")
    assert r.info["command"] == "iperf -c 10.100.100.245 -i 1"
    assert r.info["role"] == "client" and r.info["remote"] == "10.100.100.245"
    assert parse("tcp-e-server.txt").info["peer_version"] == "2.1.8"
    assert parse("udp.txt").info["datagram_size"] == 1470


def test_errors_name_what_was_expected():
    with pytest.raises(ParseError, match=r"no iperf 2 report row .*could not connect"):
        parse("error-refused.txt")
    cut = (FIXTURES / "iperf2/tcp-i1.txt").read_text().splitlines()[:-1]  # summary line lost
    with pytest.raises(ParseError, match="no summary row"):
        iperf2.parse("\n".join(cut) + "\n")
    with pytest.raises(ParseError):
        iperf2.parse("Server listening on TCP port 5001\n")


def test_never_a_made_up_zero():
    for f in sorted((FIXTURES / "iperf2").glob("*.txt")):
        try:
            r = iperf2.parse(f.read_text())
        except ParseError:
            continue
        for m in r.measurements:
            if m.metric in ("throughput", "sender_throughput", "duration", "bytes_transferred"):
                assert m.value > 0, (f.name, m)


def test_invocation_argv():
    inv = iperf2.invocation(
        {"duration": 30, "protocol": "udp", "bandwidth": "100M", "length": 1400, "streams": 2}, "10.0.0.2"
    )
    assert inv.client == [
        "iperf",
        "-c",
        "10.0.0.2",
        "-p",
        "5001",
        "-t",
        "30",
        "-i",
        "1",
        "-e",
        "-u",
        "-b",
        "100M",
        "-l",
        "1400",
        "-P",
        "2",
    ]
    assert inv.server == ["iperf", "-s", "-p", "5001", "-i", "1", "-e", "-u"]
    assert (inv.test, inv.protocol, inv.streams, inv.port, inv.version) == (
        "udp",
        "udp",
        2,
        None,
        ["iperf", "-v"],
    )
    tcp = iperf2.invocation({"direction": "reverse"}, "10.0.0.2")
    assert "-R" in tcp.client and tcp.port == 5001 and tcp.direction == "reverse"
    assert all(isinstance(a, str) for a in tcp.client + tcp.server)


def _fixture_files():
    for f in sorted(FIXTURES.rglob("*")):
        if (
            f.is_file()
            and not f.name.endswith((".expected.json", ".meta.yaml", ".md"))
            and f.parent.name in all_adapters()
        ):
            yield f


@pytest.mark.parametrize("path", list(_fixture_files()), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_detect_picks_each_fixture_directory_tool(path: Path):
    """Every fixture of every tool (iperf3 and ping fixtures too) is recognised as its directory's tool."""
    assert detect(path.read_text(encoding="utf-8")).name == path.parent.name


def test_a_run_that_overran_its_time_is_the_runs_summary():
    # launched through a Service on a loaded machine: -t 1 took 2.0154 s (a stall at the end); the
    # summary row spans the whole run, it is not an interval row taken for one
    text = """------------------------------------------------------------
Client connecting to 10.96.167.34, TCP port 15001 with pid 423 (1 flows)
Write buffer size: 131072 Byte
TOS set to 0x0 (Nagle on)
TCP window size: 1.93 MByte (default)
------------------------------------------------------------
[  1] local 10.210.0.12%eth0 port 43104 connected with 10.96.167.34 port 15001 (sock=3) (icwnd/mss/irtt=14/1448/124) (ct=0.20 ms) on 2026-11-24 22:37:44 (UTC)
[ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr
[  1] 0.0000-1.0000 sec  1.51 GBytes  13.0 Gbits/sec  12387/0        135     1538K/153(165) us  10611692
[  1] 1.0000-2.0154 sec   128 KBytes  1.03 Mbits/sec  1/0          0     1787K/252(322) us  512
[  1] 0.0000-2.0154 sec  1.51 GBytes  6.45 Gbits/sec  12388/0        135     1787K/252(322) us  3197065
"""
    from podnet.parse.stage import parse_text

    _, r = parse_text(text, command="iperf -c 10.96.167.34 -p 15001 -t 1 -i 1 -e")
    assert {m.metric: m.value for m in r.measurements}["throughput"] == pytest.approx(6.45e9)
