"""Numbers in words: a ratio and a p-value as the report prints them (used by the findings, the
ranking's sentences, the noise text and the seed comparison)."""

from __future__ import annotations

import numpy as np


def _decimals(x: float) -> int:
    """The decimals :func:`fmt_ratio` prints ``x`` with (finite, non-zero)."""
    if abs(x) < 0.1:  # two significant digits in plain notation (never 5.2e-11)
        return int(-np.floor(np.log10(abs(x)))) + 1
    return 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0


def fmt_ratio(x: float, decimals: int | None = None) -> str:
    """A ratio with sensible precision: 0.84, 1.25, 12.3, 522; ``decimals``: that many instead
    (:func:`ratio_decimals`, so that a ratio and its interval read to the interval's width)."""
    if x is None or not np.isfinite(x):
        return "–"
    if not x:
        return "0"
    d = _decimals(x) if decimals is None else decimals
    return f"{x:,.{d}f}"


#: the most decimals a ratio is printed with (a width below 1e-6 is zero for a reader)
MAX_DECIMALS = 6


def ratio_decimals(ratio: float, lo: float, hi: float) -> int | None:
    """The decimals a ratio and its interval [lo, hi] are printed with, the same for all three: at
    least :func:`fmt_ratio`'s own, and enough that the interval's width shows its first significant
    digit and the two bounds differ (0.9656 [0.9638, 0.9674]: 0.966 [0.964, 0.967], never
    0.97 [0.96, 0.97], which hides a ±0.2 % result); None without a finite interval of two positive
    bounds (each number then takes :func:`fmt_ratio`'s own)."""
    if not all(v is not None and np.isfinite(v) for v in (ratio, lo, hi)) or lo <= 0 or hi < lo:
        return None
    d = max(_decimals(v) for v in (ratio, lo, hi) if v)
    width = hi - lo
    if width > 0:
        d = max(d, int(-np.floor(np.log10(width))))
    while d < MAX_DECIMALS and f"{lo:.{d}f}" == f"{hi:.{d}f}" and width > 0:
        d += 1
    return min(d, MAX_DECIMALS)


def ratio_texts(ratio: float, lo: float, hi: float) -> tuple[str, str, str]:
    """A ratio and its interval's bounds as text, with the digits the interval's width needs
    (:func:`ratio_decimals`): ("0.966", "0.964", "0.967")."""
    d = ratio_decimals(ratio, lo, hi)
    return fmt_ratio(ratio, d), fmt_ratio(lo, d), fmt_ratio(hi, d)


def ratio_ci_text(ratio: float, lo: float, hi: float) -> str:
    """A ratio with its interval in one cell, "0.966 [0.964, 0.967]"; the ratio alone without a
    finite interval; "≤ 1.2" as the interval when it has no positive lower bound; "" without a ratio."""
    if ratio is None or not np.isfinite(ratio):
        return ""
    r, a, b = ratio_texts(ratio, lo, hi)
    if not (lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi)):
        return r
    return f"{r} [{a}, {b}]" if lo > 0 else f"{r} [≤ {b}]"


def fmt_p(p: float) -> str:
    """A p-value: "p = 0.003", "p = 0.21", "p < 0.001"."""
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.2g}" if p < 0.01 else f"p = {p:.2f}"
