"""Snakemake script: one publication figure (library: podnet.figures)."""

import logging
from pathlib import Path

import matplotlib.pyplot as plt

from podnet import figures

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
name = sm.wildcards.figure
fig = figures.FIGURES[name](figures.load(Path(sm.input.summary).parent))
for path in figures.style.save(fig, name, Path(sm.output.png).parent):
    logging.info("wrote %s", path)
plt.close(fig)
