"""Sweeps in the config language: one configured test over the values of one adapter parameter.

``launch.tools.<tool>.tests[]`` may carry ``sweep: {param: [v1, v2, ...]}``; the test then runs as
one test per value, named ``<name>-<param>-<value>``, each a case of its own (interleaved with the
others round by round, each a group of repeats with its interval). The point is recorded in the
sidecar (``sweep``) and reaches the tidy table (``sweep``, ``sweep_param``, ``sweep_value``), from
which :mod:`podnet.stats.sweeps` draws curves and load curves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SweepPoint:
    """One value of a swept adapter parameter (recorded in the sidecar as ``sweep``)."""

    test: str
    param: str
    value: Any

    def as_meta(self) -> dict[str, Any]:
        return {"test": self.test, "param": self.param, "value": self.value}


def points(t: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], str, SweepPoint | None]]:
    """(name, params, description, point) of each test one configured test ``t`` stands for: ``t``
    itself without a sweep; ValueError when the swept parameter is also fixed in ``params``."""
    params = dict(t.get("params") or {})
    description = t.get("description", "")
    if not t.get("sweep"):
        return [(t["name"], params, description, None)]
    ((param, values),) = t["sweep"].items()
    if param in params:
        raise ValueError(f"{param!r} is both in params and swept; keep it in one")
    return [
        (
            f"{t['name']}-{param}-{v}",
            {**params, param: v},
            (description + " " if description else "") + f"({param} = {v})",
            SweepPoint(t["name"], param, v),
        )
        for v in values
    ]
