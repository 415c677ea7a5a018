"""The quiet check before ``make seeds`` (podnet.launch.noise.quiet; issue 46): the decision on
made-up windows, the sampling on fake /proc/stat counters, the command's exit code and override."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnet.launch.noise import quiet
from podnet.launch.noise.procstat import CLK_TCK
from podnet.launch.spec.disturbance import DisturbanceRule

REPO = Path(__file__).resolve().parents[2]


def test_a_quiet_machine_passes_and_one_windows_blip_decides_nothing():
    q = quiet.judge_quiet([0.01, 0.02, 0.9, 0.01, 0.03], 0.2, 1.0, 2)
    assert q.median == pytest.approx(0.02) and not q.busy
    assert q.message().startswith("quiet check: the machine is quiet: 2 % of the machine's CPU time")


def test_a_busy_machine_is_refused_with_what_was_measured():
    q = quiet.judge_quiet([0.35, 0.40, 0.38, 0.41, 0.37], 0.2, 1.0, 2)
    assert q.busy and q.median == pytest.approx(0.38)
    text = q.message("the seed campaigns")
    assert "the machine is busy: 38 % of the machine's CPU time (2 CPUs; median of 5 windows" in text
    assert "35, 40, 38, 41, 37 %" in text and "20 % above which a run is judged disturbed" in text
    assert "the seed campaigns" in text and "SEEDS_BUSY_OK=1" in text


def test_the_threshold_is_the_disturbed_runs_and_at_it_the_machine_is_quiet():
    assert DisturbanceRule.from_config(None).threshold == 0.2
    assert not quiet.judge_quiet([0.2, 0.2, 0.2], 0.2).busy  # above it, not at it
    assert quiet.judge_quiet([0.21, 0.2, 0.25], 0.2).busy


def test_windows_not_measured_are_left_out_and_none_judges_nothing():
    q = quiet.judge_quiet([None, 0.5, None, 0.45], 0.2)
    assert q.shares == (0.5, 0.45) and q.busy
    none = quiet.judge_quiet([None, None], 0.2)
    assert none.median is None and not none.busy and "could not be read" in none.message()


def test_sample_is_the_machines_busy_time_minus_the_checks_own():
    """Per window 200 ticks of machine time, 60 busy; the check itself used 10 ticks' worth: 25 %."""
    ticks = iter([(0, 0, 0, 0), (60, 0, 0, 140), (60, 0, 0, 140), (60, 0, 0, 340), None, None])
    cpu = iter([0.0, 10 / CLK_TCK, 10 / CLK_TCK, 10 / CLK_TCK, 0.0, 0.0])
    slept: list[float] = []
    shares = quiet.sample(3, 0.5, read=lambda: next(ticks), own=lambda: next(cpu), sleep=slept.append)
    assert shares[0] == pytest.approx(0.25)
    assert shares[1] == pytest.approx(0.0)  # an idle window (never below 0)
    assert shares[2] is None  # counters unreadable
    assert slept == [0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    "shares, args, rc",
    [
        ([0.4, 0.5, 0.45], [], 1),
        ([0.4, 0.5, 0.45], ["--busy-ok"], 0),
        ([0.01, 0.02, 0.0], [], 0),
        ([0.1, 0.15, 0.12], ["--threshold", "0.05"], 1),
    ],
)
def test_the_command_exits_1_when_busy_unless_told_to_start_anyway(monkeypatch, capsys, shares, args, rc):
    monkeypatch.setattr(quiet, "sample", lambda windows, seconds: shares)
    assert quiet.main(["--what", "the seed campaigns", *args]) == rc
    out = capsys.readouterr()
    if rc or "--busy-ok" in args:
        assert "the machine is busy" in out.err
    if "--busy-ok" in args:
        assert "--busy-ok: the seed campaigns start anyway" in out.err
    if not rc and not args:
        assert "the machine is quiet" in out.out


def test_make_seeds_checks_first_and_reads_seeds_busy_ok():
    text = (REPO / "Makefile").read_text()
    recipe = text.split("\nseeds: ", 1)[1].split("\n")
    assert "podnet.launch.noise.quiet" in recipe[1]
    assert "$(filter 1,$(SEEDS_BUSY_OK)),--busy-ok" in recipe[1]
    assert "podnet.launch.campaign run" not in recipe[1]  # before the campaigns
