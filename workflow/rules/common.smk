# Settings derived from the validated config; helpers shared by the rules.
import os
from functools import lru_cache
from pathlib import Path

from podnet.config.lean import FIGURE_NAMES as FIGURES, skip_iri_grammar
from podnet.config.stages import figure_code_version, notebook_code_version

skip_iri_grammar()  # 2 s of CPU on every run otherwise (podnet/config/lean.py); before validate imports jsonschema

from snakemake.utils import validate

from podnet.config import schema
from podnet.config.stages import launch_view, stats_of
from podnet.parse.shards import (
    shard_entries,
    shard_state,
)  # no pandas here
from podnet.parse.raw import sidecar_path

# stdlib only: the published list, also written by the onerror hook (report.smk)
from podnet.report import published as published_list

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
STATS = stats_of(
    config
)  # stats.paired.adaptive from launch.adaptive.enabled (podnet.config.stages)
# the gate's bounds (podnet check); STATS itself stays as written (stats.run merges its defaults)
THRESHOLDS = {**schema.defaults("stats"), **STATS}["thresholds"]


# the launch section (with the experiment's paths and the stats settings adaptive sampling reads)
# as the launch checkpoint sees it: a gate threshold or bootstrap setting never re-runs a launch
LAUNCH_CONFIG = launch_view(config)


LAUNCH_MANIFEST = f"{OUT}/launch/manifest.json"


def _test_lengths(cfg):
    """Seconds each tool:test of the launch section runs (podnet.launch.spec.plan.test_lengths): data for
    the noise_floor rule, read from the config once here."""
    if not cfg.get("launch"):
        return {}
    from podnet.launch.spec.plan import test_lengths

    return {f"{tool}:{test}": s for (tool, test), s in test_lengths(cfg).items()}


TEST_LENGTHS = _test_lengths(LAUNCH_CONFIG)


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
    from podnet.launch.spec.config import from_mapping as _launch_config
    from podnet.launch.rounds.runner import launch_complete

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
        _start_warm()
        return []
    checkpoints.launch.get()
    _start_warm()  # after the launch: no process of ours beside the measurements
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
    # the files the claims read the seed's numbers from (report.vs_seed.seed_sources), with sidecars
    sources = [str(p) for p in VS_SEED.get("seed_sources") or []]
    sources += [f"{p}.meta.yaml" for p in sources if Path(f"{p}.meta.yaml").exists()]
    if not VS_SEED.get("published"):  # claims only, no CNI ranking
        return sorted(sources)
    d = Path(VS_SEED["published"])
    # once each: the claims may read the published tables too (seed 003's seed_sources)
    return list(
        dict.fromkeys(
            sorted(str(p) for p in d.glob("*.csv"))
            + sorted(str(p) for p in d.glob("*.csv.meta.yaml"))
            + sorted(sources)
        )
    )


VS_SEED_OUTPUTS = (
    [f"{OUT}/vs_seed.csv", f"{OUT}/vs_seed_orders.csv", f"{OUT}/vs_seed_claims.csv"]
    + [f"{OUT}/figures/vs_seed.{ext}" for ext in ("png", "svg", "pdf")]
    if VS_SEED
    else []
)


# the variants in order per path and measure (stats.ranking; podnet.stats.ranking): ranking.csv and
# its figure, when stats.ranking names measures or report.vs_seed judges the seed's orders from it
RANKING = bool((STATS.get("ranking") or {}).get("measures")) or bool(VS_SEED)
RANKING_CSV = [f"{OUT}/ranking.csv"] if RANKING else []
RANKING_OUTPUTS = RANKING_CSV + (
    [f"{OUT}/figures/ranking.{ext}" for ext in ("png", "svg", "pdf")] if RANKING else []
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
    "disturbed": f"{OUT}/disturbed_runs.csv",
    "settings": f"{OUT}/stats_settings.json",
    "adaptive": f"{OUT}/adaptive.csv",
    "sweeps": f"{OUT}/sweeps.csv",
    "load_curves": f"{OUT}/load_curves.csv",
    "under_load": f"{OUT}/latency_under_load.csv",
    "net_ready": f"{OUT}/net_ready.csv",
    "net_ready_ratios": f"{OUT}/net_ready_ratios.csv",
    "planning": f"{OUT}/planning.csv",
    "variants": f"{OUT}/variants.csv",
    "outliers": f"{OUT}/outliers.csv",
    "intervals": f"{OUT}/intervals.parquet",
    **({"ranking": RANKING_CSV[0]} if RANKING else {}),
}
# the tables the figures read (podnet.report.figures.data.load(only=...))
FIGURE_TABLES = [
    "tidy",
    "summary",
    "ratios",
    "sweeps",
    "load_curves",
    "under_load",
    "net_ready",
    "net_ready_ratios",
    "settings",
]
# the cost of scale (issue 33): its tables, read by the `scale` figure and the compare notebook
TABLES["scale_curves"] = f"{OUT}/scale_curves.csv"
TABLES["scale_effect"] = f"{OUT}/scale_effect.csv"
FIGURE_TABLES += ["scale_effect"]
FIGURE_PLAN = f"{OUT}/figures/plan.json"
# what is there at the end of a run (podnet.report.published; the last rule of `all`, report.smk)
PUBLISHED = f"{OUT}/published.json"


