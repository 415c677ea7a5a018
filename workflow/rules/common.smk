# Settings derived from the validated config; helpers shared by the rules.
import os
from functools import lru_cache
from pathlib import Path

from podnet.config.lean import FIGURE_NAMES as FIGURES, skip_iri_grammar

skip_iri_grammar()  # 2 s of CPU on every run otherwise (podnet/config/lean.py); before validate imports jsonschema

from snakemake.utils import validate

from podnet.config import schema
from podnet.config.stages import launch_view, stats_of
from podnet.parse.shards import (
    shard_entries,
    shard_state,
)  # no pandas here
from podnet.parse.raw import sidecar_path

schema.check_moved(
    config, ", ".join(map(str, workflow.overwrite_configfiles)) or "config"
)
validate(config, str(schema.SCHEMA_PATH))  # package data: the one schema

EXP = config["experiment"]
RAW = config.get("raw_dir") or f"raw/{EXP}"
OUT = config.get("processed_dir") or f"processed/{EXP}"
# defaults: the schema's `default:` values (podnet.config.schema), never repeated here
PARSE = {**schema.defaults("parse"), **config.get("parse", {})}
SHARDS = int(PARSE["shards"])
MAX_ERROR_FRACTION = float(PARSE["max_error_fraction"])
REPORT = {**schema.defaults("report"), **config.get("report", {})}
NOTEBOOKS = REPORT["notebooks"]
COMPARE_WITH = REPORT["compare_with"]
# a seed report's published tables beside this experiment (podnet.report.vs_seed), or None
VS_SEED = REPORT.get("vs_seed")
if "vs_seed" in NOTEBOOKS and not VS_SEED:
    raise ValueError(
        "report.notebooks lists vs_seed but report.vs_seed is missing: it names the seed's "
        "published tables and how its CNIs, paths and measures map onto this experiment's"
    )
STATS = stats_of(config)  # stats.paired.adaptive from launch.adaptive.enabled (podnet.config.stages)
# the gate's bounds (podnet check); STATS itself stays as written (stats.run merges its defaults)
THRESHOLDS = {**schema.defaults("stats"), **STATS}["thresholds"]


# the launch section (with the experiment's paths and the stats settings adaptive sampling reads)
# as the launch checkpoint sees it: a gate threshold or bootstrap setting never re-runs a launch
LAUNCH_CONFIG = launch_view(config)


LAUNCH_MANIFEST = f"{OUT}/launch/manifest.json"


wildcard_constraints:
    shard=r"\d+",
    figure="|".join(FIGURES),
    name="|".join(NOTEBOOKS) or "report",


def _force_rerun(rule_name):
    """Ask Snakemake to re-run ``rule_name`` in this invocation (nothing is written or removed)."""
    settings = getattr(workflow, "dag_settings", None)
    if settings is not None:
        settings.forcerun = frozenset(settings.forcerun) | {rule_name}


if "launch" in config:
    # the launch checkpoint's manifest means "raw/ is complete": when runs are missing (never run,
    # deleted, failed and retryable) it is stale, and the launch re-runs to launch them. Read-only
    # here: nothing on disk changes while the Snakefile is parsed (also under -n and --lint).
    from podnet.launch.config import from_mapping as _launch_config
    from podnet.launch.runner import launch_complete

    if (
        os.path.exists(LAUNCH_MANIFEST)
        and launch_complete(_launch_config(LAUNCH_CONFIG)) is False
    ):
        _force_rerun("launch")


def code_version(stage):
    """The stage's code version (podnet.config.stages): a hash of every file of its package and of
    the packages it depends on; a rule's params carry it, so a changed parser, statistic, figure,
    schema default or METHODS text re-runs that stage and those after it (rerun trigger: params).
    """
    from podnet.config.stages import code_version as version

    return version(stage)


@lru_cache(maxsize=4)
def _listing(stamp):
    return shard_entries(RAW, SHARDS)


def shard_input(wildcards):
    """What a parse shard waits for: the launch, when there is one (ancient: its manifest's time
    never re-runs a shard; shard_params below decides that). The raw files themselves are not
    declared one by one: at 10,000s of runs Snakemake's bookkeeping of them cost more than parsing.
    """
    if "launch" not in config:
        return []
    checkpoints.launch.get()
    return [ancient(LAUNCH_MANIFEST)]


def shard_params(wildcards):
    """The shard's raw files, sidecars and unreadable entries as one digest (podnet.parse.shards): a
    param, so any file added, removed or changed (size, mtime) re-runs the shard, and only it.
    """
    return _state(_shards_key(), int(wildcards.shard))


