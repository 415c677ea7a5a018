"""A scale set-up's probe changes share one exec (a probe session): each probe is a stdin line, the
change is made once the loop says it is connecting, a change waits GAP s after the previous probe
ended (kube-proxy's minSyncPeriod); a loop that does not start or answer fails the probe with its
reason; where no session opens, each probe has its own exec and the record says why."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest

from podnet.launch.rounds import scaleprobe
from tests.unit.test_launch_scale import FakeApi, FakeProber, _cfg, _state


class FakeWS:
    """The loop's side of a session: ``start``, then per stdin line ``go`` and what ``answer`` says."""

    def __init__(self, answer: Any = None, start: str = "start 99.0"):
        self.lines = [start]
        self.written: list[str] = []
        self.closed = False
        self.answer = answer or (lambda mode, ip: f"{mode} 101.25")

    def readline_stdout(self, timeout: float | None = None) -> str:
        return self.lines.pop(0) if self.lines else ""

    def write_stdin(self, data: str) -> None:
        self.written.append(data)
        mode, ip, _limit = data.split()
        self.lines += ["go 100.9", self.answer(mode, ip)]

    def is_open(self) -> bool:
        return not self.closed

    def close(self) -> None:
        self.closed = True


def _session(ws: FakeWS, slept: list, clock: list) -> scaleprobe.ProbeSession:
    ticks = iter(clock)
    return scaleprobe.ProbeSession(
        ws, "client", 15299, wall=lambda: 101.0, sleep=slept.append, clock=lambda: next(ticks)
    )


def test_a_session_times_many_probes_in_one_exec_each_change_after_go_and_a_gap():
    ws, slept, seen = FakeWS(), [], []
    s = _session(ws, slept, [10.0, 10.25, 12.0, 20.0, 21.0, 22.0, 30.0, 30.5, 31.0])
    s.begin()

    def change():
        seen.append(list(ws.lines))  # "go" already read: only the answer waits

    assert s.timed("reach", "10.96.0.9", change, 30) == 0.25
    assert s.timed("fail", "10.96.0.9", change, 30) == 0.25
    assert slept == [pytest.approx(0.75)]  # 0.25 s after the last probe ended: waits the rest of GAP
    assert s.timed("fail", "10.96.0.10", change, 30) == 0.25 and len(slept) == 1  # 8 s later: no wait
    assert seen == [["reach 101.25"], ["fail 101.25"], ["fail 101.25"]]
    assert ws.written == ["reach 10.96.0.9 30\n", "fail 10.96.0.9 30\n", "fail 10.96.0.10 30\n"]
    assert s.timed("reach", "10.244.0.5", None, 30) == 0.25 and len(slept) == 1  # no change: no gap
    s.touch()  # untimed changes (probe Services before their endpoints): the next change waits 2 GAP
    assert s.timed("reach", "10.96.0.11", change, 30) == 0.25 and slept[-1] == pytest.approx(1.5)
    s.close()
    assert ws.closed
    with pytest.raises(scaleprobe.ProbeFailed, match="session ended"):
        s.timed("reach", "10.96.0.9", None, 30)


def test_a_session_loop_that_does_not_start_or_answer_fails_the_probe():
    with pytest.raises(scaleprobe.ProbeFailed, match="did not start"):
        _session(FakeWS(start="bash: no such file"), [], []).begin()
    s = _session(FakeWS(answer=lambda mode, ip: "timeout 131.0"), [], [1.0])
    s.begin()
    with pytest.raises(scaleprobe.ProbeFailed, match=r"waited 30s for .* to fail: it did not \(timeout\)"):
        s.timed("fail", "10.96.0.9", lambda: None, 30)
    ws = FakeWS()
    ws.write_stdin = lambda data: None  # the loop never reads its line
    with pytest.raises(scaleprobe.ProbeFailed, match="loop did not start"):
        _session(ws, [], []).timed("reach", "10.96.0.9", lambda: None, 30)


