"""What the figures and reports read: an experiment's processed tables, its headline metrics,
the shared order of paths and variants, and units scaled for display.

Everything a figure needs to know about a metric (label, unit, which direction is better, what
kind of quantity it is) comes from :func:`podnet.tools.metric_info`; nothing here lists
metric names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.report.paths import NotFound, locate
from podnet.tools import all_adapters, metric_info, shown_metrics

#: the columns that identify one measured quantity (a "measure") apart from its path and variant
MEASURE = ["tool", "test", "protocol", "direction", "streams", "metric"]
GROUP = ["variant", "scenario"] + MEASURE


@dataclass
class Tables:
    """An experiment's processed tables (empty frames for files that do not exist)."""

    tidy: pd.DataFrame
    summary: pd.DataFrame
    ratios: pd.DataFrame
    failed: pd.DataFrame
    planning: pd.DataFrame = field(default_factory=pd.DataFrame)
    outliers: pd.DataFrame = field(default_factory=pd.DataFrame)
    intervals: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the adaptive launcher's accounts (adaptive.csv, podnet.stats.account)
    adaptive: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: every variant over its baseline variant, by design (variants.csv, podnet.stats.variants)
    variants: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: swept tests' points with their summaries (sweeps.csv, podnet.stats.sweeps)
    sweeps: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: UDP load curves' loss-free rates (load_curves.csv, podnet.stats.sweeps)
    load_curves: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: the variants ranked per path and measure (ranking.csv, podnet.stats.ranking)
    ranking: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: load sweeps' latency per point and its ratio to idle (latency_under_load.csv, podnet.stats.underload)
    under_load: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: time to network per variant: P50/P90/P99 over pods (net_ready.csv, podnet.stats.netready)
    net_ready: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: time to network, each variant over the baseline variant (net_ready_ratios.csv)
    net_ready_ratios: pd.DataFrame = field(default_factory=pd.DataFrame)
    settings: dict[str, Any] = field(default_factory=dict)
    experiment: str = ""
    #: the processed directory the tables were read from ("" when built in memory)
    source: str = ""
    #: runs the launcher judged disturbed, re-run or kept (disturbed_runs.csv, podnet.parse.disturbed)
    disturbed: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: scale sweeps: slopes and the largest point over 0 objects (scale_curves.csv, podnet.stats.scale)
    scale_curves: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: scale sweeps: time to effect per point, P50 and P99 (scale_effect.csv, podnet.stats.scale)
    scale_effect: pd.DataFrame = field(default_factory=pd.DataFrame)


def _empty(path: Path) -> NotFound:
    return NotFound(
        f"{path} is empty (no header, not even a table without rows): a truncated output; run its step again"
    )


def _csv(path: Path) -> pd.DataFrame:
    """The table at ``path``; an absent file is an empty table, an empty file an error naming it."""
    if not path.exists():
        return pd.DataFrame()
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise _empty(path) from None


def _parquet(path: Path) -> pd.DataFrame:
    """As :func:`_csv` for a Parquet file."""
    if not path.exists():
        return pd.DataFrame()
    if not path.stat().st_size:
        raise _empty(path)
    return pd.read_parquet(path)


#: each table of :class:`Tables` and its file under ``processed/<experiment>/``
FILES = {
    "tidy": "tidy.parquet",
    "summary": "summary.csv",
    "ratios": "ratios.csv",
    "failed": "failed_runs.csv",
    "planning": "planning.csv",
    "outliers": "outliers.csv",
    "intervals": "intervals.parquet",
    "adaptive": "adaptive.csv",
    "variants": "variants.csv",
    "sweeps": "sweeps.csv",
    "load_curves": "load_curves.csv",
    "ranking": "ranking.csv",
    "under_load": "latency_under_load.csv",
    "net_ready": "net_ready.csv",
    "net_ready_ratios": "net_ready_ratios.csv",
    "disturbed": "disturbed_runs.csv",
    "scale_curves": "scale_curves.csv",
    "scale_effect": "scale_effect.csv",
    "settings": "stats_settings.json",
}


