"""What bounds a stream test: netperf TCP_STREAM by send size, with and without -j, beside iperf3.

    sudo PYTHONPATH=. .venv/bin/python benchmarks/netperf_send_size.py [--rounds 3] [--duration 4]

Between two bare network namespaces joined by a veth (podnet.launch.noise.netns_floor.Floor, names of its own, removed
at the end and on Ctrl-C), in interleaved rounds (every case once per round, in a shuffled order):
netperf TCP_STREAM at each send size (``-- -m N``; "default" = netperf's own, the socket's send
buffer), each with and without ``-j`` (per-send timing for latency histograms), and iperf3 with its
default 128 KiB writes and with ``-l 1024`` (netperf's 1 KiB sends, like for like). The netperf
binary is the pod image's (extracted from ~/.cache/podnet/images/podnet-tools-*.tar, what the
cluster runs) unless ``--netperf-dir`` names one; iperf3 is the machine's (make floor-tools).
Prints the median throughput of each case with its range, netperf over iperf3's default, and -j
over no -j per size: the effect of each option, measured (METHODS.md, "What a stream test measures").
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from podnet.launch.noise.netns_floor import Floor, Names
from podnet.parse import parse_text

NAMES = Names("podnet-bench-c", "podnet-bench-s", "pnbench-c", "pnbench-s", "10.211.254.1", "10.211.254.2")
PORT, IPERF_PORT = 12866, 15299


def image_netperf(dest: Path) -> Path:
    """Extract netperf and netserver from the newest pod image tar (OCI layout) into ``dest``."""
    tars = sorted(
        (Path.home() / ".cache/podnet/images").glob("podnet-tools-*.tar"), key=lambda p: p.stat().st_mtime
    )
    if not tars:
        sys.exit("no pod image in ~/.cache/podnet/images (make cluster-build), and no --netperf-dir")
    with tarfile.open(tars[-1]) as outer:
        index = json.load(outer.extractfile("./index.json"))  # type: ignore[arg-type]
        digest = index["manifests"][0]["digest"].split(":")[1]
        manifest = json.load(outer.extractfile(f"./blobs/sha256/{digest}"))  # type: ignore[arg-type]
        for layer in manifest["layers"]:
            blob = outer.extractfile(f"./blobs/sha256/{layer['digest'].split(':')[1]}")
            with tarfile.open(fileobj=blob) as t:
                want = [
                    m
                    for m in t.getmembers()
                    if m.name.lstrip("./") in ("usr/bin/netperf", "usr/bin/netserver")
                ]
                t.extractall(dest, members=want, filter="data")
    return dest / "usr" / "bin"


def in_ns(ns: str, argv: list[str]) -> list[str]:
    return ["nsenter", f"--net=/var/run/netns/{ns}", "--", *argv]


def throughput(text: str) -> float:
    """bit/s of one output, through podnet's own parsers."""
    _, res = parse_text(text)
    return next(m.value for m in res.measurements if m.metric == "throughput")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--sizes", default="64,256,1024,4096,16384,65536,default")
    ap.add_argument(
        "--netperf-dir", type=Path, help="directory with netperf and netserver (default: the pod image's)"
    )
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="podnet-netperf-"))
    bindir = a.netperf_dir or image_netperf(tmp)
    netperf, netserver = str(bindir / "netperf"), str(bindir / "netserver")
    version = subprocess.run([netperf, "-V"], capture_output=True, text=True).stdout.strip()
    d = f"{a.duration:g}"
    cases: dict[str, list[str]] = {}
    for size in a.sizes.split(","):
        test = [netperf, "-H", NAMES.ip_server, "-p", str(PORT), "-t", "TCP_STREAM", "-l", d]
        tail = [
            "--",
            *(["-m", size] if size != "default" else []),
            "-k",
            "THROUGHPUT,THROUGHPUT_UNITS,LOCAL_SEND_SIZE",
        ]
        cases[f"netperf m={size}"] = [*test, *tail]
        cases[f"netperf m={size} -j"] = [*test, "-j", *tail]
    iperf = ["iperf3", "-c", NAMES.ip_server, "-p", str(IPERF_PORT), "-J", "-t", d]
    cases["iperf3 default (128 KiB writes)"] = iperf
    cases["iperf3 -l 1024"] = [*iperf, "-l", "1024"]
    got: dict[str, list[float]] = {k: [] for k in cases}
    rng = random.Random(a.seed)
    t0 = time.monotonic()
    with Floor(names=NAMES) as floor:
        servers = [
            subprocess.Popen(
                in_ns(floor.names.ns_server, [netserver, "-D", "-p", str(PORT)]),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
            subprocess.Popen(
                in_ns(floor.names.ns_server, ["iperf3", "-s", "-p", str(IPERF_PORT)]),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            ),
        ]
        try:
            time.sleep(1.0)
            for r in range(a.rounds):
                order = list(cases)
                rng.shuffle(order)
                for name in order:
                    out = subprocess.run(
                        in_ns(floor.names.ns_client, cases[name]),
                        capture_output=True,
                        text=True,
                        timeout=a.duration + 30,
                    )
                    got[name].append(throughput(out.stdout))
                print(
                    f"round {r + 1}/{a.rounds} done ({time.monotonic() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            for s in servers:
                s.terminate()
                s.wait(timeout=10)
    ref = statistics.median(got["iperf3 default (128 KiB writes)"])
    print(
        f"{version}; iperf3 {subprocess.run(['iperf3', '-v'], capture_output=True, text=True).stdout.split()[1]}; "
        f"{a.rounds} interleaved rounds of {a.duration:g} s, two network namespaces joined by a veth"
    )
    print(f"{'case':34s} {'median Gbit/s':>13s} {'range':>15s} {'/ iperf3 default':>16s} {'-j / no -j':>10s}")
    for name, vals in got.items():
        med = statistics.median(vals)
        jj = ""
        if name.endswith(" -j"):
            jj = f"{med / statistics.median(got[name[:-3]]):10.2f}"
        print(
            f"{name:34s} {med / 1e9:13.2f} {min(vals) / 1e9:7.2f}-{max(vals) / 1e9:<7.2f} {med / ref:16.2f} {jj}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
