"""Snakemake script: the cluster's per-run CV against the noise floor's (library: podnet.stats.noise).

The test lengths arrive as a parameter (the workflow reads them from the launch config), so this
rule runs stats code only and a change to the launch code does not re-run it.
"""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

import pandas as pd

from podnet.stats import noise

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
lengths = {tuple(k.split(":", 1)): float(v) for k, v in dict(sm.params.test_lengths).items()}
table = noise.noise_table(pd.read_parquet(sm.input.tidy), lengths, primary=list(sm.params.primary))
if table.empty:
    logging.info("no floor runs (launch.floor or podnet floor): an empty table")
else:
    logging.info("%d rows: %s", len(table), ", ".join(sorted(set(table["variant"].astype(str)))))
table.to_csv(sm.output.table, index=False)
