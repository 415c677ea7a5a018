"""CPU cost per bit and per transaction (podnet.parse.cost): from the tool and from the machines."""

import pytest

from podnet.parse.cost import cost_measurements
from podnet.parse.stage import parse_text
from tests.conftest import FIXTURES


def metrics(ms):
    return {m.metric: m.value for m in ms}


def test_iperf3_cpu_per_bit_from_the_tool_and_from_the_machine():
    _, r = parse_text((FIXTURES / "iperf3/tcp-forward.json").read_text())
    got = metrics(r.measurements)
    meta = {"interference": {"nodes": {"n1": {"busy": 0.5, "cpus": 2, "window_s": 10.0}}}}
    cost = metrics(cost_measurements(r, meta))
    assert cost["cpu_per_bit_client"] == pytest.approx(got["cpu_local"] / got["throughput"])
    assert cost["cpu_per_bit_server"] == pytest.approx(got["cpu_remote"] / got["throughput"])
    # the machine: half of its 2 CPUs busy while the run moved `throughput` bit/s
    assert cost["machine_cpu_per_bit"] == pytest.approx(1.0 / got["throughput"])


def test_rr_costs_per_transaction_and_no_cpu_means_no_tool_cost():
    _, r = parse_text((FIXTURES / "netperf/tcp-rr.txt").read_text())
    assert "cpu_local" not in metrics(r.measurements)
    cost = cost_measurements(r, {"interference": {"nodes": {"n1": {"busy": 0.25, "cpus": 4, "window_s": 2}}}})
    rate = metrics(r.measurements)["transaction_rate"]
    assert metrics(cost) == {"machine_cpu_per_transaction": pytest.approx(1.0 / rate)}
    assert {m.unit for m in cost} == {"s"}


def test_imported_outputs_without_accounting_have_only_the_tools_cost():
    _, r = parse_text((FIXTURES / "iperf3/tcp-forward.json").read_text())
    assert set(metrics(cost_measurements(r, {}))) == {"cpu_per_bit_client", "cpu_per_bit_server"}


def test_qperf_pairs_cpu_and_rate_within_each_test():
    _, r = parse_text((FIXTURES / "qperf/verbose.txt").read_text())
    cost = cost_measurements(r, {})
    tests = {m.test for m in cost}
    assert tests and all(t for t in tests)
    for m in cost:
        cpu = next(
            x.value for x in r.measurements if x.metric in ("cpu_local", "cpu_send") and x.test == m.test
        )
        rate = next(
            x.value
            for x in r.measurements
            if x.metric in ("throughput", "transaction_rate") and x.test == m.test
        )
        if m.metric == "cpu_per_bit_client":
            assert m.value == pytest.approx(cpu / rate)