def figure_spec(name):
    """What figure ``name`` would draw, as a digest (or why it is left out): its job's one input
    that changes (podnet.report.figures.write_plan)."""
    return f"{OUT}/figures/specs/{name}.sha256"


def published_figures():
    """The figures with something to show (the figure_plan checkpoint's plan), in order."""
    import json

    plan = json.loads(Path(checkpoints.figure_plan.get().output.plan).read_text())
    return [n for n in FIGURES if "planned" in plan.get(n, {})]


def figure_files(wildcards=None):
    """The published figures' files (PNG, SVG, PDF)."""
    return [
        f"{OUT}/figures/{fig}.{ext}"
        for fig in published_figures()
        for ext in ("png", "svg", "pdf")
    ]


def drawn_figure_files(names=None):
    """The files of the published figures (of ``names``, default all), each asked for once its
    figure job is done (a checkpoint). A notebook that shows a figure is judged after that job, so a
    figure re-drawn into byte-identical files does not re-run the notebook."""
    figs = [f for f in published_figures() if names is None or f in names]
    for fig in figs:
        checkpoints.figure.get(figure=fig)
    return [
        f"{OUT}/figures/{fig}.{ext}" for fig in figs for ext in ("png", "svg", "pdf")
    ]


# what each notebook reads: tables (podnet.report.figures.data.load(only=...), a papermill
# parameter) and other files; a notebook re-runs only when one of these changed
NOTEBOOK_TABLES = {
    # findings.markdown: the adaptive account, the disturbed runs, time to network and (with a
    # ranking) its sentences
    "report": [
        "tidy",
        "summary",
        "ratios",
        "failed",
        "settings",
        "adaptive",
        "disturbed",
        "net_ready",
        "net_ready_ratios",
    ]
    + (["ranking"] if RANKING else []),
    "explore": ["tidy", "intervals", "outliers", "summary", "settings"],
    "compare": [
        "tidy",
        "ratios",
        "variants",
        "under_load",
        "net_ready",
        "net_ready_ratios",
        "settings",
        "disturbed",
    ]
    + (["ranking"] if RANKING else []),
    "planning": ["planning", "adaptive", "settings"],
    "seed_discrepancies": [],
}
NOTEBOOK_EXTRA = {
    "report": {
        "figures": lambda w: drawn_figure_files(),
        "plan": FIGURE_PLAN,
        "methods": f"{OUT}/METHODS.md",
        "noise_floor": f"{OUT}/noise_floor.csv",
    },
    "compare": {
        "others": [f"{d}/tidy.parquet" for d in COMPARE_WITH],
        "plan": FIGURE_PLAN,
        "figures": lambda w: [
            f
            for f in drawn_figure_files(["variants", "under_load", "net_ready"])
            if f.endswith(".png")
        ],
    },
    "seed_discrepancies": {
        "discrepancies": f"{OUT}/seed_discrepancies.csv",
        "published": published_tables(),
    },
    "vs_seed": {"vs_seed": VS_SEED_OUTPUTS, "ranking_figure": RANKING_OUTPUTS},
}
# the cost of scale (issue 33): the compare notebook's section reads these and shows the `scale` figure
NOTEBOOK_TABLES["compare"] += ["sweeps", "scale_curves", "scale_effect"]
NOTEBOOK_EXTRA["compare"]["scale_figure"] = lambda w: [
    f for f in drawn_figure_files(["scale"]) if f.endswith(".png")
]
# the notebooks that show the published figures (they wait for every figure job)
SHOWS_FIGURES = {
    nb
    for nb, extra in NOTEBOOK_EXTRA.items()
    if {"figures", "scale_figure"} & set(extra)
}
NOTEBOOK_PARAMS = {
    # relative to the notebook's folder when it runs (podnet.report.paths.notebook_params)
    "compare": {"compare_with": list(COMPARE_WITH)},
    "vs_seed": {
        "baseline": ((VS_SEED or {}).get("baseline") or {}).get("ours", "host-host")
    },
}


def notebook_inputs(wildcards):
    """The notebook file, the tables it reads and its other files."""
    name = wildcards.name
    extra = {
        k: (v(wildcards) if callable(v) else v)
        for k, v in NOTEBOOK_EXTRA.get(name, {}).items()
    }
    tables = {k: TABLES[k] for k in NOTEBOOK_TABLES.get(name, list(TABLES))}
    return {"notebook": f"notebooks/{name}.ipynb", **tables, **extra}


