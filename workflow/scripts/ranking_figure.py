"""Snakemake script: the ranking figure (library: podnet.report.ranking)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only

import matplotlib.pyplot as plt

from podnet.report import ranking
from podnet.report.figures import data, style

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
table = ranking.read(sm.input.ranking)
# the experiment's order of variants: each keeps the colour it has in the other figures
order = data.variant_order(data.load(Path(sm.input.summary).parent))
fig = ranking.figure(table, order)
style.save(fig, "ranking", Path(sm.output.png).parent)
plt.close(fig)
logging.info("%s", " ".join(ranking.sentences(table)))
