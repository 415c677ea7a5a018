"""Start-up cost of the pipeline's many short processes: what they know without heavy imports.

Snakemake parses the Snakefile on every run (a no-op too) and starts one Python process per
job; at 10,000 runs their imports, not their work, were most of an incremental re-run
(``benchmarks/bench_pipeline.py``).

- :data:`FIGURES` (and :data:`FIGURE_NAMES`): the figures' names and where each is drawn, for the
  Snakefile and the figures' own code versions (:func:`podnet.config.stages.figure_code_version`);
  :mod:`podnet.report.figures` imports matplotlib, seaborn and scipy.stats (about 2 s of CPU).
  ``podnet.report.figures.FIGURES`` has one function per name, in this order (tested).
- :func:`skip_iri_grammar`: ``import jsonschema`` imports the optional ``rfc3987_syntax``
  (installed with jupyter-events' ``jsonschema[format-nongpl]``), which compiles an Earley
  grammar at import: about 2 s of CPU in every process that validates a config, a sidecar or a
  notebook. It only serves the ``iri``/``iri-reference`` format checks; podnet's schemas declare
  no format, and neither Snakemake's ``validate``, podnet, nbformat nor papermill checks
  formats, so every validation gives the same result without it (tested).
- :func:`cancel_rescheduling`: the end of a run. Snakemake's scheduler arms a
  ``threading.Timer`` (``--max-jobs-per-timespan``, default ``100/1s``) each time it starts jobs,
  to look again once the timespan is over; these are not daemon threads, so the interpreter
  waited for the last one at exit: up to 1 s after the last job of every run (1.0 s of a 15 s
  +1-run at 10,000 runs, sampled with py-spy: the main thread in ``threading._shutdown``).
"""

from __future__ import annotations

import sys

#: the figures of an experiment (``processed/<exp>/figures/<name>.png|svg|pdf``, those with something
#: to show) -> "<module>.<function>" of ``podnet.report.figures`` that draws it. A figure's module is
#: its own code: a change to it re-draws that figure alone (the package's other modules are shared).
#: One more figure is one entry here and its module.
FIGURES: dict[str, str] = {
    "throughput": "paths.throughput",
    "latency": "paths.latency",
    "ratios": "ratios.make",
    "variants": "variants.make",
    "sweeps": "sweeps.make",
    "costs": "costs.make",
    "under_load": "underload.make",
    "net_ready": "netready.make",
}
# the cost of scale (issue 33): TCP_CRR rate, P99 latency and time to effect against object counts
FIGURES["scale"] = "scale.make"
FIGURE_NAMES: tuple[str, ...] = tuple(FIGURES)


def skip_iri_grammar() -> None:
    """Make this process's ``import jsonschema`` skip the optional IRI format checker (see above).

    Call it before anything imports jsonschema; later it changes nothing.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]  # import -> ImportError


def cancel_rescheduling() -> None:
    """Cancel this process's pending ``threading.Timer`` threads: Snakemake's scheduler wake-ups
    (see above), so that Snakemake exits when its work is done, not up to a second later.

    Call it once the scheduler has returned (``onsuccess``/``onerror``): a cancelled timer ends
    without calling its function, which would only wake a scheduler that is no longer there.
    """
    import threading

    for t in threading.enumerate():
        if isinstance(t, threading.Timer):
            t.cancel()
