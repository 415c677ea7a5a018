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
import pandas as pd

from podnet.report import vs_seed
from podnet.report.figures import data, style
from podnet.report.vs_seed.figure import published_figure

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
logging.getLogger("fontTools").setLevel(logging.WARNING)  # its font subsetting, glyph by glyph
cfg = dict(sm.params.vs_seed)
processed = Path(sm.input.summary).parent
# each claim of the seed judged by ratios.csv (a baseline scenario) or variants.csv (a baseline variant)
claims = vs_seed.build_claims(cfg, processed)
vs_seed.write(claims, sm.output.claims)
logging.info("claims: %s", claims["verdict"].value_counts().to_dict() if len(claims) else {})
if cfg.get("published"):  # the seed's CNI ranking beside ours
    mapping = vs_seed.SeedMapping.from_config(cfg)
    table = vs_seed.build(mapping, processed)
    # every order the seed states between two CNIs, judged by ranking.csv's paired ratios
    orders = vs_seed.build_orders(mapping, processed, table)
    seed_name, baseline = mapping.seed, mapping.baseline
else:  # claims only: no published ranking table
    table = pd.DataFrame(columns=vs_seed.COLUMNS)
    orders = pd.DataFrame(columns=vs_seed.ORDER_COLUMNS)
    seed_name, baseline = str(cfg.get("seed", "seed")), "host-host"
vs_seed.write(table, sm.output.csv)
vs_seed.write(orders, sm.output.orders)
# the experiment's order of variants: each CNI keeps the colour it has in the other figures
order = data.variant_order(data.load(processed))
# the ranking's ratios where the seed has CNIs and paths in both, else its claims judged here
fig = published_figure(table, claims, seed_name, baseline, order)
style.save(fig, "vs_seed", Path(sm.output.png).parent)
plt.close(fig)
if len(table):
    logging.info("%s", vs_seed.summary_sentence(table))
logging.info("orders: %s", orders["status"].value_counts().to_dict() if len(orders) else {})
