"""Snakemake script: a seed's published table beside this experiment (library: podnet.report.vs_seed)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only

import matplotlib.pyplot as plt

from podnet.report import vs_seed
from podnet.report.figures import data, style
from podnet.report.vs_seed.figure import figure

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
mapping = vs_seed.SeedMapping.from_config(dict(sm.params.vs_seed))
table = vs_seed.build(mapping, Path(sm.input.summary).parent)
vs_seed.write(table, sm.output.csv)
# every order the seed states between two CNIs, judged by ranking.csv's paired ratios
orders = vs_seed.build_orders(mapping, Path(sm.input.summary).parent, table)
vs_seed.write(orders, sm.output.orders)
# the experiment's order of variants: each CNI keeps the colour it has in the other figures
order = data.variant_order(data.load(Path(sm.input.summary).parent))
fig = figure(table, mapping.seed, mapping.baseline, order)
style.save(fig, "vs_seed", Path(sm.output.png).parent)
plt.close(fig)
logging.info("%s", vs_seed.summary_sentence(table))
logging.info("orders: %s", orders["status"].value_counts().to_dict())
