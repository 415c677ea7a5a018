"""Interleaving: A B C A B C, shuffled per round from a recorded seed, blocked by test, never a case twice
in a row."""

from __future__ import annotations

from podnet.launch.rounds.schedule import flatten, schedule


def order(rounds):
    return [(s.case, s.repeat) for s in flatten(rounds)]


def test_interleaved_round_robin():
    r = schedule(["A", "B", "C"], {"A": [1, 2], "B": [1, 2], "C": [1, 2]})
    assert order(r) == [("A", 1), ("B", 1), ("C", 1), ("A", 2), ("B", 2), ("C", 2)]
    assert [s.position for s in r[1]] == [1, 2, 3] and {s.round for s in r[1]} == {2}


def test_partial_pending_keeps_rounds_by_repeat():
    r = schedule(["A", "B", "C"], {"A": [3], "B": [1, 2, 3], "C": []})
    assert order(r) == [("B", 1), ("B", 2), ("A", 3), ("B", 3)]


def test_shuffled_is_reproducible_and_a_permutation():
    cases = [f"c{i}" for i in range(8)]
    pend = {c: [1, 2, 3] for c in cases}
    a = order(schedule(cases, pend, "shuffled", seed=7))
    b = order(schedule(cases, pend, "shuffled", seed=7))
    c = order(schedule(cases, pend, "shuffled", seed=8))
    assert a == b and a != c
    for rnd in (1, 2, 3):
        assert sorted(x for x, r in a if r == rnd) == sorted(cases)
    assert [x for x, _ in a[:8]] != cases  # actually shuffled


def test_never_the_same_case_back_to_back():
    cases = ["A", "B"]
    for seed in range(50):
        seq = [c for c, _ in order(schedule(cases, {c: [1, 2, 3, 4] for c in cases}, "shuffled", seed))]
        assert all(x != y for x, y in zip(seq, seq[1:])), (seed, seq)


def test_no_case_runs_all_its_repeats_in_a_row():
    seq = [c for c, _ in order(schedule(["A", "B", "C"], {c: [1, 2, 3] for c in "ABC"}))]
    assert seq != sorted(seq)
    assert all(x != y for x, y in zip(seq, seq[1:]))


def test_blocked_keeps_a_tests_scenarios_together_and_alternates_them():
    keys = [
        (sc, tool, test) for sc in ("hh", "pp", "ps") for tool, test in (("iperf3", "tcp"), ("ping", "plain"))
    ]
    r = schedule(keys, {k: [1, 2] for k in keys}, "blocked")
    first, second = ([s.case for s in rnd] for rnd in r)
    # round 1 (odd): each test's scenarios reversed; round 2 (even): in config order
    assert first == [("ps", "iperf3", "tcp"), ("pp", "iperf3", "tcp"), ("hh", "iperf3", "tcp"),
                     ("ps", "ping", "plain"), ("pp", "ping", "plain"), ("hh", "ping", "plain")]  # fmt: skip
    assert second == [("hh", "iperf3", "tcp"), ("pp", "iperf3", "tcp"), ("ps", "iperf3", "tcp"),
                      ("hh", "ping", "plain"), ("pp", "ping", "plain"), ("ps", "ping", "plain")]  # fmt: skip
    one = [k for k in keys if k[1] == "iperf3"]
    seq = [c for c, _ in order(schedule(one, {k: [1, 2, 3] for k in one}, "blocked"))]
    assert all(x != y for x, y in zip(seq, seq[1:]))  # the round-start swap still holds
