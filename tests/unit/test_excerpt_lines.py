"""The sidecar's ``excerpt_lines`` and ``command`` close the cuts that leave a shorter valid-looking output
(issue 10): a declared ping excerpt with another reply count, and a streamed parse, are checked too."""

import pytest

from podnet.parse import parse_path, parse_text
from podnet.parse import stage as parse_mod
from podnet.parse.raw import read_sidecar
from podnet.tools import ParseError, get
from podnet.tools.base import Incomplete
from tests.conftest import REPO

PING = REPO / "raw" / "seed-cni-1gbe" / "physical" / "ping.txt"


def test_the_seed_excerpt_declares_its_reply_count_and_parses_with_it():
    meta = read_sidecar(PING)
    assert meta["excerpt_lines"] == 11
    _, result = parse_path(PING, "ping", excerpt=True, excerpt_lines=meta["excerpt_lines"])
    assert result.info["excerpt"] is True
    assert {m.metric: m.value for m in result.measurements}["packets_received"] == 11


def test_an_excerpt_cut_at_a_reply_end_is_rejected_with_the_count():
    text = PING.read_text()
    short = "".join(text.splitlines(keepends=True)[:-1])
    _, loose = parse_text(short, "ping", excerpt=True)  # without the count: a shorter excerpt
    assert loose.info["excerpt_lines"] == 10
    with pytest.raises(ParseError, match="10 result lines, the sidecar says 11"):
        parse_text(short, "ping", excerpt=True, excerpt_lines=11)


def test_excerpt_lines_for_an_uncounted_excerpt_is_an_error():
    avg = REPO / "raw" / "seed-cni-1gbe" / "physical" / "ping-avg.txt"
    with pytest.raises(ParseError, match="not counted"):
        parse_path(avg, "ping", excerpt=True, excerpt_lines=3)


def test_a_streamed_parse_checks_the_command_too(tmp_path, monkeypatch):
    """Big files go through parse_lines: the sidecar's command is checked there as well."""
    called = []
    ping = get("ping")
    monkeypatch.setattr(type(ping), "complete_for", lambda self, r, c: called.append(c) or None)
    monkeypatch.setattr(parse_mod, "STREAM_BYTES", 10)
    f = tmp_path / "ping.txt"
    f.write_text(PING.read_text())
    with pytest.raises(Incomplete):
        parse_path(f, "ping", command="ping 10.100.100.245")  # no statistics block, not an excerpt
    parse_path(f, "ping", excerpt=True, command="ping 10.100.100.245", excerpt_lines=11)
    with pytest.raises(ParseError, match="sidecar says 12"):
        parse_path(f, "ping", excerpt=True, excerpt_lines=12)
    whole = tmp_path / "whole.txt"
    whole.write_text((REPO / "tests" / "fixtures" / "ping" / "loopback-plain.txt").read_text())
    parse_path(whole, "ping", command="ping -c 5 127.0.0.1")
    assert called == ["ping -c 5 127.0.0.1"]


def test_a_launcher_sidecar_command_rejects_a_cut_keyval_output(tmp_path):
    """The launcher records its argv (a list) as the sidecar's command; parse_file checks -k with it."""
    from podnet.parse import parse_file
    from podnet.tools.netperf import LAUNCH_SELECTORS

    src = REPO / "tests" / "fixtures" / "netperf" / "tcp-rr-k-launcher.txt"
    lines = src.read_text().splitlines(keepends=True)
    keys = ",".join(line.split("=")[0] for line in lines[1:])
    argv = ["netperf", "-H", "127.0.0.1", "-t", "TCP_RR", "-l", "2", "--", "-k", keys]
    meta = {"variant": "v", "scenario": "s", "tool": "netperf", "command": argv}
    whole = tmp_path / "whole.txt"
    whole.write_text("".join(lines))
    rows, _ = parse_file(whole, meta, experiment="e", run="r1")
    assert rows
    cut = tmp_path / "cut.txt"
    cut.write_text("".join(lines[:3]))  # ends after THROUGHPUT_UNITS=: a shorter -k list
    with pytest.raises(Incomplete, match="-k asked for"):
        parse_file(cut, meta, experiment="e", run="r2")
    assert "TRANSACTION_RATE" in LAUNCH_SELECTORS.split(",")
