"""within_run() and run(): trimming, stability, and the files the pipeline gets.

References: numpy weighted average, numpy.polyfit for the slope,
scipy.stats.linregress for its p-value.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from podnet.parse.tidy import INTERVAL_COLUMNS
from podnet.stats import RATIO_COLUMNS, SUMMARY_COLUMNS, WITHIN_COLUMNS, run, within_run
from tests.stats_tables import one, rows, tidy


def series(values, run_id="r1", omitted=0, t0=0.0, dt=1.0, **over):
    n = len(values)
    t = t0 + dt * np.arange(n)
    d = {
        "run_id": run_id,
        "stream": "sum",
        "direction": "forward",
        "t_start": t,
        "t_end": t + dt,
        "omitted": np.arange(n) < omitted,
        "metric": "throughput",
        "value": np.asarray(values, dtype=float),
        "unit": "bit/s",
        "raw_path": f"raw/{run_id}.json",
    }
    d.update(over)
    return pd.DataFrame(d)[INTERVAL_COLUMNS]


RAMP = [1.0, 3.0, 5.0, 9.8, 10.1, 9.9, 10.2, 10.0, 9.7, 10.3, 10.0, 9.9]


def test_trimming_and_mean():
    w = within_run(series(RAMP, omitted=2), {"within_run": {"warmup_seconds": 1.0}})
    assert list(w.columns) == WITHIN_COLUMNS
    r = w.iloc[0]
    assert r["n_intervals"] == 12 and r["n_omitted"] == 2 and r["n_warmup"] == 1 and r["n_used"] == 9
    kept = np.array(RAMP[3:])
    assert math.isclose(r["trimmed_mean"], kept.mean(), rel_tol=1e-9)
    assert math.isclose(r["mean_untrimmed"], np.mean(RAMP), rel_tol=1e-9)
    assert r["t_first"] == 3.0 and r["t_last"] == 12.0


def test_weighted_mean_with_short_last_interval():
    df = series([10.0, 10.0, 10.0, 4.0])
    df.loc[3, "t_end"] = df.loc[3, "t_start"] + 0.1  # a 0.1 s tail interval
    r = within_run(df).iloc[0]
    w = (df["t_end"] - df["t_start"]).to_numpy()
    assert math.isclose(r["trimmed_mean"], np.average(df["value"], weights=w), rel_tol=1e-9)


def test_slope_and_stability_against_polyfit_and_linregress():
    rng = np.random.default_rng(1)
    v = 100 + 0.8 * np.arange(20) + rng.standard_normal(20)
    r = within_run(series(v)).iloc[0]
    mid = np.arange(20) + 0.5
    slope = np.polyfit(mid, v, 1)[0]
    lr = stats.linregress(mid, v)
    assert math.isclose(r["slope"], slope, rel_tol=1e-9)
    assert math.isclose(r["slope_p"], lr.pvalue, rel_tol=1e-9)
    assert math.isclose(r["cv"], v.std(ddof=1) / v.mean(), rel_tol=1e-9)
    assert math.isclose(r["rel_change"], slope * 19 / v.mean(), rel_tol=1e-9)
    assert r["stable"] == False  # noqa: E712  (15 % rise over the run)


def test_stable_series():
    r = within_run(series(RAMP[3:])).iloc[0]
    assert r["stable"] == True  # noqa: E712


def test_series_kept_apart_and_nan_and_short():
    df = pd.concat(
        [
            series([1.0, 2.0], run_id="short"),
            series([5.0, np.nan, 5.0, 5.0], run_id="nan"),
            series([1.0, 1.0, 1.0], run_id="r1", stream="1"),
        ],
        ignore_index=True,
    )
    w = within_run(df)
    assert len(w) == 3
    short = one(w, run_id="short")
    assert pd.isna(short["stable"]) and np.isnan(short["slope_p"])
    nan = one(w, run_id="nan")
    assert nan["n_nan"] == 1 and nan["n_used"] == 3 and nan["cv"] == 0.0 and nan["stable"] == True  # noqa: E712


def test_omitted_kept_when_asked():
    r = within_run(series(RAMP, omitted=3), {"within_run": {"drop_omitted": False}}).iloc[0]
    assert r["n_used"] == 12


def test_empty_intervals():
    assert list(within_run(pd.DataFrame(columns=INTERVAL_COLUMNS)).columns) == WITHIN_COLUMNS


# ---- run() ------------------------------------------------------------------


@pytest.fixture
def tidy_table():
    return tidy(
        rows([9.1e9, 9.0e9, 9.2e9, 8.9e9], variant="cilium"),
        rows([9.5e9, 9.4e9, 9.6e9, 9.45e9], variant="host"),
        rows([9.9e9], variant="host", source="reference", repeat=None),
    )


def test_run_writes_tables(tmp_path, tidy_table):
    tp = tmp_path / "tidy.parquet"
    tidy_table.to_parquet(tp)
    iv = series(RAMP, run_id=tidy_table["run_id"].iloc[0])
    ip = tmp_path / "intervals.parquet"
    iv.to_parquet(ip)
    settings = {"comparisons": [{"by": "variant", "baseline": "host"}]}
    paths = run(tp, tmp_path / "out", settings, intervals_path=ip)
    for k in ("summary", "ratios", "planning", "outliers", "within_run", "settings", "methods"):
        assert paths[k].exists(), k
    s = pd.read_csv(paths["summary"])
    assert list(s.columns) == SUMMARY_COLUMNS and len(s) == 3
    r = pd.read_csv(paths["ratios"])
    assert list(r.columns) == RATIO_COLUMNS and len(r) == 1
    assert r["estimand"].iloc[0] == "ratio of geometric means"
    gm = stats.gmean([9.1e9, 9.0e9, 9.2e9, 8.9e9]) / stats.gmean([9.5e9, 9.4e9, 9.6e9, 9.45e9])
    assert math.isclose(r["ratio"].iloc[0], gm, rel_tol=1e-9)
    w = pd.read_csv(paths["within_run"])
    assert w["variant"].iloc[0] == "cilium" and w["repeat"].iloc[0] == 1
    saved = json.loads(paths["settings"].read_text())
    assert saved["bootstrap"]["seed"] == 20240611 and saved["comparisons"] == settings["comparisons"]


def test_run_is_reproducible_and_reads_csv(tmp_path, tidy_table):
    tp = tmp_path / "tidy.csv"
    tidy_table.to_csv(tp, index=False)
    a = run(tp, tmp_path / "a", {"comparisons": [{"by": "variant", "baseline": "host"}]})
    b = run(tp, tmp_path / "b", {"comparisons": [{"by": "variant", "baseline": "host"}]})
    for k in ("summary", "ratios", "planning"):
        assert a[k].read_bytes() == b[k].read_bytes(), k
    assert "within_run" not in a
    assert not (tmp_path / "a" / "within_run.csv").exists()


def test_run_missing_intervals_file_is_skipped(tmp_path, tidy_table):
    tp = tmp_path / "tidy.parquet"
    tidy_table.to_parquet(tp)
    paths = run(tp, tmp_path / "o", None, intervals_path=tmp_path / "absent.parquet")
    assert "within_run" not in paths


def test_run_empty_tidy_is_an_error(tmp_path):
    # issue 9: a header-only table gave empty or NaN tables and exit 0
    tp = tmp_path / "tidy.parquet"
    tidy().to_parquet(tp)
    with pytest.raises(ValueError, match="no rows"):
        run(tp, tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_outliers_file_lists_flagged_runs(tmp_path):
    tp = tmp_path / "tidy.parquet"
    tidy(rows([10.0, 10.2, 9.9, 10.1, 10.0, 14.0, 10.05, 6.0])).to_parquet(tp)
    o = pd.read_csv(run(tp, tmp_path / "o")["outliers"])
    assert sorted(o["value"].tolist()) == [6.0, 14.0] and sorted(o["repeat"].tolist()) == [6, 8]


# ---- settings and the config schema ------------------------------------------


def _schema_stats():

    import yaml

    from podnet.config.schema import SCHEMA_PATH

    schema = yaml.safe_load(SCHEMA_PATH.read_text())
    return schema["properties"]["stats"]


def test_defaults_valid_and_documented_in_schema():
    import jsonschema

    from podnet.stats import DEFAULTS

    sub = _schema_stats()
    jsonschema.validate(DEFAULTS, sub)

    def walk(defaults, node, path):
        for key, value in defaults.items():
            assert key in node["properties"], f"{path}{key} missing from the schema"
            child = node["properties"][key]
            if isinstance(value, dict):
                walk(value, child, f"{path}{key}.")
            elif "default" in child:
                assert child["default"] == value, f"{path}{key}: schema default {child['default']} != {value}"

    walk(DEFAULTS, sub, "stats.")


def test_schema_rejects_typos():
    import jsonschema

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"bootstrap": {"resample": 10}}, _schema_stats())


def test_empty_yaml_keys_keep_defaults():
    from podnet.stats import DEFAULTS, resolve

    s = resolve({"comparisons": None, "bootstrap": None, "planning": {"max_repeats": None}})
    assert s["comparisons"] == [] and s["bootstrap"] == DEFAULTS["bootstrap"]
    assert s["planning"]["max_repeats"] == DEFAULTS["planning"]["max_repeats"]
    with pytest.raises(ValueError):
        resolve({"experiment": "x"})  # a whole config is not a stats mapping
