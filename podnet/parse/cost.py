"""What a run cost in CPU: CPU-seconds per bit moved (streams) and per transaction (RR/CRR).

Two sources, each named in the metric:

- the tool's own CPU figures (``cpu_local``/``cpu_remote``: iperf3 JSON's
  ``cpu_utilization_percent``, netperf ``-c -C``, qperf's ``loc_cpus_used``/``rem_cpus_used``;
  ``cpu_send``/``cpu_recv`` for qperf's bandwidth tests; fractions of one CPU, the client's and
  the server's process side) over the run's rate:
  ``cpu_per_bit_client``/``_server`` (s/bit) and ``cpu_per_transaction_client``/``_server`` (s);
- the machines' CPU accounting the launcher takes around every run (the sidecar's
  ``interference.nodes``: busy share of all CPUs of each measured machine), over the same rate:
  ``machine_cpu_per_bit`` / ``machine_cpu_per_transaction``. Tool-independent, and it counts the
  whole machine: the datapath's kernel work (softirqs, encapsulation) that no process is charged
  for, and whatever else ran. Not for a run whose server pads its window after the test
  (``info['server_pad_s']``: netperf TCP_CRR), which would count the pad's seconds. On the embedded cluster every node is the same machine, so client
  and server cannot be told apart there: this is the machine total, once.

Values are CPU-seconds per unit of work (one CPU busy for a second = 1 s), so lower is cheaper.
"""

from __future__ import annotations

from typing import Any

from podnet.tools.result import Measurement, ParseResult

#: the tool's CPU metric of each side: local/remote (iperf3, netperf, qperf's latency tests), or
#: sender/receiver (qperf's bandwidth tests, whose client sends)
_SIDES = (("client", ("cpu_local", "cpu_send")), ("server", ("cpu_remote", "cpu_recv")))
_CPU = {name for _, names in _SIDES for name in names}


def _rates(result: ParseResult) -> dict[tuple[str | None, str | None], tuple[str, float]]:
    """(test, direction) -> ("bit" | "transaction", rate) of the run's throughput or transaction rate."""
    out: dict[tuple[str | None, str | None], tuple[str, float]] = {}
    for m in result.measurements:
        key = (m.test, m.direction)
        if m.metric == "throughput" and m.value > 0:
            out[key] = ("bit", m.value)
        elif m.metric == "transaction_rate" and m.value > 0 and key not in out:
            out[key] = ("transaction", m.value)
    return out


def _machine_cpus(meta: dict[str, Any]) -> float | None:
    """CPUs' worth of busy time on the measured machines during the run (busy share x CPUs, summed)."""
    nodes = (meta.get("interference") or {}).get("nodes")
    if not isinstance(nodes, dict) or not nodes:
        return None
    total = 0.0
    for node in nodes.values():
        busy, cpus = node.get("busy"), node.get("cpus")
        if busy is None or not cpus:
            return None
        total += float(busy) * int(cpus)
    return total


def cost_measurements(result: ParseResult, meta: dict[str, Any]) -> list[Measurement]:
    """The run's CPU cost per bit or per transaction, from the tool and from the machines."""
    rates = _rates(result)
    if not rates:
        return []
    out: list[Measurement] = []
    cpu = {(m.metric, m.test, m.direction): m.value for m in result.measurements if m.metric in _CPU}
    for (test, direction), (per, rate) in rates.items():
        unit = "s/bit" if per == "bit" else "s"
        for side, names in _SIDES:
            for metric in names:
                # a tool reports CPU once per test, not per direction
                value = cpu.get((metric, test, direction), cpu.get((metric, test, None)))
                if value is not None and value >= 0:
                    out.append(Measurement(f"cpu_per_{per}_{side}", value / rate, unit, direction, test=test))
                    break
    # a server-padded run (netperf TCP_CRR) holds seconds after the test in the machine window
    machine = None if result.info.get("server_pad_s") else _machine_cpus(meta)
    if machine is not None and len(rates) == 1:  # one rate: the machine's time is that work's
        (test, direction), (per, rate) = next(iter(rates.items()))
        unit = "s/bit" if per == "bit" else "s"
        out.append(Measurement(f"machine_cpu_per_{per}", machine / rate, unit, direction, test=test))
    return out
