"""A small synthetic seed-003 campaign, processed by the real stats stage, and a seed table.

(A test double: it lives in tests/, not in the package.) Three of our CNIs (macvlan, calico-vxlan
and bridge, which seed 003 does not have) on host-host, pod-host-same-node and pod-pod-cross-node,
iperf3 tcp throughput and netperf TCP_RR latency_p50, 4 rounds of one side-by-side launch (every
variant in each round, a load factor common to the round); a seed table shaped like
raw/seed-cni-report (header comments, Gbits/sec and us, a sidecar).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from podnet import stats
from podnet.stats import ranking
from tests.stats_tables import rows, tidy

#: our geometric-mean-ish centres: (variant, scenario) -> (throughput bit/s, TCP_RR P50 s)
CENTRES = {
    ("macvlan.iptables", "host-host"): (9.0e9, 60e-6),
    ("macvlan.iptables", "pod-host-same-node"): (12.0e9, 40e-6),
    ("macvlan.iptables", "pod-pod-cross-node"): (8.5e9, 70e-6),
    ("calico-vxlan.iptables", "host-host"): (9.0e9, 60e-6),
    ("calico-vxlan.iptables", "pod-host-same-node"): (11.0e9, 45e-6),
    ("calico-vxlan.iptables", "pod-pod-cross-node"): (4.0e9, 55e-6),  # lower latency than macvlan
    ("bridge.iptables", "host-host"): (9.0e9, 60e-6),
    ("bridge.iptables", "pod-host-same-node"): (11.5e9, 42e-6),
    ("bridge.iptables", "pod-pod-cross-node"): (7.0e9, 75e-6),
}
#: relative sd of the repeats (about 1 %: every pair of the fixture resolves), one draw per group
SD = 0.01

SEED_TABLE = """\
# seed 003 (shared/seeds/003_662c8239167308b2.txt): a cut of its tables, transcribed as published
variant,scenario,tool,test,protocol,direction,streams,metric,value,unit,note
macvlan-standalone,node-node,iperf3,tcp,tcp,forward,1,throughput,9.16,Gbits/sec,line 125
calico-vxlan,node-node,iperf3,tcp,tcp,forward,1,throughput,9.16,Gbits/sec,line 125
cilium-vxlan,node-node,iperf3,tcp,tcp,forward,1,throughput,9.16,Gbits/sec,line 125
calico-ipip,node-node,iperf3,tcp,tcp,forward,1,throughput,9.16,Gbits/sec,line 125
macvlan-standalone,pod-node-same-node,iperf3,tcp,tcp,forward,1,throughput,16.4,Gbits/sec,line 126
calico-vxlan,pod-node-same-node,iperf3,tcp,tcp,forward,1,throughput,13.8,Gbits/sec,line 126
cilium-vxlan,pod-node-same-node,iperf3,tcp,tcp,forward,1,throughput,12.6,Gbits/sec,line 126
calico-ipip,pod-node-same-node,iperf3,tcp,tcp,forward,1,throughput,14.23,Gbits/sec,line 126
macvlan-standalone,pod-pod-cross-node,iperf3,tcp,tcp,forward,1,throughput,9.18,Gbits/sec,line 129
calico-vxlan,pod-pod-cross-node,iperf3,tcp,tcp,forward,1,throughput,1.37,Gbits/sec,line 129
cilium-vxlan,pod-pod-cross-node,iperf3,tcp,tcp,forward,1,throughput,8.30,Gbits/sec,line 129
calico-ipip,pod-pod-cross-node,iperf3,tcp,tcp,forward,1,throughput,4.51,Gbits/sec,line 129
macvlan-standalone,pod-service-cross-node,iperf3,tcp,tcp,forward,1,throughput,9.15,Gbits/sec,line 138
calico-vxlan,pod-service-cross-node,iperf3,tcp,tcp,forward,1,throughput,1.3,Gbits/sec,line 138
macvlan-standalone,node-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,113.27,us,line 144
calico-vxlan,node-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,113.27,us,line 144
cilium-vxlan,node-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,113.27,us,line 144
calico-ipip,node-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,113.27,us,line 144
macvlan-standalone,pod-node-same-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,61.25,us,line 145
calico-vxlan,pod-node-same-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,76.81,us,line 145
cilium-vxlan,pod-node-same-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,76.76,us,line 145
calico-ipip,pod-node-same-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,74.55,us,line 145
macvlan-standalone,pod-pod-cross-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,81.74,us,line 148
calico-vxlan,pod-pod-cross-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,275.22,us,line 148
cilium-vxlan,pod-pod-cross-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,201.27,us,line 148
calico-ipip,pod-pod-cross-node,netperf,TCP_RR,tcp,roundtrip,1,latency_mean,248.72,us,line 148
"""

SIDECAR = """\
podnet_sidecar: 1
tool: reference
variant: seed-003
scenario: published-tables
repeat: 1
kind: reference
source: "a cut of seed 003's tables (tests)"
"""

#: report.vs_seed of the fixture (the campaign's, cut to what the fixture has)
VS_SEED = {
    "seed": "seed 003",
    "baseline": {"seed": "node-node", "ours": "host-host"},
    "variants": {
        "macvlan-standalone": "macvlan.iptables",
        "calico-vxlan": "calico-vxlan.iptables",
        "cilium-vxlan": "cilium-vxlan.iptables",
        "calico-ipip": None,
    },
    "scenarios": {
        "node-node": ["host-host"],
        "pod-node-same-node": ["pod-host-same-node"],
        "pod-pod-cross-node": ["pod-pod-cross-node"],
        "pod-service-cross-node": [],
    },
    "measures": [
        {"seed": "iperf3:tcp:throughput", "ours": ["iperf3:tcp:throughput"]},
        {"seed": "netperf:TCP_RR:latency_mean", "ours": ["netperf:TCP_RR:latency_p50"]},
    ],
}


def write_published(directory: Path) -> Path:
    """The seed table and its sidecar under ``directory``; returns the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tables.csv").write_text(SEED_TABLE, encoding="utf-8")
    (directory / "tables.csv.meta.yaml").write_text(SIDECAR, encoding="utf-8")
    return directory


