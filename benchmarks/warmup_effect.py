"""How far each uncounted warm-up run sat from its case's counted runs (evidence for ``launch.warmup_per``).

    .venv/bin/python benchmarks/warmup_effect.py EXPERIMENT [EXPERIMENT ...] [--min-n 6]

Reads ``raw/<exp>/_warmup/`` (parsed here with the tool adapters, the ``warmup`` flag set aside) and
``processed/<exp>/tidy.parquet``; for every case with at least ``--min-n`` counted runs and each
headline metric, prints the warm-up's deviation from the counted runs' log-mean in their log-sds
(``z_warm``), the first counted repeat's (``z_rep1``), and whether the warm-up was its tool's first
on that scenario in the launch (``first_of_tool``). A warm-up that matters shows as large |z_warm|
on first-of-tool rows; a warm-up that was not needed sits within the counted spread.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.parse import parse_file
from podnet.parse.decode import DecodeError
from podnet.parse.raw import SidecarError, read_sidecar
from podnet.tools import headline_metrics
from podnet.tools.base import ParseError

KEY = ["experiment", "scenario", "tool", "test", "metric"]


def warmups(exp: str, root: Path) -> pd.DataFrame:
    """Headline values of every warm-up run of ``exp`` with its start time."""
    rows = []
    for meta_path in sorted((root / "raw" / exp / "_warmup").rglob("*.meta.yaml")):
        raw = meta_path.with_name(meta_path.name[: -len(".meta.yaml")])
        meta = dict(read_sidecar(raw))
        meta.pop("warmup", None)
        try:
            tidy, _ = parse_file(raw, meta, experiment=exp, run="warmup")
        except (ParseError, SidecarError, DecodeError, OSError) as exc:  # a failed warm-up is no evidence
            print(f"skipped {raw}: {exc}")
            continue
        for r in tidy:
            if r["metric"] in headline_metrics(r["tool"]):
                rows.append({**{k: r[k] for k in KEY}, "warm": r["value"], "started": meta.get("started")})
    return pd.DataFrame(rows)


def effect(exp: str, root: Path, min_n: int) -> pd.DataFrame:
    """One row per (case, headline metric) with >= ``min_n`` counted runs."""
    w = warmups(exp, root)
    if w.empty:
        return w
    w["first_of_tool"] = w.groupby(["scenario", "tool"])["started"].rank(method="dense") == 1
    tidy = pd.read_parquet(root / "processed" / exp / "tidy.parquet")
    tidy = tidy[(tidy["source"] == "measured") & (tidy["value"] > 0)]
    counted = dict(tuple(tidy.groupby(KEY[1:])))  # each case-metric's counted runs, grouped once
    out = []
    for _, row in w.iterrows():
        sel = counted.get(tuple(row[KEY[1:]]))
        if sel is None or len(sel) < min_n or not row["warm"] > 0:
            continue
        lv = np.log(sel["value"].to_numpy(float))
        mu, sd = lv.mean(), lv.std(ddof=1)
        rep1 = sel.loc[sel["repeat"] == sel["repeat"].min(), "value"].iloc[0]
        out.append(
            {
                **{k: row[k] for k in KEY},
                "n": len(sel),
                "first_of_tool": bool(row["first_of_tool"]),
                "warm_vs_mean": float(np.exp(np.log(row["warm"]) - mu) - 1),
                "z_warm": float((np.log(row["warm"]) - mu) / sd) if sd > 0 else np.nan,
                "z_rep1": float((np.log(rep1) - mu) / sd) if sd > 0 else np.nan,
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("experiments", nargs="+")
    p.add_argument("--min-n", type=int, default=6)
    p.add_argument("--root", type=Path, default=Path("."))
    a = p.parse_args(argv)
    tables = [effect(e, a.root, a.min_n) for e in a.experiments]
    tables = [t for t in tables if not t.empty]
    if not tables:
        print("no warm-ups with enough counted runs")
        return 1
    t = pd.concat(tables, ignore_index=True)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(t.round(3).to_string(index=False))
        t["outlier"] = t["z_warm"].abs() > 3
        print("\n|z_warm| > 3 (share) and median |z| by first_of_tool:")
        print(
            t.groupby("first_of_tool").agg(
                cases=("z_warm", "size"),
                outliers=("outlier", "mean"),
                median_abs_z_warm=("z_warm", lambda z: float(np.nanmedian(np.abs(z)))),
                median_abs_z_rep1=("z_rep1", lambda z: float(np.nanmedian(np.abs(z)))),
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
