# Report: papermill executes notebooks/<name>.ipynb with the experiment's paths;
# the executed copy goes to processed/<experiment>/notebooks/, figures to figures/.


rule notebook:
    input:
        notebook="notebooks/{name}.ipynb",
        tidy=f"{OUT}/tidy.parquet",
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
        failed=f"{OUT}/failed_runs.csv",
    output:
        notebook=f"{OUT}/notebooks/{{name}}.ipynb",
    log:
        f"{OUT}/logs/notebook-{{name}}.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report.py", "seeds.py"),
        experiment=EXP,
        raw_dir=RAW,
        processed_dir=lambda w, input: os.path.dirname(input.tidy),
        figures_dir=lambda w, input: os.path.join(
            os.path.dirname(input.tidy), "figures"
        ),
    script:
        "../scripts/notebook.py"
