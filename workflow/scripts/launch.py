"""Snakemake script: the launch checkpoint (library: podnet.launch.runner.launch)."""

import sys

from podnet.launch.cli import configure_logging
from podnet.launch.config import from_mapping
from podnet.launch.runner import launch

sm = snakemake  # noqa: F821 (injected by Snakemake)
configure_logging(sm.log[0])
cfg = from_mapping(dict(sm.params.config))
result = launch(cfg, manifest=sm.output.manifest)
if result.exit_code:
    # a fatal error or Ctrl-C: no manifest, so the next pipeline run launches again
    sys.exit(f"launch failed: {result.error}")
