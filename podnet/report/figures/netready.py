"""The net_ready figure: time to a working pod network per variant (CNI), ranked by P50.

Per group (scenario and netready test, e.g. 20 pods created at once): each variant's P50, P90 and
P99 of ``net_ready_s`` over the pooled pods of its runs with the 95 % interval of the bootstrap over
runs where runs and pods support one (a P99 of a few hundred pods is a point), each run's own
percentile as a dot (the tidy per-pod rows), the variants sorted by P50, fastest at the top. With a
baseline variant (``net_ready_ratios.csv``): the declared family, each variant's P90 over the
baseline's with its round-paired interval, of the API-visible time and of the datapath's own (first
reply from the pod), filled where the row is "different" (the Holm-adjusted test of the family
rejects). Last, the P50 of each step on a pod's way to the network (scheduled, sandbox ready, IP,
container start, first reply from and to the pod) per variant: where the time goes. Not drawn without netready runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.stats.netready import pod_rows
from podnet.tools import metric_info
from podnet.tools.netready import METRICS

from . import data, grid
from .plots import alpha, empty

TITLE = "Time to network"
TOOL = "netready"
HEADLINE = "net_ready_s"
#: the percentiles drawn, as net_ready.csv names them
SHOWN = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
#: the ratios drawn (net_ready_ratios.csv): (metric, estimand)
RATIOS = ((HEADLINE, "p90"), ("first_reply_out_s", "p90"))
#: a pod's steps in the order it goes through them, the time to network last
STEPS = (*[m for m in METRICS if m != HEADLINE], HEADLINE)
#: one group of rows: a path and a netready test (a swept test's points are tests of their own)
GROUP = ["scenario", "tool", "test"]
#: what a point is (the key)
CENTRE = "percentile of the pooled pods"
NO_RUNS = "no time-to-network runs in this experiment (tool netready: launch.tools.netready)"


def step_label(metric: str) -> str:
    """A step's row label: "IP" for ip_s (its label without "Time to"), "network (both replies)"."""
    if metric == HEADLINE:
        return "network (both replies)"
    return metric_info(metric, TOOL).label.removeprefix("Time to ")


def group_label(g: pd.DataFrame) -> str:
    """ "pod-pod-cross-node · burst: 20 pods at once" (net_ready.csv rows of one group)."""
    r = g.iloc[0]
    conc = int(r["concurrency"]) if pd.notna(r.get("concurrency")) else 1
    what = f"{conc} pods at once" if str(r.get("mode")) == "burst" else "one pod at a time"
    return f"{r['scenario']} · {r['test']}: {what}"


def ranked(u: pd.DataFrame) -> list[str]:
    """The variants by their net_ready_s P50 in the first group, fastest first (then by name)."""
    if u.empty or "metric" not in u.columns:
        return []
    p50 = u[(u["metric"].astype(str) == HEADLINE) & (u["estimand"].astype(str) == "p50")]
    if p50.empty:
        return sorted(set(u["variant"].astype(str)))
    first = (p50.groupby(GROUP, sort=True).ngroup() == 0).to_numpy()
    best = dict(zip(p50.loc[first, "variant"].astype(str), p50.loc[first, "value"].astype(float)))
    return sorted(set(u["variant"].astype(str)), key=lambda v: (best.get(v, np.inf), v))


def run_percentiles(tidy: pd.DataFrame) -> pd.DataFrame:
    """Each run's own P50, P90 and P99 of its pods' net_ready_s (runs in net_ready.csv: not
    disturbed, measured), with its variant and group."""
    keys = ["variant", *GROUP, "run_id"]
    cols = keys + [name for name, _ in SHOWN]
    rows = pod_rows(tidy)
    if rows.empty:
        return pd.DataFrame(columns=cols)
    rows = rows[rows["metric"].astype(str) == HEADLINE]
    value = pd.to_numeric(rows["value"], errors="coerce")
    rows = rows.assign(value=value, **{k: rows[k].astype(str) for k in keys})[np.isfinite(value)]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    by = rows.groupby(keys, sort=True)["value"]
    return pd.DataFrame({name: by.quantile(q) for name, q in SHOWN}).reset_index()[cols]


def _of(df: pd.DataFrame, key: tuple[str, ...]) -> pd.DataFrame:
    """The rows of ``df`` in group ``key`` (:data:`GROUP` values)."""
    if df.empty or not set(GROUP) <= set(df.columns):
        return df.iloc[0:0]
    hit = np.ones(len(df), dtype=bool)
    for c, v in zip(GROUP, key, strict=True):
        hit &= (df[c].astype(str) == str(v)).to_numpy()
    return df[hit]


def flag(x: object) -> bool:
    """A boolean column read back from CSV (True, "True", "true"; anything else False)."""
    return str(x).strip().lower() == "true"


