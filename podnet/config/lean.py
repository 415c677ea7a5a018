"""Start-up cost of the pipeline's many short processes: what they know without heavy imports.

Snakemake parses the Snakefile on every run (a no-op too) and starts one Python process per
job; at 10,000 runs their imports, not their work, were most of an incremental re-run
(``benchmarks/bench_pipeline.py``).

- :data:`FIGURE_NAMES`: the figures' names, for the Snakefile; :mod:`podnet.report.figures` imports
  matplotlib, seaborn and scipy.stats (about 2 s of CPU). ``podnet.report.figures.FIGURES`` has one
  function per name, in this order (tested).
- :func:`skip_iri_grammar`: ``import jsonschema`` imports the optional ``rfc3987_syntax``
  (installed with jupyter-events' ``jsonschema[format-nongpl]``), which compiles an Earley
  grammar at import: about 2 s of CPU in every process that validates a config, a sidecar or a
  notebook. It only serves the ``iri``/``iri-reference`` format checks; podnet's schemas declare
  no format, and neither Snakemake's ``validate``, podnet, nbformat nor papermill checks
  formats, so every validation gives the same result without it (tested).
"""

from __future__ import annotations

import sys

#: the figures of every experiment (``processed/<exp>/figures/<name>.png|svg|pdf``)
FIGURE_NAMES: tuple[str, ...] = ("throughput", "latency", "ratios", "variants", "sweeps", "costs")


def skip_iri_grammar() -> None:
    """Make this process's ``import jsonschema`` skip the optional IRI format checker (see above).

    Call it before anything imports jsonschema; later it changes nothing.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]  # import -> ImportError
