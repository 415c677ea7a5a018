"""A seed campaign launched on in-memory clusters: its own variant configs (campaign.variant_config)
run side by side by the real launcher (podnet.launch.campaign.sidebyside) against tests/fakekube.py,
each client answering with a real tool output (tests/fixtures: iperf3 -J, iputils ping, qperf -v)
whose figures are set per path (a test double: it lives in tests/, not in the package).

What a real launch would write, without a cluster: raw/<campaign>/<variant>/<scenario>/<tool>-<test>/
with sidecars, launch logs and the adaptive account, so the campaign's publish step (parse, stats,
vs_seed, the notebooks) runs on the shapes a 40-minute campaign leaves. Changed for the machine:
no netns floor (``launch.floor``: real namespaces), no PM QoS hold, no image file, the cluster_info
of no cluster (the machine's own would count its daemons' CPU against the fake runs).

A path is (client kind, server kind, same node or not, the client's and the server's zone); a
figure is ``value(variant, path, quantity)`` times a load factor common to each round and 1 % of
noise per run. ``quantity``: ``throughput`` (bit/s, iperf3 TCP), ``pps`` (iperf3 UDP), ``rtt`` (s,
ping), ``qperf:<test>`` (tcp_bw/udp_bw: bit/s; tcp_lat/udp_lat: s), ``qperf:<test>:cost`` (CPU s
per byte of the receiver).
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podnet.launch.campaign import run as campaign
from podnet.launch.campaign.sidebyside import launch_side_by_side
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds import runner
from podnet.launch.spec.config import LaunchConfig, from_mapping
from tests.fakekube import FakeKube, make_node

FIX = Path(__file__).resolve().parent / "fixtures"
TCP = json.loads((FIX / "iperf3" / "tcp-p2-omit.json").read_text())
UDP = json.loads((FIX / "iperf3" / "udp-l16.json").read_text())
NO_CLUSTER = "/nonexistent/podnet-unit-test/info.json"


@dataclass(frozen=True)
class Path_:
    """Where a run went: the client's and the server's kind (host, pod), node and zone."""

    client: str
    server: str
    same_node: bool
    client_zone: str
    server_zone: str

    @property
    def host_host(self) -> bool:
        return self.client == "host" and self.server == "host"


Value = Callable[[str, Path_, str], float]


def fake_config(c: campaign.Campaign, v: campaign.Variant, raw: Path) -> LaunchConfig:
    """The variant's experiment config as make compare launches it, writing under ``raw`` and
    changed for an in-memory cluster (module docstring)."""
    m = campaign.variant_config(c, v)
    m["raw_dir"] = str(raw)
    launch = m["launch"]
    launch.update(cluster_info=NO_CLUSTER, floor={"enabled": False}, cpu_latency_us=None, image="img:1")
    launch.pop("image_file", None)
    return from_mapping(m)


def _labels(value: str | None, default: str, n: int) -> list[str]:
    items = (value or default).split(",")
    return [items[min(i, len(items) - 1)] for i in range(n)]


def nodes(v: campaign.Variant) -> list[Any]:
    """The variant's embedded nodes as make cluster-up labels them (zones and pools, lib.sh's defaults)."""
    zones = _labels(v.zones, "zone-a,zone-a,zone-b", v.nodes)
    pools = _labels(v.pools, "pool-a,pool-a,pool-b", v.nodes)
    return [
        make_node(
            f"podnet-node-{i + 1}",
            {"topology.kubernetes.io/zone": zones[i], "podnet.io/pool": pools[i]},
            f"10.210.0.{11 + i}",
        )
        for i in range(v.nodes)
    ]


def _scaled(node: Any, k: dict[str, float]) -> Any:
    """A JSON tree with each key of ``k`` (numbers only) multiplied by its factor; a count (an int,
    e.g. ``packets``) stays an int."""
    if isinstance(node, dict):
        return {
            key: (
                (round(val * k[key]) if isinstance(val, int) else val * k[key])
                if key in k and isinstance(val, int | float)
                else _scaled(val, k)
            )
            for key, val in node.items()
        }
    if isinstance(node, list):
        return [_scaled(x, k) for x in node]
    return node


def _seconds(node: Any, t: float) -> Any:
    """Every summary span (``end``'s ``seconds``/``end``) set to ``t`` (the run's ``-t``)."""
    if isinstance(node, dict):
        return {key: (t if key in ("seconds", "end") and isinstance(v, int | float) else _seconds(v, t))
                for key, v in node.items()}  # fmt: skip
    if isinstance(node, list):
        return [_seconds(x, t) for x in node]
    return node


def _opt(argv: list[str], flag: str, default: str | None = None) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else default


def iperf3_output(argv: list[str], value: float) -> str:
    """iperf3 -J of a real run (TCP -P 2, UDP -l 16) with ``-t``, ``-P`` and ``-O`` as asked, its
    received rate ``value`` (TCP: bit/s; UDP: packets/s arrived)."""
    udp = "-u" in argv
    doc = copy.deepcopy(UDP if udp else TCP)
    t = float(_opt(argv, "-t", "10") or 10)
    streams = int(_opt(argv, "-P", "1") or 1)
    ts = doc["start"]["test_start"]
    ts.update(num_streams=streams, duration=t, omit=int(float(_opt(argv, "-O", "0") or 0)))
    end = doc["end"]
    end["streams"] = [copy.deepcopy(end["streams"][0]) for _ in range(streams)]
    rec = end["sum_received"]
    if udp:
        arrived = (rec["packets"] - rec["lost_packets"]) / rec["seconds"]
        k = value / arrived
        keys = {"bytes": k, "bits_per_second": k, "packets": k, "lost_packets": k}
    else:
        k = value / float(rec["bits_per_second"])
        keys = {"bytes": k, "bits_per_second": k}
    doc["end"] = _seconds(_scaled(end, keys), t)
    return json.dumps(doc, indent=1)


def ping_output(argv: list[str], rtt: float, rng: random.Random) -> str:
    """iputils ping of ``-c`` echoes around ``rtt`` seconds."""
    n = int(_opt(argv, "-c", "3") or 3)
    target = argv[-1]
    ms = [round(rtt * 1e3 * math.exp(rng.gauss(0, 0.03)), 3) for _ in range(n)]
    lines = [f"PING {target} ({target}) 56(84) bytes of data."]
    lines += [f"64 bytes from {target}: icmp_seq={i + 1} ttl=63 time={x:.3f} ms" for i, x in enumerate(ms)]
    mean = sum(ms) / n
    mdev = (sum((x - mean) ** 2 for x in ms) / n) ** 0.5
    lines += [
        "",
        f"--- {target} ping statistics ---",
        f"{n} packets transmitted, {n} received, 0% packet loss, time {int(n * 200)}ms",
        f"rtt min/avg/max/mdev = {min(ms):.3f}/{mean:.3f}/{max(ms):.3f}/{mdev:.3f} ms",
    ]
    return "\n".join(lines) + "\n"


QPERF_BW = """{test}:
    {bw_lines}
    msg_rate        =  {rate:.3g} K/sec
    time            =  {t:g} sec
    send_cost       =  {send_cost:.3g} sec/GB
    recv_cost       =  {recv_cost:.3g} sec/GB
    send_cpus_used  =  {send_cpu:.3g} % cpus
    recv_cpus_used  =  {recv_cpu:.3g} % cpus