def load(processed_dir: str | Path, only: list[str] | None = None) -> Tables:
    """Read the tables of one experiment's ``processed/<experiment>/`` (``only``: just these of
    :data:`FILES`, the others empty: what a workflow job declared as its inputs). The folder is found
    as :func:`podnet.report.paths.locate` finds it; a folder that is nowhere, or holds none of the
    wanted tables, one of the tables ``only`` names not there, or an empty (0-byte) file, is
    :class:`~podnet.report.paths.NotFound` naming it, never empty tables. Without ``only`` a table
    that is not there is empty (an experiment without sweeps has no sweeps.csv)."""
    want = set(FILES) if only is None else set(only)
    unknown = want - set(FILES)
    if unknown:
        raise KeyError(f"no table {sorted(unknown)}; tables: {', '.join(FILES)}")
    d = locate(processed_dir)
    absent = sorted(FILES[k] for k in want if not (d / FILES[k]).exists())
    if only is not None and absent and len(absent) < len(want):
        raise NotFound(f"processed_dir {str(processed_dir)!r} ({d.resolve()}) lacks {', '.join(absent)}")
    if want and not any((d / FILES[k]).exists() for k in want):
        raise NotFound(
            f"processed_dir {str(processed_dir)!r} ({d.resolve()}) holds none of the tables "
            f"{', '.join(sorted(FILES[k] for k in want))}: not an experiment's processed folder"
        )
    frames = {
        k: (_parquet if f.endswith(".parquet") else _csv)(d / f) if k in want else pd.DataFrame()
        for k, f in FILES.items()
        if k != "settings"
    }
    settings_path = d / FILES["settings"]
    settings = {}
    if "settings" in want and settings_path.exists():
        if not settings_path.read_text().strip():
            raise _empty(settings_path)
        settings = json.loads(settings_path.read_text())
    t = Tables(**frames, settings=settings, source=str(d))
    for df in (t.tidy, t.summary):
        if len(df) and "experiment" in df.columns:
            t.experiment = str(df["experiment"].iloc[0])
            break
    return t


# ---- metrics ------------------------------------------------------------------------


def headline_for(tool: str, settings: dict[str, Any] | None = None) -> list[str]:
    """The tool's headline metrics (its adapter's, else the statistics' planning list)."""
    if tool in all_adapters():
        own = shown_metrics(tool)  # the headline, then e.g. ping's rtt_avg where no rtt_median
        if own:
            return own
    # null (the schema's default) means "each tool's own": a tool without an adapter has none
    return list(((settings or {}).get("planning") or {}).get("headline_metrics") or [])


def quantity(metric: str, tool: str | None = None) -> str:
    """ "rate" (a per-second quantity, higher better), "time" (seconds) or "other"."""
    info = metric_info(metric, tool)
    if info.unit == "s":
        return "time"
    if info.unit.endswith("/s"):
        return "rate"
    return "other"


def headline_rows(df: pd.DataFrame, kind: str | None, settings: dict[str, Any] | None = None) -> pd.DataFrame:
    """Rows of ``df`` (summary or ratios) with each (tool, test)'s first headline metric of ``kind``.

    ``kind`` is "rate", "time" or None (the first headline metric whatever its kind).
    """
    if df.empty:
        return df
    keep = []
    for (tool, _test), grp in df.groupby(["tool", "test"], sort=True, dropna=False):
        present = set(grp["metric"])
        for metric in headline_for(str(tool), settings):
            if metric in present and (kind is None or quantity(metric, str(tool)) == kind):
                keep.append(grp[grp["metric"] == metric])
                break
    return pd.concat(keep, ignore_index=True) if keep else df.iloc[0:0]


def is_positive(metric: str, tool: str | None = None) -> bool:
    """True when the metric cannot be negative (rates, times, counts, proportions)."""
    return metric_info(metric, tool).kind != "signed" or quantity(metric, tool) != "other"


# ---- order and labels -------------------------------------------------------------------


def _order(t: Tables, column: str) -> list[str]:
    """Values of ``column`` (scenario or variant) in one order: baselines of ratios by that
    column first, then by name."""
    seen: set[str] = set()
    for df in (t.summary, t.tidy):
        if column in df.columns:
            seen |= {str(v) for v in df[column].dropna().unique()}  # not row by row: 10^5 rows
    base: list[str] = []
    if len(t.ratios) and "by" in t.ratios.columns:
        base = list(dict.fromkeys(t.ratios.loc[t.ratios["by"] == column, "baseline"].astype(str)))
    return [b for b in base if b in seen] + sorted(seen - set(base))


def path_order(t: Tables) -> list[str]:
    """One order of paths (scenarios) for every figure: baselines first, then by name."""
    return _order(t, "scenario")


def variant_order(t: Tables) -> list[str]:
    """One order of variants for every figure: a baseline variant first, then by name."""
    return _order(t, "variant")


def tool_name(tool: str) -> str:
    """The tool's display name (its adapter's ``display_name``, else its name)."""
    a = all_adapters().get(tool)
    return (a.display_name or a.name) if a is not None else tool


def in_sentence(label: str) -> str:
    """A metric label inside a sentence: its first letter lowered, unless it starts an acronym ("RTT (mean)")."""
    return label if label[1:2].isupper() else label[0].lower() + label[1:]


