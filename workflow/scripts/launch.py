"""Snakemake script: the launch checkpoint (library: podnet.launch.runner.launch)."""

import logging
import sys

from podnet.launch.config import from_mapping
from podnet.launch.runner import launch

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(
    level=logging.INFO,
    format="%(asctime)s %(message)s",
    datefmt="%H:%M:%S",
    handlers=[logging.FileHandler(sm.log[0], mode="w"), logging.StreamHandler(sys.stderr)],
    force=True,
)
logging.getLogger("kubernetes").setLevel(logging.WARNING)
logging.getLogger("urllib3").setLevel(logging.WARNING)
cfg = from_mapping(dict(sm.params.config))
result = launch(cfg, manifest=sm.output.manifest)
if result.exit_code:
    # a fatal error or Ctrl-C: no manifest, so the next pipeline run launches again
    sys.exit(f"launch failed: {result.error}")
