# Launch: run the config's tests on a Kubernetes cluster -> raw/<experiment>/ (library: podnet.launch).
# A checkpoint: the parse shards list raw files only after it ran. It re-runs when the launch
# settings change or when raw/ lacks runs (`todo`, computed from raw/ alone), and then launches
# only what is missing; with nothing missing it starts no pod.


checkpoint launch:
    output:
        manifest=f"{OUT}/launch/manifest.json",
    log:
        f"{OUT}/logs/launch.log",
    conda:
        "../../envs/podnet.yaml"
    params:
        config=LAUNCH_CONFIG,
        todo=lambda wildcards: launch_todo(),
    script:
        "../scripts/launch.py"
