"""Unit conversion to SI for the figures tools print.

Tools mix conventions: iperf2/iperf3 print rates with decimal prefixes
("Mbits/sec" = 1e6 bit/s) but transfer sizes with binary ones ("MBytes" =
2**20 bytes); qperf prints decimal prefixes for both. Callers say which
convention applies through ``binary``.
"""

from __future__ import annotations

import re

_PREFIX = {"": 0, "k": 1, "K": 1, "m": 2, "M": 2, "g": 3, "G": 3, "t": 4, "T": 4}

#: time units a tool or a published table prints, in seconds (matched lower-cased)
TIME_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "usec": 1e-6,
    "microseconds": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "milliseconds": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "seconds": 1.0,
}

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
NUMBER_RE = re.compile(_NUMBER)


def prefix_factor(prefix: str, binary: bool = False) -> float:
    """1000**k (or 1024**k with ``binary``) for an SI prefix letter ('', K, M, G, T)."""
    if prefix not in _PREFIX:
        raise ValueError(f"unknown unit prefix {prefix!r}")
    return float((1024 if binary else 1000) ** _PREFIX[prefix])


def rate_to_bps(value: float, unit: str) -> float:
    """A rate like ``(3.67, 'Gbits/sec')`` or ``(116, 'MB/sec')`` in bit/s (decimal prefixes)."""
    m = re.fullmatch(r"([kKmMgGtT]?)(bits?|bytes?|b|B)(?:/s(?:ec)?|ps)", unit.strip())
    if not m:
        raise ValueError(f"not a rate unit: {unit!r}")
    prefix, base = m.groups()
    bits = 1 if base.lower().startswith("bit") or base == "b" else 8
    return value * prefix_factor(prefix) * bits


def number(text: str) -> float:
    """The float in ``text`` (the whole string must be a number)."""
    text = text.strip()
    if not NUMBER_RE.fullmatch(text):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


#: adapter parameters whose K/M/G values are decimal rates (iperf's -b); other sizes are binary (-l 64K)
RATE_PARAMS = frozenset({"bandwidth", "rate"})


def param_number(param: str, value: object) -> float:
    """A swept parameter's value as a number: ``(bandwidth, "500M")`` -> 5e8 bit/s, ``(length, "64K")``
    -> 65536 bytes, ``(streams, 4)`` -> 4.0 (iperf's conventions: rates decimal, sizes binary)."""
    if isinstance(value, bool):
        raise ValueError(f"{param}: not a number: {value!r}")
    if isinstance(value, int | float):
        return float(value)
    m = re.fullmatch(rf"({_NUMBER})([kKmMgG]?)", str(value).strip())
    if not m:
        raise ValueError(f"{param}: not a number with an optional K/M/G: {value!r}")
    return float(m.group(1)) * prefix_factor(m.group(2).upper(), binary=param not in RATE_PARAMS)
