"""What a seed report's paths, CNIs and measures are called here (``report.vs_seed`` of a config).

The mapping is data (the campaign config names it, with comments on each choice); this module
only reads it into a :class:`SeedMapping` and reads the seed's published numbers from its
reference tables (:func:`published`), never from code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.config import schema
from podnet.stats.ranking import Measure  # one measure as tool:test:metric, as the ranking reads it
from podnet.tools import get as get_adapter

#: the columns of :func:`published`: one row per published figure, SI units
PUBLISHED_COLUMNS = [
    "seed_cni",
    "path",
    "seed_tool",
    "seed_test",
    "seed_metric",
    "seed_value",
    "seed_unit",
    "file",
]


@dataclass(frozen=True)
class Note:
    """A difference of the seed's set-up that changes the physics, said beside the rows it touches."""

    text: str
    paths: tuple[str, ...] = ()  # the seed's paths (empty: every path)
    measures: tuple[str, ...] = ()  # the seed's tool:test:metric (empty: every measure)


@dataclass(frozen=True)
class SeedMapping:
    """A seed report's names mapped onto this experiment's (see the ``report.vs_seed`` schema)."""

    published: Path
    #: seed CNI -> our variant (None: no counterpart here)
    variants: Mapping[str, str | None]
    #: seed path -> our scenarios (empty: no counterpart here)
    scenarios: Mapping[str, tuple[str, ...]]
    #: seed measure -> our measures
    measures: Mapping[Measure, tuple[Measure, ...]]
    seed: str = "seed"
    seed_baseline: str = "node-node"
    baseline: str = "host-host"
    #: two seed values closer than this (relative) are a tie: one 60-s run each cannot order them
    tie_margin: float = 0.10
    #: where the tie margin comes from (the seed's run-to-run CV and its source, or the stated margin)
    tie_margin_source: str = "stated margin"
    notes: tuple[Note, ...] = ()

    @classmethod
    def from_config(cls, vs_seed: Mapping[str, Any]) -> SeedMapping:
        """From a config's ``report.vs_seed`` section (schema defaults filled in)."""
        d = {**schema.defaults("report", "vs_seed"), **dict(vs_seed)}
        base = {
            **schema.defaults_of(schema.section("report", "vs_seed", "baseline")),
            **(d.get("baseline") or {}),
        }
        measures: dict[Measure, tuple[Measure, ...]] = {}
        for m in d["measures"]:
            key = Measure.parse(m["seed"])
            measures[key] = measures.get(key, ()) + tuple(Measure.parse(x) for x in m["ours"])
        return cls(
            published=Path(d["published"]),
            variants={str(k): (None if v is None else str(v)) for k, v in d["variants"].items()},
            scenarios={str(k): tuple(str(x) for x in (v or [])) for k, v in d["scenarios"].items()},
            measures=measures,
            seed=str(d.get("seed", "seed")),
            seed_baseline=str(base["seed"]),
            baseline=str(base["ours"]),
            **_tie_margin(d),
            notes=tuple(
                Note(str(n["note"]), tuple(n.get("paths") or ()), tuple(n.get("measures") or ()))
                for n in d.get("notes") or []
            ),
        )

    @staticmethod
    def tie_margin_of_config(vs_seed: Mapping[str, Any]) -> float:
        """The tie margin a ``report.vs_seed`` section states (seed_cv, else seed_tie_margin)."""
        return float(_tie_margin({**schema.defaults("report", "vs_seed"), **dict(vs_seed)})["tie_margin"])

    def note_for(self, path: str, seed_measure: str) -> str:
        """The notes that apply to a seed path and measure (``tool:test:metric``), joined."""
        return "; ".join(
            n.text
            for n in self.notes
            if (not n.paths or path in n.paths) and (not n.measures or seed_measure in n.measures)
        )

    def variant_of(self, seed_cni: str) -> str | None:
        """Our variant for a seed CNI (None: no counterpart, or not in the mapping)."""
        return self.variants.get(seed_cni)

    def seed_cni_of(self, variant: str) -> str | None:
        """The seed CNI our ``variant`` stands for (None: the seed has no such CNI)."""
        return next((k for k, v in self.variants.items() if v == variant), None)


def tie_margin_of(cv: float, z: float = 1.96) -> float:
    """The relative gap two single runs of one CNI exceed in 5 % of cases at run-to-run ``cv``:
    exp(z x sqrt(2) x cv) - 1 (the log difference of two runs has sd sqrt(2) x cv)."""
    return float(np.expm1(z * np.sqrt(2.0) * cv))


def _tie_margin(d: Mapping[str, Any]) -> dict[str, Any]:
    """``tie_margin`` and its source from ``seed_cv`` when the config gives it, else ``seed_tie_margin``."""
    cv = d.get("seed_cv")
    if cv:
        return {
            "tie_margin": tie_margin_of(float(cv["value"])),
            "tie_margin_source": f"the seed's run-to-run CV {float(cv['value']) * 100:g} % ({cv['source']})",
        }
    return {
        "tie_margin": float(d["seed_tie_margin"]),
        "tie_margin_source": "stated margin (report.vs_seed.seed_tie_margin)",
    }


def published(directory: str | Path) -> pd.DataFrame:
    """Every figure of the seed's reference tables (``directory/*.csv``), as the reference adapter
    parses them (values in SI units): columns :data:`PUBLISHED_COLUMNS`. ValueError when the
    directory holds no table."""
    d = Path(directory)
    files = sorted(p for p in d.glob("*.csv") if p.is_file())
    if not files:
        raise ValueError(f"{d}: no published reference table (*.csv)")
    adapter = get_adapter("reference")
    rows = []
    for f in files:
        for m in adapter.parse(f.read_text(encoding="utf-8")).measurements:
            rows.append(
                {
                    "seed_cni": m.variant,
                    "path": m.scenario,
                    "seed_tool": m.tool,
                    "seed_test": m.test,
                    "seed_metric": m.metric,
                    "seed_value": float(m.value),
                    "seed_unit": m.unit,
                    "file": f.name,
                }
            )
    return pd.DataFrame(rows, columns=PUBLISHED_COLUMNS)
