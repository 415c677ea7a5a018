"""Snakemake script: a seed report's published tables vs its raw outputs (library: podnet.report.seed_reports)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
from pathlib import Path

from podnet.report import seed_reports

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
# every check, agreeing ones too (status column): the notebook and readers filter, nobody recomputes
out = Path(sm.input.tidy).parent  # processed/<exp>/
checks = seed_reports.discrepancies(
    out,
    Path(sm.params.raw_dir),
    [Path(p) for p in sm.input.published],
    include_agreeing=True,
    # each raw output's facts while it is unchanged: one added run is the one file read again
    cache=out / ".cache" / "seed_provenance.pickle",
)
checks.to_csv(sm.output.csv, index=False)
logging.info(
    "%d checks, %d discrepancies -> %s", len(checks), len(seed_reports.disagreements(checks)), sm.output.csv
)
