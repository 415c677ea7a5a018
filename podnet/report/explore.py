"""Helpers of the explore, compare and planning notebooks: slices of the tidy table, per-run
values with their sidecars, distributions, drift, provenance,
experiments side by side, and what a time budget can reach (slow runs beside what competed with
them: :mod:`podnet.report.interference`; iperf3's per-interval series: :mod:`podnet.report.intervals`).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from podnet.config.lean import skip_iri_grammar
from podnet.parse.raw import read_sidecar, sidecar_path
from podnet.report import md, tables
from podnet.report.figures import data, style

# a notebook's kernel reads sidecars (read_sidecar validates them with jsonschema, imported then):
# without this, the first costs jsonschema's optional IRI grammar, about 2 s of CPU (config/lean.py)
skip_iri_grammar()


def notebook_options() -> None:
    """pandas' display options for every published notebook, set in one place: wide tables, long
    cells, every column and enough rows of a report's tables."""
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_colwidth", 200)


def rows_where(df: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """Rows of ``df`` matching every ``column=value``; a value may be a list (any of) or a
    predicate, e.g. ``rows_where(t.tidy, tool="iperf3", scenario=["host-host", "pod-pod"], value=lambda v: v > 0)``.
    """
    mask = pd.Series(True, index=df.index)
    for col, want in where.items():
        if col not in df.columns:
            raise KeyError(f"no column {col!r}; columns: {', '.join(df.columns)}")
        if callable(want):
            mask &= df[col].map(want).astype(bool)
        elif isinstance(want, (list, tuple, set)):
            mask &= df[col].isin(list(want))
        else:
            mask &= df[col] == want
    return df[mask]


#: what tells a row of :func:`runs` from another: the run, and within it a direction (iperf3 --bidir),
#: a stream count, an output (``role``: a latency-under-load run's probe / load) or a pod (netready)
RUN_KEYS = ("run_id", "variant", "scenario", "tool", "test", "role", "direction", "streams", "pod", "repeat")


def runs(t: data.Tables, **where: Any) -> pd.DataFrame:
    """One row per run of the (sliced) tidy table, headline metrics as columns, each in the display
    unit its own values call for (:func:`podnet.report.tables.column_unit`), named in its header;
    numbers rounded to 4 significant digits (:func:`runs_view` writes them for reading)."""
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    if tidy.empty:
        return tidy
    head = data.headline_rows(tidy.rename(columns={"value": "mean"}), None, t.settings).rename(
        columns={"mean": "value"}
    )
    keys = [c for c in RUN_KEYS if c in head]
    out = []
    for metric, sub in head.groupby("metric"):
        factor, unit = tables.column_unit(sub["value"], str(sub["unit"].iloc[0]))
        col = data.axis_label(str(metric), str(sub["tool"].iloc[0]), unit)
        shown = (sub["value"] / factor).astype(float).map(significant)  # 4 digits, not 6 decimals
        out.append(sub[keys].assign(**{col: shown}).set_index(keys))
    return pd.concat(out, axis=1).reset_index().sort_values(keys).reset_index(drop=True)


def runs_view(t: data.Tables, **where: Any) -> list[str | pd.DataFrame]:
    """The explore notebook's per-run table, for reading: :func:`runs` with one unit per column (in
    its header), the numbers as text (4 significant digits, never e-notation, blank where a run has
    no such measure), tool and test in one column, and the columns every row shares said once above
    it (``run_id`` too, when the other keys tell the rows apart): it fits a 1280-px page."""
    r = runs(t, **where)
    if r.empty:
        return ["No run in this slice has a headline metric."]
    values = [c for c in r.columns if c not in RUN_KEYS]
    r = r.assign(test=r["tool"].astype(str) + " " + r["test"].astype(str)).drop(columns=["tool"])
    keys = [c for c in RUN_KEYS if c in r.columns and c not in ("run_id", "tool")]
    if not r.duplicated(subset=keys).any():
        r = r.drop(columns=["run_id"])
    keys = [c for c in r.columns if c not in values]
    shown, said = tables.said_once(tables.keys_as_text(tables.as_text(r, values), keys), keep=values)
    shown = tables.empty_columns(shown)
    return [said, shown] if said else [shown]


#: the outlier table's columns a reader needs; the rest of outliers.csv (experiment, protocol, unit,
#: run_id, raw_path: what the others and the headers already say) is left out
OUTLIER_COLUMNS = ["measure", "variant", "scenario", "test", "direction", "streams", "repeat"]


def outliers_view(t: data.Tables, raw_dir: str | Path | None = None) -> list[str | pd.DataFrame]:
    """The explore notebook's outlier tables: one per display unit (each measure's unit chosen from
    its own value and fences, measures that read in the same unit in one table), the value and its
    fences as text under headers naming the unit, and where, when and in which attempt each run
    ran, from its sidecar; what every row of a table shares said once above it."""
    o = t.outliers
    if o.empty:
        return ["No outliers (or too few repeats to tell)."]
    o = with_sidecars(o, raw_dir=raw_dir, cache=sidecar_cache(t))
    side = [c for c in o.columns if c.split(".")[-1] in ("node", "attempt", "started")]
    o = o.assign(
        measure=[data.metric_info(str(m), str(k)).label for m, k in zip(o["metric"], o["tool"])],
        test=o["tool"].astype(str) + " " + o["test"].astype(str),
        # "2026-11-29 08:44:42", not the sidecar's ISO text with milliseconds and zone
        **{
            c: o[c].map(lambda v: v.replace("T", " ")[:19] if isinstance(v, str) else v)
            for c in side
            if c.endswith("started")
        },
    )
    bounds = ["value", "fence_low", "fence_high"]
    units = {
        key: tables.column_unit(pd.concat([g[c] for c in bounds]), str(key[1]))
        for key, g in o.groupby(["metric", "unit"], sort=False, dropna=False)
    }
    o["shown_unit"] = [units[(m, u)][1] for m, u in zip(o["metric"], o["unit"])]
    factor = pd.Series([units[(m, u)][0] for m, u in zip(o["metric"], o["unit"])], index=o.index)
    out: list[str | pd.DataFrame] = []
    for unit, g in o.groupby("shown_unit", sort=False, dropna=False):
        cols = [c for c in OUTLIER_COLUMNS if c in g.columns]
        table = g[cols].copy()
        heads = [tables.header(name, str(unit)) for name in ("value", "low fence", "high fence")]
        for c, head in zip(bounds, heads):
            table[head] = (g[c].astype(float) / factor[g.index]).map(tables.text)
        table = tables.keys_as_text(
            pd.concat([table, g[side]], axis=1).reset_index(drop=True), [*cols, *side]
        )
        table, said = tables.said_once(table, keep=["measure", "repeat", *heads])
        rule = ", ".join(sorted(set(g["outlier_rule"].astype(str)))) if "outlier_rule" in g else ""
        lead = f"**In {unit or 'counts'}**: {len(g)} value{'s' if len(g) > 1 else ''} outside the fences ({rule})."
        out += [f"{lead} {said}".strip(), table]
    return out


def slice_counts(t: data.Tables, **where: Any) -> str:
    """What the slice holds, in words (Markdown): its runs (distinct ``run_id``: one launch of a tool)
    and the rows of :func:`runs`, which are more when a run reports one output per direction, stream
    count, role or pod (each key named with how many runs it splits), fewer when runs have no
    headline metric."""
    tidy = rows_where(t.tidy, **where) if where else t.tidy
    n = tidy["run_id"].nunique() if len(tidy) else 0
    text = f"**{n} runs** in the slice (distinct `run_id`: one launch of a tool)"
    table = runs(t, **where)
    if not len(table):
        return text + "; none has a headline metric for the per-run table below."
    if len(table) == n and table["run_id"].nunique() == n:
        return text + f"; the per-run table below has one row per run ({n} rows)."
    keys = [c for c in RUN_KEYS[1:] if c in table.columns]
    distinct = table.groupby("run_id")[keys].nunique(dropna=False)
    split = []
    for c in keys:
        many = distinct.index[distinct[c] > 1]
        if len(many):
            seen = sorted(table.loc[table["run_id"].isin(many), c].astype(str).unique())
            more = ", ..." if len(seen) > 4 else ""
            split.append(f"`{c}` for {len(many)} runs ({', '.join(map(md.text, seen[:4]))}{more})")
    text += f"; the per-run table below has **{len(table)} rows**: one per run"
    if split:
        text += " and output, a run giving one row per " + "; per ".join(split)
    bare = n - table["run_id"].nunique()
    if bare:
        text += f"; {bare} runs have no headline metric and no row there"
    return text + "."


def in_display_units(
    df: pd.DataFrame, columns: Iterable[str] = ("value",), unit: str = "unit"
) -> pd.DataFrame:
    """``df`` with ``columns`` (SI values, their unit in column ``unit``) in each metric's display unit
    (µs, Gbit/s, %; CPU seconds per Gbit), 4 significant digits, and ``unit`` naming it."""
    cols = [c for c in columns if c in df.columns]
    if df.empty or unit not in df.columns or not cols:
        return df
    out = df.copy()
    out[cols] = out[cols].astype(float)
    out[unit] = out[unit].astype(object)
    by = [c for c in ("metric", unit) if c in out.columns]
    for _, idx in out.groupby(by, dropna=False, sort=False).groups.items():
        name = str(out.loc[idx[0], unit])
        factor, shown = (
            (1e-9, "s/Gbit") if name == "s/bit" else data.display_unit(out.loc[idx, cols[0]], name)
        )
        out.loc[idx, cols] = (out.loc[idx, cols] / factor).apply(lambda c: c.map(significant))
        out.loc[idx, unit] = shown
    return out


def significant(x: float, digits: int = 4) -> float:
    """``x`` rounded to ``digits`` significant digits (0 and NaN as they are)."""
    if not np.isfinite(x) or x == 0:
        return x
    return round(x, digits - 1 - int(np.floor(np.log10(abs(x)))))


def resolve(raw_path: str, raw_dir: str | Path | None = None) -> Path:
    """Where a tidy ``raw_path`` (relative to the directory the pipeline ran in) is from here:
    as it is, or under the directory in which ``raw_dir`` (absolute) ends with its first parts."""
    p = Path(raw_path)
    if p.is_absolute() or p.exists() or raw_dir is None:
        return p
    base = Path(raw_dir).resolve()
    for k in range(len(base.parts), 0, -1):
        tail = base.parts[-k:]
        if p.parts[:k] == tail:
            return base.parents[k - 1] / p
    return p


def sidecars(
    raw_paths: Iterable[str], raw_dir: str | Path | None = None, cache: str | Path | None = None
) -> pd.DataFrame:
    """The sidecars of ``raw_paths``, flattened (``client.node``, ``attempt``, ``launch.id``...);
    ``raw_dir`` (absolute) locates relative paths when the notebook runs elsewhere.

    ``cache``: a file of the sidecars read before (pickled, not an output: deleting it only costs
    time), each reused while its file's size and mtime are unchanged: at 10,000 runs reading and
    validating every sidecar costs a notebook tens of seconds."""
    known = _read_cache(cache)
    rows, seen, fresh = [], {}, False
    for p in dict.fromkeys(raw_paths):
        raw = resolve(p, raw_dir)
        try:
            st = sidecar_path(raw).stat()
            key: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
        hit = known.get(p)
        if key is not None and hit is not None and hit[0] == key:
            meta = hit[1]
        else:
            try:
                meta = read_sidecar(raw)
            except (OSError, ValueError):
                meta = {}
            fresh = fresh or key is not None
        if key is not None:
            seen[p] = (key, meta)
        rows.append({"raw_path": p, **meta})
    if cache is not None and fresh:
        path = Path(cache)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps({**known, **seen}))
        tmp.replace(path)
    if not rows:
        return pd.DataFrame(columns=["raw_path"])
    return pd.json_normalize(rows)


