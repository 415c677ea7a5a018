"""Publication figures of one experiment (matplotlib + seaborn); the notebooks and the
``figures`` rule call :func:`publish`.

One figure per question, each a journal column (3.5 in) or page (7 in) wide, written as PNG
(300 dpi), SVG and PDF under ``processed/<experiment>/figures/``:

- ``throughput``: headline rate of each path per test, mean with its interval and every repeat;
- ``latency``: the same for the headline time;
- ``ratios``: each primary comparison against its baseline, log axis, significance after adjustment;
- ``variants``: each variant (e.g. CNI) against the reference variant;
- ``sweeps``: swept tests as curves (streams, message size, offered load), load curves with loss;
- ``costs``: each path's rate against the machine's CPU time per bit or per transaction.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt

from podnet.config.lean import FIGURE_NAMES

from . import check, curves, data, grid, plots, style
from .data import Tables, display_unit, fmt_value, human, load

#: figure name -> function of the experiment's tables; the names are the files' stems
FIGURES: dict[str, Callable[[Tables], plt.Figure]] = {
    "throughput": lambda t: plots.by_path(t, "rate"),
    "latency": lambda t: plots.by_path(t, "time"),
    "ratios": plots.ratios,
    "variants": plots.variants,
    "sweeps": curves.sweeps,
    "costs": curves.costs,
}
assert tuple(FIGURES) == FIGURE_NAMES, "podnet.config.lean.FIGURE_NAMES names the figures for the Snakefile"

#: what each figure shows, for captions (Snakemake report, notebooks)
CAPTIONS = {
    "throughput": "Headline throughput of each path per test: mean (point) with its 95 % interval "
    "(line) and every repeat (dots); one colour per variant.",
    "latency": "Headline latency of each path per test: mean with its 95 % interval and every repeat.",
    "ratios": "Each primary comparison as treatment / baseline on a logarithmic axis, 95 % interval; "
    "filled points are significant after Holm adjustment.",
    "variants": "Each variant against the reference variant, per path and test (ratio, 95 % interval).",
    "sweeps": "Each swept test's headline metric against the swept parameter, 95 % interval at each point; "
    "a UDP load curve's received rate against the offered rate (dashed: all arrived) beside its loss.",
    "costs": "Each path's rate against the machine's CPU time per Gbit (or per transaction), 95 % intervals "
    "on both axes: further right costs more CPU for the same work.",
}


def render(t: Tables) -> dict[str, plt.Figure]:
    """Every figure of an experiment, not yet saved."""
    return {name: make(t) for name, make in FIGURES.items()}


@lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 of podnet.report.figures' source and the plotting libraries' versions: what, besides the
    data, decides a figure's pixels."""
    import matplotlib
    import seaborn

    h = hashlib.sha256(f"{matplotlib.__version__} {seaborn.__version__}".encode())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def spec_digest(name: str, t: Tables) -> str:
    """Digest of everything figure ``name`` draws from ``t`` (panels' rows and repeats, orders,
    texts), the figure code and the plotting libraries; nothing is drawn to compute it."""
    return _digest(name, _spec(name, t))


def _spec(name: str, t: Tables) -> grid.Spec:
    """What figure ``name`` would draw from ``t`` (its data selected once, nothing drawn)."""
    with grid.specs_only():
        return FIGURES[name](t)


def _digest(name: str, spec: grid.Spec) -> str:
    return spec.digest(f"{name}\x1e{code_version()}")


def _draw(spec: grid.Spec) -> plt.Figure:
    """The figure of ``spec``: what the figure function returns when not asked for its spec."""
    if spec.kind == "empty":
        return plots.empty(spec.title, spec.note)
    if spec.kind == "xy":
        return curves.draw_xy(spec.panels, spec.hue_order, spec.title, spec.note)
    return grid.draw(spec.panels, spec.y_order, spec.hue_order, spec.title, spec.note)


def publish_one(name: str, t: Tables, figures_dir: str | Path, cache_dir: str | Path | None = None) -> bool:
    """Write figure ``name`` (PNG, SVG, PDF) into ``figures_dir``; returns whether it was drawn.

    With ``cache_dir``, a figure whose drawn data, texts and code are unchanged since it was last
    drawn (its :func:`spec_digest`) is copied from the cache instead of drawn again (Snakemake
    removes a job's outputs before it runs, so the cache keeps its own copy of the files).
    """
    out = Path(figures_dir)
    spec = _spec(name, t)
    key = _digest(name, spec)
    cache = Path(cache_dir) if cache_dir is not None else None
    kept = [cache / f"{name}.{ext}" for ext in style.FORMATS] if cache is not None else []
    stamp = cache / f"{name}.sha256" if cache is not None else None
    if stamp is not None and stamp.is_file() and stamp.read_text() == key and all(p.is_file() for p in kept):
        out.mkdir(parents=True, exist_ok=True)
        for p in kept:
            shutil.copyfile(p, out / p.name)
        return False
    fig = _draw(spec)  # from the spec already built: the data are not selected a second time
    written = style.save(fig, name, out)
    plt.close(fig)
    if stamp is not None:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)  # no stamp while the copies are being replaced
        for p in written:
            shutil.copyfile(p, stamp.parent / p.name)
        stamp.write_text(key)
    return True


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
    "publish_one",
    "render",
    "spec_digest",
    "style",
]
