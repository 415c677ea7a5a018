"""Issue 10, parsing half: each reproduction of the first list is a test here.

Every output either parses to the run's values or is rejected with a reason; every
failure is the one file's; `podnet parse` and the pipeline share one path.
"""

import codecs
import os
import subprocess
import sys

import pytest
import yaml

from podnet.parse import parse_experiment, parse_text, shard_entries
from podnet.parse import stage as parse_mod
from podnet.parse.decode import DecodeError, decode
from podnet.parse.raw import SidecarError, read_sidecar, validate_sidecar, write_raw
from podnet.tools import ParseError, get
from tests.conftest import FIXTURES, REPO


def values(text, tool=None, **kw):
    _, result = parse_text(decode(text.encode() if isinstance(text, str) else text), tool, **kw)
    return {(m.metric, m.direction): m.value for m in result.measurements}


def fixture(rel):
    return (FIXTURES / rel).read_bytes()


# ---- completeness: cut outputs never produce numbers ------------------------------------------


def test_wrk_cut_inside_its_last_line_is_rejected():
    with pytest.raises(ParseError, match="cut off"):
        values(fixture("wrk/basic.txt")[:283])
    assert values(fixture("wrk/basic.txt"))[("requests_per_second", None)] == 27685.76


@pytest.mark.parametrize(
    "rel",
    [
        "wrk/basic.txt",
        "ab/basic.txt",
        "netperf/tcp-stream.txt",
        "qperf/verbose.txt",
        "sockperf/ping-pong-udp.txt",
    ],
)
def test_every_cut_inside_the_last_result_line_is_rejected(rel):
    data = fixture(rel)
    full = values(data)
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    for n in range(last, len(data) - 1):
        try:
            got = values(data[:n])
        except ParseError:
            continue
        assert got.items() <= full.items(), (rel, n)


def test_iperf3_p3_cut_before_sum_is_rejected():
    data = fixture("iperf3/tcp-p3.txt")
    cut = data[: data.index(b"[SUM]", data.rindex(b"- - - -"))]  # per-stream summary, no [SUM]
    with pytest.raises(ParseError, match=r"\[SUM\]"):
        values(cut)


def test_ping_cut_before_statistics_is_rejected_unless_declared_an_excerpt():
    data = fixture("ping/loopback-plain.txt")
    cut = data[: data.index(b"\n---") + 1]
    with pytest.raises(ParseError, match="statistics"):
        values(cut)
    got = values(cut, "ping", excerpt=True)
    assert got[("rtt_avg", None)] > 0


def test_seed_excerpts_are_marked_in_the_tidy_table():
    parsed = parse_experiment(REPO / "raw/seed-cni-1gbe", "seed-cni-1gbe")
    ping = parsed.tidy[parsed.tidy["tool"] == "ping"]
    assert len(ping) and ping["excerpt"].all()
    assert not parsed.tidy[parsed.tidy["tool"] != "ping"]["excerpt"].any()
    assert len(parsed.failed) == 0


def test_qperf_command_asks_for_tests_the_output_lacks():
    text = fixture("qperf/verbose.txt").decode()
    head = text[: text.index("udp_bw:")]
    cmd = "qperf 127.0.0.1 -t 2 -v tcp_bw udp_bw tcp_lat udp_lat conf"
    with pytest.raises(ParseError, match="udp_bw"):
        parse_text(head, "qperf", command=cmd)


# ---- decoding in one place --------------------------------------------------------------------


@pytest.mark.parametrize("how", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "crlf"])
@pytest.mark.parametrize(
    "rel",
    ["iperf2/tcp-csv-P2.txt", "qperf/verbose.txt", "iperf3/tcp-forward.json", "ping/loopback-plain.txt"],
)
def test_bom_utf16_utf32_and_crlf_give_the_same_values(rel, how):
    text = fixture(rel).decode()
    if how == "crlf":
        data = text.replace("\n", "\r\n").encode()
    elif how == "utf-16":  # Windows PowerShell's `>`: BOM, UTF-16 LE, CRLF
        data = codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le")
    else:
        data = text.encode(how)
    assert values(data) == values(text)


def test_iperf2_csv_p2_with_a_bom_keeps_both_streams():
    data = codecs.BOM_UTF8 + fixture("iperf2/tcp-csv-P2.txt")
    got = values(data)
    assert got[("throughput", None)] == pytest.approx(49.1e9, rel=0.01)


