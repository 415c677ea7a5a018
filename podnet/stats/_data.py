"""Reading tidy tables and cutting them into groups of repeats.

A :class:`Groups` holds, for each group (one row of ``keys``), the non-NaN
values sorted by repeat number, plus how many NaN values were dropped.
Everything downstream indexes groups by their position in ``keys``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from podnet.parse.tidy import GROUP_COLUMNS, TIDY_COLUMNS, coerce, empty_tidy, flag_column

#: columns a tidy table must have; any other tidy column gets a default
REQUIRED_COLUMNS = ["variant", "scenario", "tool", "metric", "value", "unit"]
#: columns a tidy table from another tool may lack, and the value they get
OPTIONAL_DEFAULTS: dict[str, object] = {
    "experiment": "",
    "test": "",
    "protocol": "",
    "direction": "",
    "streams": pd.NA,
    "repeat": pd.NA,
    "run_id": "",
    "source": "measured",
    "raw_path": "",
}
#: the launch a run belongs to: carried through when the table has it (paired intervals need it)
LAUNCH_COLUMN = "launch_id"
#: the launch round a run actually ran in (sidecar ``round_seq``; retries carry the later round):
#: runs pair by (launch_id, round_seq) where the table has it, else by (launch_id, repeat)
ROUND_COLUMN = "round_seq"
#: what a run's round is numbered by: the launch round it ran in, else (older raw files, imported
#: outputs) its repeat number
ROUND_BY = (ROUND_COLUMN, "repeat")


def has_rounds(rows: pd.DataFrame) -> bool:
    """Every row carries the launch round its run ran in (``round_seq``)."""
    return ROUND_COLUMN in rows.columns and bool(
        pd.to_numeric(rows[ROUND_COLUMN], errors="coerce").notna().all()
    )


def run_rounds(rows: pd.DataFrame, by: str = ROUND_COLUMN, need_launch: bool = True) -> pd.Series:
    """The round each row's run ran in, as one label per row: ``"<launch_id>#round<round_seq>"``
    (``by="round_seq"``: the launch round it actually ran in, a retry its later one) or
    ``"<launch_id>#repeat<repeat>"`` (``by="repeat"``); <NA> where the row lacks the number, or its
    launch when ``need_launch`` (a run of no known launch pairs with none). A round label never
    equals a repeat label, so runs numbered one way never pair with runs numbered the other. The one
    place the statistics say which round a run ran in: variant pairs, rankings, ratios to idle, a
    curve's end ratio, the time-to-network bootstrap over rounds."""
    if by not in ROUND_BY:
        raise ValueError(f"a run's round is numbered by {' or '.join(ROUND_BY)}, not {by!r}")
    none = pd.Series(pd.NA, index=rows.index, dtype="string")
    if by not in rows.columns:
        return none
    launch = (
        rows[LAUNCH_COLUMN].astype("string").fillna("") if LAUNCH_COLUMN in rows.columns else none.fillna("")
    )
    num = pd.to_numeric(rows[by], errors="coerce").astype("Float64")
    whole = bool(((num.dropna() % 1) == 0).all())
    text = (num.astype("Int64") if whole else num).astype("string")
    label = launch + ("#round" if by == ROUND_COLUMN else "#repeat") + text
    return label.mask(launch == "", pd.NA) if need_launch else label


#: strings that mean "no value" in the value column of a CSV (anything else must be a number)
_MISSING_VALUE = {"", "nan", "-nan", "+nan"}


