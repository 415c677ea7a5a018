"""Snakemake script: combine parse shards into the experiment's tidy tables (library: podnet.parse),
and the scale runs' probe times (podnet.parse.scale)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before jsonschema: scale_probes.csv validates the scale runs' sidecars

import logging
import sys

from podnet.parse import combine
from podnet.parse.scale import probe_table

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
parsed = combine(list(sm.input.tidy), list(sm.input.intervals), list(sm.input.failed))
parsed.tidy.to_parquet(sm.output.parquet, index=False)
parsed.intervals.to_parquet(sm.output.intervals, index=False)
parsed.failed.to_csv(sm.output.failed, index=False)
parsed.disturbed.to_csv(sm.output.disturbed, index=False)
probes = probe_table(parsed.tidy)
probes.to_csv(sm.output.probes, index=False)
msg = (
    f"{parsed.tidy['run_id'].nunique()} runs, {len(parsed.tidy)} tidy rows, {len(parsed.failed)} failed raw "
    f"files, {len(parsed.disturbed)} disturbed runs, {len(probes)} scale probe changes"
)
logging.info(msg)
for row in parsed.failed.itertuples():
    line = f"podnet: could not parse {row.raw_path}: {row.reason}"
    logging.warning(line)
    print(line, file=sys.stderr)
