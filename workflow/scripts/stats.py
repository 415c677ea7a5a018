"""Snakemake script: statistics stage (library: podnet.stats.run)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
from pathlib import Path

from podnet import stats

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
written = stats.run(
    sm.input.tidy,
    Path(sm.output.summary).parent,
    dict(sm.params.settings),
    intervals_path=sm.input.intervals,
    probes_path=sm.input.probes,
)
for name, path in written.items():
    logging.info("wrote %s: %s", name, path)
