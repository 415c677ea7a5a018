# Statistics: tidy table -> summary.csv (per group) and ratios.csv (against baselines), variants.csv,
# sweeps.csv and load_curves.csv (swept tests as curves), latency_under_load.csv (load sweeps),
# scale_curves.csv (scale sweeps: slope per 1000 objects, largest / 0), scale_effect.csv (time to
# effect per scale point, from scale_probes.csv), net_ready.csv (time to network, netready),
# net_ready_ratios.csv (time to network, each variant over the baseline variant);
# ranking.csv (stats.ranking);
# with stats.thresholds in the config, the gate (podnet check) -> check.csv as the last step.


rule stats:
    input:
        tidy=f"{OUT}/tidy.parquet",
        intervals=f"{OUT}/intervals.parquet",
        probes=f"{OUT}/scale_probes.csv",
    output:
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
        planning=f"{OUT}/planning.csv",
        variants=f"{OUT}/variants.csv",
        sweeps=f"{OUT}/sweeps.csv",
        load_curves=f"{OUT}/load_curves.csv",
        latency_under_load=f"{OUT}/latency_under_load.csv",
        scale_curves=f"{OUT}/scale_curves.csv",
        scale_effect=f"{OUT}/scale_effect.csv",
        net_ready=f"{OUT}/net_ready.csv",
        net_ready_ratios=f"{OUT}/net_ready_ratios.csv",
        outliers=f"{OUT}/outliers.csv",
        within_run=f"{OUT}/within_run.csv",
        settings=f"{OUT}/stats_settings.json",
        methods=f"{OUT}/METHODS.md",
    log:
        f"{OUT}/logs/stats.log",
    # on the way to every figure and the report notebook: before the side jobs ready with it
    priority: PRIORITY["stats"]
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
        settings=STATS,
    script:
        "../scripts/stats.py"


rule check:
    input:
        ratios=f"{OUT}/ratios.csv",
    output:
        verdicts=f"{OUT}/check.csv",
    log:
        f"{OUT}/logs/check.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
        thresholds=THRESHOLDS,
    script:
        "../scripts/check.py"


# the gate's verdicts are a final output only when the config declares thresholds (rule all)
CHECK_OUTPUTS = [f"{OUT}/check.csv"] if THRESHOLDS else []


# The adaptive launcher's accounts (raw/<exp>/<variant>/_adaptive/<launch id>.json: which primary
# comparisons met their precision target, and why not) -> one table the report's findings put into words.
rule adaptive:
    input:
        accounts=adaptive_accounts,
    output:
        csv=f"{OUT}/adaptive.csv",
    log:
        f"{OUT}/logs/adaptive.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
    script:
        "../scripts/adaptive.py"


# the cluster's per-run CV against the noise floor's from the same launch (podnet.stats.noise)
rule noise_floor:
    input:
        tidy=f"{OUT}/tidy.parquet",
    output:
        table=f"{OUT}/noise_floor.csv",
    log:
        f"{OUT}/logs/noise_floor.log",
    priority: PRIORITY["noise_floor"]
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
        # seconds each tool:test of the launch runs: values read from the launch config here
        # (common.smk), so the rule runs stats code only and a launch code edit does not re-run it
        test_lengths=TEST_LENGTHS,
        primary=STATS.get("primary", []),
    script:
        "../scripts/noise_floor.py"


# the variants in order per path and measure, every pair by its paired ratio, Holm over all
# (stats.ranking; podnet.stats.ranking); in the DAG when stats.ranking or report.vs_seed is set
rule ranking:
    input:
        tidy=f"{OUT}/tidy.parquet",
    output:
        csv=f"{OUT}/ranking.csv",
    log:
        f"{OUT}/logs/ranking.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
        settings=STATS,
        vs_seed=VS_SEED or {},
    script:
        "../scripts/ranking.py"
