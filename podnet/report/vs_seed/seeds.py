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
  neither table nor claims has one row, verdict ``no table``, n 0;
- ``figures/<campaign>.{png,svg,pdf}``: each published campaign's own ``vs_seed`` figure (its
  ``figures/vs_seed.*``: the seed's values beside podnet's intervals, drawn by :mod:`.figure` or
  :mod:`.claims_figure`), copied as it was drawn (:func:`copy_figures`); a campaign not published
  yet has none;
- ``seeds.ipynb`` and ``seeds.html``: the ``seeds`` notebook (``notebooks/seeds.ipynb``) executed
  there, led by each seed's count of verdicts, then each seed's figure under its count
  (:func:`figure_parts`), then every claim (:func:`run_notebook`).

A campaign that has not published yet (no ``processed/<campaign>/vs_seed_claims.csv``) is not an
error: with ``--campaigns`` (the folder of the campaign files, ``make seeds-publish`` passes
``config/campaigns``) its claims are listed from its file's ``report.vs_seed`` (:func:`pending_claims`),
each one that would be judged with the verdict ``not run yet`` (:data:`NOT_RUN_YET`), those not run
or not comparable here with theirs. Nothing is judged again here: rows are only read, mapped and
counted.

``python -m podnet.report.vs_seed.seeds --out processed/seeds --campaigns config/campaigns
processed/seed-000 ...``
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from podnet.report import md
from podnet.stats import write_csv

from .claims import CLAIM_COLUMNS, NOT_RUN_YET, claims_table, seed_values
from .mapping import SeedMapping
from .verdicts import as_text, claims_shown, count_sentence, read_claims, verdict_counts

#: the columns of ``processed/seeds/claims.csv``
SEEDS_COLUMNS = ["campaign", *CLAIM_COLUMNS, "source"]
#: the columns of ``processed/seeds/verdicts.csv``
VERDICT_COLUMNS = ["campaign", "seed", "verdict", "n"]
#: a campaign with neither table
NO_TABLE = "no table"
#: the figure each campaign publishes (``processed/<campaign>/figures/vs_seed.*``) and its formats
#: (:data:`podnet.report.figures.style.FORMATS`; not imported: it loads matplotlib)
FIGURE, FIGURE_FORMATS = "vs_seed", ("png", "svg", "pdf")


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