"""
QPERF_LAT = """{test}:
    latency        =  {us:.3g} us
    msg_rate       =  {rate:.3g} K/sec
    time           =  {t:g} sec
    loc_cpus_used  =  {loc:.3g} % cpus
    rem_cpus_used  =  {rem:.3g} % cpus
"""
QPERF_CONF = """conf:
    loc_node   =  {loc}
    loc_cpu    =  2 Cores: Intel Xeon @ 2.50GHz
    loc_os     =  Linux 6.18.44-fc-v595
    loc_qperf  =  0.4.11
    rem_node   =  {rem}
    rem_cpu    =  2 Cores: Intel Xeon @ 2.50GHz
    rem_os     =  Linux 6.18.44-fc-v595
    rem_qperf  =  0.4.11
"""


def qperf_output(argv: list[str], figure: Callable[[str], float], loc: str, rem: str) -> str:
    """qperf -v (0.4.11's layout, tests/fixtures/qperf/verbose.txt) of the tests on the command line;
    ``figure(quantity)`` gives each test's headline (``qperf:<test>``) and receive cost (``:cost``)."""
    t = float(_opt(argv, "-t", "2") or 2)
    out = []
    for test in [a for a in argv if re.fullmatch(r"(tcp|udp)_(bw|lat)", a)]:
        v = figure(f"qperf:{test}")
        if test.endswith("_bw"):
            mb = v / 8e6  # MB/sec
            bw = f"bw              =  {mb:.3g} MB/sec"
            if test == "udp_bw":
                bw = f"send_bw         =  {1.02 * mb:.3g} MB/sec\n    recv_bw         =  {mb:.3g} MB/sec"
            cost = figure(f"qperf:{test}:cost") * 1e9  # sec/GB
            out.append(
                QPERF_BW.format(
                    test=test,
                    bw_lines=bw,
                    rate=v / 8 / 65536 / 1e3,
                    t=t,
                    send_cost=0.8 * cost,
                    recv_cost=cost,
                    send_cpu=40.0,
                    recv_cpu=cost * mb / 1e3 * 100,
                )  # fmt: skip
            )
        else:
            out.append(QPERF_LAT.format(test=test, us=v * 1e6, rate=1 / v / 1e3, t=t, loc=30.0, rem=8.0))
    out.append(QPERF_CONF.format(loc=loc, rem=rem))
    return "".join(out)


class Responder:
    """Answers a client's exec with its tool's output at the figure ``value`` gives its path."""

    def __init__(self, variant: str, value: Value, seed: int = 1):
        self.variant, self.value = variant, value
        self.rng = random.Random(f"{seed}:{variant}")
        self.kube: FakeKube | None = None
        self.round_load = 1.0
        self.runs = 0

    def path(self, pod: str, argv: list[str]) -> Path_:
        assert self.kube is not None
        live = self.kube._live
        client = live[pod]
        ips = set(argv)
        servers = [n for n, p in live.items() if n.startswith("server-") and p.status.pod_ip in ips]
        assert servers, f"no server pod answers {argv}"
        server = live[servers[0]]
        zone = {n.metadata.name: n.metadata.labels["topology.kubernetes.io/zone"] for n in self.kube.nodes()}
        return Path_(
            client="host" if pod.startswith("client-host") else "pod",
            server="host" if servers[0].startswith("server-host") else "pod",
            same_node=client.spec.node_name == server.spec.node_name,
            client_zone=zone[client.spec.node_name],
            server_zone=zone[server.spec.node_name],
        )

    def __call__(self, pod: str, argv: list[str]) -> ExecResult:
        tool = next((a for a in argv if a in ("iperf3", "ping", "qperf")), None)
        if tool is None:
            return ExecResult(rc=0, stdout="", stderr="")
        argv = argv[argv.index(tool) :]
        self.runs += 1
        if self.runs % 40 == 0:  # the machine's load drifts now and then
            self.round_load = math.exp(self.rng.gauss(0, 0.05))
        p = self.path(pod, argv)

        def figure(q: str) -> float:
            v = self.value(self.variant, p, q)
            slow = self.round_load * math.exp(self.rng.gauss(0, 0.01))
            return v * slow if q in ("rtt",) or q.endswith(("_lat", ":cost")) else v / slow

        if tool == "iperf3":
            text = iperf3_output(argv, figure("pps" if "-u" in argv else "throughput"))
        elif tool == "ping":
            text = ping_output(argv, figure("rtt"), self.rng)
        else:
            assert self.kube is not None
            text = qperf_output(argv, figure, pod, argv[2] if len(argv) > 2 else "server")
        return ExecResult(rc=0, stdout=text, stderr="")


def plausible(variant: str, p: Path_, q: str) -> float:
    """A plausible figure for a path under a variant (the physics the seeds' claims speak of, in
    round numbers): a link at the variant's rate (``.1gbit``, ``.2gbit``) across nodes, no link on
    one node; a VXLAN pod-to-pod path 3.4 % below the host's (the 50-byte header) and slower to
    answer; an ENI-like pod (macvlan) near the host, a routed veth's small packets slower."""
    link = 2e9 if "2gbit" in variant else 1e9
    overlay, eni = "vxlan" in variant, variant.startswith("macvlan")
    pod_pod = p.client == "pod" and p.server == "pod"
    if q in ("throughput", "qperf:tcp_bw", "qperf:udp_bw"):
        v = (0.94 * link if not p.same_node else 20e9) * (0.6 if q == "qperf:udp_bw" else 1.0)
        if overlay and pod_pod and not p.same_node:
            v *= 0.966
        return v * (0.5 if p.same_node and not p.host_host else 1.0)
    if q == "pps":
        return 300e3 * (1.0 if p.host_host else 1.03 if eni and p.server == "pod" else 0.97 if eni else 0.8)
    if q in ("rtt", "qperf:tcp_lat", "qperf:udp_lat"):
        v = (120e-6 if not p.same_node else 40e-6) * (1.1 if p.client_zone != p.server_zone else 1.0)
        return v * (1.0 if p.host_host else 1.02 if eni else 1.3 if overlay else 1.15)
    if q.endswith(":cost"):
        return 1.0e-9 * (1.0 if p.host_host else 1.4)
    raise KeyError(q)


def launch(
    campaign_file: str | Path,
    raw: Path,
    value: Value = plausible,
    seed: int = 1,
    budget: str | None = None,
) -> list[Any]:
    """Launch every variant of the campaign on in-memory clusters into ``raw`` (``raw/<campaign>``
    as make compare lays it out), side by side or, as the campaign's design says, one launch per
    variant; ``budget``: an adaptive campaign's for its added rounds (``make compare BUDGET=``; "1s":
    the base rounds only, each added round re-reads every run); returns the launch results."""
    c = campaign.load(campaign_file)
    if (c.experiment["launch"].get("adaptive") or {}).get("enabled"):  # with_budget would enable it
        c = campaign.with_budget(c, budget)
    cfgs = [fake_config(c, v, raw) for v in c.variants]
    kubes = []
    for v in c.variants:
        r = Responder(v.name, value, seed)
        k = FakeKube(nodes(v), r)
        r.kube = k
        kubes.append(k)
    if campaign.design(c)[0] == "sequential":  # one variant (seed 004): one plain launch
        return [runner.launch(cfg, kube=k) for cfg, k in zip(cfgs, kubes, strict=True)]
    return launch_side_by_side(cfgs, kubes=kubes)
