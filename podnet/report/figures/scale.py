"""The scale figure (issue 33, the cost of scale): per swept count (Services, NetworkPolicies), each
scale test's headline rate (TCP_CRR: new connections per second) and its P99 latency where the tool
reports one, against the number of objects the cluster holds, one line per variant (line style: the
path), each point's centre with its 95 % interval (``sweeps.csv``); and the time from one change
until the datapath obeys it, P50, P90 and P99 over the changes timed at the point's set-ups
(``scale_effect.csv``; line style: the probe), with the order-statistic interval only where the
changes suffice for a 95 % one (P50 from 6, P90 from 36, P99 from 368:
:func:`podnet.stats.scale.needed`). An x axis spanning more than a factor 30
is logarithmic, the point at 0 objects kept on it (:func:`podnet.report.figures.curves.draw_xy`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.stats.scale import TAILS, needed

from . import data, grid
from .curves import draw_xy
from .plots import empty

TITLE = "The cost of scale"
#: the sweep parameters that count objects (podnet.stats.scale.SCALE_PARAMS)
SCALE_PARAMS = ("services", "network_policies")
#: each count's axis label
COUNT_LABEL = {
    "services": "Services in the cluster",
    "network_policies": "NetworkPolicies on the test pods",
}
#: the probes drawn per count (a change taking effect; removals are in the table only) and their names
PROBES = {
    "services": {"service_effect_s": "new Service reachable"},
    "network_policies": {"policy_effect_s": "deny policy enforced"},
}
#: the latency percentile drawn beside a test's headline metric, where the tool reports it
TAIL = "latency_p99"
_XY = ["series", "hue", "path", "x", "xlo", "xhi", "centre", "lo", "hi", "label"]


def scale_points(t: data.Tables) -> pd.DataFrame:
    """The rows of ``sweeps.csv`` that are scale points (sweep over an object count)."""
    s = t.sweeps
    if s.empty or "sweep_param" not in s.columns:
        return pd.DataFrame(columns=["sweep_param"])
    return s[s["sweep_param"].astype(str).isin(SCALE_PARAMS)]


def effects(t: data.Tables) -> pd.DataFrame:
    """The rows of ``scale_effect.csv`` (empty without it)."""
    e = t.scale_effect
    return e if len(e) and "metric" in e.columns else pd.DataFrame(columns=["metric"])


def shown(g: pd.DataFrame, tool: str) -> list[str]:
    """The metrics drawn of one scale test: its first headline metric present, and its P99 latency
    (:data:`TAIL`) where the tool reports it."""
    present = set(g["metric"].astype(str))
    head = [m for m in data.headline_for(tool) if m in present][:1]
    return head + [TAIL] if TAIL in present and TAIL not in head else head


def _xy(series: pd.Series, hue: pd.Series, path: pd.Series, x: pd.Series, y, lo, hi) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "series": series.astype(str).to_numpy(),
            "hue": hue.astype(str).to_numpy(),
            "path": path.astype(str).to_numpy(),
            "x": x.astype(float).to_numpy(),
            "xlo": np.nan,
            "xhi": np.nan,
            "centre": np.asarray(y, dtype=float),
            "lo": np.asarray(lo, dtype=float),
            "hi": np.asarray(hi, dtype=float),
            "label": "",
        },
        columns=_XY,
    )


def _measure_panels(pts: pd.DataFrame, param: str) -> list[grid.Panel]:
    """Per scale test and metric drawn: the points' centres with their intervals."""
    out: list[grid.Panel] = []
    if pts.empty:
        return out
    for (tool, sweep), g in pts.groupby(["tool", "sweep"], sort=True):
        for metric in shown(g, str(tool)):
            m = g[g["metric"].astype(str) == metric]
            f, unit = data.display_unit(m["centre"], str(m["unit"].iloc[0]))
            rows = _xy(
                m["variant"].astype(str) + " · " + m["scenario"].astype(str),
                m["variant"],
                m["scenario"],
                m["sweep_value"],
                m["centre"].astype(float) / f,
                m["ci_low"].astype(float) / f,
                m["ci_high"].astype(float) / f,
            )
            title = f"{data.tool_name(str(tool))} {sweep} · {data.axis_label(metric, str(tool), unit)}"
            out.append(grid.Panel(title=title, xlabel=COUNT_LABEL[param], rows=rows))
    return out


