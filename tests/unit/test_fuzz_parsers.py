"""Property-based fuzzing of every parser with mangled real outputs (issue 10).

Corpus: every fixture and every seed raw file (``tests/fuzz/mangle.py``). A mangled
copy must parse to exactly the untouched file's values or be rejected with a reason;
a parser exception (``crash``) is also a failure of the test (the pipeline would
record it per file, but it is a bug). The example count is bounded here; the
exhaustive run with counts is ``benchmarks/fuzz_parsers.py``.

KNOWN_GAPS lists (sample, mutation kind) pairs where a mangled copy is a different,
valid-looking output that podnet cannot tell from a real one with what the file and its
command say; the benchmark counts them as WRONG and the closing note gives the numbers.
"""

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "fuzz"))
import mangle

SAMPLES = mangle.corpus()
SHARED = mangle.shared_corpus()
BASE = {
    s.name: mangle.outcome(s.data, s.tool, s.excerpt, s.command, s.excerpt_lines) for s in SAMPLES + SHARED
}

KNOWN_GAPS = mangle.KNOWN_GAPS

FAST = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def check(sample, kind, data, label=None):
    verdict = mangle.judge(sample, data, BASE[sample.name], label)
    if verdict == "indistinguishable":
        return  # justified per case in mangle.INDISTINGUISHABLE
    if (sample.name, kind) in KNOWN_GAPS and verdict in ("WRONG", "subset"):
        return
    assert verdict in ("same", "rejected", "subset"), (sample.name, kind, mangle.outcome(data, sample.tool))


@pytest.mark.parametrize("how", mangle.RECODINGS)
def test_every_output_reencoded_gives_the_same_values(how):
    for s in SAMPLES:
        got = mangle.outcome(mangle.recode(s.data, how), s.tool, s.excerpt, s.command, s.excerpt_lines)
        if how.endswith(("-le", "-be")) and any(b > 127 for b in s.data):
            assert got[0] in ("rejected", "values") and (got[0] == "rejected" or got == BASE[s.name])
            continue  # without a BOM, non-ASCII text in UTF-16/32 is not recognised: rejected, not guessed
        assert got == BASE[s.name], (s.name, how)


sample_st = st.sampled_from(SAMPLES)


@FAST
@given(s=sample_st, frac=st.floats(0, 1, exclude_max=True))
def test_cut_anywhere_is_the_same_or_rejected(s, frac):
    n = int(frac * len(s.data))
    check(s, "cut", mangle.cut(s.data, n), f"cut@{n}")


@FAST
@given(s=sample_st, data=st.data())
def test_cut_at_every_line_end_is_the_same_or_rejected(s, data):
    ends = mangle.line_ends(s.data)[:-1] or [0]
    n = data.draw(st.sampled_from(ends))
    check(s, "cut", s.data[:n], f"cut@{n}")


@FAST
@given(s=sample_st, frac=st.floats(0, 1, exclude_max=True))
def test_a_corrupted_byte_is_rejected(s, frac):
    i = int(frac * len(s.data))
    assert mangle.judge(s, mangle.flip(s.data, i), BASE[s.name]) == "rejected"
    check(s, "nul", mangle.nul_at(s.data, i))


@FAST
@given(s=sample_st, data=st.data())
def test_a_duplicated_or_dropped_line_is_the_same_or_rejected(s, data):
    n = len(mangle.lines_of(s.data))
    i = data.draw(st.integers(0, max(n - 1, 0)))
    for kind, mutated in (
        ("dup-line", mangle.dup_line(s.data, i)),
        ("drop-line", mangle.drop_line(s.data, i)),
    ):
        verdict = mangle.judge(s, mutated, BASE[s.name], f"{kind} {i}")
        if mangle.effective_kind(s, kind, mutated) == "cut":
            check(s, "cut", mutated, f"cut@{len(mutated)}")  # a dropped last line is that cut
            continue
        assert verdict in ("same", "rejected", "subset", "indistinguishable"), (s.name, kind, i)


@pytest.mark.parametrize(
    ("name", "label"), sorted(mangle.INDISTINGUISHABLE), ids=lambda x: str(x).replace("/", "_")
)
def test_each_indistinguishable_case_is_still_one(name, label):
    """An entry that a stricter adapter now rejects must leave the list (no stale excuses)."""
    s = next((x for x in SAMPLES + SHARED if x.name == name), None)
    if s is None:
        pytest.skip(f"{name}: the shared corpus is not here")
    if label.startswith("cut@"):
        mutated = mangle.cut(s.data, int(label[4:]))
        assert int(label[4:]) in mangle.line_ends(s.data)  # a cut inside a line is always rejected
    else:
        mutated = mangle.drop_line(s.data, int(label.split()[-1]))
    assert mangle.judge(s, mutated, BASE[name], label) == "indistinguishable"


def test_a_dropped_line_that_breaks_a_stream_cross_check_is_rejected():
    """iperf2 -P 2: without one stream's 'connected with' line (or its summary row) the output is
    damaged, not a one-stream run; qperf without a test header is not a merged block."""
    cases = {
        "iperf2/tcp-e-P2.txt": "connected with",
        "iperf2/tcp-P2-server.txt": "0.0000-3.0059 sec",
        "iperf2/udp-P2.txt": "Server Report:",
        "qperf/seed004-host-host.txt": "tcp_lat:",
    }
    for name, needle in cases.items():
        s = next(x for x in SAMPLES if x.name == name)
        i = next(k for k, ln in enumerate(mangle.lines_of(s.data)) if needle.encode() in ln)
        kind, reason = mangle.outcome(
            mangle.drop_line(s.data, i), s.tool, s.excerpt, s.command, s.excerpt_lines
        )
        assert kind == "rejected" and "damaged" in reason, (name, reason)


JSON = [s for s in SAMPLES if mangle.is_json(s.data)]


@FAST
@given(s=st.sampled_from(JSON), data=st.data())
def test_json_with_a_value_of_the_wrong_type_is_rejected_or_the_same(s, data):
    import json

    path = data.draw(st.sampled_from(mangle.json_paths(json.loads(s.data))))
    value = data.draw(st.sampled_from(mangle.WRONG_VALUES))
    mutated = mangle.json_retype(s.data, path, value)
    if mutated is not None:
        verdict = mangle.judge(s, mutated, BASE[s.name])
        assert verdict in ("same", "rejected", "subset"), (s.name, path, value)
