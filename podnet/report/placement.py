"""The report's sentence on where the runs' processes ran (tidy ``placement``, summary ``placements``
and ``placement_split``; podnet/stats/METHODS.md, "Placement")."""

from __future__ import annotations

import pandas as pd


def placement_sentence(tidy: pd.DataFrame, summary: pd.DataFrame, limit: int = 6) -> str:
    """Where the launched runs ran (``c0/s0``: client on CPU 0, server on CPU 0), and the groups whose
    runs ran in more than one placement (a mixture of speeds, not one path's spread); "" when no run
    recorded a placement (imported outputs, or a launch before placements were recorded)."""
    if not len(tidy) or "placement" not in tidy.columns:
        return ""
    runs = tidy[["run_id", "placement"]].drop_duplicates("run_id")
    runs = runs[runs["placement"].fillna("").astype(str) != ""]
    if runs.empty:
        return ""
    counts = runs["placement"].astype(str).value_counts()
    seen = ", ".join(f"{p} in {n}" for p, n in counts.items())
    text = (
        f"Where the runs ran (client CPU / server CPU, read from their cgroups' per-CPU time; `?`: "
        f"moved between CPUs or too little CPU time to tell): {seen} of {len(runs)} runs."
    )
    split = pd.DataFrame()
    if len(summary) and "placement_split" in summary.columns:
        split = summary[summary["placement_split"].fillna(False).astype(bool)]
        if "source" in split.columns:
            split = split[split["source"].astype(str) == "measured"]
    if split.empty:
        return text + " No group's runs ran in more than one placement."
    names = split.drop_duplicates(["variant", "scenario", "tool", "test"])
    shown = [
        f"{r.scenario} {r.tool} {r.test} ({r.placements})" for r in names.head(limit).itertuples(index=False)
    ]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (
        text
        + f" **{len(names)} groups ran in more than one placement** (summary.csv `placement_split`): "
        + "; ".join(shown)
        + more
        + ". Their spread mixes placements; their paired ratios use only "
        "pairs whose two runs ran in one placement."
    )