def _read_cache(cache: str | Path | None) -> dict[str, Any]:
    if cache is None or not Path(cache).is_file():
        return {}
    try:
        return pickle.loads(Path(cache).read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
        return {}  # a cache that cannot be read is read again from the sidecars


def sidecar_cache(t: data.Tables) -> Path | None:
    """The sidecar cache of the experiment ``t`` was loaded from (processed/<exp>/.cache/)."""
    return Path(t.source) / ".cache" / "sidecars.pickle" if t.source else None


def with_sidecars(
    df: pd.DataFrame,
    columns: list[str] | None = None,
    raw_dir: str | Path | None = None,
    cache: str | Path | None = None,
) -> pd.DataFrame:
    """``df`` (with a raw_path column) joined with its runs' sidecar fields (default: where and when)."""
    side = sidecars(df["raw_path"].astype(str), raw_dir, cache)
    wanted = columns or [
        c
        for c in side.columns
        if c.split(".")[-1] in ("node", "attempt", "round", "started", "finished", "status")
    ]
    return df.merge(side[["raw_path"] + [c for c in wanted if c in side.columns]], on="raw_path", how="left")


def outliers(t: data.Tables, raw_dir: str | Path | None = None) -> pd.DataFrame:
    """outliers.csv with each run's node, time and attempt from its sidecar, the value and its
    fences in display units (:func:`in_display_units`)."""
    if t.outliers.empty:
        return t.outliers
    shown = in_display_units(t.outliers, ("value", "fence_low", "fence_high"))
    return with_sidecars(shown, raw_dir=raw_dir, cache=sidecar_cache(t))


def drift(t: data.Tables) -> pd.DataFrame:
    """Groups whose values trend across rounds (Kendall's tau on value vs repeat, from summary.csv)."""
    s = t.summary
    if s.empty or "drift" not in s.columns:
        return pd.DataFrame()
    cols = [
        "variant",
        "scenario",
        "tool",
        "test",
        "direction",
        "metric",
        "n",
        "drift_tau",
        "drift_p",
        "drift_rel_change",
    ]
    d = s[s["drift"].fillna(False).astype(bool)]
    return d[[c for c in cols if c in d.columns]].reset_index(drop=True)


def provenance(t: data.Tables, raw_dir: str | Path | None = None) -> pd.DataFrame:
    """Every distinct cluster/node/tool fact the runs' sidecars record (kernel, CNI, versions, image)."""
    if t.tidy.empty:
        return pd.DataFrame(columns=["fact", "values"])
    side = sidecars(t.tidy["raw_path"].astype(str).unique(), raw_dir, sidecar_cache(t))
    keep = [
        c
        for c in side.columns
        if any(
            k in c
            for k in ("kernel", "cni", "version", "image", "kubelet", "runtime", "os", "cluster", "node")
        )
        and not c.endswith(("ip", "internal_ip"))
    ]
    rows = []
    for c in sorted(keep):
        vals = sorted({str(v) for v in side[c].dropna()})
        if vals:
            rows.append({"fact": c, "values": ", ".join(vals[:8]) + (" ..." if len(vals) > 8 else "")})
    return pd.DataFrame(rows, columns=["fact", "values"])


def distributions(t: data.Tables, **where: Any) -> plt.Figure:
    """Every run's headline value per path (box + dots), one panel per test; a path's row split by
    direction (iperf3 --bidir) or output (role) where its panel has more than one, so no box pools
    two; ``where`` slices."""
    style.apply()
    r = runs(t, **where)
    value_cols = [c for c in r.columns if c not in RUN_KEYS]
    if r.empty or not value_cols:
        fig = plt.figure(figsize=(style.COLUMN, 1))
        fig.text(0.5, 0.5, "no runs in this slice", ha="center")
        return fig
    split = [c for c in SPLIT if c in r.columns]
    long = r.melt(id_vars=["variant", "scenario", "tool", "test", *split], value_vars=value_cols)
    long = long.dropna(subset=["value"])
    long["panel"] = long["tool"] + " " + long["test"] + " · " + long["variable"]
    long["row"] = box_rows(long, split)
    panels = sorted(long["panel"].unique())
    ncols = 1 if len(panels) == 1 else 2
    nrows = int(np.ceil(len(panels) / ncols))
    n_rows = max(long["scenario"].nunique(), long.groupby("panel")["row"].nunique().max())
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(style.PAGE if ncols > 1 else style.COLUMN, nrows * (0.6 + 0.2 * n_rows) + 0.5),
        squeeze=False,
        layout="constrained",
    )
    paths = data.path_order(t)
    import seaborn as sns  # here: a notebook that draws no distribution does not load it (nor scipy)

    for ax, panel in zip(axes.flat, panels):
        sub = long[long["panel"] == panel]
        # only the rows with data in this panel, by path, then direction within a path
        order = [y for p in paths for y in sorted(set(sub.loc[sub["scenario"] == p, "row"]))]
        sns.boxplot(sub, x="value", y="row", order=order, ax=ax, color="0.9", fliersize=0, linewidth=0.6)
        # seaborn jitters the dots with numpy's global random state: seeded here (and restored), so the
        # same tables draw the same dots in every process (a fresh one starts from OS entropy)
        state = np.random.get_state()
        np.random.seed(0)
        try:
            sns.stripplot(sub, x="value", y="row", hue="variant", order=order, ax=ax, size=2.5, legend=False)
        finally:
            np.random.set_state(state)
        ax.set_title(panel)
        ax.set_xlabel(panel.split(" · ")[-1])
        keys = [c for c in split if sub[c].fillna("").astype(str).nunique() > 1]  # what splits a path
        ax.set_ylabel(" · ".join(["path", *keys]) if keys else "")
        style.plain_axis(ax, "x")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    style.thin_ticks(fig)
    return fig


