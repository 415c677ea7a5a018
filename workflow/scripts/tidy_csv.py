"""Snakemake script: the tidy table as CSV (library: podnet.parse.tidy.tidy_csv)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

from podnet.parse.tidy import tidy_csv

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
rows = tidy_csv(sm.input.parquet, sm.output.csv)
logging.info("%d tidy rows -> %s", rows, sm.output.csv)
