"""Snakemake script: the cluster's per-run CV against the noise floor's (library: podnet.stats.noise)."""

import logging

import pandas as pd

from podnet.launch.plan import test_lengths
from podnet.report import noise_text
from podnet.stats import noise

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
table = noise.noise_table(
    pd.read_parquet(sm.input.tidy),
    test_lengths(dict(sm.params.launch_config)),
    primary=list(sm.params.primary),
)
for s in noise_text.sentences(table):
    logging.info("%s", s)
if table.empty:
    logging.info("no floor runs (launch.floor or podnet floor): an empty table")
table.to_csv(sm.output.table, index=False)
