"""Snakemake script: execute a notebook with papermill (parameters: the experiment's paths)."""

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
import os

import papermill

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
papermill.execute_notebook(
    sm.input.notebook,
    sm.output.notebook,
    parameters={
        "experiment": sm.params.experiment,
        # absolute, so the notebook also runs where nbval or JupyterLab start it
        "processed_dir": os.path.abspath(sm.params.processed_dir),
        "raw_dir": os.path.abspath(sm.params.raw_dir),
        **dict(sm.params.extra),
    },
    kernel_name="python3",
    cwd=os.getcwd(),
    progress_bar=False,
    log_output=False,
)
logging.info("executed %s -> %s", sm.input.notebook, sm.output.notebook)
