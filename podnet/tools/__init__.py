"""Tool adapters: one module per tool, discovered automatically.

Each module in this package defines ``ADAPTER``, an instance of
:class:`podnet.tools.base.Adapter`. :func:`get` looks one up by name,
:func:`detect` picks the adapter whose ``sniff`` is most confident. Modules whose
names start with ``_`` are parts of an adapter (line tables, sub-formats), not adapters.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from podnet.tools.base import (
    COMMON_METRICS,
    Adapter,
    Incomplete,
    Invocation,
    MetricInfo,
    ParseError,
    UnsupportedTest,
)

__all__ = [
    "COMMON_METRICS",
    "Adapter",
    "Incomplete",
    "Invocation",
    "MetricInfo",
    "ParseError",
    "UnsupportedTest",
    "all_adapters",
    "get",
    "detect",
    "scores",
    "metric_info",
    "headline_metrics",
    "shown_metrics",
]


@lru_cache(maxsize=1)
def all_adapters() -> dict[str, Adapter]:
    """Every adapter module in this package, by tool name."""
    found: dict[str, Adapter] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        adapter = getattr(module, "ADAPTER", None)
        if isinstance(adapter, Adapter):
            found[adapter.name] = adapter
    return found


def get(name: str) -> Adapter:
    """The adapter for tool ``name``; a clear error lists the known tools."""
    adapters = all_adapters()
    try:
        return adapters[name]
    except KeyError:
        raise KeyError(f"unknown tool {name!r}; known tools: {', '.join(sorted(adapters))}") from None


def scores(text: str) -> list[tuple[float, str]]:
    """Every adapter's confidence that ``text`` is its tool's output, best first."""
    return sorted(((a.sniff(text), name) for name, a in all_adapters().items()), reverse=True)


def detect(text: str) -> Adapter:
    """The adapter that recognises ``text``; :class:`ParseError` if none or several do.

    Pass a bounded head of a big file: sniffing looks at the start of an output.
    """
    scores_ = scores(text)
    return _pick(scores_)


def _pick(scores: list[tuple[float, str]]) -> Adapter:
    if not scores or scores[0][0] <= 0:
        raise ParseError(
            "could not recognise the tool that wrote this output "
            f"(tried {', '.join(sorted(all_adapters()))}); use --tool or set `tool` in the sidecar"
        )
    if len(scores) > 1 and scores[1][0] == scores[0][0]:
        raise ParseError(f"output looks like both {scores[0][1]} and {scores[1][1]}; use --tool to choose")
    return all_adapters()[scores[0][1]]


def metric_info(metric: str, tool: str | None = None) -> MetricInfo:
    """Label, unit, better direction and kind of ``metric`` (as ``tool`` reports it, when given)."""
    if tool and tool in all_adapters():
        return all_adapters()[tool].metric_info(metric)
    for adapter in all_adapters().values():
        if metric in adapter.metrics:
            return adapter.metrics[metric]
    return Adapter().metric_info(metric)


def headline_metrics(tool: str | None = None) -> list[str]:
    """The headline metrics of ``tool``, or of every tool (first-seen order, no duplicates)."""
    adapters = [get(tool)] if tool else list(all_adapters().values())
    seen: dict[str, None] = {}
    for a in adapters:
        for m in a.headline:
            seen.setdefault(m, None)
    return list(seen)


def shown_metrics(tool: str) -> list[str]:
    """What a figure shows of ``tool``: its headline metrics, then the adapter's ``headline_fallback``
    (ping: ``rtt_avg`` where an output has no per-packet times, hence no ``rtt_median``). A figure takes
    the first of these a (tool, test) has; the statistics' primary family uses the headline only."""
    a = get(tool)
    return list(dict.fromkeys([*a.headline, *getattr(a, "headline_fallback", ())]))
