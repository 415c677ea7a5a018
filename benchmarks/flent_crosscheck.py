"""flent beside podnet: latency under load on one path of a running embedded cluster (issue 32).

flent (Debian package ``flent``) is the anchor of latency under load: its ``tcp_nup`` test runs N
netperf TCP_STREAM uploads with an ICMP ping beside them. This script runs flent's ``ping`` (idle)
and ``tcp_nup`` (N streams) from the client node's network namespace to a netserver in a pod on the
other node, and prints flent's median ping RTT idle and loaded, and its loaded / idle ratio, beside
podnet's latency-under-load result of the same path and load (``latency_under_load.csv``: TCP_RR P50
with its 95 % interval, the ratio to idle with its order-statistic interval). The two probes differ
(ICMP echo against a TCP request/response through netperf), so their latencies are set side by side
and the **ratios to idle** are judged: flent's ratio inside podnet's interval is ``agrees``.

The same path in podnet: a host client on the first node to a pod on the second (the netns flent
runs in is the node's; a podnet host client is hostNetwork on that node), forward load::

    scenarios:
      - {name: host-pod-cross-node, client: {kind: host, other_node_than: server}, server: {kind: pod}}
    tools: {netperf: {tests: [{name: tcp_rr, params: {test: TCP_RR, duration: 5},
                               load: {streams: [0, 4], direction: forward}}]}}

Run (root: it enters the node's network namespace). ``make flent-tools`` installs flent (Debian
main) and netperf (non-free; flent's ``tcp_nup`` runs it on the host) through a private apt list
and state directory (``.flent-apt``), leaving the machine's own sources as they were; podnet's
side is ``benchmarks/flent.yaml``::

    make flent-tools
    make cluster-up CNI=flannel-vxlan NODES=2
    .venv/bin/snakemake --cores 2 --configfile benchmarks/flent.yaml           # podnet's side
    sudo .venv/bin/python benchmarks/flent_crosscheck.py --state .cluster --streams 4 \\
        --podnet processed/flent-crosscheck --scenario host-pod-cross-node

``--cpu-latency-us`` (default 0) holds the PM QoS CPU latency while flent runs, as podnet's
``launch.cpu_latency_us`` does for its side: without the same hold on both sides the idle and
loaded probes differ by the CPUs' wake-up.

Run once (2026-11-29, issue 44; podnet/stats/METHODS.md, "latency_under_load.csv", paragraph
"Beside flent"): flannel-vxlan, a host on node 1 to a pod on node 2, 4 forward streams at 10.4
Gbit/s, PM QoS 0 held on both sides. flent's ICMP ping median was 35.0 µs idle and 47.2 µs loaded
(1.35x), podnet's TCP_RR P50 36.9 and 34.0 µs (0.92 [0.92, 0.94]): the tools disagree. Why the two
probes part under load is not yet shown.

``--state`` is the cluster's state directory (``.cluster``, ``.cluster-<k>`` for CLUSTER_ID k):
its kubeconfig, info.json (the nodes' network namespaces) and image (with netserver). Not run in
the repository's tests (it needs a cluster and flent).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from podnet.launch.cluster.k8s import Kube
from podnet.launch.noise.idle import hold_cpu_latency

PORT = 12865  # netserver's control port (flent's netperf clients connect to it)


def netserver_pod(kube: Kube, ns: str, node: str, image: str, timeout: float = 120) -> str:
    """A netserver pod on ``node`` in a new namespace ``ns``; returns its IP once it runs."""
    kube.create_namespace({"metadata": {"name": ns, "labels": {"podnet.io/flent-crosscheck": "1"}}})
    kube.wait_service_account(ns, timeout)
    container = {"name": "netserver", "image": image, "imagePullPolicy": "IfNotPresent",
                 "command": ["netserver", "-D", "-p", str(PORT)]}  # fmt: skip
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "netserver"},
           "spec": {"nodeName": node, "containers": [container], "terminationGracePeriodSeconds": 0}}  # fmt: skip
    kube.create(ns, pod)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        p = kube.pod(ns, "netserver")
        if p.status.phase == "Running" and p.status.pod_ip:
            time.sleep(1.0)  # netserver listening
            return str(p.status.pod_ip)
        time.sleep(0.5)
    raise SystemExit(f"the netserver pod on {node} did not run within {timeout:.0f} s")


def flent(netns: str, test: str, host: str, streams: int, length: int, out: Path) -> dict:
    """Run one flent test from network namespace ``netns``; its data file (``*.flent.gz``) as JSON."""
    argv = ["nsenter", f"--net=/run/netns/{netns}", "--", "flent", test, "-H", host, "-l", str(length),
            "-D", str(out), "-t", f"podnet-{test}-{streams}", "--test-parameter", f"upload_streams={streams}"]  # fmt: skip
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    (data,) = sorted(out.glob(f"{test}-*podnet-{test}-{streams}.flent.gz"))
    return json.loads(gzip.decompress(data.read_bytes()))


def ping_median_ms(doc: dict, delay: float = 5.0) -> float:
    """Median ICMP RTT (ms) of a flent data file within its streams' steady part: from ``delay`` s
    (flent starts its streams ``delay`` s after the ping) to ``delay`` + length."""
    length = float(doc["metadata"]["LENGTH"])
    x = doc["x_values"]
    (series,) = [v for k, v in doc["results"].items() if k.startswith("Ping") and "ICMP" in k]
    values = [y for t, y in zip(x, series) if y is not None and delay <= t <= delay + length]
    if not values:
        raise SystemExit("flent's data file has no ping sample inside the load's steady part")
    return statistics.median(values)


def podnet_rows(processed: Path, scenario: str, streams: int, variant: str | None) -> pd.DataFrame:
    """latency_under_load.csv's TCP_RR P50 rows of this path at 0 and ``streams`` load streams."""
    u = pd.read_csv(processed / "latency_under_load.csv")
    u = u[(u["scenario"] == scenario) & (u["metric"] == "latency_p50") & u["load_streams"].isin([0, streams])]
    if variant:
        u = u[u["variant"] == variant]
    if u["load_streams"].nunique() < 2 or u["variant"].nunique() != 1:
        raise SystemExit(
            f"{processed}/latency_under_load.csv: no single variant with {scenario} at 0 and {streams} streams"
            " (give --variant)"
        )
    return u.set_index("load_streams")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--state", type=Path, default=Path(".cluster"), help="the cluster's state directory")
    ap.add_argument("--streams", type=int, required=True, help="load streams (podnet's load_streams point)")
    ap.add_argument("--length", type=int, default=30, help="flent's test length, s (default 30)")
    ap.add_argument("--podnet", type=Path, required=True, help="podnet's processed/<experiment> directory")
    ap.add_argument("--scenario", default="host-pod-cross-node", help="podnet's scenario of the same path")
    ap.add_argument("--variant", help="podnet's variant (needed when the experiment has several)")
    ap.add_argument(
        "--cpu-latency-us",
        type=int,
        default=0,
        help="PM QoS CPU latency held while flent runs, as podnet's launch.cpu_latency_us (default 0: "
        "idle CPUs poll; -1: hold nothing). Idle and loaded probes differ by the CPUs' wake-up "
        "unless both tools run under the same hold",
    )
    a = ap.parse_args(argv)
    u = podnet_rows(a.podnet, a.scenario, a.streams, a.variant)
    info = json.loads((a.state / "info.json").read_text())
    client, server = info["nodes"][0], info["nodes"][1]
    kube = Kube(str(a.state / "kubeconfig"))
    ns = f"podnet-flent-{secrets.token_hex(3)}"
    try:
        ip = netserver_pod(kube, ns, server["name"], (a.state / "image").read_text().split()[0])
        hold = None if a.cpu_latency_us < 0 else a.cpu_latency_us
        with tempfile.TemporaryDirectory() as tmp, hold_cpu_latency(hold) as held:
            state = f"held at {hold} us" if held.held else held.reason or "not held"
            print(f"CPU idle states: {state}")
            idle = ping_median_ms(flent(client["netns"], "ping", ip, 0, a.length, Path(tmp)), delay=0.0)
            loaded = ping_median_ms(flent(client["netns"], "tcp_nup", ip, a.streams, a.length, Path(tmp)))
    finally:
        kube.delete_namespace(ns, timeout=60)
    p0, pn = u.loc[0], u.loc[a.streams]
    ratio = loaded / idle
    lo, hi = float(pn["ratio_low"]), float(pn["ratio_high"])
    verdict = "no podnet interval" if math.isnan(lo) else "agrees" if lo <= ratio <= hi else "differs"
    print(f"path {client['name']} netns -> pod on {server['name']} ({a.scenario}, {pn['variant']}), "
          f"{a.streams} forward TCP streams")  # fmt: skip
    print(
        f"flent  ICMP ping median: idle {idle * 1000:.1f} us, loaded {loaded * 1000:.1f} us, ratio {ratio:.2f}"
    )
    print(f"podnet TCP_RR P50: idle {p0['centre'] * 1e6:.1f} us [{p0['ci_low'] * 1e6:.1f}, {p0['ci_high'] * 1e6:.1f}], "
          f"loaded {pn['centre'] * 1e6:.1f} us [{pn['ci_low'] * 1e6:.1f}, {pn['ci_high'] * 1e6:.1f}], "
          f"ratio {pn['ratio_to_idle']:.2f} [{lo:.2f}, {hi:.2f}]")  # fmt: skip
    print(f"ratio to idle: flent's {verdict} with podnet's interval")
    return 0 if verdict == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
