"""Printed precision and the shared row shape of the seed checks.

A figure printed as ``4.886`` stands for [4.8855, 4.8865]; two figures agree when their intervals
overlap. Used by the claim checks (:mod:`.claims`) and the raw-vs-itself checks (:mod:`.self_checks`).
"""

from __future__ import annotations

import math
import re

from podnet.tools.reference import to_si

#: columns of the tables the seed checks return
COLUMNS = ["kind", "variant", "scenario", "tool", "metric", "published", "raw", "status", "detail", "where"]


def half_ulp(printed: str) -> float:
    """Half a unit in the last printed digit: '4.886' -> 0.0005, '942' -> 0.5, '1.5e3' -> 50."""
    m = re.search(r"(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?", printed)
    if not m:
        return 0.0
    decimals = len(m.group(2) or "")
    exp = int(m.group(3) or 0)
    return 0.5 * 10.0 ** (exp - decimals)


def agree(a: float, tol_a: float, b: float, tol_b: float) -> bool:
    return abs(a - b) <= tol_a + tol_b + 1e-12 * max(abs(a), abs(b))


def printed_tol(value: float) -> float:
    """Raw values come as floats: assume they were printed with the digits they have (<= 6 significant)."""
    if value == 0 or not math.isfinite(value):
        return 0.0
    text = f"{value:.6g}"
    mant = text.split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(text.split("e")[1]) if "e" in text else 0
    return 0.5 * 10.0 ** (exp - decimals)


def scalar_lines(text: str) -> list[tuple[float, str]]:
    """Lone '<number><time unit>' lines, e.g. the mean a ``ping | gawk`` one-liner prints ('0.747789ms')."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s)\s*", line)
        if m:
            out.append(to_si(float(m.group(1)), m.group(2)))
    return out


def fmt(value: float, unit: str) -> str:
    scales = {
        "bit/s": [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")],
        "s": [(1, "s"), (1e-3, "ms"), (1e-6, "µs")],
    }
    for factor, name in scales.get(unit, []):
        if abs(value) >= factor:
            return f"{value / factor:.6g} {name}"
    return f"{value:.6g} {unit}"
