"""Seed reports checked against their own raw outputs.

A seed report pastes raw tool output and then summarises it (a conclusion table). This module
finds every place where

* a published summary figure disagrees with the raw outputs the pipeline parsed
  (:func:`compare_claims`; claims are transcribed as printed into ``raw/<exp>/published/*.csv``),
* a raw output disagrees with itself: its figures do not follow from each other
  (:func:`consistency_checks`: ab's requests/s = complete requests / time taken, ...), or it names
  another host than the one it was run against (:func:`provenance_checks`: iperf 2's target vs
  its connected peer, ab's ``Benchmarking`` vs ``Server Hostname``, one node described
  differently by qperf ``conf`` blocks).

Tolerances come from the printed precision: a figure printed as ``4.886`` stands for
[4.8855, 4.8865]; two figures agree when their intervals overlap. The notebook
``notebooks/seed_discrepancies.ipynb`` only calls :func:`discrepancies`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from podnet import adapters
from podnet.adapters.base import ParseError
from podnet.adapters.reference import to_si
from podnet.parse import read_text
from podnet.raw import SidecarError, find_raw_files, read_sidecar

#: columns of the tables this module returns
COLUMNS = ["kind", "variant", "scenario", "tool", "metric", "published", "raw", "status", "detail", "where"]


def half_ulp(printed: str) -> float:
    """Half a unit in the last printed digit: '4.886' -> 0.0005, '942' -> 0.5, '1.5e3' -> 50."""
    m = re.search(r"(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?", printed)
    if not m:
        return 0.0
    decimals = len(m.group(2) or "")
    exp = int(m.group(3) or 0)
    return 0.5 * 10.0 ** (exp - decimals)


def load_claims(paths: Iterable[Path | str]) -> pd.DataFrame:
    """Published figures (``variant, tool, test, metric, value, unit`` [+ ``scenario, printed, line, column``])
    in SI, each with its tolerance ``tol`` (half a unit of its last printed digit, in SI)."""
    frames = []
    for p in paths:
        df = pd.read_csv(p, comment="#", dtype=str, keep_default_na=False)
        df["file"] = Path(p).name
        frames.append(df)
    if not frames:
        return pd.DataFrame(
            columns=["variant", "tool", "test", "metric", "value", "unit", "si", "si_unit", "tol"]
        )
    df = pd.concat(frames, ignore_index=True)
    si, units, tols = [], [], []
    for _, r in df.iterrows():
        v, u = to_si(float(r["value"]), r["unit"])
        scale = v / float(r["value"]) if float(r["value"]) else 1.0
        si.append(v)
        units.append(u)
        tols.append(half_ulp(r["value"]) * abs(scale))
    df["si"], df["si_unit"], df["tol"] = si, units, tols
    return df


def _agree(a: float, tol_a: float, b: float, tol_b: float) -> bool:
    return abs(a - b) <= tol_a + tol_b + 1e-12 * max(abs(a), abs(b))


def _printed_tol(value: float) -> float:
    """Raw values come as floats: assume they were printed with the digits they have (<= 6 significant)."""
    if value == 0 or not math.isfinite(value):
        return 0.0
    text = f"{value:.6g}"
    mant = text.split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(text.split("e")[1]) if "e" in text else 0
    return 0.5 * 10.0 ** (exp - decimals)


def scalar_lines(text: str) -> list[tuple[float, str]]:
    """Lone '<number><time unit>' lines, e.g. the mean a ``ping | gawk`` one-liner prints ('0.747789ms')."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s)\s*", line)
        if m:
            out.append(to_si(float(m.group(1)), m.group(2)))
    return out


def _raw_candidates(
    tidy: pd.DataFrame, failed: pd.DataFrame | None, claim: pd.Series
) -> list[dict[str, Any]]:
    """Raw figures a claim could be summarising: same variant (and scenario), tool, metric (and test)."""
    t = tidy[tidy["source"] != "reference"] if "source" in tidy else tidy
    sel = (t["variant"] == claim["variant"]) & (t["tool"] == claim["tool"]) & (t["metric"] == claim["metric"])
    if claim.get("scenario"):
        sel &= t["scenario"] == claim["scenario"]
    if claim.get("test"):
        sel &= t["test"] == claim["test"]
    if claim.get("direction"):
        sel &= t["direction"] == claim["direction"]
    out = [
        {
            "value": float(r["value"]),
            "run": str(r["run_id"]),
            "how": "parsed",
            "tol": _printed_tol(float(r["value"])),
        }
        for _, r in t[sel].iterrows()
    ]
    # runs the adapter could not parse but whose text is one printed scalar (ping | gawk means)
    if failed is not None and len(failed) and claim["si_unit"] == "s":
        for _, f in failed.iterrows():
            path = Path(str(f["raw_path"]))
            try:
                meta = read_sidecar(path)
                text = read_text(path)
            except (SidecarError, ParseError, OSError):
                continue
            if meta.get("variant") != claim["variant"] or meta.get("tool", f.get("tool")) != claim["tool"]:
                continue
            for value, unit in scalar_lines(text):
                if unit == "s":
                    out.append(
                        {
                            "value": value,
                            "run": path.stem,
                            "how": "printed scalar (run not parsed)",
                            "tol": _printed_tol(value),
                        }
                    )
    return out