def test_the_prober_opens_a_session_or_says_why_not(monkeypatch):
    p = scaleprobe.Prober(NS(), "ns1", "client", 15299)
    assert p.session() is None and "no exec stream" in p.no_session
    ws = FakeWS()
    opened = []
    monkeypatch.setattr(scaleprobe, "open_exec", lambda core, ns, pod, argv, c: opened.append(argv) or ws)
    p = scaleprobe.Prober(NS(core=object()), "ns1", "client", 15299)
    s = p.session()
    assert isinstance(s, scaleprobe.ProbeSession) and p.no_session == "" and not ws.lines  # start read
    assert opened[0][:3] == ["bash", "-c", scaleprobe.SESSION_SCRIPT] and opened[0][-1] == "15299"

    def refuse(*a):
        raise RuntimeError("403 pods/exec is forbidden")

    monkeypatch.setattr(scaleprobe, "open_exec", refuse)
    assert p.session() is None and "403" in p.no_session


class SessionProber(FakeProber):
    """A prober whose session is itself (its ``timed`` as the fake's), counting closes."""

    def __init__(self, opens: bool = True):
        super().__init__()
        self.opens, self.closed, self.no_session = opens, 0, ""

    def session(self):
        if not self.opens:
            self.no_session = "RuntimeError: websocket refused"
            return None
        return self

    def close(self) -> None:
        self.closed += 1


def test_a_set_up_records_whether_its_probes_shared_a_session():
    cfg = _cfg({"services": [0, 20], "changes": 2})
    prober = SessionProber()
    st = _state(cfg, FakeApi(), prober)
    assert st.ensure(cfg.cases[1].test.scale) is None
    p = st.meta()["probe"]
    assert p["loop"] == "session" and "no_session" not in p and prober.closed == 1
    assert len(prober.calls) == 4 and len(p["service_effect_s"]) == 2
    prober = SessionProber(opens=False)
    st = _state(cfg, FakeApi(), prober)
    assert st.ensure(cfg.cases[1].test.scale) is None
    p = st.meta()["probe"]
    assert p["loop"] == "exec per probe" and "websocket refused" in p["no_session"] and not prober.closed
    prober = SessionProber()
    prober.fail_at = 3  # a probe of the session failed: the point fails and the session is closed
    st = _state(cfg, FakeApi(), prober)
    assert st.ensure(cfg.cases[1].test.scale).startswith("scale point not ready") and prober.closed == 1


def test_a_probe_is_timed_from_the_start_of_the_connect_that_saw_the_change():
    # the connecting shell reads the clock just before its connect (no fork in between): a dropped
    # SYN fails only after the connect timeout, which must not be added to the time; an attempt whose
    # shell never read the clock (starved) counts as neither outcome
    for script in (scaleprobe.SCRIPT, scaleprobe.SESSION_SCRIPT):
        assert "bash -c 'echo $EPOCHREALTIME; exec 3<>" in script and 'out="fail $t"' in script
        assert '[ -n "$t" ] || r=none; ' in script
        # a reach: attempts that do not wait for each other, the earliest that reached taken
        # (run for real in tests/unit/test_scale_probe_loop.py)
        assert "fi; } & " in script and 'out="reach $(sort -n "$f" | head -n 1)"' in script
    # a connect that began before the change (wall 101.0) yet shows it: the path did it on its own
    s = _session(FakeWS(answer=lambda mode, ip: f"{mode} 100.95"), [], [1.0, 2.0])
    s.begin()
    with pytest.raises(scaleprobe.ProbeFailed, match=r"begun 0\.050s before the change"):
        s.timed("fail", "10.96.0.9", lambda: None, 30)
    s = _session(FakeWS(answer=lambda mode, ip: f"{mode} 100.95"), [], [1.0, 2.0])
    s.begin()
    assert s.timed("reach", "10.244.0.5", None, 30) == 0.0  # no change: nothing to come before
