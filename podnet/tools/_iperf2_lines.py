"""iperf 2 text output, line by line: the regexes of its line shapes and what each one records.

:data:`_SHAPES` is the parser's table (flent's RegexpRunner idea): a line goes to the first
shape whose regex matches it. :mod:`podnet.tools.iperf2` builds the run's result from the
state the shapes fill in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from podnet.tools.units import prefix_factor

_NUM = r"\d+(?:\.\d+)?"
_ROW = re.compile(
    r"^\[\s*(?P<id>SUM(?:-\d+)?|\*?\s*\d+)\s*\]\s*"
    rf"(?P<t0>{_NUM})\s*-\s*(?P<t1>{_NUM})\s*sec\s+"
    rf"(?P<xfer>{_NUM})\s*(?P<xunit>[KMGT]?Bytes|[KMGT]?bits)\s*"
    rf"(?P<rate>{_NUM})\s*(?P<runit>[KMGTkmgt]?(?:bits|Bytes)/sec)"
    r"(?P<rest>.*)$"
)
_OOO = re.compile(
    rf"^\[\s*(?P<id>SUM(?:-\d+)?|\*?\s*\d+)\s*\]\s*{_NUM}\s*-\s*{_NUM}\s*sec\s+(?P<n>\d+)\s+datagrams received out-of-order"
)
_SENT = re.compile(r"^\[\s*(?P<id>SUM(?:-\d+)?|\*?\s*\d+)\s*\]\s*Sent\s+(?P<n>\d+)\s+datagrams")
_SERVER_REPORT = re.compile(r"^\[\s*(?P<id>\*?\s*\d+|SUM(?:-\d+)?)\s*\]\s*Server Report:")
_CONN = re.compile(
    r"^\[\s*(?P<id>\*?\s*\d+)\s*\]\s*local\s*(?P<local>\S+?)\s+port\s+(?P<lport>\d+)\s+connected\s+with\s+"
    r"(?P<remote>\S+)\s+port\s+(?P<rport>\d+)(?P<rest>.*)$"
)
_CLIENT_HDR = re.compile(r"^Client connecting to (?P<host>\S+?),\s*(?P<proto>TCP|UDP) port (?P<port>\d+)")
_SERVER_HDR = re.compile(r"^Server listening on (?P<proto>TCP|UDP) port (?P<port>\d+)")
_CSV = re.compile(r"^\d{14}(?:\.\d+)?,[^,]*,\d+,[^,]*,\d+,-?\d+,\d+(?:\.\d+)?-\d+(?:\.\d+)?,-?\d+,-?\d+")

# extra columns after the rate
_UDP_RECV = re.compile(
    rf"^\s*(?P<jitter>-?{_NUM})\s*ms\s+(?P<lost>-?\d+)\s*/\s*(?P<total>\d+)\s*\(\s*(?P<pct>-?[\d.]+(?:e[-+]?\d+)?)\s*%\s*\)"
    r"(?P<rest>.*)$"
)
_UDP_SUM_RECV = re.compile(
    r"^\s*(?P<lost>-?\d+)\s*/\s*(?P<total>\d+)\s*\(\s*(?P<pct>-?[\d.]+)\s*%\s*\)(?P<rest>.*)$"
)
_LAT4 = re.compile(
    rf"(?P<avg>-?{_NUM})\s*/\s*(?P<min>-?{_NUM})\s*/\s*(?P<max>-?{_NUM})\s*/\s*(?P<std>-?{_NUM})\s*ms"
)
_PPS = re.compile(r"(?P<pps>\d+)\s*pps")
_TCP_SEND_E = re.compile(
    r"^\s*(?P<writes>\d+)\s*/\s*(?P<werr>\d+)\s+(?P<retry>\d+)"
    r"(?:\s+(?P<cwnd>\d+)(?P<cu>[KMG]?)\s*/\s*(?P<rtt>\d+(?:\.\d+)?)(?:\s*\((?P<rttvar>\d+(?:\.\d+)?)\))?\s*us"
    rf"(?:\s+(?P<netpwr>{_NUM}))?)?"
)
_UDP_SEND_E = re.compile(r"^\s*(?P<writes>\d+)\s*/\s*(?P<werr>\d+)\s+(?P<pps>\d+)\s*pps")
_READS = re.compile(r"^\s*(?P<reads>\d+)\s*=\s*[\d:]+")
_TRAIL_NUM = re.compile(rf"\s({_NUM})\s*$")


def _bytes(value: float, unit: str) -> float:
    """Transfer column: binary prefixes ('MBytes' = 2**20 bytes); 'Mbits' = 2**20 bits."""
    prefix = unit[0] if unit[0] in "KMGT" else ""
    factor = prefix_factor(prefix, binary=True)
    return value * factor / 8 if unit.endswith("bits") else value * factor


def _rate(value: float, unit: str) -> float:
    """Rate column in bit/s: 'Mbits/sec' decimal, 'MBytes/sec' binary (iperf 2's rules)."""
    base = unit.split("/")[0]
    prefix = base[0] if base[0] in "KMGTkmgt" else ""
    if base.endswith("bits"):
        return value * prefix_factor(prefix.upper())
    return value * prefix_factor(prefix.upper(), binary=True) * 8


@dataclass
class _Row:
    sid: str  # "1", "*1", "SUM"
    t0: float
    t1: float
    nbytes: float
    bps: float
    rest: str
    report: bool = False  # a client's "Server Report" row (receiver side)
    order: int = 0
    direction: str = "forward"


@dataclass
class _Conn:
    sid: str
    accepted: bool  # this process accepted the connection (local port is a listening port)
    flags: str
    order: int
    ct_ms: float | None = None
    lport: str = ""
    rport: str = ""


@dataclass
class _State:
    role: str | None = None  # 'client' or 'server' (of the whole invocation)
    proto: str | None = None
    listen_ports: set[str] = field(default_factory=set)
    connect_ports: set[str] = field(default_factory=set)  # ports of 'Client connecting to' headers
    conns: dict[str, _Conn] = field(default_factory=dict)
    rows: list[_Row] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)
    ooo: dict[str, int] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Scan:
    """What scanning an iperf 2 text output carries from line to line."""

    st: _State
    order: int = 0
    report_ids: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)


