"""Readers' tables (issue 45): every number in a display unit named once, in its column's header
("RTT (mean, µs)", "value (Gbit/s)"), the unit chosen per column from that column's own values, the
numbers written as text with 4 significant digits and never in e-notation (5.1e-05 s reads "51",
under "µs"); a column that says the same in every row is said once above the table instead, so a
table fits a 1280-px page. The explore notebook's per-run and outlier tables use it
(:func:`podnet.report.explore.runs_view`, :func:`podnet.report.explore.outliers_view`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from podnet.report import md
from podnet.report.figures import data

#: significant digits of a number in a table
DIGITS = 4

#: SI unit -> (divisor, display unit) where the unit is not scaled by a prefix of its own
_FIXED = {"s/bit": (1e-9, "s/Gbit"), "s/byte": (1e-9, "s/GB"), "fraction": (0.01, "%"), "count": (1.0, "")}
_BYTES = [(2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B")]


def column_unit(values: Iterable[float] | pd.Series, unit: str) -> tuple[float, str]:
    """The divisor and display unit of a column of values in the SI ``unit`` (s, bit/s, fraction,
    s/bit, bytes, ...), chosen from the column's typical value, the median of its non-zero
    magnitudes: most of the column reads between 1 and 1000 (3.67 Gbit/s and 787 kbit/s in one
    column: Mbit/s, 3,670 and 0.787), never 0.000787 Gbit/s for every row because one row is large."""
    unit = str(unit)
    if unit in _FIXED:
        return _FIXED[unit]
    vals = np.abs(pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(float))
    vals = vals[np.isfinite(vals) & (vals > 0)]
    if not len(vals):
        return 1.0, unit
    ref = float(np.median(vals))
    if unit == "bytes":
        return next(((f, name) for f, name in _BYTES if ref >= f), _BYTES[-1])
    return data.display_unit([ref], unit)


def text(x: Any, digits: int = DIGITS) -> str:
    """A number as a table shows it: ``digits`` significant digits, thousands separated, never
    e-notation (``data.fmt_value``); "" for a missing value; anything else as it is."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    if isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool):
        return data.fmt_value(float(x), digits)
    return str(x)


def key_text(x: Any) -> str:
    """A key as a table shows it (a repeat, a stream count, an attempt, a name): a whole number
    without decimals, "" for a missing value, anything else as it is."""
    if x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA:
        return ""
    if isinstance(x, (float, np.floating)) and float(x).is_integer():
        return f"{int(x)}"
    return str(x)


def _mapped(df: pd.DataFrame, columns: Iterable[str], write: Callable[[Any], str]) -> pd.DataFrame:
    """A copy of ``df`` with each of ``columns`` it has written by ``write``."""
    out = df.copy()
    for c in columns:
        if c in out.columns:
            out[c] = out[c].map(write).astype(object)
    return out


def keys_as_text(df: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``df`` with ``columns`` written by :func:`key_text` (1, not 1.0; blank, not NaN)."""
    return _mapped(df, columns, key_text)


def header(name: str, unit: str) -> str:
    """A column's header with its unit: "value (µs)"; the name alone when there is no unit."""
    return f"{name} ({unit})" if unit else name


def as_text(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``df`` with ``columns`` (numbers already in their display unit) written by :func:`text`."""
    return _mapped(df, columns, text)


def in_units(df: pd.DataFrame, columns: Mapping[str, str], together: bool = False) -> pd.DataFrame:
    """``df`` with each of ``columns`` (column -> its SI unit) in its own display unit
    (:func:`column_unit`, from that column's values), as text, and the unit in its header.
    ``together``: one unit for all of ``columns`` (chosen from all their values), so that a value and
    its bounds read side by side."""
    out = df.copy()
    names = [c for c in columns if c in out.columns]
    shared = (
        column_unit(pd.concat([out[c] for c in names]), next(iter(columns.values())))
        if together and names
        else None
    )
    renamed = {}
    for c in names:
        factor, unit = shared or column_unit(out[c], columns[c])
        out[c] = (pd.to_numeric(out[c], errors="coerce") / factor).map(text).astype(object)
        renamed[c] = header(c, unit)
    return out.rename(columns=renamed)


def said_once(df: pd.DataFrame, keep: Iterable[str] = ()) -> tuple[pd.DataFrame, str]:
    """``df`` without the columns that hold one value in every row (none missing), but ``keep``,
    and those columns in words, Markdown text ("all rows: streams 1, direction forward"; "" when
    none; each value as :func:`podnet.report.md.text`): a value every row repeats takes a page's
    width and says nothing about any one row."""
    kept = set(keep)
    if len(df) < 2:
        return df, ""
    same = [
        c for c in df.columns if c not in kept and df[c].notna().all() and df[c].astype(str).nunique() == 1
    ]
    if not same:
        return df, ""
    said = ", ".join(f"{c} {md.text(key_text(df[c].iloc[0]))}" for c in same)
    return df.drop(columns=same), f"All rows: {said}."


def empty_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without the columns that are empty in every row (a slice's other tools' measures)."""
    blank = [c for c in df.columns if df[c].isna().all() or (df[c].astype(str) == "").all()]
    return df.drop(columns=blank)
