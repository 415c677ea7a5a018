"""Snakemake script: the launch checkpoint (library: podnet.launch.rounds.runner.launch)."""

import sys

from podnet.launch.rounds.results import configure_logging
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping

sm = snakemake  # noqa: F821 (injected by Snakemake)
configure_logging(sm.log[0])
cfg = from_mapping(dict(sm.params.config))
result = launch(cfg, manifest=sm.output.manifest)
if result.exit_code:
    # a fatal error or Ctrl-C: no manifest, so the next pipeline run launches again
    sys.exit(f"launch failed: {result.error}")
