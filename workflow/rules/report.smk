# Report: figures, seed checks and notebooks of one experiment -> processed/<experiment>/
#   figures/plan.json                which figures have something to show (a checkpoint; podnet.report.figures.plan)
#   figures/<figure>.{png,svg,pdf}   one job per published figure (podnet.report.figures), in the Snakemake report
#   seed_discrepancies.csv           a seed report's claims vs its raw outputs (podnet.report.seed_reports)
#   vs_seed.csv, figures/vs_seed.*   a seed's published table beside ours (report.vs_seed; podnet.report.vs_seed)
#   vs_seed_orders.csv               each order the seed states, judged by ranking.csv's paired ratios
#   vs_seed_claims.csv               each claim of the seed (report.vs_seed.claims) and its verdict
#   figures/ranking.*                the variants' ranking per path and measure (podnet.report.ranking)
#   notebooks/<name>.ipynb + .html   papermill-executed notebooks, rendered to HTML beside them (one job)
#   published.json                   last: what is there, each file's size and sha256, and what is not and why


# Which figures have something to show and what each would draw, one digest file per figure (nothing
# is drawn here). A checkpoint: Snakemake re-evaluates the jobs after it, and a figure whose digest
# file came out byte-identical (Snakemake compares the checksums of inputs under 1 MB) is not drawn
# again; a figure with nothing to show is never asked for (figures/plan.json says why).
checkpoint figure_plan:
    input:
        **{k: TABLES[k] for k in FIGURE_TABLES},
    output:
        plan=FIGURE_PLAN,
        specs=[figure_spec(name) for name in FIGURES],
    log:
        f"{OUT}/logs/figure_plan.log",
    priority: PRIORITY["figure_plan"]  # the figures, then the report notebook wait for it
    conda:
        "../../envs/podnet.yaml"
    params:
        code=[figure_code_version(name) for name in FIGURES],
        tables=FIGURE_TABLES,
    script:
        "../scripts/figure_plan.py"


# one job per published figure: its digest file is the input that changes; the tables it draws from
# are read too (ancient: their time alone does not re-draw it, the digest covers what is drawn).
# A checkpoint: the notebooks that show figures are judged after it, so a figure whose files came
# out byte-identical (its module edited, the drawing not) re-runs no notebook
checkpoint figure:
    input:
        spec=figure_spec("{figure}"),
        tables=[ancient(TABLES[k]) for k in FIGURE_TABLES],
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
    priority: PRIORITY["figure"]  # the report notebook waits for every figure
    conda:
        "../../envs/podnet.yaml"
    params:
        # the figure's own code version: a change to its module re-draws it alone
        code=lambda w: figure_code_version(w.figure),
        tables=FIGURE_TABLES,
    script:
        "../scripts/figure.py"


# a checkpoint: the seed_discrepancies notebook is re-evaluated after it and does not re-run when the
# table came out byte-identical (new runs that change no check)
checkpoint seed_discrepancies:
    input:
        tidy=f"{OUT}/tidy.parquet",
        published=published_tables(),
        launch=shard_input,
    output:
        csv=f"{OUT}/seed_discrepancies.csv",
    log:
        f"{OUT}/logs/seed_discrepancies.log",
    priority: PRIORITY["seed_discrepancies"]
    conda:
        "../../envs/podnet.yaml"
    params:
        code=notebook_code_version(),
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
        variants=f"{OUT}/variants.csv",
        disturbed=f"{OUT}/disturbed_runs.csv",
        published=vs_seed_tables(),
    output:
        csv=f"{OUT}/vs_seed.csv",
        orders=f"{OUT}/vs_seed_orders.csv",
        claims=f"{OUT}/vs_seed_claims.csv",
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
# variant with its paired interval, the order as letters (podnet.report.ranking)
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
        # the executed notebook as one self-contained page, rendered in the same job: one job fewer
        # per notebook on the +1-run path, and no HTML job left behind a notebook that turned out
        # not to need a run once the figures' checkpoints were judged
        html=report(
            f"{OUT}/notebooks/{{name}}.html",
            caption="../report/notebook.rst",
            category="Notebooks",
            labels={"notebook": "{name}"},
        ),
    log:
        f"{OUT}/logs/notebook-{{name}}.log",
    priority: lambda w: PRIORITY["notebook_with_figures" if w.name in SHOWS_FIGURES else "notebook"]
    conda:
        "../../envs/podnet.yaml"
    params:
        # the report stage without the figures' own modules: a figure's code change re-draws that
        # figure, and reaches a notebook only through the figure's files
        code=notebook_code_version(),
        experiment=EXP,
        raw_dir=RAW,
        processed_dir=lambda w, output: os.path.dirname(
            os.path.dirname(output.notebook)
        ),
        extra=lambda w: {
            **NOTEBOOK_PARAMS.get(w.name, {}),
            **(
                {"tables": NOTEBOOK_TABLES[w.name]}
                if w.name in NOTEBOOK_TABLES
                else {}
            ),
        },
    script:
        "../scripts/run_notebook.py"


# The published list (podnet.report.published): every figure, notebook and table there at the end,
# each file with its size and sha256, and every planned one that is not, with its job's log. The
# last rule of `all`: it waits for everything, so it runs only when every job before it succeeded;
# after a failed run the onerror hook (common.smk, published.after_error) writes the same list from
# what is there then, "complete": false, dated 1970 and without Snakemake's record of it, so the next
# run writes it again whatever its inputs' times and checksums say.
PUBLISHED_FILES = published_files()  # here: it reads the rules above (common.smk)


rule published:
    input:
        files=list(PUBLISHED_FILES),
        plan=FIGURE_PLAN,
        figures=figure_files,
    output:
        published=PUBLISHED,
    log:
        f"{OUT}/logs/published.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        code=notebook_code_version(),
        experiment=EXP,
        files=PUBLISHED_FILES,
        # a function: the pattern's {figure} is the library's to fill, not a wildcard of this rule
        figure_log=lambda w: str(rules.figure.log[0]),
    script:
        "../scripts/published.py"
