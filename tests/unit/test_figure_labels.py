"""Axis labels fit narrow panels: a rate whose label names its noun drops it from the unit."""

from podnet.figures.data import axis_label


def test_rate_units_are_short_when_the_label_names_them():
    assert axis_label("transaction_rate", "netperf", "k transactions/s") == "Transaction rate (k/s)"
    assert axis_label("requests_per_second", "ab", "k requests/s") == "Request rate (k/s)"
    assert axis_label("throughput", "iperf3", "Gbit/s") == "Throughput (receiver, Gbit/s)"
    assert axis_label("rtt_avg", "ping", "µs") == "RTT (mean, µs)"