def _estimands(df: pd.DataFrame, names: Iterable[str]) -> Iterator[tuple[str, pd.DataFrame]]:
    """(name, its rows of ``df``) for each estimand in ``names`` that ``df`` has."""
    for name in names:
        e = df[df["estimand"].astype(str) == name]
        if not e.empty:
            yield name, e


def _rows(e: pd.DataFrame, centre: str, f: float = 1.0, y: pd.Series | None = None) -> pd.DataFrame:
    """A panel's point-range rows: ``y`` (default the variant), the variant's colour, ``centre`` and
    the interval, in units of ``f``."""
    variant = e["variant"].astype(str)
    return pd.DataFrame(
        {
            "y": variant if y is None else y,
            "hue": variant,
            "centre": e[centre].astype(float) / f,
            "lo": e["ci_low"].astype(float) / f,
            "hi": e["ci_high"].astype(float) / f,
        }
    )


def _group_panels(t: data.Tables, key: tuple[str, ...], g: pd.DataFrame, prefix: str) -> list[grid.Panel]:
    """One group's panels: its percentiles, its ratios to each baseline and its steps."""
    f, unit = data.display_unit(g["value"], "s")
    xlabel = f"From pod create ({unit})"
    head = g[g["metric"].astype(str) == HEADLINE]
    runs = _of(run_percentiles(t.tidy), key)
    out = [
        grid.Panel(
            title=f"{prefix}{name.upper()} time to network",
            xlabel=xlabel,
            rows=_rows(e, "value", f),
            dots=pd.DataFrame(
                {"y": runs["variant"], "hue": runs["variant"], "value": runs[name].astype(float) / f}
            ),
            centre=CENTRE,
        )
        for name, e in _estimands(head, [n for n, _ in SHOWN])
    ]
    r = _of(t.net_ready_ratios, key)
    bases = r.groupby(r["baseline_variant"].astype(str), sort=True) if len(r) else []
    for base, rb in bases:
        for metric, name in RATIOS:
            e = rb[(rb["metric"].astype(str) == metric) & (rb["estimand"].astype(str) == name)]
            if e.empty:
                continue
            what = "" if metric == HEADLINE else " datapath (first reply from the pod)"
            out.append(
                grid.Panel(
                    title=f"{prefix}{name.upper()}{what}, ratio to {base}",
                    xlabel=f"Ratio to {base} (log scale)",
                    rows=_rows(e, "ratio").assign(
                        different=[flag(x) for x in e["different"]],
                        # asked of the family's rows only: a P50 or P99 row is drawn solid
                        precise=[
                            flag(x) if str(r) == "primary" else None
                            for x, r in zip(e.get("precise", [None] * len(e)), e["role"])
                        ],
                        unbounded=False,
                    ),
                    positive=True,
                    ratio=True,
                )
            )
    steps = g[(g["estimand"].astype(str) == "p50") & g["metric"].astype(str).isin(STEPS)]
    if steps["metric"].nunique() > 1:
        out.append(
            grid.Panel(
                title=f"{prefix}P50 of each step",
                xlabel=xlabel,
                rows=_rows(steps, "value", f, y=steps["metric"].astype(str).map(step_label)),
                centre=CENTRE,
            )
        )
    return out


def panels(t: data.Tables) -> list[grid.Panel]:
    """Every group's panels (a group's label leads its panels' titles when there are several)."""
    u = t.net_ready
    groups = list(u.groupby(GROUP, sort=True))
    out: list[grid.Panel] = []
    for key, g in groups:
        prefix = f"{group_label(g)} · " if len(groups) > 1 else ""
        out += _group_panels(t, tuple(str(k) for k in key), g, prefix)
    return out


def note(ps: list[grid.Panel], a: float) -> str:
    """What the points, bars and dots are, line by line."""
    lines = [
        "points: each variant's percentile of the pooled pods of its runs; bars: 95 % interval, bootstrap",
        "over runs (none: under 4 runs; P99: a point); dots: each run's own percentile; variants by P50, fastest first",
    ]
    if any(p.ratio for p in ps):
        lines.append(f"ratios: to the baseline, paired by round; filled: different (Holm p < {a:g})")
    if any(p.title.endswith("each step") for p in ps):
        lines.append("steps: the P50 of each step's time from the pod's create call")
    return "\n".join(lines)


def make(t: data.Tables) -> plt.Figure:
    """Time to network per variant, ranked by P50: P50, P90, P99, ratios to the baseline, the steps."""
    u = t.net_ready
    if u.empty or "metric" not in u.columns or not (u["metric"].astype(str) == HEADLINE).any():
        return empty(TITLE, NO_RUNS)
    ps = panels(t)
    order = ranked(u)
    hues = data.variant_order(t)
    hues += [v for v in order if v not in hues]
    groups = u.groupby(GROUP, sort=True)
    title = TITLE if groups.ngroups > 1 else f"{TITLE} · {group_label(u)}"
    return grid.draw(ps, order + [step_label(m) for m in STEPS], hues, title, note(ps, alpha(t.settings)))
