"""Snakemake script: combine parse shards into the experiment's tidy tables (library: podnet.parse)."""

import logging
import sys

from podnet.parse import combine

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
parsed = combine(list(sm.input.tidy), list(sm.input.intervals), list(sm.input.failed))
parsed.tidy.to_parquet(sm.output.parquet, index=False)
parsed.tidy.to_csv(sm.output.csv, index=False)
parsed.intervals.to_parquet(sm.output.intervals, index=False)
parsed.failed.to_csv(sm.output.failed, index=False)
parsed.disturbed.to_csv(sm.output.disturbed, index=False)
msg = (
    f"{parsed.tidy['run_id'].nunique()} runs, {len(parsed.tidy)} tidy rows, {len(parsed.failed)} failed raw "
    f"files, {len(parsed.disturbed)} disturbed runs"
)
logging.info(msg)
for row in parsed.failed.itertuples():
    line = f"podnet: could not parse {row.raw_path}: {row.reason}"
    logging.warning(line)
    print(line, file=sys.stderr)
