# Report: figures, seed checks and notebooks of one experiment -> processed/<experiment>/
#   figures/<figure>.{png,svg,pdf}   one job per figure (podnet.report.figures), in the Snakemake report
#   seed_discrepancies.csv           a seed report's claims vs its raw outputs (podnet.report.seed_reports)
#   vs_seed.csv, figures/vs_seed.*   a seed's published table beside ours (report.vs_seed; podnet.report.vs_seed)
#   vs_seed_orders.csv               each order the seed states, judged by ranking.csv's paired ratios
#   figures/ranking.*                the variants' ranking per path and measure (podnet.report.ranking)
#   notebooks/<name>.ipynb + .html   papermill-executed notebooks, rendered to HTML beside them


rule figure:
    input:
        tidy=f"{OUT}/tidy.parquet",
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
        sweeps=f"{OUT}/sweeps.csv",
        load_curves=f"{OUT}/load_curves.csv",
        settings=f"{OUT}/stats_settings.json",
    output:
        png=report(
            f"{OUT}/figures/{{figure}}.png",
            caption="../report/figure.rst",
            category="Figures",
            labels={"figure": "{figure}"},
        ),
        svg=f"{OUT}/figures/{{figure}}.svg",
        pdf=f"{OUT}/figures/{{figure}}.pdf",
    log:
        f"{OUT}/logs/figure-{{figure}}.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report"),
    script:
        "../scripts/figure.py"


rule seed_discrepancies:
    input:
        tidy=f"{OUT}/tidy.parquet",
        published=published_tables(),
        launch=shard_input,
    output:
        csv=f"{OUT}/seed_discrepancies.csv",
    log:
        f"{OUT}/logs/seed_discrepancies.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report"),
        raw_dir=lambda w: RAW,
        raw=raw_state,
    script:
        "../scripts/seed_discrepancies.py"


# a seed report's published table beside this experiment (config report.vs_seed; podnet.report.vs_seed)
rule vs_seed:
    input:
        tidy=f"{OUT}/tidy.parquet",
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
        ranking=f"{OUT}/ranking.csv",
        published=vs_seed_tables(),
    output:
        csv=f"{OUT}/vs_seed.csv",
        orders=f"{OUT}/vs_seed_orders.csv",
        png=report(
            f"{OUT}/figures/vs_seed.png",
            caption="../report/vs_seed.rst",
            category="Figures",
            labels={"figure": "vs_seed"},
        ),
        svg=f"{OUT}/figures/vs_seed.svg",
        pdf=f"{OUT}/figures/vs_seed.pdf",
    log:
        f"{OUT}/logs/vs_seed.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report"),
        vs_seed=VS_SEED or {},
    script:
        "../scripts/vs_seed.py"


# the ranking.csv figure: per measure a panel, per path each variant's ratio to the reference
# variant with its paired interval, the resolved order marked (podnet.report.ranking)
rule ranking_figure:
    input:
        ranking=f"{OUT}/ranking.csv",
        tidy=f"{OUT}/tidy.parquet",
        summary=f"{OUT}/summary.csv",
        ratios=f"{OUT}/ratios.csv",
    output:
        png=report(
            f"{OUT}/figures/ranking.png",
            caption="../report/ranking.rst",
            category="Figures",
            labels={"figure": "ranking"},
        ),
        svg=f"{OUT}/figures/ranking.svg",
        pdf=f"{OUT}/figures/ranking.pdf",
    log:
        f"{OUT}/logs/ranking_figure.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report"),
    script:
        "../scripts/ranking_figure.py"


rule notebook:
    input:
        unpack(notebook_inputs),
    output:
        notebook=f"{OUT}/notebooks/{{name}}.ipynb",
    log:
        f"{OUT}/logs/notebook-{{name}}.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=code_version("report"),
        experiment=EXP,
        raw_dir=RAW,
        processed_dir=lambda w, input: os.path.dirname(input.tidy),
        extra=lambda w: NOTEBOOK_PARAMS.get(w.name, {}),
    script:
        "../scripts/run_notebook.py"


rule notebook_html:
    input:
        notebook=f"{OUT}/notebooks/{{name}}.ipynb",
    output:
        html=report(
            f"{OUT}/notebooks/{{name}}.html",
            caption="../report/notebook.rst",
            category="Notebooks",
            labels={"notebook": "{name}"},
        ),
    log:
        f"{OUT}/logs/notebook-{{name}}-html.log",
    conda:
        "../../envs/podnet.yaml"
    script:
        "../scripts/notebook_html.py"