def raw_state(wildcards):
    """Every shard's digest: what a rule that reads the whole raw directory depends on."""
    key = _shards_key()
    return [_state(key, k) for k in range(SHARDS)]


def _shards_key():
    if "launch" in config:
        return os.stat(checkpoints.launch.get().output.manifest).st_mtime_ns
    return None


@lru_cache(maxsize=64)
def _state(key, shard):
    return shard_state(_listing(key)[shard], RAW)


def adaptive_accounts(wildcards):
    """raw/<experiment>/<variant>/_adaptive/*.json: the adaptive launches' accounts (after the launch)."""
    if "launch" in config:
        checkpoints.launch.get()
    return sorted(str(p) for p in Path(RAW).glob("*/_adaptive/*.json"))


def vs_seed_tables():
    """The seed's published reference tables (and sidecars) that report.vs_seed names."""
    if not VS_SEED:
        return []
    d = Path(VS_SEED["published"])
    return sorted(str(p) for p in d.glob("*.csv")) + sorted(
        str(p) for p in d.glob("*.csv.meta.yaml")
    )


VS_SEED_OUTPUTS = (
    [f"{OUT}/vs_seed.csv"]
    + [f"{OUT}/figures/vs_seed.{ext}" for ext in ("png", "svg", "pdf")]
    if VS_SEED
    else []
)


def published_tables():
    """raw/<experiment>/published/*.csv: a seed report's own tables (read by its seed checks)."""
    from pathlib import Path

    return sorted(str(p) for p in Path(RAW, "published").glob("*.csv"))


TABLES = {
    "tidy": f"{OUT}/tidy.parquet",
    "summary": f"{OUT}/summary.csv",
    "ratios": f"{OUT}/ratios.csv",
    "failed": f"{OUT}/failed_runs.csv",
    "settings": f"{OUT}/stats_settings.json",
    "adaptive": f"{OUT}/adaptive.csv",
    "sweeps": f"{OUT}/sweeps.csv",
    "load_curves": f"{OUT}/load_curves.csv",
}
FIGURE_FILES = [
    f"{OUT}/figures/{fig}.{ext}" for fig in FIGURES for ext in ("png", "svg", "pdf")
]
# what each notebook reads beyond TABLES
NOTEBOOK_EXTRA = {
    "report": {
        "figures": FIGURE_FILES,
        "methods": f"{OUT}/METHODS.md",
        "noise_floor": f"{OUT}/noise_floor.csv",
    },
    "explore": {
        "intervals": f"{OUT}/intervals.parquet",
        "outliers": f"{OUT}/outliers.csv",
    },
    "compare": {
        "others": [f"{d}/tidy.parquet" for d in COMPARE_WITH],
        "variants": f"{OUT}/figures/variants.png",
    },
    "planning": {"planning": f"{OUT}/planning.csv"},
    "seed_discrepancies": {
        "discrepancies": f"{OUT}/seed_discrepancies.csv",
        "published": published_tables(),
    },
    "vs_seed": {"vs_seed": VS_SEED_OUTPUTS},
}
NOTEBOOK_PARAMS = {
    "compare": {"compare_with": [os.path.abspath(d) for d in COMPARE_WITH]},
    "vs_seed": {
        "baseline": ((VS_SEED or {}).get("baseline") or {}).get("ours", "host-host")
    },
}


def notebook_inputs(wildcards):
    """The notebook file, the experiment's tables and what this notebook reads besides."""
    return {
        "notebook": f"notebooks/{wildcards.name}.ipynb",
        **TABLES,
        **NOTEBOOK_EXTRA.get(wildcards.name, {}),
    }


def final_outputs():
    """Everything the experiment publishes."""
    tables = list(TABLES.values()) + [
        f"{OUT}/tidy.csv",
        f"{OUT}/METHODS.md",
        f"{OUT}/planning.csv",
        f"{OUT}/noise_floor.csv",
    ]
    notebooks = [
        f"{OUT}/notebooks/{nb}.{ext}" for nb in NOTEBOOKS for ext in ("ipynb", "html")
    ]
    seeds = (
        [f"{OUT}/seed_discrepancies.csv"] if "seed_discrepancies" in NOTEBOOKS else []
    )
    # with a launch section, its manifest too: a stale manifest then re-runs the launch
    launch = [LAUNCH_MANIFEST] if "launch" in config else []
    return tables + FIGURE_FILES + seeds + VS_SEED_OUTPUTS + notebooks + launch
