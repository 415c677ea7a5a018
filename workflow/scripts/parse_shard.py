"""Snakemake script: parse one shard of raw files (library: podnet.parse, podnet.parse_cache).

Files whose bytes, sidecar and path are unchanged since the last parse of this
shard are not parsed again: their rows come from processed/<exp>/.cache/parse/
(content-keyed; not an output, deleting it only costs time).
"""

from podnet.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/lean.py)

import logging
from pathlib import Path

from podnet.parse import write_parsed
from podnet.parse_cache import parse_files_cached
from podnet.raw import SIDECAR_SUFFIX, BadEntry

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
files = [Path(f) for f in sm.input if not str(f).endswith(SIDECAR_SUFFIX)]
# entries that cannot be read (listed when the workflow was planned) become failed runs too
bad = [BadEntry(Path(path), reason) for path, reason in sm.params.bad]
out = Path(sm.output.tidy).parent.parent  # processed/<exp>/
cache = out / ".cache" / "parse" / f"shard-{sm.wildcards.shard}"
parsed = parse_files_cached([*files, *bad], sm.params.raw_dir, sm.params.experiment, cache)
for row in parsed.failed.itertuples():
    logging.warning("failed: %s: %s", row.raw_path, row.reason)
logging.info("%d files, %d tidy rows, %d failed", len(files), len(parsed.tidy), len(parsed.failed))
write_parsed(parsed, sm.output.tidy, sm.output.intervals, sm.output.failed)
