"""Every seed campaign's verdicts in one table (``make seeds``; issue 46, "one command, one report").

After the five seed campaigns (``config/campaigns/seed-00*.yaml``) published
``processed/seed-00N/``, :func:`publish` writes ``processed/seeds/``:

- ``claims.csv``: every campaign's ``vs_seed_claims.csv`` (:mod:`.claims`) and its ``vs_seed.csv``
  (seed 003's CNI ranking, :mod:`.table`) as rows of the same columns (:data:`SEEDS_COLUMNS`: a
  leading ``campaign``, :data:`.claims.CLAIM_COLUMNS` and ``source``, which table the row is from).
  A ``vs_seed.csv`` row is one seed CNI on one path and measure (:func:`ranking_as_claims`): the
  seed's value over its baseline path beside our ratio over ours, its verdict the ranking verdict of
  its path and measure (:data:`.table.VERDICTS`) where both have it, else its status
  (:data:`.table.STATUSES`, e.g. ``not run here``);
- ``verdicts.csv``: the count of each verdict per campaign (:func:`verdict_table`); a campaign with
  neither table (not published yet, or no ``report.vs_seed``: seed 000) has one row, verdict
  ``no table``, n 0.

Nothing is judged again here: rows are only read, mapped and counted.

``python -m podnet.report.vs_seed.seeds --out processed/seeds processed/seed-000 ...``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.stats import write_csv

from .claims import CLAIM_COLUMNS
from .verdicts import as_text, read_claims, verdict_counts

#: the columns of ``processed/seeds/claims.csv``
SEEDS_COLUMNS = ["campaign", *CLAIM_COLUMNS, "source"]
#: the columns of ``processed/seeds/verdicts.csv``
VERDICT_COLUMNS = ["campaign", "seed", "verdict", "n"]
#: a campaign with neither table
NO_TABLE = "no table"


def ranking_as_claims(vs: pd.DataFrame, baseline: str = "") -> pd.DataFrame:
    """``vs_seed.csv`` rows (:data:`.table.COLUMNS`) as claim rows (:data:`.claims.CLAIM_COLUMNS`):
    claim ``<path> <seed CNI> <tool:test:metric>``, our ratio and its interval from ``ratio`` and
    ``ratio_ci_low``/``ratio_ci_high``, the verdict the group's ``ranking`` where ``status`` is
    ``both``, else the status; ``baseline``: our baseline scenario (the config's
    ``report.vs_seed.baseline.ours``), when known."""
    if vs.empty:
        return pd.DataFrame(columns=CLAIM_COLUMNS)

    def text(c: str) -> pd.Series:
        return as_text(vs[c]) if c in vs.columns else pd.Series("", index=vs.index)

    def num(c: str) -> pd.Series:
        return pd.to_numeric(vs[c], errors="coerce") if c in vs.columns else pd.Series(np.nan, index=vs.index)

    seed_cni = text("seed_cni").where(text("seed_cni") != "", text("variant"))
    measure = text("tool") + ":" + text("test") + ":" + text("metric")
    seed_measure = text("seed_tool") + ":" + text("seed_test") + ":" + text("seed_metric")
    status, ranking = text("status"), text("ranking")
    lo, hi, seed_ratio = num("ratio_ci_low"), num("ratio_ci_high"), num("seed_ratio")
    known = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(seed_ratio)
    out = pd.DataFrame(
        {
            "seed": text("seed"),
            "claim": text("path") + " " + seed_cni + " " + measure,
            "covers": text("path"),
            "says": "rank " + text("rank_seed").str.replace(r"\.0$", "", regex=True) + " in the seed",
            "seed_measure": seed_measure.where(seed_measure != "::", ""),
            "seed_value": num("seed_value"),
            "seed_baseline": num("seed_baseline"),
            "seed_ratio": seed_ratio,
            "by": "scenario",
            "variant": text("variant"),
            "scenario": text("scenario"),
            "treatment": text("scenario"),
            "baseline": baseline,
            "measure": measure,
            "ratio": num("ratio"),
            "ci_low": lo,
            "ci_high": hi,
            "interval": text("interval"),
            "n": num("n"),
            "seed_in_ci": ((lo <= seed_ratio) & (seed_ratio <= hi)).where(known),
            "verdict": ranking.where((status == "both") & (ranking != ""), status),
            "reason": text("note"),
        }
    )
    out.loc[text("rank_seed") == "", "says"] = ""
    return out.reindex(columns=CLAIM_COLUMNS)


def collect(
    claims: Mapping[str, pd.DataFrame],
    rankings: Mapping[str, pd.DataFrame] | None = None,
    baselines: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One table of every campaign's claims (:data:`SEEDS_COLUMNS`), campaigns in the order given:
    ``claims`` maps a campaign to its ``vs_seed_claims.csv``, ``rankings`` to its ``vs_seed.csv``
    (mapped by :func:`ranking_as_claims` with the campaign's entry of ``baselines``). An empty
    ``seed`` cell takes the campaign's name."""
    rankings, baselines = rankings or {}, baselines or {}
    parts = []
    for camp in dict.fromkeys([*claims, *rankings]):
        for source, df in (
            ("claims", claims.get(camp)),
            (
                "ranking",
                ranking_as_claims(rankings[camp], baselines.get(camp, "")) if camp in rankings else None,
            ),
        ):
            if df is None or df.empty:
                continue
            d = df.reindex(columns=CLAIM_COLUMNS).copy()
            d["seed"] = as_text(d["seed"]).replace("", camp)
            d.insert(0, "campaign", camp)
            d["source"] = source
            parts.append(d)
    if not parts:
        return pd.DataFrame(columns=SEEDS_COLUMNS)
    return pd.concat(parts, ignore_index=True).reindex(columns=SEEDS_COLUMNS)


