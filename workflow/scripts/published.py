"""Snakemake script: the published list, written last from what exists (library:
podnet.report.published.write); the workflow's onerror hook writes it too, after a failed run."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

from podnet.report import published

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
doc = published.write(
    sm.output.published,
    sm.params.experiment,
    dict(sm.params.files),
    sm.input.plan,
    sm.params.figure_log,
    complete=True,
)
logging.info("%s", published.summary(doc))
if doc["not_published"]:  # removed while the job waited: the run fails, its onerror hook lists it again
    raise SystemExit(published.summary(doc))
