"""Snakemake script: one publication figure (library: podnet.report.figures.publish_one).

Runs when the figure's digest (figure_plan) changed or its files are missing; a figure whose drawn
data, texts and code are unchanged since it was written is copied, not drawn again (its digest is
in processed/<exp>/.cache/figures/; not an output, deleting it only costs time).
"""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display, whatever MPLBACKEND or the machine says

from podnet.report import figures  # after the backend is chosen

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
name = sm.wildcards.figure
processed = Path(sm.output.png).parent.parent
drawn = figures.publish_one(
    name,
    figures.load(processed, only=list(sm.params.tables)),
    Path(sm.output.png).parent,
    processed / ".cache" / "figures",
)
logging.info("%s %s", "drew" if drawn else "unchanged data, kept", name)