def processed(directory: Path, centres: dict | None = None) -> Path:
    """The synthetic campaign's tidy table through the real stats stage into ``directory``."""
    rng = np.random.default_rng(20261125)
    load = np.exp(rng.normal(0.0, 0.1, 4))  # the machine's load in each of the 4 rounds
    parts = []
    for (variant, scenario), (tput, p50) in (centres or CENTRES).items():
        common = dict(experiment="seed-003", variant=variant, scenario=scenario, launch_id="L-side-by-side")
        parts.append(rows(tput * load * np.exp(rng.normal(0.0, SD, 4)), **common))
        parts.append(
            rows(
                p50 / load * np.exp(rng.normal(0.0, SD, 4)),
                tool="netperf",
                test="TCP_RR",
                direction="roundtrip",
                metric="latency_p50",
                unit="s",
                **common,
            )
        )
    t = tidy(*parts)
    directory.mkdir(parents=True, exist_ok=True)
    t.to_parquet(directory / "tidy.parquet")
    settings = {
        "comparisons": [
            {"by": "scenario", "baseline": "host-host"},
            {"by": "variant", "baseline": "macvlan.iptables"},
        ]
    }
    stats.run(directory / "tidy.parquet", directory, settings, cache=False)
    measures = [m for x in VS_SEED["measures"] for m in x["ours"]]
    ranking.write(
        ranking.ranking_table(t, {**settings, "ranking": {"measures": measures}}), directory / "ranking.csv"
    )
    return directory


# ---- a synthetic raw campaign (real tools' output shapes, values set per case) ---------------------

FIXTURES = Path(__file__).parent / "fixtures"


def _scaled(node: object, k: float) -> object:
    """An iperf3 JSON tree with every byte count and rate scaled by ``k`` (times kept)."""
    if isinstance(node, dict):
        return {
            key: (
                v * k if key in ("bytes", "bits_per_second") and isinstance(v, int | float) else _scaled(v, k)
            )
            for key, v in node.items()
        }
    if isinstance(node, list):
        return [_scaled(v, k) for v in node]
    return node


