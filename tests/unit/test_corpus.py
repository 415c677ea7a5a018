"""Real outputs other people recorded (``../shared/corpus/``, see its README) through the pipeline's
own parse path (:func:`podnet.parse.parse_path`, tool detected): each file gives the values its
reference gives (jc's parse beside each ping output; ``wild/expected.json``) or is rejected with
its true reason. A plausible number from an output that measured nothing is never acceptable.

Read from the corpus in place (never copied into the project); skipped when it is absent.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from podnet.parse import apply_error_threshold, parse_path
from podnet.tools.base import ParseError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from mangle import SHARED_CORPUS as CORPUS

if not (CORPUS / "README.md").exists():
    pytest.skip(f"the shared corpus is not at {CORPUS} (set PODNET_SHARED_CORPUS)", allow_module_level=True)

# jc's keys -> (podnet metric, factor from jc's unit to podnet's SI unit)
JC = {
    "round_trip_ms_min": ("rtt_min", 1e-3),
    "round_trip_ms_avg": ("rtt_avg", 1e-3),
    "round_trip_ms_max": ("rtt_max", 1e-3),
    "packet_loss_percent": ("loss", 1e-2),
    "packets_transmitted": ("packets_transmitted", 1.0),
}
# every rejected file, with (a substring of) the reason that is true for it
REJECTED = {
    # a reply line printed twice verbatim, without '(DUP!)', while the statistics count 2 replies
    "jc-ping/ubuntu-22.04--ping6-ip-source-ip.out": "repeats the line before it",
    "wild/iperf3--cloudpilot--3.6-error-control-socket-crlf.json": "control socket has closed unexpectedly",
    "wild/iperf3--cloudpilot--3.9-empty-start-end.json": "never connected",
    "wild/iperf3--cloudpilot--3.9-truncated-in-end-crlf.json": "not valid JSON",
    "wild/iperf3--cloudpilot--3.9-truncated-mid-intervals-crlf.json": "not valid JSON",
    "wild/iperf3--cloudpilot--error-text-control-socket.txt": "control socket has closed unexpectedly",
    "wild/wrk--pkb--wrk2-all-404.txt": "every request was an error (451 non-2xx/3xx responses of 451)",
}


def _bsd(name: str) -> bool:
    return name.startswith(("freebsd", "osx", "macos"))


def _parse(path: Path) -> tuple[dict[str, float] | None, list[tuple[float, str]], str]:
    """(metric -> value, [(value, unit)], rejection reason or "")."""
    try:
        _, res = parse_path(path)
    except ParseError as exc:
        return None, [], str(exc)
    return {m.metric: m.value for m in res.measurements}, [(m.value, m.unit) for m in res.measurements], ""


def _jc_differences(got: dict[str, float], jc: dict) -> list[str]:
    out = []
    for key, (metric, factor) in JC.items():
        want = jc.get(key)
        have = got.get(metric)
        if want is None and have is None:
            continue
        if (
            want is None
            or have is None
            or not math.isclose(float(want) * factor, have, rel_tol=1e-9, abs_tol=1e-12)
        ):
            out.append(f"{key}: jc {want}, podnet {have}")
    return out


def test_jc_ping_outputs_give_jcs_values_or_their_true_rejection():
    linux, bsd, wrong, rejected = [], [], [], []
    for out in sorted((CORPUS / "jc-ping").glob("*.out")):
        rel = f"jc-ping/{out.name}"
        got, _, why = _parse(out)
        if got is None:
            rejected.append(rel)
            assert rel in REJECTED, f"{rel} rejected: {why}"
            assert REJECTED[rel] in why, f"{rel}: rejected for {why!r}, expected {REJECTED[rel]!r}"
            continue
        diff = _jc_differences(got, json.loads(out.with_suffix(".json").read_text()))
        if diff:
            wrong.append(f"{rel}: {diff}")
        (bsd if _bsd(out.name) else linux).append(rel)
    assert not wrong, wrong  # never a number other than the output's
    n_linux = sum(1 for p in (CORPUS / "jc-ping").glob("*.out") if not _bsd(p.name))
    n_bsd = sum(1 for p in (CORPUS / "jc-ping").glob("*.out") if _bsd(p.name))
    assert len(linux) >= 0.95 * n_linux, f"{len(linux)} of {n_linux} Linux/BusyBox pings"
    assert len(bsd) == n_bsd, f"{len(bsd)} of {n_bsd} FreeBSD/macOS pings (IPv4 and IPv6)"
    assert n_bsd >= 10 and any("ping6" in r for r in bsd)


def test_wild_outputs_give_their_expected_values_or_their_true_rejection():
    expected = json.loads((CORPUS / "wild" / "expected.json").read_text())
    assert len(expected) == len([p for p in (CORPUS / "wild").iterdir() if p.name != "expected.json"])
    for name, exp in sorted(expected.items()):
        rel = f"wild/{name}"
        got, values, why = _parse(CORPUS / "wild" / name)
        if exp.get("fail"):
            assert got is None, f"{rel} measured nothing, yet gave {values[:4]}"
            assert rel in REJECTED and REJECTED[rel] in why, f"{rel}: rejected for {why!r}"
            continue
        assert got is not None, f"{rel} rejected: {why}"
        for value, unit in exp["expect"]:
            assert any(
                u == unit and math.isclose(v, value, rel_tol=1e-4, abs_tol=1e-12) for v, u in values
            ), f"{rel}: expected {value} {unit}, got {values}"


def test_some_http_errors_are_a_fraction_that_the_default_threshold_fails():
    # wrk2: 14 of 600 responses non-2xx: its rate stays, with error_fraction beside it; under the
    # default parse.max_error_fraction (0, any error) the pipeline lists it as a failed run
    import pandas as pd

    from podnet.parse import Parsed, parse_file
    from podnet.parse.tidy import FAILED_COLUMNS, INTERVAL_COLUMNS, coerce

    path = CORPUS / "wild" / "wrk--pkb--wrk2-some-non2xx.txt"
    got, _, _ = _parse(path)
    assert got is not None and got["error_fraction"] == pytest.approx(14 / 600)
    rows, _ = parse_file(path, {"variant": "v", "scenario": "s"}, experiment="corpus", run="r1")
    parsed = Parsed(
        coerce(pd.DataFrame(rows)),
        pd.DataFrame(columns=INTERVAL_COLUMNS),
        pd.DataFrame(columns=FAILED_COLUMNS),
    )
    assert set(parsed.tidy["metric"]) >= {"requests_per_second", "error_fraction"}
    strict = apply_error_threshold(parsed, 0.0)
    assert strict.tidy.empty and "2.33% of the requests were errors" in strict.failed["reason"].iloc[0]
    assert len(apply_error_threshold(parsed, 0.05).tidy) == len(parsed.tidy)


def test_jc_ping_median_is_the_median_of_jcs_reply_times():
    """rtt_median (ping's headline) equals the median of the reply times jc read from each output,
    and is given only when every counted reply has its line."""
    import statistics

    given = 0
    for out in sorted((CORPUS / "jc-ping").glob("*.out")):
        got, _, _ = _parse(out)
        if got is None:
            continue
        jc = json.loads(out.with_suffix(".json").read_text())
        times = [
            float(r["time_ms"]) * 1e-3
            for r in jc.get("responses", [])
            if r.get("type") == "reply" and not r.get("duplicate") and r.get("time_ms") is not None
        ]
        if "rtt_median" not in got:
            printed = bool(times) and len(times) == got.get("packets_received")
            assert not printed, f"{out.name}: every reply printed, no median"
            continue
        given += 1
        assert math.isclose(got["rtt_median"], statistics.median(times), rel_tol=1e-12), out.name
    assert given >= 50, given