# ---- line shapes: (regex, handler); a handler returning False passes the line on --------------


def _on_command(sc: _Scan, m: re.Match[str]) -> bool | None:
    if "command" in sc.st.info:
        return False
    sc.st.info["command"] = m[1].strip()
    return None


def _on_client_header(sc: _Scan, m: re.Match[str]) -> None:
    st = sc.st
    st.proto = st.proto or m["proto"].lower()
    st.info.setdefault("target", m["host"])
    st.info.setdefault("port", int(m["port"]))
    st.connect_ports.add(m["port"])


def _on_server_header(sc: _Scan, m: re.Match[str]) -> None:
    st = sc.st
    st.proto = st.proto or m["proto"].lower()
    st.listen_ports.add(m["port"])
    st.info.setdefault("listen_port", int(m["port"]))


def _on_buffer(sc: _Scan, m: re.Match[str]) -> None:
    sc.st.info.setdefault(m[1].lower().replace(" ", "_"), m[2].strip())


def _on_datagrams(sc: _Scan, m: re.Match[str]) -> None:
    sc.st.info.setdefault("datagram_size", int(m[1]))
    sc.st.proto = sc.st.proto or "udp"


def _on_connection(sc: _Scan, m: re.Match[str]) -> None:
    st = sc.st
    sid = _sid(m["id"])
    accepted = m["lport"] in st.listen_ports
    if st.role is None:
        st.role = "server" if accepted else "client"
        st.info.setdefault("local", m["local"].split("%")[0])
        st.info.setdefault("remote", m["remote"])
    ct = re.search(r"\(ct=([\d.]+) ms\)", m["rest"])
    peer = re.search(r"\(peer ([\d.]+\S*)\)", m["rest"])
    if peer:
        st.info.setdefault("peer_version", peer[1])
    mss = re.search(r"icwnd/mss/irtt=(\d+)/(\d+)/(\d+)", m["rest"])
    if mss:
        st.info.setdefault("mss", int(mss[2]))
    st.conns[sid.lstrip("*")] = _Conn(
        sid, accepted, m["rest"], sc.order, float(ct[1]) if ct else None, m["lport"], m["rport"]
    )


def _on_server_report(sc: _Scan, m: re.Match[str]) -> None:
    sc.report_ids.add(_sid(m["id"]))


def _on_sent(sc: _Scan, m: re.Match[str]) -> None:
    sc.st.sent[_sid(m["id"])] = int(m["n"])


def _on_out_of_order(sc: _Scan, m: re.Match[str]) -> None:
    sc.st.ooo[_sid(m["id"])] = int(m["n"])


def _on_row(sc: _Scan, m: re.Match[str]) -> None:
    st = sc.st
    sid = _sid(m["id"])
    row = _Row(
        sid=sid,
        t0=float(m["t0"]),
        t1=float(m["t1"]),
        nbytes=_bytes(float(m["xfer"]), m["xunit"]),
        bps=_rate(float(m["rate"]), m["runit"]),
        rest=m["rest"],
        report=sid in sc.report_ids,
        order=sc.order,
    )
    if row.report:
        sc.report_ids.discard(sid)
    st.rows.append(row)
    if st.proto is None and _UDP_RECV.match(m["rest"]):
        st.proto = "udp"


def _on_connect_times(sc: _Scan, m: re.Match[str]) -> None:
    sc.st.info["connect_times_ms"] = {"min": float(m[1]), "avg": float(m[2]), "max": float(m[3])}


#: iperf 2's text output as a list of line shapes, tried in order (flent's RegexpRunner idea):
#: the first regex that matches a line decides what it is; other lines with WARNING/failed/error
#: are kept as warnings
_SHAPES = [
    (re.compile(r"(?:^|[#$>]\s*)(iperf\s+-.*)$").search, _on_command),
    (_CLIENT_HDR.match, _on_client_header),
    (_SERVER_HDR.match, _on_server_header),
    (
        re.compile(r"^(TCP window size|UDP buffer size|Write buffer size|Read buffer size):\s*(.+)$").match,
        _on_buffer,
    ),
    (re.compile(r"^Sending (\d+) byte datagrams").match, _on_datagrams),
    (_CONN.match, _on_connection),
    (_SERVER_REPORT.match, _on_server_report),
    (_SENT.match, _on_sent),
    (_OOO.match, _on_out_of_order),
    (_ROW.match, _on_row),
    (
        re.compile(
            r"^\[ CT\] final connect times \(min/avg/max/stdev\) = ([\d.]+)/([\d.]+)/([\d.]+)/[\d.]+ ms"
        ).match,
        _on_connect_times,
    ),
]


def _sid(raw: str) -> str:
    return raw.replace(" ", "")
