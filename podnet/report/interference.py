"""Slow runs beside what competed with them: each run's distance from its group's median and its
sidecar's ``interference`` record (podnet.launch.noise.interference), their rank correlation, and
the explore notebook's section of both, in display units or in words when nothing was recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podnet.report import tables
from podnet.report.explore import in_display_units, rows_where, sidecar_cache, sidecars, significant
from podnet.report.figures import data
from podnet.tools import metric_info

#: what competed with a run (its sidecar's ``interference``, podnet.launch.noise.interference), as shares of
#: the time the client ran: CPU busy / stolen on its machines (busiest machine), one CPU's share used
#: by the launcher, by all the embedded cluster's daemons, by its control plane
INTERFERENCE = ["cpu_busy", "cpu_steal", "launcher_cpu", "daemons_cpu", "control_plane_cpu"]


def interference(t: data.Tables, raw_dir: str | Path | None = None, **where: Any) -> pd.DataFrame:
    """Each run's first headline metric beside what competed with it (:data:`INTERFERENCE`).

    ``worse_by`` is the run's shortfall against its group's median run, in the metric's own
    direction: 0.1 = 10 % slower (less throughput, more latency) than the median, negative = better.
    Runs without an ``interference`` record (imported outputs) have empty columns. Sorted worst first.
    """
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    base = ["variant", "scenario", "tool", "test", "direction", "streams", "metric", "repeat", "run_id"]
    if tidy.empty:
        return pd.DataFrame(columns=[*base, "value", "unit", "worse_by", *INTERFERENCE])
    head = data.headline_rows(tidy.rename(columns={"value": "mean"}), None, t.settings)
    head = head.rename(columns={"mean": "value"})
    group = ("variant", "scenario", "tool", "test", "protocol", "direction", "streams", "metric")
    keys = [c for c in group if c in head.columns]
    med = head.groupby(keys, dropna=False)["value"].transform("median")
    better = [metric_info(str(m), str(tl)).better for m, tl in zip(head["metric"], head["tool"], strict=True)]
    rel = (head["value"] / med - 1).to_numpy(dtype=float)
    sign = np.array([-1.0 if b == "higher" else 1.0 if b == "lower" else np.nan for b in better])
    head = head.assign(worse_by=rel * sign + 0.0)  # + 0.0: no "-0" for a run at the median
    side = sidecars(head["raw_path"].astype(str).unique(), raw_dir, sidecar_cache(t))

    def col(name: str) -> pd.Series:
        return (
            pd.to_numeric(side[name], errors="coerce")
            if name in side.columns
            else pd.Series(np.nan, side.index)
        )

    wall = col("interference.exec_wall_s").where(lambda w: w > 0)
    measures = pd.DataFrame(
        {
            "raw_path": side["raw_path"],
            "cpu_busy": col("interference.busy"),
            "cpu_steal": col("interference.steal"),
            "launcher_cpu": col("interference.launcher_cpu_s") / wall,
            "daemons_cpu": col("interference.daemons.cpu_s") / wall,
            "control_plane_cpu": col("interference.daemons.control_plane_cpu_s") / wall,
        }
    )
    cols = [c for c in base if c in head.columns] + ["value", "unit", "worse_by", "raw_path"]
    out = head[cols].merge(measures, on="raw_path", how="left")
    return out.sort_values("worse_by", ascending=False, na_position="last").reset_index(drop=True)


def interference_correlation(runs: pd.DataFrame) -> pd.DataFrame:
    """Whether worse runs coincide with interference: Spearman's rank correlation between ``worse_by``
    and each :data:`INTERFERENCE` measure of :func:`interference`'s rows (rho > 0: the more of it, the
    worse the run), with the runs used and the p value; empty (NaN) with fewer than 5 runs or no spread."""
    from scipy import stats

    rows = []
    for m in INTERFERENCE:
        d = runs[["worse_by", m]].dropna() if m in runs.columns else pd.DataFrame(columns=["worse_by", m])
        rho = p = np.nan
        if len(d) >= 5 and d[m].nunique() > 1 and d["worse_by"].nunique() > 1:
            res = stats.spearmanr(d["worse_by"], d[m])
            rho, p = float(res.statistic), float(res.pvalue)
        rows.append({"measure": m, "runs": len(d), "spearman_rho": rho, "p": p})
    return pd.DataFrame(rows)


def _narrow(df: pd.DataFrame, keep: list[str]) -> tuple[pd.DataFrame, str]:
    """The worst runs' table for a 1280-px page: tool and test in one column, ``run_id`` left out
    when the other keys tell the rows apart, the columns every row shares said once
    (:func:`podnet.report.tables.said_once`), the value as text with its unit (never e-notation),
    the shares' headers with spaces."""
    out = df.assign(test=df["tool"].astype(str) + " " + df["test"].astype(str)).drop(columns=["tool"])
    if "run_id" in out and not out.duplicated(subset=[c for c in out if c not in ("run_id", *keep)]).any():
        out = out.drop(columns=["run_id"])
    # the value with its unit in one cell: the rows are different measures, each in its display unit
    value = [f"{tables.text(v)} {u}".strip() for v, u in zip(out["value"], out["unit"], strict=True)]
    out = out.assign(value=value).drop(columns=["unit"])
    keys = [c for c in out.columns if c not in keep]
    out, said = tables.said_once(tables.keys_as_text(out, keys), keep=keep)
    # headers that can wrap ("control plane cpu"): the shares' columns are narrow numbers
    return out.rename(columns={c: c.replace("_", " ") for c in INTERFERENCE}), said


