"""A synthetic raw latency-under-load campaign (config/campaigns/under-load.yaml's shape) from real
outputs: netperf TCP_RR -k (tests/fixtures/netperf/tcp-rr-k-launcher.txt, its latencies set per run)
as the probe and iperf3 -J -P 2 -O 1 -t 2 (tests/fixtures/iperf3/tcp-p2-omit.json, its rates scaled)
as the load, one sidecar per run as the launcher writes it (``load`` record, probe window inside
the load's steady part), every variant in one side-by-side launch, rounds shared by every point."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import numpy as np

from podnet.parse.raw import write_raw
from podnet.parse.underload import load_name
from tests.vs_seed_fixture import _scaled, netperf_output

FIXTURES = Path(__file__).parent / "fixtures"
LOAD = FIXTURES / "iperf3" / "tcp-p2-omit.json"
SCENARIO = "pod-pod-cross-node"
#: each variant's idle TCP_RR P50 (s) and the load it carries per stream (bit/s)
VARIANTS = {
    "macvlan.iptables": (30e-6, 9e9),
    "calico-bgp.iptables": (42e-6, 7e9),
    "calico-vxlan.iptables": (55e-6, 5e9),
    "cilium-vxlan.iptables": (50e-6, 5.5e9),
    "flannel-vxlan.iptables": (48e-6, 5e9),
}
#: the P50's factor over idle at each load point (the path's queueing and the cores' sharing)
FACTOR = {0: 1.0, 1: 1.8, 4: 2.6, 8: 3.4}
SD = 0.03  # each run's own noise (log scale)


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_raw_campaign(raw: Path, repeats: int = 6, variants: dict | None = None) -> Path:
    """raw/<variant>/pod-pod-cross-node/netperf-tcp_rr-load_streams-<N>/rNNN.txt (+ rNNN.load.json
    for N > 0) with sidecars; a machine factor common to each round. Returns ``raw``."""
    rng = np.random.default_rng(20261126)
    doc = json.loads(LOAD.read_text())
    t0 = float(doc["start"]["timestamp"]["timesecs"])
    received = float(doc["end"]["sum_received"]["bits_per_second"])
    machine = np.exp(rng.normal(0.0, 0.15, repeats))
    for variant, (p50, per_stream) in (variants or VARIANTS).items():
        for r in range(1, repeats + 1):
            for streams, f in FACTOR.items():
                test = f"tcp_rr-load_streams-{streams}"
                case = raw / variant / SCENARIO / f"netperf-{test}"
                probe = case / f"r{r:03d}.txt"
                spec = {"streams": streams, "direction": "forward", "tool": "iperf3", "lead_in": 4.0,
                        "lead_out": 3.0, "omit": 2}  # fmt: skip
                load = dict(spec)
                if streams:
                    carried = per_stream * min(streams, 2) / (1 + 0.1 * streams) * np.exp(rng.normal(0, SD))
                    text = json.dumps(_scaled(doc, carried / received), indent=2)
                    case.mkdir(parents=True, exist_ok=True)
                    (case / load_name(probe)).write_text(text)
                    # the command of the output: the fixture's -P 2 whatever the point (its rate is set)
                    load.update(
                        file=load_name(probe),
                        status="ok",
                        command="iperf3 -c 10.0.0.2 -p 15211 -J -t 2 -O 1 -P 2".split(),
                        started=_iso(t0 - 0.1),
                        ended=_iso(t0 + 3.1),
                        sha256=hashlib.sha256(text.encode()).hexdigest(),
                    )
                value = p50 * f * machine[r - 1] * np.exp(rng.normal(0, SD))
                meta = {
                    "tool": "netperf",
                    "variant": variant,
                    "scenario": SCENARIO,
                    "test": test,
                    "protocol": "tcp",
                    "direction": "roundtrip",
                    "streams": 1,
                    "repeat": r,
                    "kind": "measured",
                    "status": "ok",
                    "started": _iso(t0 + 2.2),
                    "ended": _iso(t0 + 2.9),
                    "sweep": {"test": "tcp_rr", "param": "load_streams", "value": streams},
                    "launch": {"id": "L-under-load"},
                    "round_seq": r - 1,
                    "load": load,
                    "source": "synthetic (tests/underload_fixture.py): fixtures' outputs with values set",
                }
                write_raw(probe, netperf_output("TCP_RR", p50=value), meta)
    return raw
