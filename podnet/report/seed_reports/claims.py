"""A seed report's published figures and ratios (``raw/<exp>/published/*.csv``) against its raw outputs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from podnet.parse import read_text
from podnet.parse.raw import SidecarError, read_sidecar
from podnet.report.seed_reports.printed import COLUMNS, agree, fmt, half_ulp, printed_tol, scalar_lines
from podnet.report.seed_reports.self_checks import consistency_checks
from podnet.tools.base import ParseError
from podnet.tools.reference import to_si


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
            "value": float(value),
            "run": str(run),
            "how": "parsed",
            "tol": printed_tol(float(value)),
        }
        for value, run in zip(t.loc[sel, "value"], t.loc[sel, "run_id"])
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
                            "tol": printed_tol(value),
                        }
                    )
    return out


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
    rest = t[~same_case]
    for metric, run, value in zip(rest["metric"], rest["run_id"], rest["value"].to_numpy(dtype=float)):
        if agree(claim["si"], claim["tol"], float(value), printed_tol(float(value))):
            hits.append(f"{metric} of {run}")
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
    claims: pd.DataFrame,
    tidy: pd.DataFrame,
    failed: pd.DataFrame | None = None,
    implied: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every claim against the raw figures: status ``agrees``, ``disagrees`` or ``no raw output``.

    A disagreeing claim is also checked against the other variants' raw figures of the same
    metric (a match means the row was copied from the wrong section) and against what the
    raw output's other figures imply (``implied``: :func:`consistency_checks` of ``tidy`` with
    ``keep_numbers``, computed here when not given).
    """
    if implied is None:
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
                f"{test} {metric} {fmt(value, unit)} ({run})"
                for test, metric, value, unit, run in zip(
                    other["test"], other["metric"], other["value"], other["unit"], other["run_id"]
                )
                if metric in ("throughput", "sender_throughput", c["metric"])
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
        agreeing = [x for x in cands if agree(c["si"], c["tol"], x["value"], x["tol"])]
        raw_text = "; ".join(
            f"{fmt(x['value'], c['si_unit'])} ({x['run']}{'' if x['how'] == 'parsed' else ', ' + x['how']})"
            for x in cands
        )
        if agreeing:
            others = [x for x in cands if x not in agreeing]
            detail = f"matches {agreeing[0]['run']}" + (
                f"; other runs: {', '.join(fmt(x['value'], c['si_unit']) for x in others)}" if others else ""
            )
            rows.append({**base, "raw": raw_text, "status": "agrees", "detail": detail})
            continue
        # copied from another section?
        t = tidy[
            (tidy["tool"] == c["tool"]) & (tidy["metric"] == c["metric"]) & (tidy["variant"] != c["variant"])
        ]
        elsewhere = sorted(
            {
                str(variant)
                for variant, value in zip(t["variant"], t["value"].to_numpy(dtype=float))
                if agree(c["si"], c["tol"], float(value), printed_tol(float(value)))
            }
        )
        diff = (c["si"] - cands[0]["value"]) / cands[0]["value"] if cands[0]["value"] else float("nan")
        detail = f"published {fmt(c['si'], c['si_unit'])} vs raw {fmt(cands[0]['value'], c['si_unit'])} ({diff:+.1%})"
        if elsewhere:
            detail += f"; the published figure is {', '.join(elsewhere)}'s raw value"
        detail += _same_figure_elsewhere(c, tidy)
        for _, imp in implied[
            (implied["variant"] == c["variant"])
            & (implied["metric"] == c["metric"])
            & (implied["tool"] == c["tool"])
        ].iterrows():
            if agree(c["si"], c["tol"], imp["_expected"], imp["_tol"]):
                detail += (
                    f"; it is what {imp['where']}'s other figures imply ({imp['detail'].split('; ', 1)[1]})"
                )
        rows.append({**base, "raw": raw_text, "status": "disagrees", "detail": detail})
    return pd.DataFrame(rows, columns=COLUMNS)