def _merge(base: Any, over: Any) -> Any:
    """``over`` deep-merged over ``base``, as a campaign file's ``base:`` is
    (:func:`podnet.launch.campaign.model.merge`; the report stage does not import the launch's)."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        return {**base, **{k: _merge(base[k], v) if k in base else v for k, v in over.items()}}
    return over


def campaign_vs_seed(path: str | Path) -> dict[str, Any]:
    """The ``report.vs_seed`` section of a campaign file, merged over its ``base`` (recursively;
    paths relative to the working directory, the repository's root, as the campaign loader reads them)."""
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    if doc.get("base"):
        doc = _merge({"report": {"vs_seed": campaign_vs_seed(doc["base"])}}, doc)
    return dict((doc.get("report") or {}).get("vs_seed") or {})


def pending_claims(vs: Mapping[str, Any], campaign: str) -> pd.DataFrame:
    """The claims of a campaign that has not published (:data:`.claims.CLAIM_COLUMNS`): each as the
    seed states it (its ratio from the seed's files, where they can be read) with the verdict
    :data:`NOT_RUN_YET`; a claim not run or not comparable here keeps that verdict and its reason."""
    claims = list(vs.get("claims") or [])
    if not claims:
        return pd.DataFrame(columns=CLAIM_COLUMNS)
    tie = SeedMapping.tie_margin_of_config(dict(vs))
    seed, empty = str(vs.get("seed", campaign)), pd.DataFrame()
    try:
        t = claims_table(claims, seed_values(vs.get("seed_sources") or []), empty, empty, tie, seed)
    except (OSError, ValueError, KeyError):  # the seed's files not here: the claims without its figures
        bare = [{k: v for k, v in c.items() if k != "seed" or (v or {}).get("relation")} for c in claims]
        t = claims_table(bare, pd.DataFrame(), empty, empty, tie, seed)
    pending = ~t["verdict"].isin(["not run here", "not comparable here"])
    t.loc[pending, "verdict"] = NOT_RUN_YET
    t.loc[pending, "reason"] = (
        f"no processed/{campaign}/vs_seed_claims.csv: the campaign has not run or not published yet "
        f"(make compare CAMPAIGN=config/campaigns/{campaign}.yaml, or make seeds)"
    )
    return t


def _ranking(path: Path) -> pd.DataFrame | None:
    if not path.exists() or not path.stat().st_size:
        return None
    return pd.read_csv(path)


def read_campaigns(
    processed_dirs: Sequence[str | Path], campaigns: str | Path | None = None
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Each folder's ``vs_seed_claims.csv`` and ``vs_seed.csv`` (where present), keyed by the
    folder's name (the campaign's); with ``campaigns`` (the folder of the campaign files), a campaign
    without a claims file has its claims from ``<campaigns>/<name>.yaml`` (:func:`pending_claims`)."""
    claims: dict[str, pd.DataFrame] = {}
    rankings: dict[str, pd.DataFrame] = {}
    for d in map(Path, processed_dirs):
        f = d / "vs_seed_claims.csv"
        claims[d.name] = read_claims(f)
        source = Path(campaigns) / f"{d.name}.yaml" if campaigns is not None else None
        if not (f.exists() and f.stat().st_size) and source is not None and source.exists():
            claims[d.name] = pending_claims(campaign_vs_seed(source), d.name)
        r = _ranking(d / "vs_seed.csv")
        if r is not None:
            rankings[d.name] = r
    return claims, rankings


def has_published(processed_dir: str | Path) -> bool:
    """Whether a campaign has published its verdicts: a ``vs_seed_claims.csv`` or ``vs_seed.csv``
    that is not empty (:func:`read_campaigns` lists a campaign without either as not run yet)."""
    d = Path(processed_dir)
    return any(f.exists() and f.stat().st_size > 0 for f in (d / "vs_seed_claims.csv", d / "vs_seed.csv"))


def copy_figures(processed_dirs: Sequence[str | Path], out: str | Path) -> dict[str, list[Path]]:
    """Each published campaign's (:func:`has_published`) ``figures/vs_seed.<ext>`` copied to
    ``out/figures/<campaign>.<ext>``, each format it has (:data:`FIGURE_FORMATS`), as it was drawn:
    the campaign's own figure, never drawn again here. A campaign not published, or a format it
    lacks, has no file there (one from an earlier publish is removed). Returns the files written
    per campaign."""
    figs = Path(out) / "figures"
    copied: dict[str, list[Path]] = {}
    for d in map(Path, processed_dirs):
        published = has_published(d)
        for ext in FIGURE_FORMATS:
            src, dest = d / "figures" / f"{FIGURE}.{ext}", figs / f"{d.name}.{ext}"
            if published and src.exists() and src.stat().st_size > 0:
                figs.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
                copied.setdefault(d.name, []).append(dest)
            else:
                dest.unlink(missing_ok=True)
    return copied


def publish(
    processed_dirs: Sequence[str | Path],
    out: str | Path,
    baselines: Mapping[str, str] | None = None,
    campaigns: str | Path | None = None,
    notebook: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write ``out/claims.csv`` (:func:`collect`), ``out/verdicts.csv`` (:func:`verdict_table`) and
    ``out/figures/`` (:func:`copy_figures`) from the campaigns' processed folders (``campaigns``:
    :func:`read_campaigns`), and with ``notebook`` the executed ``seeds`` notebook
    (:func:`run_notebook`); returns both tables."""
    claims, rankings = read_campaigns(processed_dirs, campaigns)
    table = collect(claims, rankings, baselines)
    counts = verdict_table(table, [Path(d).name for d in processed_dirs])
    o = Path(out)
    o.mkdir(parents=True, exist_ok=True)
    write_csv(table, o / "claims.csv")
    write_csv(counts, o / "verdicts.csv")
    copy_figures(processed_dirs, o)
    if notebook:
        run_notebook(o)
    return table, counts


# ---- the seeds notebook (notebooks/seeds.ipynb): its helpers and its run ---------------------------


def count_line(camp: str, t: pd.DataFrame) -> str:
    """One campaign's count of verdicts (its ``verdicts.csv`` rows ``t``) in one line (Markdown;
    names and verdicts as :func:`podnet.report.md.text`)."""
    name, seed = md.text(camp), md.text(t["seed"].iloc[0])
    if (t["verdict"] == NO_TABLE).all():
        return f"**{name}**: no claims and no table ({seed} names none)."
    parts = ", ".join(f"{int(n)} {md.text(v)}" for v, n in zip(t["verdict"], t["n"]))
    total = int(t["n"].sum())
    return f"**{name}** ({seed}): {total} claim{'s' if total != 1 else ''}: {parts}."


def headline(counts: pd.DataFrame) -> str:
    """The notebook's lead: per campaign its count of verdicts (:func:`count_line`), one line each."""
    if counts.empty:
        return "No seed campaign is listed."
    return "\n".join(f"- {count_line(str(c), t)}" for c, t in counts.groupby("campaign", sort=False))


def figure_parts(counts: pd.DataFrame, seeds_dir: str | Path = ".") -> list[Any]:
    """Each campaign's figure under its count of verdicts, for :func:`podnet.report.explore.show`:
    per campaign of ``verdicts.csv`` (``counts``) a heading, its :func:`count_line` and its figure
    (``seeds_dir/figures/<campaign>.png``, :func:`copy_figures`, embedded in the notebook and its
    page) or, without one, why: not run yet, or published without its figure."""
    from IPython.display import Image

    parts: list[Any] = []
    for camp, t in counts.groupby("campaign", sort=False):
        camp = str(camp)
        png = Path(seeds_dir) / "figures" / f"{camp}.png"
        parts += [f"### {md.text(camp)}", count_line(camp, t)]
        if png.exists():
            parts.append(Image(filename=str(png), width=700))
        elif t["verdict"].isin([NOT_RUN_YET, NO_TABLE]).any():
            parts.append(
                f"No figure: {md.text(camp)} has not run yet (no `processed/{camp}/vs_seed_claims.csv`; "
                f"`make seeds` runs it)."
            )
        else:
            parts.append(
                f"No figure: {md.text(camp)} published its claims without its figure "
                f"(`processed/{camp}/figures/{FIGURE}.png`)."
            )
    return parts


def count_matrix(counts: pd.DataFrame) -> pd.DataFrame:
    """``verdicts.csv`` as a campaign x verdict table (0 where a campaign has none of a verdict)."""
    if counts.empty:
        return pd.DataFrame()
    t = counts[counts["verdict"] != NO_TABLE]
    m = t.pivot_table(index="campaign", columns="verdict", values="n", aggfunc="sum", fill_value=0)
    order = list(verdict_counts(t.loc[t.index.repeat(t["n"].astype(int))]).index)
    m = m.reindex(index=list(dict.fromkeys(counts["campaign"])), columns=order, fill_value=0)
    return m.astype(int)


def per_campaign(table: pd.DataFrame) -> list[Any]:
    """Each campaign's claims as the vs_seed notebook shows them: a heading, the count sentence and
    the claims (:func:`.verdicts.claims_shown`), for :func:`podnet.report.explore.show`."""
    out: list[Any] = []
    for camp, t in table.groupby("campaign", sort=False):
        t = t.reindex(columns=CLAIM_COLUMNS)
        out += [f"### {md.text(camp)}", count_sentence(t), claims_shown(t)]
    return out


def read_table(path: str | Path) -> pd.DataFrame:
    """``claims.csv`` as written (:data:`SEEDS_COLUMNS`; text cells stay text)."""
    p = Path(path)
    if not p.exists() or not p.stat().st_size:
        return pd.DataFrame(columns=SEEDS_COLUMNS)
    df = read_claims(p)
    for c in ("campaign", "source"):
        df[c] = as_text(df[c])
    return df


#: the notebook run over processed/seeds (the repository's notebooks/)
NOTEBOOK = Path(__file__).absolute().parents[3] / "notebooks" / "seeds.ipynb"


def run_notebook(out: str | Path) -> Path:
    """Execute the ``seeds`` notebook in ``out`` (``out/seeds.ipynb``; its ``seeds_dir`` parameter
    the folder itself, relative: the page names no machine's path) and render it beside
    (``seeds.html``); returns the notebook's path."""
    import papermill

    from podnet.config.warm import kernel_manager_class
    from podnet.report.notebook_html import render_node
    from podnet.report.paths import from_root

    o = Path(out)
    # papermill records the paths it is given: relative ones, as every published file names one
    nb = papermill.execute_notebook(
        from_root(NOTEBOOK),
        from_root(o / "seeds.ipynb"),
        parameters={"seeds_dir": "."},
        kernel_name="python3",
        cwd=str(o),
        progress_bar=False,
        log_output=False,
        request_save_on_cell_execute=False,
        shutdown_kernel="immediate",
        kernel_manager_class=kernel_manager_class(),  # Unix sockets, never TCP ports
    )
    render_node(nb, o / "seeds.html")
    return Path(from_root(o / "seeds.ipynb"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m podnet.report.vs_seed.seeds", description=__doc__.split("\n")[0]
    )
    ap.add_argument("processed", nargs="+", help="the seed campaigns' processed folders (processed/seed-00N)")
    ap.add_argument("--out", default="processed/seeds", help="where claims.csv and verdicts.csv go")
    ap.add_argument(
        "--campaigns",
        default=None,
        metavar="DIR",
        help="the campaign files' folder (config/campaigns): a campaign not published yet lists its "
        "claims from DIR/<name>.yaml as 'not run yet'",
    )
    ap.add_argument("--notebook", action="store_true", help="also execute the seeds notebook in --out")
    ap.add_argument(
        "--baseline",
        default="host-host",
        help="our baseline scenario of the vs_seed.csv ratios (claims.csv's baseline)",
    )
    args = ap.parse_args(argv)
    dirs = [Path(d) for d in args.processed]
    table, counts = publish(
        dirs, args.out, {d.name: args.baseline for d in dirs}, args.campaigns, args.notebook
    )
    for camp, t in counts.groupby("campaign", sort=False):
        print(f"{camp}: " + ", ".join(f"{n} {v}" for v, n in zip(t["verdict"], t["n"])))
    print(
        f"{len(table)} rows in {Path(args.out) / 'claims.csv'}; counts in {Path(args.out) / 'verdicts.csv'}"
        + (f"; figures in {Path(args.out) / 'figures'}" if (Path(args.out) / "figures").is_dir() else "")
        + (f"; notebook {Path(args.out) / 'seeds.ipynb'} (.html)" if args.notebook else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
