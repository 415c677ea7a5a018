"""``run()``: the statistics stage as the Snakemake rule and ``podnet stats`` call it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ._data import as_tidy, make_groups, read_table, split_sources
from ._data import write_csv as _write
from .netready import net_ready_table
from .netready_compare import net_ready_ratios
from .planning import plan
from .ratios import compare
from .scale import scale_curves, scale_effect
from .settings import Settings
from .summary import outlier_rows, summarize
from .sweeps import load_curves, sweep_table
from .underload import latency_under_load
from .variants import variant_table
from .within import within_run

_RUN_IDENTITY = ["experiment", "variant", "scenario", "tool", "test", "protocol", "streams", "repeat"]


def run(
    tidy_path: str | Path,
    out_dir: str | Path,
    settings: Settings | Mapping[str, Any] | None = None,
    intervals_path: str | Path | None = None,
    cache: bool = True,
    probes_path: str | Path | None = None,
) -> dict[str, Path]:
    """Read the tidy table, write the statistics tables into ``out_dir``, return their paths.

    Always written: summary.csv, ratios.csv, planning.csv, variants.csv (no rows without a
    ``by: variant`` comparison), sweeps.csv and load_curves.csv (no rows without a sweep),
    latency_under_load.csv (no rows without a ``load`` sweep: :mod:`podnet.stats.underload`),
    scale_curves.csv (slopes per 1000 objects, largest point / 0; no rows without a ``scale`` sweep:
    :mod:`podnet.stats.scale`), scale_effect.csv (time to effect per scale point, from
    ``probes_path``, the parse stage's scale_probes.csv; without it from the scale runs' sidecars at
    the tidy ``raw_path``),
    net_ready.csv (no rows without netready runs: :mod:`podnet.stats.netready`),
    net_ready_ratios.csv (each variant over the baseline variant: :mod:`podnet.stats.netready_compare`),
    outliers.csv,
    stats_settings.json (the effective settings, seed included) and
    METHODS.md. within_run.csv when ``intervals_path`` exists. A table with
    no rows, a non-numeric value or a comparison whose baseline no measured
    row has raises ValueError (the message names the problem). With ``cache``,
    only groups whose rows changed since the last run into ``out_dir`` are
    summarised again, and only ratio pairs with such a group bootstrapped and
    paired again (``out_dir/.cache/``).
    """
    s = Settings.of(settings)
    tidy = as_tidy(read_table(tidy_path))
    if len(tidy) == 0:
        raise ValueError("the tidy table has no rows: nothing to analyse")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}

    measured, _ = split_sources(tidy)
    g = make_groups(measured)  # grouped once for every table
    # a cache of per-group summary rows (not an output: deleting it only costs time)
    cache_path = out / ".cache" / "summary.parquet" if cache else None
    summary = summarize(tidy, s, cache=cache_path, groups=g)
    paths["summary"] = _write(summary, out / "summary.csv")
    pair_cache = out / ".cache" / "ratios.pickle" if cache else None  # per pair, the same way
    # a comparison between variants is judged once, in variants.csv; ratios.csv's row of it reads it
    variants = variant_table(tidy, s)
    ratios = compare(tidy, s, groups=g, cache=pair_cache, variants=variants)
    paths["ratios"] = _write(ratios, out / "ratios.csv")
    paths["planning"] = _write(plan(tidy, s, groups=g), out / "planning.csv")
    paths["variants"] = _write(variants, out / "variants.csv")
    sweeps = sweep_table(tidy, summary, s.confidence)
    paths["sweeps"] = _write(sweeps, out / "sweeps.csv")
    paths["load_curves"] = _write(load_curves(tidy, s, s.confidence), out / "load_curves.csv")
    under = latency_under_load(tidy, sweeps, s.confidence)
    paths["latency_under_load"] = _write(under, out / "latency_under_load.csv")
    curves = scale_curves(tidy, s.confidence, s.paired.adaptive)
    paths["scale_curves"] = _write(curves, out / "scale_curves.csv")
    probes = pd.read_csv(probes_path) if probes_path is not None else None
    paths["scale_effect"] = _write(scale_effect(tidy, s.confidence, probes), out / "scale_effect.csv")
    paths["net_ready"] = _write(net_ready_table(tidy, s), out / "net_ready.csv")
    paths["net_ready_ratios"] = _write(net_ready_ratios(tidy, s), out / "net_ready_ratios.csv")
    meas_summary = summary[summary["source"] == "measured"].reset_index(drop=True)
    if len(measured):
        outl = outlier_rows(g, meas_summary)
    else:
        outl = pd.DataFrame(columns=["run_id"])
    paths["outliers"] = _write(outl, out / "outliers.csv")

    if intervals_path is not None and Path(intervals_path).exists():
        wr = within_run(read_table(intervals_path), s)
        if len(wr) and len(tidy):
            # by run and raw file: a latency-under-load run's load series (its own file) is the load's
            # tool and streams, not the probe's
            ident = tidy[["run_id", "raw_path"] + _RUN_IDENTITY].drop_duplicates(["run_id", "raw_path"])
            wr = wr.merge(ident, on=["run_id", "raw_path"], how="left")
        paths["within_run"] = _write(wr, out / "within_run.csv")

    settings_path = out / "stats_settings.json"
    settings_path.write_text(json.dumps(s.mapping, indent=2, sort_keys=True) + "\n")
    paths["settings"] = settings_path
    methods = out / "METHODS.md"
    methods.write_text((Path(__file__).with_name("METHODS.md")).read_text())
    paths["methods"] = methods
    return paths