#: what splits a path's box: the outputs of one run that are different measures, not samples of one
SPLIT = ("direction", "role")


def box_rows(long: pd.DataFrame, split: list[str]) -> pd.Series:
    """Each value's row in its panel: its path, then " · direction" (or role) where the panel has more
    than one (a bimodal group is explained, never averaged)."""
    row = long["scenario"].astype(str)
    for c in split:
        key = long[c].fillna("").astype(str)
        many = key.groupby(long["panel"]).transform("nunique") > 1
        row = row.where(~many | (key == ""), row + " · " + key)
    return row


def show(*items: Any) -> None:
    """Display each item in a notebook: a string as Markdown, a figure (then closed), a table."""
    from IPython.display import Markdown, display

    for item in items:
        if isinstance(item, str):
            display(Markdown(item))
        elif isinstance(item, plt.Figure):
            display(item)
            plt.close(item)
        else:
            display(item)


def side_by_side(
    processed_dirs: list[str | Path],
    by: str = "experiment",
    baseline: str | None = None,
    settings: dict | None = None,
) -> pd.DataFrame:
    """Ratios between experiments (``by="experiment"``) or variants of the given experiments,
    with their intervals. The variants of one experiment whose ratios.csv compares them with
    ``baseline``: those rows, as published (one comparison, one p: METHODS.md, "One comparison, one
    p"). Else podnet.stats.ratios.compare on the combined tidy tables, with ``settings`` (the
    experiment's statistics settings, stats_settings.json) for variants, so a comparison its
    ``stats.primary`` declares is judged in its family as the statistics stage judges it; between
    experiments every row is exploratory. Each pair's bootstrap and paired columns are kept in the
    first directory's .cache/side_by_side.pickle while its two groups are unchanged (not an output:
    the table is the same without it)."""
    from podnet.stats.ratios import compare

    published = Path(processed_dirs[0]) / "ratios.csv"
    if by == "variant" and len(processed_dirs) == 1 and baseline and published.exists():
        r = pd.read_csv(published)
        r = r[(r["by"].astype(str) == "variant") & (r["baseline"].astype(str) == str(baseline))]
        if len(r):
            return r.reset_index(drop=True)
    tidy = pd.concat([pd.read_parquet(Path(d) / "tidy.parquet") for d in processed_dirs], ignore_index=True)
    if by != "experiment":
        tidy = tidy.assign(experiment="+".join(dict.fromkeys(tidy["experiment"].astype(str))))
    names = list(dict.fromkeys(tidy[by].astype(str)))
    if len(names) < 2:
        return pd.DataFrame()
    base = baseline or names[0]
    cache = Path(processed_dirs[0]) / ".cache" / "side_by_side.pickle"
    want = {"by": by, "baseline": base}
    s = {k: v for k, v in (settings or {}).items() if k != "thresholds"}
    comps = [c for c in s.get("comparisons") or [] if by == "variant"]
    if not any(c.get("by") == by and str(c.get("baseline")) == base for c in comps):
        comps = [*comps, want]
    s["comparisons"] = comps
    if by != "variant":
        s["primary"] = []
    r = compare(tidy, s, cache=cache)
    return r[(r["by"] == by) & (r["baseline"].astype(str) == base)].reset_index(drop=True)


