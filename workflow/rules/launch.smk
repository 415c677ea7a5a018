# Launch: run the config's tests on a Kubernetes cluster -> raw/<experiment>/ (library: podnet.launch).
# A checkpoint: the parse shards list raw files only after it ran. It re-runs when the launch
# settings change (params) or when raw/ lacks runs (common.smk then asks Snakemake to re-run it),
# and then launches only what is missing.


checkpoint launch:
    output:
        manifest=LAUNCH_MANIFEST,
    log:
        f"{OUT}/logs/launch.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        config=LAUNCH_CONFIG,
    script:
        "../scripts/launch.py"