#: the quantiles of the time to effect drawn, one panel each
QUANTILES = {"p50": 0.5, **TAILS}


def _effect_panels(e: pd.DataFrame, param: str, confidence: float) -> list[grid.Panel]:
    """The time to effect of this count's probes: P50 (its interval where it covers ``confidence``),
    P90 (its interval where the changes suffice for one) and P99 (a point)."""
    names = PROBES[param]
    e = e[e["metric"].astype(str).isin(list(names))]
    if e.empty:
        return []
    probe = e["metric"].astype(str).map(names)
    x = e["point"] if "point" in e.columns else e[param]
    drawn = [q for q in QUANTILES if q in e.columns]
    f, unit = data.display_unit(pd.concat([e[q] for q in drawn]).astype(float), "s")
    out = []
    for q in drawn:
        none = pd.Series(float("nan"), index=e.index)  # P99 is a point: no bounds (scale.EFFECT_COLUMNS)
        low, high = (
            e[f"{q}{b}"].astype(float) if f"{q}{b}" in e.columns else none for b in ("_low", "_high")
        )
        if q == "p50":  # the median's interval is the range where the set-ups are too few
            covered = e["p50_coverage"].astype(float) >= confidence - 1e-9
            low, high = low.where(covered), high.where(covered)
        rows = _xy(
            e["variant"].astype(str) + " · " + probe,
            e["variant"],
            probe,
            x,
            e[q].astype(float) / f,
            low / f,
            high / f,
        )
        title = f"Time to effect, {q.upper()} ({unit})"
        out.append(grid.Panel(title=title, xlabel=COUNT_LABEL[param], rows=rows))
    return out


def panels(t: data.Tables) -> list[grid.Panel]:
    """Per object count swept: each scale test's drawn metrics, then the time to effect."""
    pts, e = scale_points(t), effects(t)
    confidence = float((t.settings or {}).get("confidence", 0.95))
    out: list[grid.Panel] = []
    for param in SCALE_PARAMS:
        out += _measure_panels(pts[pts["sweep_param"].astype(str) == param], param)
        out += _effect_panels(e, param, confidence)
    return out


def note(t: data.Tables) -> str:
    """What the points and bars are."""
    pts, e = scale_points(t), effects(t)
    est = sorted({str(x).replace("_", " ") for x in pts.get("estimand", pd.Series(dtype=str)).dropna()})
    n, s = _span(e.get("n")), _span(e.get("setups"))
    counts = f" ({n} changes per point" + (f", from {s} set-ups" if s else "") + ")" if n else ""
    least = ", ".join(f"{needed(q)} ({k.upper()})" for k, q in QUANTILES.items())
    return (
        f"measures: each point's {' / '.join(est) or 'centre'} over its runs, 95 % interval; "
        f"time to effect: P50, P90 and P99 over the changes timed at the point{counts}, order-statistic "
        f"95 % interval, no bar below {least} changes; 0 = no such object"
    )


def _span(col: pd.Series | None) -> str:
    """``a-b`` over a column's whole numbers (``a`` when all alike; "" when none)."""
    v = sorted({int(x) for x in (col if col is not None else pd.Series(dtype=float)).dropna()})
    return "" if not v else f"{v[0]}" if len(v) == 1 else f"{v[0]}-{v[-1]}"


def make(t: data.Tables) -> plt.Figure:
    """TCP_CRR rate, P99 latency and the time to effect against the number of Services or
    NetworkPolicies, one line per variant."""
    ps = panels(t)
    if not ps:
        return empty(TITLE, "no test swept Services or NetworkPolicies in this experiment (scale on a test)")
    hues = list(dict.fromkeys(h for p in ps for h in p.rows["hue"].astype(str)))
    known = data.variant_order(t)
    order = [v for v in known if v in hues] + sorted(h for h in hues if h not in known)
    return draw_xy(ps, order, TITLE, note(t))
