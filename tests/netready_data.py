"""Per-pod tidy rows of time-to-network runs (tool netready) for the statistics and figure tests, as
the parse stage makes them: each run its own level (runs differ), its pods around it, one level per
variant; with ``steps`` each pod also has the steps before its network (scheduled, IP, container
start, the two first replies) as fractions of its time to network."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from podnet.parse.tidy import coerce

#: each step's share of a pod's time to network (``steps=True``); sandbox_s is left out, as on
#: clusters before Kubernetes 1.29
STEP_SHARES = {
    "scheduled_s": 0.01,
    "ip_s": 0.5,
    "started_s": 0.6,
    "first_reply_out_s": 0.7,
    "first_reply_in_s": 1.0,
}


def pod_row(
    variant: str,
    repeat: int,
    pod: object,
    metric: str,
    value: float,
    pods: int,
    scenario: str = "pod-pod-cross-node",
    test: str = "burst",
    **more: Any,
) -> dict[str, Any]:
    """One tidy row of a pod of a netready run (launch L1, round ``repeat - 1``); ``more`` replaces
    or adds columns."""
    return {
        "experiment": "ttn",
        "variant": variant,
        "scenario": scenario,
        "tool": "netready",
        "test": test,
        "protocol": "icmp",
        "direction": "roundtrip",
        "streams": pods,
        "repeat": repeat,
        "run_id": f"{variant}/{scenario}/netready-{test}/r{repeat:03d}",
        "metric": metric,
        "value": value,
        "unit": "s",
        "source": "measured",
        "raw_path": "",
        "launch_id": "L1",
        "round_seq": repeat - 1,
        "pod": str(pod),
    } | more


def pod_tidy(
    levels: dict[str, float],
    runs: int = 6,
    pods: int = 20,
    seed: int = 7,
    steps: bool = False,
    scenario: str = "pod-pod-cross-node",
    test: str = "burst",
) -> pd.DataFrame:
    """Per-pod rows of ``runs`` burst runs of ``pods`` pods per variant (name -> level in seconds):
    a run's level is the variant's times 1 + N(0, 0.1), a pod's time to network its run's level
    plus an exponential of mean 0.3 x the variant's level (one seeded stream, variants in order)."""
    rng = np.random.default_rng(seed)
    rows = []
    for variant, level0 in levels.items():
        for r in range(1, runs + 1):
            level = level0 * (1.0 + rng.normal(0.0, 0.1))
            for p in range(1, pods + 1):
                ready = level + rng.exponential(0.3 * level0)
                values = {"net_ready_s": ready}
                if steps:
                    values.update({m: share * ready for m, share in STEP_SHARES.items()})
                rows += [pod_row(variant, r, p, m, v, pods, scenario, test) for m, v in values.items()]
    return coerce(pd.DataFrame(rows))


def round_tidy(
    levels: dict[str, float],
    runs: int = 6,
    pods: int = 20,
    seed: int = 7,
    round_sd: float = 0.3,
    run_sd: float = 0.0,
    pod_sd: float = 0.02,
    metrics: tuple[str, ...] = ("net_ready_s",),
    launch: str = "L1",
) -> pd.DataFrame:
    """Per-pod rows of a side-by-side campaign: in round r (``round_seq`` r - 1 of ``launch``) every
    variant runs one burst; a pod's log time is log(level) + R_r + e + eps, R_r ~ N(0, round_sd)
    shared by the variants of the round, e ~ N(0, run_sd) the variant's run, eps ~ N(0, pod_sd) the
    pod; each metric in ``metrics`` gets the same times (one seeded stream)."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0.0, round_sd, runs)
    rows = []
    for variant, level in levels.items():
        for r in range(1, runs + 1):
            run = np.log(level) + shared[r - 1] + rng.normal(0.0, run_sd)
            times = np.exp(run + rng.normal(0.0, pod_sd, pods))
            for p, v in enumerate(times, start=1):
                rows += [pod_row(variant, r, p, m, float(v), pods, launch_id=launch) for m in metrics]
    return coerce(pd.DataFrame(rows))
