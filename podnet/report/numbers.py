"""Numbers in words: a ratio and a p-value as the report prints them (used by the findings, the
ranking's sentences, the noise text and the seed comparison)."""

from __future__ import annotations

import numpy as np


def fmt_ratio(x: float) -> str:
    """A ratio with sensible precision: 0.84, 1.25, 12.3, 522."""
    if x is None or not np.isfinite(x):
        return "–"
    if abs(x) < 0.1:  # two significant digits in plain notation (never 5.2e-11)
        return f"{x:.{int(-np.floor(np.log10(abs(x)))) + 1}f}" if x else "0"
    if abs(x) < 10:
        return f"{x:.2f}"
    if abs(x) < 100:
        return f"{x:.1f}"
    return f"{x:,.0f}"


def fmt_p(p: float) -> str:
    """A p-value: "p = 0.003", "p = 0.21", "p < 0.001"."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.2f}"