def budget(planning: pd.DataFrame, seconds_per_run: float, budget_seconds: float) -> pd.DataFrame:
    """What ``budget_seconds`` of measuring can reach: repeats per headline group it affords
    (spread evenly) and the relative half-width of the 95 % interval that many repeats give."""
    from scipy import stats

    p = planning[planning.get("headline", True).astype(bool)] if "headline" in planning.columns else planning
    p = p[p["cv"].notna()] if "cv" in p.columns else p.iloc[0:0]
    if p.empty:
        return pd.DataFrame()
    per_group = max(2, int(budget_seconds // max(seconds_per_run, 1e-9) // len(p)))
    t_q = stats.t.ppf(0.975, per_group - 1)
    cols = ["variant", "scenario", "tool", "test", "metric", "n", "cv", "n_needed"]
    out = p[[c for c in cols if c in p.columns]].copy()
    out["repeats_affordable"] = per_group
    out["rel_half_width_then"] = t_q * out["cv"] / np.sqrt(per_group)
    return out.reset_index(drop=True)


def methods_links(methods: Path, link: str) -> str:
    """The report's Methods section: a link to ``METHODS.md`` (``link``, relative to the notebook's
    HTML) and its second-level headings as the places to look, not the whole text (which is longer
    than the report). "(methods text not found: <path>)" when the file is not there."""
    if not methods.exists():
        return f"(methods text not found: {md.text(methods)})"
    heads = [
        ln[3:].strip() for ln in methods.read_text(encoding="utf-8").splitlines() if ln.startswith("## ")
    ]
    listed = "\n".join(f"- {h}" for h in heads)
    return f"[METHODS.md]({link}) ({len(heads)} sections):\n\n{listed}"
