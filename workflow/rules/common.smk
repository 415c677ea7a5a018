# Settings derived from the validated config; helpers shared by the rules.
import os
from functools import lru_cache

from snakemake.utils import validate

from podnet.parse import shard_files
from podnet.raw import sidecar_path

validate(config, "../../config/config.schema.yaml")

EXP = config["experiment"]
RAW = config.get("raw_dir") or f"raw/{EXP}"
OUT = config.get("processed_dir") or f"processed/{EXP}"
SHARDS = int(config.get("parse", {}).get("shards", 8))
NOTEBOOKS = config.get("report", {}).get("notebooks", ["report"])
STATS = config.get("stats", {})


@lru_cache(maxsize=1)
def _shards():
    return shard_files(RAW, SHARDS)


def shard_input(wildcards):
    """Raw files of one parse shard, with their sidecars (a changed sidecar re-parses)."""
    files = _shards()[int(wildcards.shard)]
    side = [str(sidecar_path(f)) for f in files if sidecar_path(f).exists()]
    return [str(f) for f in files] + side


def final_outputs():
    """Everything the experiment publishes."""
    tables = [
        f"{OUT}/tidy.parquet",
        f"{OUT}/tidy.csv",
        f"{OUT}/failed_runs.csv",
        f"{OUT}/summary.csv",
        f"{OUT}/ratios.csv",
    ]
    return tables + [f"{OUT}/notebooks/{nb}.ipynb" for nb in NOTEBOOKS]