def iperf3_output(throughput: float) -> str:
    """iperf3 -J of tests/fixtures/iperf3/tcp-forward.json with its received rate set to ``throughput``."""
    import json

    doc = json.loads((FIXTURES / "iperf3" / "tcp-forward.json").read_text())
    k = throughput / float(doc["end"]["sum_received"]["bits_per_second"])
    return json.dumps(_scaled(doc, k), indent=2)


def netperf_output(test: str, throughput: float = 0.0, p50: float = 0.0) -> str:
    """netperf -k keyval (the launcher's form, tests/fixtures/netperf/*-k-launcher.txt) with its
    throughput (bit/s, TCP_STREAM) or its latencies (s, TCP_RR/TCP_CRR: P50 = ``p50``, mean 1.1x)."""
    name = {"TCP_STREAM": "tcp-stream", "TCP_RR": "tcp-rr", "TCP_CRR": "tcp-crr"}[test]
    lines = (FIXTURES / "netperf" / f"{name}-k-launcher.txt").read_text().splitlines()
    us = p50 * 1e6
    new = {
        "THROUGHPUT": f"{throughput / 1e6:.2f}" if test == "TCP_STREAM" else None,
        "P50_LATENCY": f"{us:.0f}" if test != "TCP_STREAM" else None,
        "MEAN_LATENCY": f"{1.1 * us:.2f}" if test != "TCP_STREAM" else None,
        "MIN_LATENCY": f"{0.8 * us:.0f}" if test != "TCP_STREAM" else None,
        "P90_LATENCY": f"{1.3 * us:.0f}" if test != "TCP_STREAM" else None,
        "P99_LATENCY": f"{2 * us:.0f}" if test != "TCP_STREAM" else None,
        "RT_LATENCY": f"{1.1 * us:.3f}" if test != "TCP_STREAM" else None,
    }
    out = []
    for ln in lines:
        key = ln.split("=", 1)[0]
        out.append(f"{key}={new[key]}" if new.get(key) is not None else ln)
    return "\n".join(out) + "\n"


def write_raw(raw: Path, centres: dict | None = None, repeats: int = 3) -> Path:
    """raw/<variant>/<scenario>/<tool>-<test>/rNNN.* with sidecars, as the launcher lays them out:
    iperf3 tcp and netperf TCP_STREAM at the case's throughput, netperf TCP_RR at its P50 (1 %
    noise, a load factor common to each round; one side-by-side launch of every variant). Returns
    ``raw``."""
    rng = np.random.default_rng(20261126)
    load = np.exp(rng.normal(0.0, 0.1, repeats))  # the machine's load in each round
    for (variant, scenario), (tput, p50) in (centres or CENTRES).items():
        for r in range(1, repeats + 1):
            k = load[r - 1]
            cases = {
                ("iperf3", "tcp", "json"): iperf3_output(tput * k * np.exp(rng.normal(0, SD))),
                ("netperf", "TCP_STREAM", "txt"): netperf_output(
                    "TCP_STREAM", throughput=tput * k * np.exp(rng.normal(0, SD))
                ),
                ("netperf", "TCP_RR", "txt"): netperf_output(
                    "TCP_RR", p50=p50 / k * np.exp(rng.normal(0, SD))
                ),
            }
            for (tool, test, ext), text in cases.items():
                d = raw / variant / scenario / f"{tool}-{test}"
                d.mkdir(parents=True, exist_ok=True)
                f = d / f"r{r:03d}.{ext}"
                f.write_text(text, encoding="utf-8")
                side = {
                    "podnet_sidecar": 1,
                    "tool": tool,
                    "variant": variant,
                    "scenario": scenario,
                    "repeat": r,
                    "kind": "measured",
                    "test": test,
                    "protocol": "tcp",
                    "direction": "forward" if test in ("tcp", "TCP_STREAM") else "roundtrip",
                    "streams": 1,
                    "launch": {"id": "L-side-by-side"},
                    "round_seq": r - 1,
                    "source": "synthetic (tests/vs_seed_fixture.py): a fixture's output with values set",
                }
                (d / f"r{r:03d}.{ext}.meta.yaml").write_text(yaml.safe_dump(side), encoding="utf-8")
    return raw
