"""Raw outputs against themselves: figures that must follow from each other (ab, iperf 2), and hosts
or nodes an output names differently from the ones it ran against (iperf 2, ab, qperf ``conf``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from podnet.parse.raw import relative_text
from podnet.report.seed_reports.printed import COLUMNS, agree, fmt
from podnet.report.seed_reports.raw_facts import collect

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
    ok = agree(printed, printed_tol, expected, expected_tol)
    unit = _UNITS.get(metric, "")
    rows.append(
        {
            "kind": kind,
            "variant": r["variant"],
            "scenario": r["scenario"],
            "tool": r["tool"],
            "metric": metric,
            "published": fmt(printed, unit),
            "raw": fmt(expected, unit),
            "status": "consistent" if ok else "inconsistent",
            "detail": f"{metric} printed {fmt(printed, unit)}; {formula} = {fmt(expected, unit)}",
            "where": r["run_id"],
            "_expected": expected,
            "_tol": expected_tol,
        }
    )


def consistency_checks(tidy: pd.DataFrame, keep_numbers: bool = False) -> pd.DataFrame:
    """Figures of one raw output that must follow from each other (ab, iperf 2)."""
    rows: list[dict] = []
    t = tidy[tidy["source"] != "reference"] if "source" in tidy else tidy
    # only ab and iperf 2 outputs have figures that follow from each other; per run (in run_id
    # order) its first row and its figures by metric (the last of a metric given twice)
    t = t[t["tool"].isin(("ab", "iperf2")) & t["run_id"].notna()]
    figures: dict[str, dict] = {}
    # columns as lists first: iterating a pyarrow-backed column element by element was a third of
    # this at 10,000 runs
    for run, metric, value in zip(
        t["run_id"].to_numpy(dtype=object), t["metric"].to_numpy(dtype=object), t["value"].tolist()
    ):
        figures.setdefault(run, {})[metric] = value
    first = {r["run_id"]: r for r in t.drop_duplicates("run_id").to_dict("records")}
    for run in sorted(figures):
        m, r = figures[run], first[run]
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


def provenance_checks(raw_dir: Path | str, cache: Path | str | None = None) -> pd.DataFrame:
    """Raw outputs that name other hosts than the ones they ran against, or describe one node two ways
    (``cache``: what each file said, :func:`~podnet.report.seed_reports.raw_facts.collect`)."""
    raw_dir = Path(raw_dir)
    rows: list[dict] = []
    nodes: dict[str, dict[str, set]] = {}
    for f, meta, info in collect(raw_dir, cache):
        rel = relative_text(f, raw_dir)
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
