# podnet: launch -> raw -> parse -> tidy -> stats -> report (figures, notebooks)
#
#   snakemake --cores 2 --configfile config/examples/seed-raven.yaml
#
# One config file is one experiment. Stages, each in workflow/rules/:
#   launch.smk  pod tests on a Kubernetes cluster -> raw/<experiment>/ (only when the config has `launch`)
#   parse.smk   raw outputs + sidecars -> processed/<experiment>/tidy.parquet, failed_runs.csv
#   stats.smk   tidy -> summary.csv, ratios.csv, planning.csv, stats_settings.json, METHODS.md, ...
#   report.smk  figures/plan.json, figures/<figure>.png|svg|pdf, notebooks/<name>.ipynb + .html, seed_discrepancies.csv,
#               and last published.json: what is there at the end (also after a failed run, "complete": false)
from snakemake.utils import min_version

min_version("8.0")


# The default experiment; `--configfile X.yaml` replaces it (configs are not merged,
# so keys of the default never leak into another experiment).
if not config:

    configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/launch.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        final_outputs,
        figure_files,  # after the figure_plan checkpoint, on its own (common.smk, final_outputs)
        CHECK_OUTPUTS,
        PUBLISHED,  # last: the published list, from what is there once every job is done (report.smk)
