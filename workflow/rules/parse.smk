# Parse: raw/<experiment>/** (+ .meta.yaml sidecars) -> tidy tables.
# Raw files are parsed in SHARDS batches picked by a stable hash of their path,
# so adding one raw file re-parses one batch, and thousands of files make
# SHARDS jobs, not thousands. A shard's raw files reach Snakemake as one digest
# (params.state: paths, sizes, mtimes of raw files and sidecars), not as inputs.


rule parse_shard:
    input:
        shard_input,
    output:
        tidy=f"{OUT}/parsed/shard-{{shard}}.tidy.parquet",
        intervals=f"{OUT}/parsed/shard-{{shard}}.intervals.parquet",
        failed=f"{OUT}/parsed/shard-{{shard}}.failed.csv",
    log:
        f"{OUT}/logs/parse-shard-{{shard}}.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("parse"),
        raw_dir=RAW,
        experiment=EXP,
        shards=SHARDS,
        max_error_fraction=MAX_ERROR_FRACTION,
        state=shard_params,
    script:
        "../scripts/parse_shard.py"


rule tidy:
    input:
        tidy=expand(f"{OUT}/parsed/shard-{{shard}}.tidy.parquet", shard=range(SHARDS)),
        intervals=expand(
            f"{OUT}/parsed/shard-{{shard}}.intervals.parquet", shard=range(SHARDS)
        ),
        failed=expand(f"{OUT}/parsed/shard-{{shard}}.failed.csv", shard=range(SHARDS)),
    output:
        parquet=f"{OUT}/tidy.parquet",
        intervals=f"{OUT}/intervals.parquet",
        failed=f"{OUT}/failed_runs.csv",
        disturbed=f"{OUT}/disturbed_runs.csv",
        # the scale runs' probe times, one row per change (podnet.parse.scale; no rows without scale)
        probes=f"{OUT}/scale_probes.csv",
    log:
        f"{OUT}/logs/tidy.log",
    conda:
        "../../envs/podnet.yaml"
    script:
        "../scripts/combine.py"


# the tidy table as CSV too, for readers without parquet: its own job, beside the statistics (at
# 10,000 runs writing it took 0.8 s of CPU, on the way to every table and figure in combine's job)
rule tidy_csv:
    input:
        parquet=f"{OUT}/tidy.parquet",
    output:
        csv=f"{OUT}/tidy.csv",
    log:
        f"{OUT}/logs/tidy_csv.log",
    priority: PRIORITY["tidy_csv"]
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("parse"),
    script:
        "../scripts/tidy_csv.py"
