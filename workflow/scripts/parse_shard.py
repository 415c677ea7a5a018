"""Snakemake script: parse one shard of raw files (library: podnet.parse)."""

import logging
from pathlib import Path

from podnet.parse import parse_files, write_parsed
from podnet.raw import SIDECAR_SUFFIX, BadEntry

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
files = [Path(f) for f in sm.input if not str(f).endswith(SIDECAR_SUFFIX)]
# entries that cannot be read (listed when the workflow was planned) become failed runs too
bad = [BadEntry(Path(path), reason) for path, reason in sm.params.bad]
parsed = parse_files([*files, *bad], sm.params.raw_dir, sm.params.experiment)
for row in parsed.failed.itertuples():
    logging.warning("failed: %s: %s", row.raw_path, row.reason)
logging.info("%d files, %d tidy rows, %d failed", len(files), len(parsed.tidy), len(parsed.failed))
write_parsed(parsed, sm.output.tidy, sm.output.intervals, sm.output.failed)