def test_binary_and_corrupted_bytes_are_rejected_with_a_reason():
    good = fixture("wrk/basic.txt")
    with pytest.raises(DecodeError, match="invalid byte"):
        decode(good[:100] + bytes([good[100] ^ 0x80]) + good[101:])
    with pytest.raises(DecodeError, match="NUL"):
        decode(good[:100] + b"\0" + good[101:])
    assert decode(good + b"\0" * 100) == good.decode()  # a NUL-padded tail is padding
    with pytest.raises(DecodeError, match="empty"):
        decode(b"  \n")


# ---- every failure is per file ----------------------------------------------------------------


def put(d, rel, content, **meta):
    return write_raw(d / rel, content, {"variant": "v", "scenario": "s", **meta})


@pytest.fixture
def raw(tmp_path):
    d = tmp_path / "raw"
    put(d, "good.json", fixture("iperf3/tcp-forward.json"), tool="iperf3")
    return d


def _failed(parsed):
    return {os.path.basename(r.raw_path): r for r in parsed.failed.itertuples()}


def test_an_adapter_exception_is_a_failed_run_naming_file_adapter_and_type(raw, monkeypatch):
    put(raw, "boom.txt", fixture("wrk/basic.txt"), tool="wrk")
    wrk = get("wrk")

    def boom(text):
        return [][1]

    monkeypatch.setattr(wrk, "parse", boom)
    parsed = parse_experiment(raw, "e")
    f = _failed(parsed)["boom.txt"]
    assert (
        f.tool == "wrk" and f.error == "IndexError" and "IndexError" in f.reason and "list index" in f.reason
    )
    assert parsed.tidy["run_id"].unique().tolist() == ["good"]


def test_broken_symlink_loop_directory_link_and_undecodable_name_are_failed_runs(raw):
    os.symlink(raw / "nowhere.txt", raw / "dangling.txt")
    os.symlink(raw / "loop.txt", raw / "loop.txt")
    os.symlink(raw, raw / "linkdir")
    bad_name = os.fsencode(raw) + b"/caf\xe9.txt"
    with open(bad_name, "wb") as fh:
        fh.write(fixture("wrk/basic.txt"))
    parsed = parse_experiment(raw, "e")
    f = _failed(parsed)
    assert "broken symlink" in f["dangling.txt"].reason
    assert "symlink loop" in f["loop.txt"].reason
    assert "not followed" in f["linkdir"].reason
    assert "not valid UTF-8" in f["caf\\xe9.txt"].reason
    assert parsed.tidy["run_id"].unique().tolist() == ["good"]
    parsed.failed.to_csv(os.devnull)  # writable: no surrogates left in the table


def test_unreadable_directory_and_sidecar_are_failed_runs(raw, monkeypatch):
    put(raw, "sub/a.json", fixture("iperf3/tcp-forward.json"), tool="iperf3")
    put(raw, "side.json", fixture("iperf3/tcp-forward.json"), tool="iperf3")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("sub"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)  # root ignores chmod 000: simulate the denial
    real_read = parse_mod.read_sidecar.__globals__["Path"].read_text

    def read_text(self, *a, **kw):
        if self.name == "side.json.meta.yaml":
            raise PermissionError(13, "Permission denied")
        return real_read(self, *a, **kw)

    monkeypatch.setattr(parse_mod.read_sidecar.__globals__["Path"], "read_text", read_text)
    parsed = parse_experiment(raw, "e")
    f = _failed(parsed)
    assert "unreadable directory" in f["sub"].reason
    assert "cannot be read" in f["side.json"].reason
    assert parsed.tidy["run_id"].unique().tolist() == ["good"]


def test_bad_entries_reach_the_shard_listing_so_snakemake_reruns(raw):
    os.symlink(raw / "nowhere.txt", raw / "dangling.txt")
    entries = [e for es in shard_entries(raw, 4).values() for e in es]
    bad = [e for e in entries if not isinstance(e, os.PathLike)]
    assert [b.display().rsplit("/", 1)[1] for b in bad] == ["dangling.txt"]


# ---- sidecar schema ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, what",
    [
        ({"repeat": "abc"}, "repeat"),
        ({"streams": [1, 2]}, "streams"),
        ({"sha256": 0}, "sha256"),
        ({"sha256": False}, "sha256"),
        ({"repeat": True}, "repeat"),
        ({"status": "maybe"}, "status"),
        ({"excerpt": "yes"}, "excerpt"),
    ],
)
def test_sidecar_types_are_validated(extra, what):
    with pytest.raises(SidecarError, match=what):
        validate_sidecar({"variant": "v", "scenario": "s", **extra})


