"""Snakemake script: parse one shard of raw files (library: podnet.parse, podnet.parse.cache).

Files whose bytes, sidecar and path are unchanged since the last parse of this
shard are not parsed again: their rows come from processed/<exp>/.cache/parse/
(content-keyed; not an output, deleting it only costs time).
"""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
from pathlib import Path

from podnet.parse import apply_error_threshold, write_parsed
from podnet.parse.cache import parse_files_cached
from podnet.parse.raw import BadEntry
from podnet.parse.shards import shard_entries, shard_state

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
shard = int(sm.wildcards.shard)
# the shard's raw files, listed again here (the workflow passed their digest only); entries that
# cannot be read become failed runs too
entries = shard_entries(sm.params.raw_dir, sm.params.shards)[shard]
if shard_state(entries, sm.params.raw_dir) != sm.params.state:
    logging.warning("raw files changed since the workflow was planned: parsing them as they are now")
files = [e for e in entries if not isinstance(e, BadEntry)]
bad = [e for e in entries if isinstance(e, BadEntry)]
out = Path(sm.output.tidy).parent.parent  # processed/<exp>/
cache = out / ".cache" / "parse" / f"shard-{shard}"
parsed = parse_files_cached([*files, *bad], sm.params.raw_dir, sm.params.experiment, cache)
parsed = apply_error_threshold(parsed, sm.params.max_error_fraction)
for row in parsed.failed.itertuples():
    logging.warning("failed: %s: %s", row.raw_path, row.reason)
logging.info("%d files, %d tidy rows, %d failed", len(files), len(parsed.tidy), len(parsed.failed))
write_parsed(parsed, sm.output.tidy, sm.output.intervals, sm.output.failed)
