"""Snakemake script: ranking.csv (library: podnet.stats.ranking)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

import pandas as pd

from podnet.stats import ranking

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
# without stats.ranking, report.vs_seed's measures (it judges the seed's orders from this table)
vs_seed_measures = [m for x in (sm.params.vs_seed or {}).get("measures", []) for m in x["ours"]]
table = ranking.ranking_table(pd.read_parquet(sm.input.tidy), dict(sm.params.settings), vs_seed_measures)
ranking.write(table, sm.output.csv)
logging.info("%s", ranking.summary(table))