def size_text(nbytes: float) -> str:
    """1024 -> "1 KiB", 131072 -> "128 KiB", 87380 -> "85.3 KiB", 64 -> "64 B"."""
    for factor, name in ((2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= factor:
            v = nbytes / factor
            return f"{v:.0f} {name}" if abs(v - round(v)) < 0.05 else f"{v:.1f} {name}"
    return f"{nbytes:.0f} B"


def stream_bounds(t: Tables) -> dict[tuple[str, str], str]:
    """What bounds each stream test, from the runs themselves: (tool, test) -> "1 KiB sends".

    A stream test hands the socket ``send_size`` bytes per call (netperf ``-m``, else its send
    buffer; iperf3 ``-l``, 128 KiB by default for TCP), and small sends bound the rate by per-call
    cost, not by the path (METHODS.md, "What a stream test measures"). Tests whose runs carry no
    ``send_size`` (RR tests, imported text outputs) are not in the mapping.
    """
    tidy = t.tidy
    if tidy.empty or "metric" not in tidy.columns:
        return {}
    rows = tidy[tidy["metric"] == "send_size"]
    out = {}
    for (tool, test), g in rows.groupby(["tool", "test"], sort=True):
        sizes = sorted(set(g["value"].astype(float)))
        noun = "writes" if tool == "iperf3" else "sends"
        text = size_text(sizes[0]) if len(sizes) == 1 else f"{size_text(sizes[0])}-{size_text(sizes[-1])}"
        out[(str(tool), str(test))] = f"{text} {noun}"
    return out


def measure_label(
    row: pd.Series | dict[str, Any],
    with_metric: bool = False,
    bounds: dict[tuple[str, str], str] | None = None,
) -> str:
    """A short human label of one measure, e.g. "iperf3 tcp reverse P4", and with ``bounds``
    (:func:`stream_bounds`) what bounds a stream test: "netperf TCP_STREAM (1 KiB sends)"."""
    parts = [tool_name(str(row["tool"])), str(row["test"])]
    direction = str(row.get("direction", ""))
    if direction not in ("", "nan", "roundtrip", "forward") and direction not in str(row["test"]):
        parts.append(direction)
    streams = row.get("streams")
    if (
        streams is not None
        and not pd.isna(streams)
        and int(streams) > 1
        and f"{int(streams)}" not in str(row["test"])
    ):
        parts.append(f"{'c' if row.get('protocol') == 'http' else 'P'}{int(streams)}")
    bound = (bounds or {}).get((str(row["tool"]), str(row["test"])))
    if bound:
        parts.append(f"({bound})")
    if with_metric:
        parts.append("·")
        parts.append(metric_info(str(row["metric"]), str(row["tool"])).label)
    return " ".join(parts)


_PREFIXES = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
_TIME = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]


def display_unit(values: pd.Series | np.ndarray | list[float], unit: str) -> tuple[float, str]:
    """A divisor and a readable unit for ``values`` in the SI ``unit`` (3.6e9 bit/s -> 1e9, "Gbit/s").

    Chosen so that the largest value is at least 1 in the display unit.
    """
    vals = np.abs(np.asarray(values, dtype=float))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if not len(vals):
        return 1.0, unit
    ref = float(np.max(vals))
    if unit == "s":
        for factor, name in _TIME:
            if ref >= factor:
                return factor, name
        return _TIME[-1]
    if unit.endswith("/s"):
        for factor, prefix in _PREFIXES:
            if ref >= factor:
                return factor, (prefix + unit if unit == "bit/s" or not prefix else f"{prefix} {unit}")
    if unit == "fraction":
        return 0.01, "%"
    return 1.0, unit


def axis_label(metric: str, tool: str | None, unit: str) -> str:
    """ "Throughput (Gbit/s)": the metric's label with the display unit."""
    label = metric_info(metric, tool).label
    if not unit or unit == "count":
        return label
    prefix, _, noun = unit.partition(" ")
    if noun.endswith("/s") and noun[:5].lower() in label.lower():
        unit = f"{prefix}/s"  # "Transaction rate (k/s)", not "(k transactions/s)": fits a narrow panel
    if label.endswith(")"):  # "Latency (mean)" -> "Latency (mean, ms)"
        return f"{label[:-1]}, {unit})"
    return f"{label} ({unit})"


def fmt_value(x: float, digits: int = 3) -> str:
    """A number with ``digits`` significant digits, thousands separated, never in e-notation."""
    if x is None or not np.isfinite(x):
        return "–"
    if x == 0:
        return "0"
    mag = int(np.floor(np.log10(abs(x))))
    decimals = max(0, digits - 1 - mag)
    return f"{x:,.{decimals}f}"


def human(value: float, metric: str, tool: str | None = None, unit: str | None = None) -> str:
    """One value with its display unit, e.g. "3.67 Gbit/s", "65.0 µs"."""
    u = unit or metric_info(metric, tool).unit
    factor, shown = display_unit([value], u)
    return f"{fmt_value(value / factor)} {shown}".strip()