def final_outputs(wildcards):
    """Everything the experiment publishes but the figures (figure_files, rule all's second input
    function: known once the figure_plan checkpoint ran).

    Snakemake defers an input function that waits for a checkpoint as a whole. With the figures in
    here, the notebooks, seed checks and noise floor joined the run only after figure_plan, one at a
    time behind the figures instead of beside stats; and a notebook asked for in that late update
    round had its figure inputs (checkpoints behind figure_plan) left unresolved ("<TBD>") when its
    figures did not need to run: a notebook added to a finished experiment, or its file deleted,
    failed. Asked for from the start, it is judged round by round (tests/pipeline/test_incremental.py).
    """
    tables = [
        TABLES[k]
        for k in ("tidy", "summary", "ratios", "failed", "settings", "adaptive")
        + ("sweeps", "load_curves", "planning")
    ] + [
        f"{OUT}/tidy.csv",
        f"{OUT}/METHODS.md",
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
    return (
        tables
        + [FIGURE_PLAN]
        + seeds
        + VS_SEED_OUTPUTS
        + RANKING_OUTPUTS
        + notebooks
        + launch
    )


def published_files():
    """What the experiment publishes besides the planned figures (rule all's files, every table of
    tidy and stats, the gate's verdicts), each with the log of the rule that writes it (a rule
    without wildcards; a notebook's from its pattern); called in report.smk, after the rules.
    """
    logs = {
        str(f): str(r.log[0])
        for r in workflow.rules
        if r.log and not r.wildcard_names
        for f in r.output
    }
    for nb in NOTEBOOKS:
        for ext in ("ipynb", "html"):
            logs[f"{OUT}/notebooks/{nb}.{ext}"] = expand(
                rules.notebook.log[0], name=nb
            )[0]
    wanted = [f for f in final_outputs(None) if f != LAUNCH_MANIFEST]
    wanted += CHECK_OUTPUTS + list(TABLES.values()) + list(rules.tidy.output)
    wanted += list(rules.stats.output)
    return {str(f): logs.get(str(f)) for f in dict.fromkeys(map(str, wanted))}


# Which ready job takes a free core first (Snakemake's `priority`, higher first; at equal priority
# the scheduler picks any). After tidy, stats and then figure_plan lead to everything else; the
# figures, the notebooks that show none (the longest jobs) and noise_floor (the report notebook
# reads it) share the cores; the notebooks that show the figures wait for them anyway, then tidy.csv,
# which nothing waits for. Measured at 10,000 runs on two cores: a side job ahead of figure_plan held
# the figures back by 1.5-3 s, and noise_floor left last held the report notebook.
PRIORITY = {
    "stats": 30,
    "figure_plan": 30,
    "figure": 20,
    "noise_floor": 20,
    "notebook": 20,  # one that shows no figure
    "notebook_with_figures": 10,
    "seed_discrepancies": 15,  # the seed_discrepancies notebook reads it
    "tidy_csv": 0,
}


# Warm workers (podnet.config.warm): one process per run imports the jobs' libraries once, and the
# short jobs (each script's first statement) run as forks of it instead of importing them again;
# a job that finds no zygote runs in its own process, with the same result. PODNET_WARM=0: never.
WARM_PRELOAD = [  # in the order the jobs come: parse, tidy, stats, figures, notebooks, HTML
    "pandas",
    "pyarrow.parquet",
    "podnet.parse.*",
    "scipy.stats",
    "podnet.stats.*",
    "matplotlib.pyplot",
    "seaborn",
    "podnet.report.*",
    "podnet.report.figures.style:warm_up",
    "papermill",
    "ipykernel.ipkernel",  # a kernel's (not ipykernel.kernelapp: it reads its parent at import)
    "nbconvert",
    "podnet.report.notebook_html:warm_up",
]


def _start_warm():
    """Start the run's zygote while Snakemake still builds the DAG (the parse shards' input function
    asks first), so the first jobs find it loaded; not for a dry run, --touch or a report (no
    executor), nor while a launch is still to run (shard_input asks after it)."""
    if workflow.executor_plugin is None or workflow.dryrun or workflow.touch:
        return
    from podnet.config import warm

    os.makedirs(f"{OUT}/logs", exist_ok=True)
    warm.start(WARM_PRELOAD, log=f"{OUT}/logs/warm.log")


def _end_run():
    """The run is over (onsuccess, onerror): stop its zygote, and Snakemake's wake-up timers, the
    last of which would hold Snakemake's exit up to 1 s (podnet/config/lean.py)."""
    from podnet.config import warm
    from podnet.config.lean import cancel_rescheduling

    warm.stop()
    cancel_rescheduling()


onsuccess:
    _end_run()


onerror:
    # the published list from what the failed run left, "complete": false, dated 1970 and without
    # Snakemake's record of it: the next run writes it again (report.smk, rule published)
    if published_list.after_error(
        PUBLISHED, EXP, PUBLISHED_FILES, FIGURE_PLAN, str(rules.figure.log[0])
    ):
        # the record's key, as Snakemake's own cleanup makes it
        from snakemake.io import IOFile

        workflow.persistence.cleanup_metadata(IOFile(PUBLISHED))
    _end_run()
