"""How far a point-range panel's value axis reaches (``grid``): its data, and its intervals as far
as they do not squash the data."""

from __future__ import annotations

import numpy as np

#: how far beyond its data (centres and repeats) an axis stretches to show an interval:
#: a factor on a log axis, a multiple of the data's largest value on a linear one; interval
#: ends beyond are drawn to the edge with an arrow (an open end), not allowed to squash the data
STRETCH_LOG, STRETCH_RATIO, STRETCH_LINEAR = 10.0, 4.0, 2.0


def limits(
    values: np.ndarray,
    log: bool,
    positive: bool,
    data: np.ndarray | None = None,
    stretch: float = STRETCH_LOG,
) -> tuple[float, float]:
    """A value axis's (low, high) showing ``values`` (centres, interval ends and repeats) on a log or
    linear axis (from 0 for a ``positive`` quantity), reaching beyond ``data`` (the centres and
    repeats) at most ``stretch`` times (log) or :data:`STRETCH_LINEAR` times (linear)."""
    v = values[np.isfinite(values)]
    d = v if data is None else data[np.isfinite(data)]
    if log:
        v, d = v[v > 0], d[d > 0]
        if not len(v):
            return 0.5, 2.0
        lo, hi = float(v.min()) / 1.35, float(v.max()) * 1.35
        if len(d):
            lo = max(lo, float(d.min()) / stretch)
            hi = min(hi, float(d.max()) * stretch)
        return lo, hi
    if not len(v):
        return 0.0, 1.0
    top = float(v.max())
    if len(d) and d.max() > 0:
        top = min(top, float(d.max()) * STRETCH_LINEAR)
    hi = top * 1.08 if top > 0 else 1.0
    lo = 0.0 if positive else float(min(v.min() * 1.08, 0))
    return lo, hi