#: how many of the worst runs the explore notebook lists
SHOWN = 15


def view(t: data.Tables, raw_dir: str | Path | None, **where: Any) -> list[str | pd.DataFrame]:
    """The explore notebook's section: the worst runs (value in display units, ``worse_by`` and the
    shares rounded) and the correlation of ``worse_by`` with each measure; in words instead when the
    raw files are not here, or when no run of the slice records interference (never a table of NaN)."""
    if raw_dir is None:
        return [
            "The raw files are not here (a copied processed folder): their sidecars' interference is not shown."
        ]
    runs = interference(t, raw_dir, **where)
    recorded = runs[runs[INTERFERENCE].notna().any(axis=1)] if len(runs) else runs
    if recorded.empty:
        n = runs["run_id"].nunique() if len(runs) else 0
        return [
            f"No run of the {n} in the slice records interference (imported outputs, or launched "
            "before podnet recorded it): nothing to set beside the slow runs."
        ]
    shown = in_display_units(recorded.head(SHOWN))
    shares = ["worse_by", *INTERFERENCE]
    shown[shares] = shown[shares].astype(float).apply(lambda c: c.map(lambda x: significant(x, 3)))
    shown = _narrow(shown.drop(columns=["raw_path"]), keep=["value", "unit", *shares])
    corr = interference_correlation(recorded)
    n = recorded["run_id"].nunique()
    text = f"The worst {min(SHOWN, len(recorded))} rows of the {n} run{'s' if n > 1 else ''} that record interference"
    bare = runs.loc[~runs.index.isin(recorded.index), "run_id"].nunique()
    if bare:
        text += f" (left out: {bare} run{'s' if bare > 1 else ''} without a record)"
    shown, said = shown
    out: list[str | pd.DataFrame] = [f"{text}: {said}".strip(), shown]
    tested = corr[corr["spearman_rho"].notna()]
    if tested.empty:
        out.append(
            "No rank correlation: it needs at least 5 runs with a spread in both `worse_by` and the measure."
        )
        return out
    tested = tested.assign(
        spearman_rho=tested["spearman_rho"].round(2),
        p=tested["p"].map(lambda x: "< 0.001" if x < 0.001 else tables.text(x, 2)),  # never 2.4e-14
    )
    untested = [m for m in corr["measure"] if m not in set(tested["measure"])]
    head = "Spearman's rank correlation of `worse_by` with each measure (rho > 0: the more of it, the worse)"
    if untested:
        head += f"; not computable for {', '.join(untested)} (too few runs or no spread)"
    out.append(head + ":")
    out.append(tested.reset_index(drop=True))
    return out
