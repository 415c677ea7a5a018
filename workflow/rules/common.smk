# Settings derived from the validated config; helpers shared by the rules.
import os
from functools import lru_cache
from pathlib import Path

from snakemake.utils import validate

from podnet.parse import shard_entries
from podnet.raw import sidecar_path

validate(config, "../../podnet/config.schema.yaml")

EXP = config["experiment"]
RAW = config.get("raw_dir") or f"raw/{EXP}"
OUT = config.get("processed_dir") or f"processed/{EXP}"
SHARDS = int(config.get("parse", {}).get("shards", 8))
NOTEBOOKS = config.get("report", {}).get("notebooks", ["report"])
STATS = config.get("stats", {})


# the launch section (with the experiment's paths and stats settings) as the launch checkpoint sees it
LAUNCH_CONFIG = {
    k: config[k] for k in ("experiment", "raw_dir", "launch", "stats") if k in config
}


LAUNCH_MANIFEST = f"{OUT}/launch/manifest.json"

if "launch" in config:
    # the launch checkpoint's manifest means "raw/ is complete": when runs are missing (never run,
    # deleted, failed and retryable) it is stale, and removing it makes Snakemake launch them
    from podnet.launch.config import from_mapping as _launch_config
    from podnet.launch.runner import invalidate_stale_manifest

    invalidate_stale_manifest(_launch_config(LAUNCH_CONFIG), LAUNCH_MANIFEST)


def code_version(*packages):
    """sha256 of the source of podnet modules/packages: a rule's params carry it, so
    a changed parser, statistic or figure re-runs what it produced (rerun trigger: params).
    """
    import hashlib
    from pathlib import Path

    import podnet

    root = Path(podnet.__file__).parent
    h = hashlib.sha256()
    for name in packages:
        p = root / name
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


@lru_cache(maxsize=4)
def _listing(stamp):
    return shard_entries(RAW, SHARDS)


def _shards():
    """Raw files by shard; with a launch section, only once the launch checkpoint ran."""
    stamp = None
    if "launch" in config:
        manifest = checkpoints.launch.get().output.manifest
        stamp = os.stat(manifest).st_mtime_ns
    return _listing(stamp)


def shard_input(wildcards):
    """Raw files of one parse shard, with their sidecars (a changed sidecar re-parses)."""
    files = [f for f in _shards()[int(wildcards.shard)] if isinstance(f, Path)]
    side = [str(sidecar_path(f)) for f in files if sidecar_path(f).is_file()]
    return [str(f) for f in files] + side


def shard_bad(wildcards):
    """Entries of one shard that cannot be read (unreadable dir, broken link, bad name), with
    reasons: a param, so a new one re-runs the shard and lands in failed_runs.csv.
    """
    entries = _shards()[int(wildcards.shard)]
    return [[b.display(), b.reason] for b in entries if not isinstance(b, Path)]


def final_outputs():
    """Everything the experiment publishes."""
    tables = [
        f"{OUT}/tidy.parquet",
        f"{OUT}/tidy.csv",
        f"{OUT}/failed_runs.csv",
        f"{OUT}/summary.csv",
        f"{OUT}/ratios.csv",
    ]
    # with a launch section, its manifest too: a removed (stale) manifest then re-runs the launch
    launch = [LAUNCH_MANIFEST] if "launch" in config else []
    return tables + [f"{OUT}/notebooks/{nb}.ipynb" for nb in NOTEBOOKS] + launch