def test_a_sidecar_with_a_wrong_type_is_a_failed_run(raw):
    p = put(raw, "r.json", fixture("iperf3/tcp-forward.json"), tool="iperf3")
    side = p.with_name(p.name + ".meta.yaml")
    meta = yaml.safe_load(side.read_text())
    side.write_text(yaml.safe_dump({**meta, "sha256": 0}))
    f = _failed(parse_experiment(raw, "e"))
    assert "sha256" in f["r.json"].reason
    with pytest.raises(SidecarError):
        read_sidecar(p)


def test_config_names_with_a_trailing_newline_are_refused():
    import jsonschema

    schema = yaml.safe_load((REPO / "podnet/config/config.schema.yaml").read_text())
    jsonschema.validate({"experiment": "ok-name"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"experiment": "ok-name\n"}, schema)


# ---- `podnet parse` shares the pipeline's path --------------------------------------------------


def podnet(*args, stdin=None, **kw):
    return subprocess.run(
        [sys.executable, "-m", "podnet.cli", *map(str, args)], capture_output=True, text=True, cwd=REPO, **kw
    )


def test_cli_reports_bad_files_prints_good_rows_and_exits_nonzero(tmp_path):
    good = tmp_path / "good.txt"
    good.write_bytes(fixture("wrk/basic.txt"))
    (tmp_path / "somedir").mkdir()
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    failed = put(tmp_path, "failed.txt", fixture("wrk/basic.txt"), status="failed", error="pod died")
    changed = put(tmp_path, "changed.txt", fixture("wrk/basic.txt"))
    changed.write_bytes(fixture("wrk/basic.txt") + b"\n")
    r = podnet("parse", good, tmp_path / "somedir", tmp_path / "loop", failed, changed)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "requests_per_second" in r.stdout and "27685.76" in r.stdout
    for what in ("somedir: a directory", "loop: symlink loop", "failed when it was launched", "sha256"):
        assert what in r.stderr, what


def test_cli_closed_pipe_is_quiet(tmp_path):
    f = tmp_path / "big.txt"
    f.write_bytes(fixture("qperf/vv.txt"))
    files = [f] * 200
    p = subprocess.Popen(
        [sys.executable, "-m", "podnet.cli", "parse", *map(str, files)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_cli_tool_forced_on_another_tools_output_is_an_error(tmp_path):
    f = tmp_path / "x.txt"
    f.write_bytes(fixture("iperf3/tcp-forward.txt"))
    r = podnet("parse", "--tool", "iperf2", f)
    assert r.returncode == 1 and "iperf3" in r.stderr and "iperf2" in r.stderr


# ---- big files: bounded head for detection, ping streams --------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "ping").glob("*.txt")))
def test_streamed_ping_parse_equals_the_whole_text_parse(name, monkeypatch, tmp_path):
    path = FIXTURES / "ping" / name

    def outcome():
        try:
            _, r = parse_mod.parse_path(path, excerpt=True)
        except ParseError as exc:
            return type(exc).__name__
        return sorted((m.metric, round(m.value, 15)) for m in r.measurements), r.info.get("excerpt")

    whole = outcome()
    monkeypatch.setattr(parse_mod, "STREAM_BYTES", 0)
    assert outcome() == whole


def test_big_ping_log_detects_from_its_head_and_streams(monkeypatch, tmp_path):
    text = fixture("ping/loopback-plain.txt").decode()
    lines = text.splitlines(keepends=True)
    replies = [ln for ln in lines if "bytes from" in ln]
    body = lines[0] + "".join(replies * 3000) + "".join(ln for ln in lines[1:] if "bytes from" not in ln)
    path = tmp_path / "big.txt"
    path.write_text(body)
    monkeypatch.setattr(parse_mod, "STREAM_BYTES", 1024)
    monkeypatch.setattr(get("ping"), "parse_lines", get("ping").parse_lines)  # the streaming path is taken
    calls = []
    real = parse_mod.read_text
    monkeypatch.setattr(parse_mod, "read_text", lambda p: calls.append(p) or real(p))
    _, r = parse_mod.parse_path(path)
    assert calls == []  # never read whole
    assert {m.metric: m.value for m in r.measurements}["packets_transmitted"] == 3
