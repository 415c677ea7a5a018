"""Snakemake script: which figures have something to show, one digest file per figure (library:
podnet.report.figures.write_plan); nothing is drawn."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

import matplotlib

matplotlib.use("Agg")  # files only

from podnet.report import figures  # after the backend is chosen

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
t = figures.load(sm.input.summary.rsplit("/", 1)[0], only=list(sm.params.tables))
specs = {path.rsplit("/", 1)[1].removesuffix(".sha256"): path for path in sm.output.specs}
plan = figures.write_plan(t, sm.output.plan, specs)
for name, entry in plan.items():
    logging.info("%s: %s", name, entry.get("digest") or f"omitted, {entry['omitted']}")
