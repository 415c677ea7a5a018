"""Publication figures of one experiment (matplotlib + seaborn); the workflow's ``figure_plan`` and
``figure`` rules call :func:`plan` and :func:`publish_one`, the notebooks read what they wrote.

One figure per question, each a journal column (3.5 in) or page (7 in) wide, written as PNG
(300 dpi), SVG and PDF under ``processed/<experiment>/figures/``:

- ``throughput``: headline rate of each path per test, mean with its interval and every repeat;
- ``latency``: the same for the headline time;
- ``ratios``: each primary comparison against its baseline, log axis, significance after adjustment
  (not drawn when every comparison is between variants: ``variants`` draws them);
- ``variants``: each variant (e.g. CNI) against the reference variant;
- ``sweeps``: swept tests as curves (streams, message size, offered load), load curves with loss;
- ``costs``: each path's machine CPU time per bit or per transaction, cheapest first, beside its rate;
- ``under_load``: latency under load (flent's RRUL manner): the probe's P50 and P99 against the load's
  TCP streams per variant and path, their ratio to idle, the load carried.
- ``net_ready``: time to a working pod network per variant (CNI), ranked by P50: P50, P90 and P99
  with their intervals, each variant over the baseline variant, and the median of each step.
- ``scale``: the cost of scale: TCP_CRR rate, P99 latency (sweeps.csv) and the time to effect
  (scale_effect.csv) against the number of Services or NetworkPolicies, per variant.

Each is drawn by its own module (``podnet.config.lean.FIGURES``); ``grid`` (with ``masonry``, ``axis``), ``curves``, ``plots``,
``style``, ``data`` and ``withheld`` are shared. A figure with nothing to show (one variant, no
sweep, no CPU record, no test under load, no netready run) or that would repeat another is not
published: :func:`plan` says which and why. What the headline figures leave out as no finding (a
measure printed coarser than its spread, the ratio of a loss-dominated UDP rate: ``withheld``) is in
their note and in the plan's ``left_out``. Every series of a figure has its own colour and marker
(``style.series_styles``), and ``check.checklist`` is what a reviewer would send back.
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podnet.config import lean
from podnet.report import md

from . import data
from .data import Tables, display_unit, fmt_value, human, load

if TYPE_CHECKING:
    import matplotlib.pyplot as plt

#: the modules that draw (matplotlib, seaborn), loaded when first used: a process that reads tables
#: (a notebook that shows figures' files, the noise-floor rule) or asks which figures are published
#: does not pay for them
_LAZY = ("check", "curves", "grid", "plots", "style")


def _function(where: str) -> Callable[[Tables], plt.Figure]:
    module, _, name = where.partition(".")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


@cache
def _figure(name: str) -> Callable[[Tables], plt.Figure]:
    """Figure ``name``'s function, importing its module alone (a figure's job loads no other)."""
    return _function(lean.FIGURES[name])


def _figures() -> dict[str, Callable[[Tables], plt.Figure]]:
    return {name: _figure(name) for name in lean.FIGURES}


def __getattr__(name: str) -> Any:
    """``FIGURES`` (figure name -> function of the experiment's tables; the names are the files'
    stems, in order) and the drawing modules, imported on first use."""
    if name == "FIGURES":
        return _figures()
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: what each figure shows, for captions (Snakemake report, notebooks)
CAPTIONS = {
    "throughput": "Headline throughput of each path per test: mean (point) with its 95 % interval "
    "(line) and every repeat (dots); one colour per variant.",
    "latency": "Headline latency of each path per test: mean with its 95 % interval and every repeat.",
    "ratios": "Each primary comparison as treatment / baseline on a logarithmic axis, 95 % interval; "
    "filled points are different (Holm-adjusted p below alpha), dashed intervals not precise (wider than "
    'their width target; METHODS.md, "Two words").',
    "variants": "Each variant against the reference variant, per path and test (ratio, 95 % interval).",
    "sweeps": "Each swept test's headline metric against the swept parameter, 95 % interval at each point; "
    "a UDP load curve's received rate against the offered rate (dashed: all arrived) beside its loss.",
    "costs": "The machine's CPU time each path spends per Gbit (or per transaction), one row per path, "
    "cheapest first, mean with its 95 % interval; beside each row the rate it reached: further right "
    "costs more CPU for the same work.",
    "under_load": "Latency under load: the probe's latency (P50, P99) against the TCP load streams beside it "
    "(0 = idle) per variant and path, 95 % intervals; its ratio to the idle point of the same rounds "
    "(paired, order-statistic interval); the load's carried throughput.",
    "net_ready": "Time to network per variant (CNI), fastest P50 first: P50, P90 and P99 of the pooled "
    "pods with 95 % intervals from a bootstrap over runs (P99 of a few hundred pods: a point), each "
    "run's own percentile as a dot; each variant's P90 over the baseline variant's, of the API-visible "
    "time and of the datapath's own, paired by round (filled: different, the Holm-adjusted "
    "test of the declared family rejects at α); the P50 of each step from the create call (scheduled, sandbox, IP, container start, "
    "first replies).",
}
# the cost of scale (issue 33)
CAPTIONS["scale"] = (
    "The cost of scale: each measure against the number of Services or NetworkPolicies the cluster holds, "
    "one line per variant (line style: path or probe), 95 % intervals; the time from creating one more "
    "Service or a deny policy until the datapath obeys it (P50, P90, P99 over the changes timed at the "
    "point's set-ups; no bar where the changes are too few for a 95 % interval)."
)


#: the captions of figures none of whose points has an interval (one run each): no interval offered
CAPTIONS_NO_INTERVAL = {
    "throughput": "Headline throughput of each path per test: one point per path and variant, too few runs "
    "for an interval; one colour per variant.",
    "latency": "Headline latency of each path per test: one point per path and variant, too few runs for an "
    "interval.",
    "ratios": "Each primary comparison as treatment / baseline on a logarithmic axis; too few runs for an "
    "interval or a test.",
    "variants": "Each variant against the reference variant, per path and test (ratio; too few runs for an "
    "interval).",
    "sweeps": "Each swept test's headline metric against the swept parameter (too few runs for an interval); "
    "a UDP load curve's received rate against the offered rate (dashed: all arrived) beside its loss.",
    "costs": "Each path's rate against the machine's CPU time per Gbit (or per transaction), too few runs for "
    "an interval: further right costs more CPU for the same work.",
}


def caption(name: str, plan_path: str | Path | None = None) -> str:
    """Figure ``name``'s caption; one that offers no interval when the plan says none of its points
    has one (:func:`write_plan`'s ``"intervals": false``)."""
    if plan_path is not None and Path(plan_path).is_file():
        entry = json.loads(Path(plan_path).read_text()).get(name, {})
        if entry.get("intervals") is False and name in CAPTIONS_NO_INTERVAL:
            return CAPTIONS_NO_INTERVAL[name]
    return CAPTIONS[name]


def render(t: Tables) -> dict[str, plt.Figure]:
    """Every figure of an experiment, not yet saved."""
    return {name: make(t) for name, make in _figures().items()}


@cache
def code_version(name: str) -> str:
    """What, besides the data, decides figure ``name``'s pixels: its code version
    (:func:`podnet.config.stages.figure_code_version`: shared modules and its own) and the plotting
    libraries' versions."""
    from importlib.metadata import version

    from podnet.config.stages import figure_code_version

    return f"{figure_code_version(name)} {version('matplotlib')} {version('seaborn')}"


def spec_digest(name: str, t: Tables) -> str:
    """Digest of everything figure ``name`` draws from ``t`` (panels' rows and repeats, orders,
    texts), the figure code and the plotting libraries; nothing is drawn to compute it."""
    return _digest(name, _spec(name, t))


def _spec(name: str, t: Tables) -> Any:
    """What figure ``name`` would draw from ``t`` (its data selected once, nothing drawn)."""
    from . import grid

    with grid.specs_only():
        return _figure(name)(t)


def _digest(name: str, spec: Any) -> str:
    return spec.digest(f"{name}\x1e{code_version(name)}")


def plan(t: Tables) -> dict[str, dict[str, Any]]:
    """Which figures have something to show: name -> {"digest": what it would draw (its
    :func:`spec_digest`)}, with "left_out": what it does not draw as a finding and why (a measure
    printed coarser than its spread, a loss-dominated UDP ratio: :mod:`.withheld`) when anything, or
    {"omitted": why not} (the message an empty figure would have shown, e.g. that another figure
    draws the same); nothing is drawn. The workflow publishes only the former and the report says
    why of the latter."""
    from . import grid

    out: dict[str, dict[str, Any]] = {}
    for name in lean.FIGURES:
        spec = _spec(name, t)
        if spec.kind == "empty":
            out[name] = {"omitted": spec.note}
            continue
        out[name] = {"digest": _digest(name, spec)}
        if spec.left_out:
            out[name]["left_out"] = list(spec.left_out)
        if not grid.has_interval(spec.panels):  # its caption offers none (:func:`caption`)
            out[name]["intervals"] = False
    return out


def write_plan(t: Tables, plan_path: str | Path, specs: dict[str, str | Path]) -> dict[str, dict[str, Any]]:
    """Write :func:`plan` to ``plan_path`` as JSON (each figure ``planned``, or why omitted) and each
    figure's line to ``specs[name]`` (its digest, or why it is omitted): a file that changes exactly
    when that figure would change. The plan is written before any figure is drawn, so it never says
    a figure is published: whether one is, is what is there at the end (:func:`published`). An omitted figure's files left in the plan's directory by an
    earlier run are removed (a figure that only says there is nothing to show is not published)."""
    from . import style

    p = plan(t)
    for name, entry in p.items():
        if "omitted" in entry:
            for ext in style.FORMATS:
                (Path(plan_path).parent / f"{name}.{ext}").unlink(missing_ok=True)
    # the plan file says what is planned and why the rest is not, no digest: a notebook that
    # reads it (report, compare) is not re-run by a figure's code or data, only its figure's job is
    shown = {
        n: {"omitted": e["omitted"]}
        if "omitted" in e
        else {"planned": True, **{k: e[k] for k in ("left_out", "intervals") if k in e}}
        for n, e in p.items()
    }
    Path(plan_path).write_text(json.dumps(shown, indent=1, sort_keys=True) + "\n")
    for name, path in specs.items():
        entry = p[name]
        Path(path).write_text((entry.get("digest") or f"omitted: {entry['omitted']}") + "\n")
    return p


def planned(entry: dict[str, Any]) -> bool:
    """Whether a plan entry is a figure to draw (``planned``; ``published`` in plans written before)."""
    return "planned" in entry or "published" in entry


def published(plan_path: str | Path) -> list[str]:
    """The names of the figures :func:`write_plan` found something to show for and whose files are
    there now (beside the plan: ``<name>.png``, ``.svg``, ``.pdf``), in order: a figure whose job
    failed, or whose files were removed, is not published (:func:`omitted_markdown` says so)."""
    p = json.loads(Path(plan_path).read_text())
    return [n for n in lean.FIGURES if n in p and planned(p[n]) and not _missing(plan_path, n)]


def _missing(plan_path: str | Path, name: str) -> list[str]:
    """The files of figure ``name`` that are not beside ``plan_path``."""
    d = Path(plan_path).parent
    return [f"{name}.{ext}" for ext in ("png", "svg", "pdf") if not (d / f"{name}.{ext}").is_file()]


def omitted_markdown(plan_path: str | Path, names: list[str] | None = None) -> str:
    """Why the figures left out (of ``names``, default all) were not drawn, and what the drawn ones
    leave out and why, as Markdown lists ("" when nothing was); the plan's reasons as text
    (:func:`podnet.report.md.text`: ``launch.tools.<tool>`` keeps its ``<tool>``)."""
    p = json.loads(Path(plan_path).read_text())
    wanted = [n for n in lean.FIGURES if n in p and (names is None or n in names)]
    gone = [f"- **{n}**: {md.text(p[n]['omitted'])}" for n in wanted if "omitted" in p[n]]
    failed = [
        f"- **{n}**: planned, but its files are not there ({', '.join(miss)}): its job failed or they were removed"
        for n in wanted
        if planned(p[n]) and (miss := _missing(plan_path, n))
    ]
    kept = [f"- **{n}**: {md.text(x)}" for n in wanted if planned(p[n]) for x in p[n].get("left_out", [])]
    parts = [("Not drawn:\n\n" + "\n".join(gone)) if gone else ""]
    parts.append(("**Not published**, although planned:\n\n" + "\n".join(failed)) if failed else "")
    parts.append(("Drawn, but not as findings:\n\n" + "\n".join(kept)) if kept else "")
    return "\n\n".join(x for x in parts if x)


def _draw(spec: Any) -> plt.Figure:
    """The figure of ``spec``: what the figure function returns when not asked for its spec."""
    from . import curves, grid, plots

    if spec.kind == "empty":
        return plots.empty(spec.title, spec.note)
    if spec.kind == "xy":
        return curves.draw_xy(spec.panels, spec.hue_order, spec.title, spec.note)
    return grid.draw(spec.panels, spec.y_order, spec.hue_order, spec.title, spec.note, spec.left_out)


def publish_one(name: str, t: Tables, figures_dir: str | Path, cache_dir: str | Path | None = None) -> bool:
    """Write figure ``name`` (PNG, SVG, PDF) into ``figures_dir``; returns whether it was drawn.

    With ``cache_dir``, a figure whose drawn data, texts and code are unchanged since it was last
    drawn (its :func:`spec_digest`) is copied from the cache instead of drawn again (Snakemake
    removes a job's outputs before it runs, so the cache keeps its own copy of the files).
    """
    import matplotlib.pyplot as plt

    from . import style

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
    """Write every figure of one experiment that has something to show; returns the written paths."""
    import matplotlib.pyplot as plt

    from . import style

    t = load(processed_dir)
    out = Path(figures_dir or Path(processed_dir) / "figures")
    written: list[Path] = []
    for name, entry in plan(t).items():
        if "omitted" in entry:
            continue
        fig = _figures()[name](t)
        written += style.save(fig, name, out)
        plt.close(fig)
    return written


__all__ = [
    "CAPTIONS",
    "CAPTIONS_NO_INTERVAL",
    "FIGURES",
    "Tables",
    "check",
    "caption",
    "data",
    "display_unit",
    "fmt_value",
    "human",
    "load",
    "plots",
    "omitted_markdown",
    "plan",
    "publish",
    "publish_one",
    "planned",
    "published",
    "render",
    "spec_digest",
    "style",
    "write_plan",
]
