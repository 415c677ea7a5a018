"""Axis labels fit narrow panels: a rate whose label names its noun drops it from the unit."""

from podnet.report.figures.data import axis_label


def test_rate_units_are_short_when_the_label_names_them():
    assert axis_label("transaction_rate", "netperf", "k transactions/s") == "Transaction rate (k/s)"
    assert axis_label("requests_per_second", "ab", "k requests/s") == "Request rate (k/s)"
    assert axis_label("throughput", "iperf3", "Gbit/s") == "Throughput (receiver, Gbit/s)"
    assert axis_label("rtt_avg", "ping", "µs") == "RTT (mean, µs)"


def test_a_stream_test_is_named_by_what_bounds_it():
    import pandas as pd

    from podnet.report.figures.data import Tables, measure_label, stream_bounds

    tidy = pd.DataFrame(
        {
            "tool": ["netperf", "netperf", "iperf3", "netperf"],
            "test": ["tcp_stream", "tcp_stream", "tcp", "tcp_rr"],
            "metric": ["send_size", "throughput", "send_size", "transaction_rate"],
            "value": [1024.0, 1.1e9, 131072.0, 2e4],
        }
    )
    t = Tables(tidy=tidy, summary=pd.DataFrame(), ratios=pd.DataFrame(), failed=pd.DataFrame())
    b = stream_bounds(t)
    assert b == {("iperf3", "tcp"): "128 KiB writes", ("netperf", "tcp_stream"): "1 KiB sends"}
    row = {"tool": "netperf", "test": "tcp_stream", "metric": "throughput", "streams": 1}
    assert measure_label(row, bounds=b) == "netperf tcp_stream (1 KiB sends)"
    assert measure_label({**row, "tool": "iperf3", "test": "tcp"}, bounds=b) == "iperf3 tcp (128 KiB writes)"
    assert measure_label({**row, "test": "tcp_rr"}, bounds=b) == "netperf tcp_rr"
