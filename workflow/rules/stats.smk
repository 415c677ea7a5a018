# Statistics: tidy table -> summary.csv (per group) and ratios.csv (against baselines).


rule stats:
    input:
        tidy=f"{OUT}/tidy.parquet",
        intervals=f"{OUT}/intervals.parquet",
    output:
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
        planning=f"{OUT}/planning.csv",
        outliers=f"{OUT}/outliers.csv",
        within_run=f"{OUT}/within_run.csv",
    log:
        f"{OUT}/logs/stats.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("stats"),
        settings=STATS,
    script:
        "../scripts/stats.py"
