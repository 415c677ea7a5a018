"""Does a shaped link behave like the NIC it stands for? The floor's veth shaped as the cluster's links are.

    sudo PYTHONPATH=. .venv/bin/python benchmarks/shaped_link.py [--repeats 5] [--rates none,1gbit,10gbit]
        [--campaigns seed-001,seed-003,seed-004]

Issue 46: the seed campaigns run at their seed's link speed with every node's port to the switch
shaped by tbf (``make cluster-up LINK_RATE=...``, ``envs/cluster/shape.sh``). Here the same shaper
(the same script) is put on both ends of the noise floor's veth (two bare network namespaces,
:class:`podnet.launch.noise.netns_floor.Floor`, names of its own), and in interleaved rounds (every
case once a round, shuffled) at each rate:

- ``iperf3:tcp`` (5 s, client and server on CPU 0 as ``launch.affinity`` places them): goodput
  against the line rate less the headers, ``rate x 1448 / 1514`` (1500-byte MTU: 20 IP + 20 TCP
  + 12 timestamp bytes of header, 14 of Ethernet that tbf counts; no preamble, gap or FCS, which a
  NIC's 1538-byte slot has: 1448 / 1538 = 0.9415 of the line on the seeds' NICs), the CV over
  runs, and TCP retransmits (what tbf dropped at its 20-ms queue);
- ``iperf3:udp-900m`` (5 s, 1448-byte datagrams at 900 Mbit/s offered, the sender on CPU 0 and
  the receiver on CPU 1): loss below the line rate, which a shaper must not add.

Then the host-host rows of the seed campaigns already published (``processed/<campaign>/tidy.parquet``:
the same tbf on a cluster's fabric, iperf 2 and qperf at 1 Gbit/s, iperf3 at 10 Gbit/s) beside
them. Raw outputs and sidecars (``floor.link_rate`` in each) go to ``raw/shaped-link/<rate>/``;
every value is read through podnet's own parsers. METHODS.md ("Links at a seed's speed") has
what the shaping reproduces and what it does not.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from podnet.launch.noise.netns_floor import SHAPE_SH, Floor, FloorTest, Names
from podnet.parse import parse_text
from podnet.parse.decode import read_text

REPO = Path(__file__).resolve().parents[1]
NAMES = Names("podnet-shape-c", "podnet-shape-s", "pnshape-c", "pnshape-s", "10.211.253.1", "10.211.253.2")
#: payload / frame bytes tbf counts, for TCP with timestamps at MTU 1500
TCP_SHARE = 1448 / 1514
TESTS = (
    FloorTest("iperf3", "tcp", {"duration": 5}, {"client": 0, "server": 0, "policy": "batch"}),
    FloorTest(
        "iperf3",
        "udp-900m",
        {"duration": 5, "protocol": "udp", "bandwidth": "900M", "length": 1448},
        {"client": 0, "server": 1, "policy": "batch"},
    ),
)


def bits(rate: str) -> float | None:
    """The line rate tbf shapes ``rate`` to, in bit/s: ``envs/cluster/shape.sh``'s ``link_rate_bytes``
    (the one reader of a LINK_RATE) times 8, ``"10gbit"`` -> 1e10; ``"none"`` -> None."""
    if rate.lower() == "none":
        return None
    argv = ["bash", "-c", 'source "$1" && link_rate_bytes "$2"', "bits", str(SHAPE_SH), rate]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise ValueError(f"link rate {rate!r} not understood by {SHAPE_SH.name}")
    return 8.0 * int(r.stdout)


def metrics(path: Path) -> dict[str, float]:
    """The run's measurements by metric (forward direction), through podnet's parsers."""
    _, res = parse_text(read_text(path), "iperf3")
    return {m.metric: float(m.value) for m in res.measurements}


def run(repeats: int, rates: list[str], raw: Path, seed: int) -> pd.DataFrame:
    """Every test at every rate, ``repeats`` interleaved rounds; one row per run."""
    rows = []
    for r in range(1, repeats + 1):
        cases = [(rate, t) for rate in rates for t in TESTS]
        random.Random(f"{seed}:{r}").shuffle(cases)
        for rate, t in cases:
            with Floor(names=NAMES, link_rate=None if rate == "none" else rate) as floor:
                path = floor.run(t, r, raw / rate, "shaped-link")
            m = metrics(path)
            rows.append({"rate": rate, "test": t.name, "repeat": r, **m})
            print(
                f"{rate:>7} {t.name:<9} r{r:03d}: {m.get('throughput', float('nan')) / 1e9:.3f} Gbit/s",
                flush=True,
            )
    return pd.DataFrame(rows)


def floor_table(df: pd.DataFrame) -> str:
    """The markdown table of the floor's runs per rate and test."""
    out = [
        "| link | test | runs | goodput Gbit/s (median, range) | of line less headers | CV % | retransmits / run | UDP loss % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (rate, test), g in df.groupby(["rate", "test"], sort=False):
        tp = g["throughput"].dropna()
        line = bits(rate)
        share = f"{statistics.median(tp) / (line * TCP_SHARE):.4f}" if line and test == "tcp" else "–"
        cv = 100 * tp.std(ddof=1) / tp.mean() if len(tp) > 1 else float("nan")
        rtx = (
            f"{g['retransmits'].median():.0f}"
            if "retransmits" in g and g["retransmits"].notna().any()
            else "–"
        )
        loss = f"{100 * g['loss'].max():.3f} (max)" if "loss" in g and g["loss"].notna().any() else "–"
        out.append(
            f"| {rate} | {test} | {len(tp)} | {statistics.median(tp) / 1e9:.4f} ({tp.min() / 1e9:.4f}-"
            f"{tp.max() / 1e9:.4f}) | {share} | {cv:.2f} | {rtx} | {loss} |"
        )
    return "\n".join(out)


def campaign_table(campaigns: list[str]) -> str:
    """Host-host throughput of published seed campaigns at their shaped rate."""
    out = [
        "| campaign | tool test | runs | host-host goodput Gbit/s (median, range) | CV % |",
        "|---|---|---|---|---|",
    ]
    for c in campaigns:
        p = REPO / "processed" / c / "tidy.parquet"
        if not p.exists():
            out.append(f"| {c} | not published here | – | – | – |")
            continue
        t = pd.read_parquet(p)
        t = t[(t["scenario"] == "host-host") & (t["metric"] == "throughput") & (t["source"] == "measured")]
        t = t[t["direction"].astype(str).isin(["forward", ""])] if "direction" in t else t
        for (tool, test), g in t.groupby(["tool", "test"]):
            v = g["value"].astype(float)
            cv = 100 * v.std(ddof=1) / v.mean() if len(v) > 1 else float("nan")
            out.append(
                f"| {c} | {tool} {test} | {len(v)} | {v.median() / 1e9:.4f} ({v.min() / 1e9:.4f}-"
                f"{v.max() / 1e9:.4f}) | {cv:.2f} |"
            )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rates", default="none,1gbit,10gbit")
    ap.add_argument("--campaigns", default="seed-001,seed-003,seed-004")
    ap.add_argument("--raw", type=Path, default=REPO / "raw" / "shaped-link")
    ap.add_argument("--seed", type=int, default=46)
    a = ap.parse_args()
    t0 = time.monotonic()
    df = run(a.repeats, [r for r in a.rates.split(",") if r], a.raw, a.seed)
    print("\nThe floor's veth, shaped as the cluster's links are (envs/cluster/shape.sh):\n")
    print(floor_table(df))
    print("\nHost-host in the seed campaigns (the same tbf on the cluster's fabric):\n")
    print(campaign_table([c for c in a.campaigns.split(",") if c]))
    print(f"\n{time.strftime('%Y-%m-%d %H:%M')}, {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