def write_csv(df: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as CSV atomically (a half-written file never has the final name)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    df.to_csv(tmp, index=False)
    tmp.replace(p)
    return p


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a parquet or csv table (by suffix).

    CSV cells are read as text, and only empty cells are missing: a variant
    named ``None`` or ``NA`` stays a name. Numbers are converted by
    :func:`as_tidy`.
    """
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        return pd.read_parquet(path)
    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[])
    for c in ("value", "repeat", "streams"):
        if c in df.columns:
            df[c] = df[c].replace("", None)
    return df


def check_values(df: pd.DataFrame) -> None:
    """Raise ValueError naming the rows whose ``value`` is text that is not a number (or missing)."""
    if "value" not in df.columns or len(df) == 0:
        return
    v = df["value"]
    if pd.api.types.is_numeric_dtype(v.dtype):
        return
    num = pd.to_numeric(v, errors="coerce")
    text = v.astype("string").str.strip().str.lower()
    bad = num.isna().to_numpy(dtype=bool) & ~(v.isna() | text.isin(_MISSING_VALUE)).to_numpy(dtype=bool)
    if bad.any():
        rows = np.nonzero(bad)[0]
        examples = ", ".join(f"row {i + 1}: {v.iloc[i]!r}" for i in rows[:5])
        raise ValueError(f"{len(rows)} non-numeric value(s) in column 'value' ({examples})")


def as_tidy(tidy: pd.DataFrame | None) -> pd.DataFrame:
    """Coerce to the tidy schema; ``None`` or a column-less frame gives an empty table.

    Columns another tool has no reason to carry get defaults
    (:data:`OPTIONAL_DEFAULTS`); text in ``value`` that is not a number is an
    error; a ``launch_id`` column is kept.
    """
    if tidy is None or (len(tidy) == 0 and len(tidy.columns) == 0):
        return empty_tidy()
    df = tidy.copy()
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"tidy table lacks columns: {', '.join(missing)}")
    for c in TIDY_COLUMNS:  # every other tidy column has a default (empty text unless listed)
        if c not in df.columns:
            df[c] = OPTIONAL_DEFAULTS.get(c, "")
    check_values(df)
    out = coerce(df)
    if LAUNCH_COLUMN in tidy.columns and LAUNCH_COLUMN not in out.columns:
        out[LAUNCH_COLUMN] = tidy[LAUNCH_COLUMN].astype("string").to_numpy()
    if ROUND_COLUMN in tidy.columns:
        out[ROUND_COLUMN] = pd.to_numeric(tidy[ROUND_COLUMN], errors="coerce").astype("Int64").to_numpy()
    return out


def disturbed_mask(tidy: pd.DataFrame) -> np.ndarray:
    """Rows of runs the launcher judged disturbed and kept (tidy ``disturbed``: no re-run was left in
    their round): on record in the tidy table and disturbed_runs.csv, never in a statistic."""
    if "disturbed" not in tidy.columns:
        return np.zeros(len(tidy), dtype=bool)
    return flag_column(tidy["disturbed"]).to_numpy(dtype=bool)


def per_pod_mask(tidy: pd.DataFrame) -> np.ndarray:
    """Rows of one pod among several of a run (tidy ``pod``, netready): no run's value, so in no summary
    of runs; :mod:`podnet.stats.netready` takes them."""
    if "pod" not in tidy.columns:
        return np.zeros(len(tidy), dtype=bool)
    return (tidy["pod"].astype("string").fillna("").str.strip() != "").to_numpy(dtype=bool)


def split_sources(tidy: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(measured, reference) rows. Anything whose source is not ``reference`` counts as measured,
    except the runs judged disturbed (:func:`disturbed_mask`): a disturbed run is re-run, or left out;
    and per-pod rows (:func:`per_pod_mask`), which only net_ready.csv summarises."""
    codes, uniq = pd.factorize(tidy["source"])  # few distinct values: compare those, not every row
    ref_u = np.array([str(u).strip().lower() == "reference" for u in uniq] + [False], dtype=bool)
    is_ref = ref_u[codes]  # code -1 (missing) picks the trailing False
    keep = ~is_ref & ~disturbed_mask(tidy) & ~per_pod_mask(tidy)
    return tidy.loc[keep].reset_index(drop=True), tidy.loc[is_ref].reset_index(drop=True)


@dataclass
class Groups:
    """Values of each group, sorted by (repeat, run_id), NaN values removed."""

    keys: pd.DataFrame  # one row per group, columns = the grouping columns
    n: np.ndarray  # int, non-NaN values per group
    n_nan: np.ndarray  # int, NaN (or infinite) values dropped per group
    starts: np.ndarray  # int, offset of each group's first value in `values`
    values: np.ndarray  # float, concatenated
    repeats: np.ndarray  # float (NaN where unknown), aligned with values
    rows: pd.DataFrame  # the non-NaN rows, aligned with values (for run ids etc.)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def codes(self) -> np.ndarray:
        """Group position of each value."""
        return np.repeat(np.arange(len(self.n)), self.n)

    def values_of(self, i: int) -> np.ndarray:
        return self.values[self.starts[i] : self.starts[i] + self.n[i]]

    def repeats_of(self, i: int) -> np.ndarray:
        return self.repeats[self.starts[i] : self.starts[i] + self.n[i]]

    def stacked(self, idx: np.ndarray) -> np.ndarray:
        """Values of groups ``idx`` (all of the same n) as a 2-D array (len(idx), n)."""
        idx = np.asarray(idx, dtype=int)
        if len(idx) == 0:
            return np.empty((0, 0))
        n = int(self.n[idx[0]])
        if np.any(self.n[idx] != n):
            raise ValueError("stacked() needs groups of equal size")
        pos = self.starts[idx][:, None] + np.arange(n)[None, :]
        return self.values[pos]


def make_groups(df: pd.DataFrame, keys: list[str] = GROUP_COLUMNS) -> Groups:
    """Group ``df`` by ``keys`` (missing key values form their own group)."""
    if len(df) == 0:
        empty = df[keys].iloc[0:0].reset_index(drop=True)
        z = np.zeros(0, dtype=int)
        return Groups(empty, z, z.copy(), z.copy(), np.zeros(0), np.zeros(0), df.iloc[0:0])
    g = df.groupby(keys, dropna=False, sort=True, observed=True)
    codes = g.ngroup().to_numpy()
    ngroups = int(codes.max()) + 1
    values = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=float)
    if "repeat" in df.columns:
        repeats = (
            pd.to_numeric(df["repeat"], errors="coerce")
            .astype("Float64")
            .to_numpy(dtype=float, na_value=np.nan)
        )
    else:
        repeats = np.full(len(df), np.nan)
    run_id = (
        df["run_id"].astype("string").fillna("").to_numpy(dtype=object)
        if "run_id" in df.columns
        else np.zeros(len(df))
    )
    # stable order: group, then repeat (unknown last), then run id
    order = np.lexsort((run_id.astype(str), np.nan_to_num(repeats, nan=np.inf), codes))
    first = np.full(ngroups, -1)
    # first row of each group in sorted order gives its key values
    sorted_codes = codes[order]
    is_first = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]]
    first[sorted_codes[is_first]] = order[is_first]
    keys_df = df.iloc[first][keys].reset_index(drop=True)
    is_nan = ~np.isfinite(values)  # NaN and +-inf are dropped and counted
    n_nan = np.bincount(codes, weights=is_nan, minlength=ngroups).astype(int)
    keep = order[~is_nan[order]]
    kcodes = codes[keep]
    n = np.bincount(kcodes, minlength=ngroups).astype(int)
    starts = np.r_[0, np.cumsum(n)[:-1]].astype(int)
    return Groups(
        keys=keys_df,
        n=n,
        n_nan=n_nan,
        starts=starts,
        values=values[keep],
        repeats=repeats[keep],
        rows=df.iloc[keep].reset_index(drop=True),
    )


