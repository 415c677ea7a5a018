"""What the statistics need to know about a group's metric, asked of the tool adapters only.

The kind of quantity (``positive``, ``proportion``, ``count``, ``signed``)
decides the interval; ``better`` decides the sign of ``overhead_pct``; the
headline metrics decide adaptive repeats and the default primary family.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from podnet.tools import get, headline_metrics, metric_info

KINDS = ("positive", "proportion", "count", "signed")


def _pairs(keys: pd.DataFrame) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """(codes, unique (tool, metric) pairs) of the rows of ``keys``."""
    tool = keys["tool"].astype("string").fillna("").to_numpy(dtype=object)
    metric = keys["metric"].astype("string").fillna("").to_numpy(dtype=object)
    codes, uniq = pd.factorize(pd.Series(list(zip(tool, metric)), dtype=object))
    return np.asarray(codes), list(uniq)


def metric_facts(keys: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(kind, better) of each row of ``keys`` (columns tool, metric), from :func:`podnet.tools.metric_info`."""
    if len(keys) == 0:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=object)
    codes, uniq = _pairs(keys)
    infos = []
    for tool, metric in uniq:
        try:
            infos.append(metric_info(metric, tool or None))
        except KeyError:
            infos.append(metric_info(metric))
    kind = np.array([i.kind for i in infos], dtype=object)[codes]
    better = np.array([i.better for i in infos], dtype=object)[codes]
    return kind, better


def metric_resolution(keys: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(step, digits) each row's tool prints its metric with (:meth:`podnet.tools.base.Adapter.resolution_of`;
    0, 0 for a tool no adapter knows or a metric it declares none for)."""
    if len(keys) == 0:
        return np.zeros(0), np.zeros(0)
    codes, uniq = _pairs(keys)
    res = []
    for tool, metric in uniq:
        try:
            r = get(tool).resolution_of(metric) if tool else None
        except KeyError:
            r = None
        res.append((r.step, r.digits) if r is not None else (0.0, 0))
    arr = np.array(res, dtype=float).reshape(-1, 2)[codes]
    return arr[:, 0], arr[:, 1]


def is_headline(keys: pd.DataFrame, override: Sequence[str] | None = None) -> np.ndarray:
    """Whether each row's metric is a headline metric of its tool (or in ``override`` when given)."""
    if len(keys) == 0:
        return np.zeros(0, dtype=bool)
    if override is not None:
        return keys["metric"].astype("string").isin([str(m) for m in override]).fillna(False).to_numpy(bool)
    codes, uniq = _pairs(keys)
    flags = np.array([metric in tool_headline(tool) for tool, metric in uniq], dtype=bool)
    return flags[codes]


def tool_headline(tool: str) -> list[str]:
    """The headline metrics of ``tool`` (none for a tool no adapter knows)."""
    try:
        return headline_metrics(tool) if tool else []
    except KeyError:
        return []
