"""The findings' sentence on disturbed runs (disturbed_runs.csv, :mod:`podnet.parse.disturbed`)."""

from __future__ import annotations

import pandas as pd


def disturbed_sentence(disturbed: pd.DataFrame, tidy: pd.DataFrame) -> str:
    """How many runs the launcher judged disturbed and what it did with them; "" when no run of
    ``tidy`` was launched with a round ordinal (imported outputs: nothing was judged)."""
    launched = (
        int(tidy.loc[tidy["round_seq"].notna(), "run_id"].nunique())
        if len(tidy) and "round_seq" in tidy.columns
        else 0
    )
    if not len(disturbed) and not launched:
        return ""
    if not len(disturbed):
        return f"No run was judged disturbed (of {launched} runs with a launch round)."
    action = disturbed["action"].astype(str)
    rerun, kept = int((action == "re-run").sum()), int((action == "kept").sum())
    thr = pd.to_numeric(disturbed["threshold"], errors="coerce").dropna().unique()
    what = (
        f"the machine busy with other work above {100 * float(thr[0]):.0f} % of its CPU time"
        if len(thr) == 1
        else "the machine busy with other work above the threshold"
    )
    return (
        f"{rerun + kept} runs were disturbed ({what}): {rerun} re-run in their round (the disturbed "
        f"attempt is not a value), {kept} kept on record as `disturbed` and left out of every statistic "
        f"(no re-run left in the round); "
        f"{launched} runs with a launch round in the tables (disturbed_runs.csv)."
    )