def verdict_table(table: pd.DataFrame, campaigns: Sequence[str] = ()) -> pd.DataFrame:
    """The count of each verdict per campaign of :func:`collect`'s ``table`` (:data:`VERDICT_COLUMNS`;
    verdicts in :func:`.verdicts.verdict_counts`' order); each of ``campaigns`` without a row gets
    one, verdict :data:`NO_TABLE`, n 0."""
    rows = []
    for camp in dict.fromkeys([*campaigns, *table["campaign"].astype(str)]):
        t = table[table["campaign"].astype(str) == camp]
        if t.empty:
            rows.append({"campaign": camp, "seed": camp, "verdict": NO_TABLE, "n": 0})
            continue
        seed = str(t["seed"].iloc[0])
        rows += [
            {"campaign": camp, "seed": seed, "verdict": v, "n": int(n)} for v, n in verdict_counts(t).items()
        ]
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def _ranking(path: Path) -> pd.DataFrame | None:
    if not path.exists() or not path.stat().st_size:
        return None
    return pd.read_csv(path)


def read_campaigns(
    processed_dirs: Sequence[str | Path],
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Each folder's ``vs_seed_claims.csv`` and ``vs_seed.csv`` (where present), keyed by the
    folder's name (the campaign's)."""
    claims: dict[str, pd.DataFrame] = {}
    rankings: dict[str, pd.DataFrame] = {}
    for d in map(Path, processed_dirs):
        claims[d.name] = read_claims(d / "vs_seed_claims.csv")
        r = _ranking(d / "vs_seed.csv")
        if r is not None:
            rankings[d.name] = r
    return claims, rankings


def publish(
    processed_dirs: Sequence[str | Path], out: str | Path, baselines: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write ``out/claims.csv`` (:func:`collect`) and ``out/verdicts.csv`` (:func:`verdict_table`)
    from the campaigns' processed folders; returns both tables."""
    claims, rankings = read_campaigns(processed_dirs)
    table = collect(claims, rankings, baselines)
    counts = verdict_table(table, [Path(d).name for d in processed_dirs])
    o = Path(out)
    o.mkdir(parents=True, exist_ok=True)
    write_csv(table, o / "claims.csv")
    write_csv(counts, o / "verdicts.csv")
    return table, counts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m podnet.report.vs_seed.seeds", description=__doc__.split("\n")[0]
    )
    ap.add_argument("processed", nargs="+", help="the seed campaigns' processed folders (processed/seed-00N)")
    ap.add_argument("--out", default="processed/seeds", help="where claims.csv and verdicts.csv go")
    ap.add_argument(
        "--baseline",
        default="host-host",
        help="our baseline scenario of the vs_seed.csv ratios (claims.csv's baseline)",
    )
    args = ap.parse_args(argv)
    dirs = [Path(d) for d in args.processed]
    table, counts = publish(dirs, args.out, {d.name: args.baseline for d in dirs})
    for camp, t in counts.groupby("campaign", sort=False):
        print(f"{camp}: " + ", ".join(f"{n} {v}" for v, n in zip(t["verdict"], t["n"])))
    print(
        f"{len(table)} rows in {Path(args.out) / 'claims.csv'}; counts in {Path(args.out) / 'verdicts.csv'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