def _fmt(value: float, unit: str) -> str:
    scales = {
        "bit/s": [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")],
        "s": [(1, "s"), (1e-3, "ms"), (1e-6, "µs")],
    }
    for factor, name in scales.get(unit, []):
        if abs(value) >= factor:
            return f"{value / factor:.6g} {name}"
    return f"{value:.6g} {unit}"


def _siblings(metric: str) -> set[str]:
    """A metric and the figures a summary could mistake it for (receiver vs sender side)."""
    base = metric.removeprefix("sender_")
    return {base, f"sender_{base}"}


def _same_figure_elsewhere(claim: pd.Series, tidy: pd.DataFrame) -> str:
    """Where a disagreeing claim's figure does stand in the raw output of the same variant:
    another metric of the same unit (a sender figure given as the receiver's), another test or
    direction, or another scenario (a cell copied from another section)."""
    t = tidy[
        (tidy["variant"] == claim["variant"])
        & (tidy["tool"] == claim["tool"])
        & (tidy["unit"] == claim["si_unit"])
        & tidy["metric"].isin(_siblings(claim["metric"]))
    ]
    if "source" in t:
        t = t[t["source"] != "reference"]
    same_case = (t["metric"] == claim["metric"]) & (t["scenario"] == claim.get("scenario", t["scenario"]))
    for key in ("test", "direction"):
        if claim.get(key):
            same_case &= t[key] == claim[key]
    hits = []
    for _, r in t[~same_case].iterrows():
        if _agree(claim["si"], claim["tol"], float(r["value"]), _printed_tol(float(r["value"]))):
            hits.append(f"{r['metric']} of {r['run_id']}")
    return f"; the published figure is the raw {', '.join(sorted(set(hits)))}" if hits else ""


def load_ratio_claims(paths: Iterable[Path | str]) -> pd.DataFrame:
    """Published ratios (``published/ratios*.csv``): ``numerator, denominator`` (values of column
    ``by``, default scenario), ``variant, tool, test, direction, metric, value, printed, line``."""
    frames = [
        pd.read_csv(p, comment="#", dtype=str, keep_default_na=False).assign(file=Path(p).name) for p in paths
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compare_ratio_claims(claims: pd.DataFrame, tidy: pd.DataFrame) -> pd.DataFrame:
    """Each published ratio against the ratio of the raw means; when it disagrees, every other
    pairing of the same two cases (other metric of the same unit, other test or direction) that
    would give the published figure is named."""
    rows = []
    t = tidy[tidy["source"] != "reference"] if "source" in tidy else tidy
    for _, c in claims.iterrows():
        by = c.get("by") or "scenario"
        printed = float(c["value"])
        tol = half_ulp(c["value"])
        base = {
            "kind": "ratio vs raw",
            "variant": c.get("variant", ""),
            "scenario": f"{c['numerator']} / {c['denominator']}",
            "tool": c["tool"],
            "metric": c["metric"],
            "published": c.get("printed") or c["value"],
            "where": f"{c.get('file', '')} line {c.get('line', '')}".strip(),
        }

        def means(side: str, metric: str, test: str | None, direction: str | None) -> pd.Series:
            sel = (t[by] == c[side]) & (t["tool"] == c["tool"]) & (t["metric"] == metric)
            if c.get("variant"):
                sel &= t["variant"] == c["variant"]
            if test:
                sel &= t["test"] == test
            if direction:
                sel &= t["direction"] == direction
            return t[sel].groupby(["test", "direction"])["value"].mean()

        num = means("numerator", c["metric"], c.get("test"), c.get("direction"))
        den = means("denominator", c["metric"], c.get("test"), c.get("direction"))
        common = num.index.intersection(den.index)
        if not len(common) or (den[common] == 0).all():
            rows.append(
                {
                    **base,
                    "raw": "",
                    "status": "no raw output",
                    "detail": "no raw runs on one side of the ratio",
                }
            )
            continue
        key = common[0]
        raw = num[key] / den[key]
        # the printed ratio has few digits: allow its rounding plus the raw figures' own printed precision
        rel = 2 * 5e-4 + 1e-12
        ok = abs(raw - printed) <= tol + rel * abs(raw)
        detail = f"raw {c['numerator']} / {c['denominator']} = {raw:.6g}"
        status = "agrees" if ok else "disagrees"
        if not ok:
            detail += f" ({(printed - raw) / raw:+.1%})"
            alternatives = []
            metrics = sorted(_siblings(c["metric"]) & set(t[t["tool"] == c["tool"]]["metric"]))
            for m_num in metrics:
                for m_den in metrics:
                    n_all = means("numerator", m_num, None, None)
                    d_all = means("denominator", m_den, None, None)
                    for kn, vn in n_all.items():
                        for kd, vd in d_all.items():
                            if vd and abs(vn / vd - printed) <= tol + rel * abs(vn / vd):
                                alternatives.append(
                                    f"{m_num} {' '.join(kn)} / {m_den} {' '.join(kd)} = {vn / vd:.6g}"
                                )
            detail += (
                ("; the printed figure is " + "; ".join(sorted(set(alternatives))))
                if alternatives
                else ("; no pairing of the raw figures gives the printed value")
            )
        rows.append({**base, "raw": f"{raw:.6g}", "status": status, "detail": detail})
    return pd.DataFrame(rows, columns=COLUMNS)


def compare_claims(
    claims: pd.DataFrame, tidy: pd.DataFrame, failed: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every claim against the raw figures: status ``agrees``, ``disagrees`` or ``no raw output``.

    A disagreeing claim is also checked against the other variants' raw figures of the same
    metric (a match means the row was copied from the wrong section) and against what the
    raw output's other figures imply (:func:`consistency_checks`).
    """
    implied = consistency_checks(tidy, keep_numbers=True)
    rows = []
    for _, c in claims.iterrows():
        cands = _raw_candidates(tidy, failed, c)
        where = f"{c.get('file', '')} line {c.get('line', '')}".strip()
        base = {
            "kind": "summary vs raw",
            "variant": c["variant"],
            "scenario": c.get("scenario", ""),
            "tool": c["tool"],
            "metric": c["metric"],
            "published": c.get("printed") or f"{c['value']} {c['unit']}",
            "where": where,
        }
        if not cands:
            other = tidy[
                (tidy["variant"] == c["variant"])
                & (tidy["tool"] == c["tool"])
                & (tidy["unit"] == c["si_unit"])
            ]
            seen = "; ".join(
                f"{r['test']} {r['metric']} {_fmt(r['value'], r['unit'])} ({r['run_id']})"
                for _, r in other.iterrows()
                if r["metric"] in ("throughput", "sender_throughput", c["metric"])
            )
            rows.append(
                {
                    **base,
                    "raw": "",
                    "status": "no raw output",
                    "detail": f"no {c['tool']} {c.get('test') or ''} {c['metric']} run for {c['variant']} in the raw outputs"
                    + (f"; what there is: {seen}" if seen else ""),
                }
            )
            continue
        agreeing = [x for x in cands if _agree(c["si"], c["tol"], x["value"], x["tol"])]
        raw_text = "; ".join(
            f"{_fmt(x['value'], c['si_unit'])} ({x['run']}{'' if x['how'] == 'parsed' else ', ' + x['how']})"
            for x in cands
        )
        if agreeing:
            others = [x for x in cands if x not in agreeing]
            detail = f"matches {agreeing[0]['run']}" + (
                f"; other runs: {', '.join(_fmt(x['value'], c['si_unit']) for x in others)}" if others else ""
            )
            rows.append({**base, "raw": raw_text, "status": "agrees", "detail": detail})
            continue
        # copied from another section?
        t = tidy[
            (tidy["tool"] == c["tool"]) & (tidy["metric"] == c["metric"]) & (tidy["variant"] != c["variant"])
        ]
        elsewhere = sorted(
            {
                str(r["variant"])
                for _, r in t.iterrows()
                if _agree(c["si"], c["tol"], float(r["value"]), _printed_tol(float(r["value"])))
            }
        )
        diff = (c["si"] - cands[0]["value"]) / cands[0]["value"] if cands[0]["value"] else float("nan")
        detail = f"published {_fmt(c['si'], c['si_unit'])} vs raw {_fmt(cands[0]['value'], c['si_unit'])} ({diff:+.1%})"
        if elsewhere:
            detail += f"; the published figure is {', '.join(elsewhere)}'s raw value"
        detail += _same_figure_elsewhere(c, tidy)
        for _, imp in implied[
            (implied["variant"] == c["variant"])
            & (implied["metric"] == c["metric"])
            & (implied["tool"] == c["tool"])
        ].iterrows():
            if _agree(c["si"], c["tol"], imp["_expected"], imp["_tol"]):
                detail += (
                    f"; it is what {imp['where']}'s other figures imply ({imp['detail'].split('; ', 1)[1]})"
                )
        rows.append({**base, "raw": raw_text, "status": "disagrees", "detail": detail})
    return pd.DataFrame(rows, columns=COLUMNS)


_UNITS = {
    "requests_per_second": "requests/s",
    "time_per_request": "s",
    "time_per_request_all": "s",
    "transfer_rate": "bit/s",
    "throughput": "bit/s",
}


def _check(
    rows: list,
    kind: str,
    r: dict,
    metric: str,
    printed: float,
    printed_tol: float,
    expected: float,
    expected_tol: float,
    formula: str,
) -> None:
    ok = _agree(printed, printed_tol, expected, expected_tol)
    unit = _UNITS.get(metric, "")
    rows.append(
        {
            "kind": kind,
            "variant": r["variant"],
            "scenario": r["scenario"],
            "tool": r["tool"],
            "metric": metric,
            "published": _fmt(printed, unit),
            "raw": _fmt(expected, unit),
            "status": "consistent" if ok else "inconsistent",
            "detail": f"{metric} printed {_fmt(printed, unit)}; {formula} = {_fmt(expected, unit)}",
            "where": r["run_id"],
            "_expected": expected,
            "_tol": expected_tol,
        }
    )


def consistency_checks(tidy: pd.DataFrame, keep_numbers: bool = False) -> pd.DataFrame:
    """Figures of one raw output that must follow from each other (ab, iperf 2)."""
    rows: list[dict] = []
    t = tidy[tidy["source"] != "reference"] if "source" in tidy else tidy
    for _run, g in t.groupby("run_id", sort=True):
        m = dict(zip(g["metric"], g["value"]))
        r = g.iloc[0].to_dict()
        kind = "raw vs itself"
        if r["tool"] == "ab" and {"requests_per_second", "complete_requests", "duration"} <= m.keys():
            n, T = m["complete_requests"], m["duration"]
            dT = 0.0005  # 'Time taken for tests: 8.330 seconds'
            c = float(r["streams"]) if pd.notna(r["streams"]) else None
            _check(
                rows,
                kind,
                r,
                "requests_per_second",
                m["requests_per_second"],
                0.005,
                n / T,
                n / T * dT / T,
                "complete requests / time taken",
            )
            if c and "time_per_request" in m:
                _check(
                    rows,
                    kind,
                    r,
                    "time_per_request",
                    m["time_per_request"],
                    0.0005e-3,
                    c * T / n,
                    c * dT / n,
                    "concurrency x time taken / complete requests",
                )
            if "time_per_request_all" in m:
                _check(
                    rows,
                    kind,
                    r,
                    "time_per_request_all",
                    m["time_per_request_all"],
                    0.0005e-3,
                    T / n,
                    dT / n,
                    "time taken / complete requests",
                )
            if {"transfer_rate", "total_transferred"} <= m.keys():
                exp = m["total_transferred"] * 8 / T
                _check(
                    rows,
                    kind,
                    r,
                    "transfer_rate",
                    m["transfer_rate"],
                    0.005 * 8192,
                    exp,
                    exp * dT / T,
                    "total transferred / time taken",
                )
        if r["tool"] == "iperf2" and {"throughput", "bytes_transferred", "duration"} <= m.keys():
            exp = m["bytes_transferred"] * 8 / m["duration"]
            # iperf 2 prints 3 significant digits of both figures
            _check(
                rows,
                kind,
                r,
                "throughput",
                m["throughput"],
                m["throughput"] * 0.005,
                exp,
                exp * 0.005,
                "transfer x 8 / interval",
            )
    return pd.DataFrame(rows, columns=COLUMNS + (["_expected", "_tol"] if keep_numbers else []))


def _infos(raw_dir: Path) -> list[tuple[Path, dict, Any]]:
    out = []
    for f in find_raw_files(raw_dir):
        try:
            meta = read_sidecar(f)
            text = read_text(f)
            adapter = adapters.get(meta["tool"]) if meta.get("tool") else adapters.detect(text)
            res = adapter.parse(text)
        except (SidecarError, ParseError, KeyError, OSError, UnicodeDecodeError):
            continue
        out.append((f, meta, res))
    return out


def provenance_checks(raw_dir: Path | str) -> pd.DataFrame:
    """Raw outputs that name other hosts than the ones they ran against, or describe one node two ways."""
    raw_dir = Path(raw_dir)
    rows: list[dict] = []
    nodes: dict[str, dict[str, set]] = {}
    for f, meta, res in _infos(raw_dir):
        info = res.info
        rel = f.relative_to(raw_dir).as_posix()
        base = {
            "kind": "raw vs itself",
            "variant": meta.get("variant", ""),
            "scenario": meta.get("scenario", ""),
            "tool": meta.get("tool", ""),
            "where": rel,
        }
        if (
            info.get("target")
            and info.get("remote")
            and info.get("role") == "client"
            and info["target"] != info["remote"]
        ):
            rows.append(
                {
                    **base,
                    "metric": "peer",
                    "published": f"Client connecting to {info['target']}",
                    "raw": f"connected with {info['remote']}",
                    "status": "inconsistent",
                    "detail": "iperf 2 connected to another address than its target (pasted from another run?)",
                }
            )
        if (
            info.get("benchmarking")
            and info.get("server_hostname")
            and info["benchmarking"] != info["server_hostname"]
        ):
            rows.append(
                {
                    **base,
                    "metric": "server",
                    "published": f"Benchmarking {info['benchmarking']}",
                    "raw": f"Server Hostname: {info['server_hostname']}",
                    "status": "inconsistent",
                    "detail": "ab benchmarked another host than its report names (pasted from another run?)",
                }
            )
        conf = info.get("conf") or {}
        for side in ("loc", "rem"):
            name = conf.get(f"{side}_node")
            if not name:
                continue
            d = nodes.setdefault(name, {})
            for key in ("os", "cpu", "qperf"):
                if conf.get(f"{side}_{key}"):
                    d.setdefault(key, set()).add((conf[f"{side}_{key}"], rel))
    for name, d in sorted(nodes.items()):
        for key, vals in sorted(d.items()):
            distinct = sorted({v for v, _ in vals})
            if len(distinct) > 1:
                where = "; ".join(
                    f"{v} in {', '.join(sorted(r for vv, r in vals if vv == v))}" for v in distinct
                )
                rows.append(
                    {
                        "kind": "raw vs itself",
                        "variant": "",
                        "scenario": "",
                        "tool": "qperf",
                        "metric": f"conf {key}",
                        "published": name,
                        "raw": " | ".join(distinct),
                        "status": "inconsistent",
                        "detail": f"node {name} is described with {len(distinct)} different {key} values: {where}",
                        "where": "conf blocks",
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def discrepancies(
    processed_dir: Path | str,
    raw_dir: Path | str,
    published: Iterable[Path | str] | None = None,
    include_agreeing: bool = False,
) -> pd.DataFrame:
    """Everything :func:`compare_claims`, :func:`consistency_checks` and :func:`provenance_checks` find.

    ``published`` defaults to ``raw_dir/published/*.csv``. Only disagreements are returned unless
    ``include_agreeing``.
    """
    processed_dir, raw_dir = Path(processed_dir), Path(raw_dir)
    tidy_path = processed_dir / "tidy.parquet"
    tidy = pd.read_parquet(tidy_path) if tidy_path.exists() else pd.read_csv(processed_dir / "tidy.csv")
    failed_path = processed_dir / "failed_runs.csv"
    failed = pd.read_csv(failed_path, dtype=str) if failed_path.exists() else None
    paths = (
        sorted((raw_dir / "published").glob("*.csv")) if published is None else [Path(p) for p in published]
    )
    ratio_paths = [p for p in paths if Path(p).name.startswith("ratios")]
    paths = [p for p in paths if p not in ratio_paths]
    parts = [
        compare_claims(load_claims(paths), tidy, failed) if paths else pd.DataFrame(columns=COLUMNS),
        compare_ratio_claims(load_ratio_claims(ratio_paths), tidy)
        if ratio_paths
        else pd.DataFrame(columns=COLUMNS),
        consistency_checks(tidy),
        provenance_checks(raw_dir),
    ]
    parts = [p for p in parts if len(p)]
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    if not include_agreeing:
        out = out[~out["status"].isin(["agrees", "consistent"])]
    return out.reset_index(drop=True)
