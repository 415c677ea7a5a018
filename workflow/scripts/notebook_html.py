"""Snakemake script: an executed notebook as one self-contained HTML page (library: podnet.report.notebook_html)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging

from podnet.report.notebook_html import render

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
render(sm.input.notebook, sm.output.html)
logging.info("rendered %s -> %s", sm.input.notebook, sm.output.html)