def key_text(keys: pd.DataFrame) -> list[str]:
    """One text per row of ``keys`` (every column, missing as <NA>): names a group's random stream."""
    k = keys.astype("string").fillna("<NA>")
    return ["\x1f".join(row) for row in k.itertuples(index=False, name=None)]


def log_moments(g: Groups, zero_sd: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean of ln x, sd of ln x, all values > 0) per group.

    Groups with a value <= 0 get NaN moments and False. An sd at most ``zero_sd``
    (rounding noise on the log scale) is 0.
    """
    k = len(g.n)
    codes = g.codes
    pos = g.values > 0
    npos = np.bincount(codes, weights=pos, minlength=k)
    ok = (g.n > 0) & (npos == g.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        lv = np.log(np.where(pos, g.values, 1.0))
        m = np.bincount(codes, weights=lv, minlength=k) / np.maximum(g.n, 1)
        dev = lv - m[codes]
        ss = np.bincount(codes, weights=dev * dev, minlength=k)
        sd = np.where(g.n > 1, np.sqrt(ss / np.maximum(g.n - 1, 1)), np.nan)
    sd = np.where(sd <= zero_sd, 0.0, sd)
    return np.where(ok, m, np.nan), np.where(ok, sd, np.nan), ok


def group_moments(g: Groups, zero_rel_sd: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(mean, sample sd with ddof=1) per group; NaN where undefined (n=0, or sd with n<2).

    An sd at most ``zero_rel_sd`` times the largest |value| of the group is
    rounding noise and reported as 0.
    """
    codes = g.codes
    k = len(g.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.bincount(codes, weights=g.values, minlength=k)
        mean = np.where(g.n > 0, s / np.maximum(g.n, 1), np.nan)
        dev = g.values - mean[codes]
        ss = np.bincount(codes, weights=dev * dev, minlength=k)
        sd = np.where(g.n > 1, np.sqrt(ss / np.maximum(g.n - 1, 1)), np.nan)
    # all values equal: sd is exactly 0 (the two-pass sum may leave rounding noise)
    nz = np.nonzero(g.n > 0)[0]
    if len(nz):
        vmin = np.minimum.reduceat(g.values, g.starts[nz])
        vmax = np.maximum.reduceat(g.values, g.starts[nz])
        const = np.zeros(k, dtype=bool)
        const[nz] = vmin == vmax
        sd = np.where(const & (g.n > 1), 0.0, sd)
        scale = np.zeros(k)
        scale[nz] = np.maximum(np.abs(vmin), np.abs(vmax))
        sd = np.where((g.n > 1) & (sd <= zero_rel_sd * scale), 0.0, sd)
        mean = np.where(
            const, np.where(g.n > 0, g.values[np.minimum(g.starts, max(len(g.values) - 1, 0))], np.nan), mean
        )
    return mean, sd
