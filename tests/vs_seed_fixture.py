"""A small synthetic seed-003 campaign, processed by the real stats stage, and a seed table.

(A test double: it lives in tests/, not in the package.) Three of our CNIs (macvlan, calico-vxlan
and bridge, which seed 003 does not have) on host-host, pod-host-same-node and pod-pod-cross-node,
iperf3 tcp throughput and netperf TCP_RR latency_p50, 4 repeats of one launch each; a seed table
shaped like raw/seed-cni-report (header comments, Gbits/sec and us, a sidecar).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from podnet import stats
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
    parts = []
    for (variant, scenario), (tput, p50) in (centres or CENTRES).items():
        common = dict(experiment="seed-003", variant=variant, scenario=scenario, launch_id=f"L-{variant}")
        parts.append(rows(tput * np.exp(rng.normal(0.0, SD, 4)), **common))
        parts.append(
            rows(
                p50 * np.exp(rng.normal(0.0, SD, 4)),
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
    return directory
