"""Publication figures of one experiment (matplotlib + seaborn); the notebooks and the
``figures`` rule call :func:`publish`.

One figure per question, each a journal column (3.5 in) or page (7 in) wide, written as PNG
(300 dpi), SVG and PDF under ``processed/<experiment>/figures/``:

- ``throughput``: headline rate of each path per test, mean with its interval and every repeat;
- ``latency``: the same for the headline time;
- ``ratios``: each primary comparison against its baseline, log axis, significance after adjustment;
- ``variants``: each variant (e.g. CNI) against the reference variant.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt

from podnet.lean import FIGURE_NAMES

from . import check, data, plots, style
from .data import Tables, display_unit, fmt_value, human, load

#: figure name -> function of the experiment's tables; the names are the files' stems
FIGURES: dict[str, Callable[[Tables], plt.Figure]] = {
    "throughput": lambda t: plots.by_path(t, "rate"),
    "latency": lambda t: plots.by_path(t, "time"),
    "ratios": plots.ratios,
    "variants": plots.variants,
}
assert tuple(FIGURES) == FIGURE_NAMES, "podnet.lean.FIGURE_NAMES names the figures for the Snakefile"

#: what each figure shows, for captions (Snakemake report, notebooks)
CAPTIONS = {
    "throughput": "Headline throughput of each path per test: mean (point) with its 95 % interval "
    "(line) and every repeat (dots); one colour per variant.",
    "latency": "Headline latency of each path per test: mean with its 95 % interval and every repeat.",
    "ratios": "Each primary comparison as treatment / baseline on a logarithmic axis, 95 % interval; "
    "filled points are significant after Holm adjustment.",
    "variants": "Each variant against the reference variant, per path and test (ratio, 95 % interval).",
}


def render(t: Tables) -> dict[str, plt.Figure]:
    """Every figure of an experiment, not yet saved."""
    return {name: make(t) for name, make in FIGURES.items()}


def publish(processed_dir: str | Path, figures_dir: str | Path | None = None) -> list[Path]:
    """Write every figure of one experiment; returns the written paths."""
    t = load(processed_dir)
    out = Path(figures_dir or Path(processed_dir) / "figures")
    written: list[Path] = []
    for name, make in FIGURES.items():
        fig = make(t)
        written += style.save(fig, name, out)
        plt.close(fig)
    return written


__all__ = [
    "CAPTIONS",
    "FIGURES",
    "Tables",
    "check",
    "data",
    "display_unit",
    "fmt_value",
    "human",
    "load",
    "plots",
    "publish",
    "render",
    "style",
]
