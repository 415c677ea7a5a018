"""Probes that show a scale point's objects are in the datapath, and time how long a change takes.

A probe is a loop in a client pod (bash ``/dev/tcp``, each connect limited to
:data:`CONNECT_TIMEOUT` s) that waits until a TCP connect to ``ip:port`` succeeds (``reach``) or
fails (``fail``) and prints the pod's clock at its start and, for the first such connect, the clock
the connecting shell read just before its ``connect()`` (bash's ``EPOCHREALTIME``, no fork between
it and the SYN): a dropped SYN fails only after :data:`CONNECT_TIMEOUT`, which the time must not
carry, and a stamp taken before the attempt's forks would come before a change that in fact reached
its SYN. A ``fail`` is waited for one attempt after another, :data:`INTERVAL` s apart (the attempt
before the one that failed was answered in a few ms); a ``reach`` with an attempt started every
:data:`INTERVAL` s without waiting for those before, and the earliest that reached is taken: a lifted
drop (a deleted deny policy), whose dropped attempts each hold :data:`CONNECT_TIMEOUT` s and send no
second SYN within it, is seen by the first attempt started after the lift, not up to a whole connect
limit later. So a time is late by at most the spacing of attempts, about 10-20 ms. An attempt whose
shell did not get as far as reading the clock in time (a starved CPU) counts as neither: it proves
nothing about the path. The launcher starts it on a thread, waits :data:`LEAD` s so it runs, notes its own
clock, makes the change (creates the probe's EndpointSlice, a deny policy, or deletes one) and
takes the time from the change to the connect. The pod's and the launcher's clocks are one clock
on the embedded cluster (one machine); on a real cluster their offset adds to the time. A loop
that started after the change, a connect that saw the change but began before it was made, or a
loop that saw nothing in time, is a failed probe with that reason.

A set-up's many probes share one exec where the client can open one with stdin
(:meth:`Prober.session`, :class:`ProbeSession`): the loop reads one probe per stdin line
(``mode ip limit``), prints ``go <ts>`` as it starts connecting and ``reach|fail|timeout <ts>``,
and the launcher makes the change once it read ``go``, :data:`GAP` s after the previous probe
ended (2 GAP after untimed changes: the probe Services created before their endpoints), as
kube-proxy syncs at most once per ``minSyncPeriod``, 1 s: a change sooner after the last sync
would wait for the next one. A probe then costs its effect time plus :data:`GAP`, not an exec's set-up
and :data:`LEAD`; where no session opens, each probe has its own exec as above.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("podnet.launch")

#: seconds a single connect attempt may take (a dropped SYN counts as ``fail`` after this)
CONNECT_TIMEOUT = 0.1
#: seconds between attempts
INTERVAL = 0.01
#: seconds between starting the loop's exec and making the change (the exec's set-up)
LEAD = 2.0
#: seconds the exec may take beyond the loop's own limit
EXEC_SLACK = 30
#: seconds a session waits after a probe ended before the next change (kube-proxy's minSyncPeriod)
GAP = 1.0

#: one connect attempt (a shell function): ``r`` is reach, fail or none (the connecting shell never
#: read the clock: starved), ``t`` the clock it read just before its connect
_ATTEMPT = (
    "try() { "
    f'if t=$(timeout {CONNECT_TIMEOUT} bash -c \'echo $EPOCHREALTIME; exec 3<>"/dev/tcp/$0/$1"\' "$ip" "$port" 2>/dev/null); '
    "then r=reach; else r=fail; fi; "
    '[ -n "$t" ] || r=none; }; '
    # the clock in microseconds (the deadline ``end``: exactly ``limit`` s after the start, not
    # the next whole second, as ``date +%s`` gave); the separator follows the locale
    'now() { echo "${EPOCHREALTIME/[.,]/}"; }; '
)

#: waits for ``$mode`` (``reach`` or ``fail``) on ``$ip:$port`` until ``$end``; prints
#: ``reach|fail|timeout <ts>``. A fail is waited for one attempt after the other (the one before a
#: refused or dropped connect answered in a few ms). A reach is waited for with an attempt started
#: every :data:`INTERVAL` s without waiting for the ones before (a dropped SYN holds its attempt for
#: :data:`CONNECT_TIMEOUT` s and is not sent again within it): each that reaches appends its clock to
#: a file in /tmp, and the earliest is printed once all have ended, so a lifted drop is seen by the
#: first attempt started after it, not up to a whole connect limit later.
_WAIT = (
    'if [ "$mode" = fail ]; then '
    'while :; do try; if [ "$r" = fail ]; then out="fail $t"; break; fi; '
    'if [ "$(now)" -ge "$end" ]; then out="timeout $(date +%s.%N)"; break; fi; '
    f"sleep {INTERVAL}; done; "
    'else f=/tmp/podnet-scale-probe.$$; : > "$f"; '
    'while :; do { try; if [ "$r" = reach ]; then echo "$t" >> "$f"; fi; } & '
    f"sleep {INTERVAL}; "
    'if [ -s "$f" ] || [ "$(now)" -ge "$end" ]; then wait; break; fi; done; '
    'if [ -s "$f" ]; then out="reach $(sort -n "$f" | head -n 1)"; else out="timeout $(date +%s.%N)"; fi; '
    'rm -f "$f"; fi; echo "$out"; '
)

#: the loop (fixed text: mode, address, port and limit are positional arguments)
SCRIPT = (
    _ATTEMPT
    + 'mode=$1 ip=$2 port=$3 limit=$4; echo "start $(date +%s.%N)"; end=$(( $(now) + limit * 1000000 )); '
    + _WAIT
    + "case $out in timeout*) exit 3;; esac"
)


#: the session loop (one exec, many probes: a stdin line ``mode ip limit`` each; port positional)
SESSION_SCRIPT = (
    _ATTEMPT + 'port=$1; echo "start $(date +%s.%N)"; '
    "while read -r mode ip limit; do "
    'end=$(( $(now) + limit * 1000000 )); echo "go $(date +%s.%N)"; ' + _WAIT + "done"
)


class ProbeFailed(RuntimeError):
    """A probe did not see what it waited for; the message says what and for how long."""


@dataclass
class Seen:
    """What one probe loop printed: its start, the first connect of its mode, or its time-out."""

    start: float | None = None
    at: float | None = None
    outcome: str = ""


def parse_loop(text: str) -> Seen:
    """The loop's output (``start <ts>``, then ``reach|fail|timeout <ts>``)."""
    seen = Seen()
    for line in text.splitlines():
        word, value = _word(line)
        if value is None:
            continue
        if word == "start":
            seen.start = value
        elif word in ("reach", "fail", "timeout"):
            seen.outcome, seen.at = word, value
    return seen


class Prober:
    """Runs probe loops in one client pod (``kube``: a :class:`~podnet.launch.cluster.k8s.Kube` or a double)."""

    def __init__(
        self,
        kube: Any,
        namespace: str,
        pod: str,
        port: int,
        *,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.kube, self.ns, self.pod, self.port = kube, namespace, pod, port
        self.wall, self.sleep = wall, sleep
        #: why the last :meth:`session` did not open ("" when it did, or none was asked for)
        self.no_session = ""

    def session(self) -> ProbeSession | None:
        """One exec for many probes (:class:`ProbeSession`), or None when it cannot be had (a client
        without the API's exec stream, or the loop did not start; :attr:`no_session` says why): the
        caller then times each probe with :meth:`timed`."""
        self.no_session = ""
        core = getattr(self.kube, "core", None)
        if core is None:
            self.no_session = "the client has no exec stream"
            return None
        argv = ["bash", "-c", SESSION_SCRIPT, "podnet-scale-probe", str(self.port)]
        ws = None
        try:
            ws = open_exec(core, self.ns, self.pod, argv, "main")
            s = ProbeSession(ws, self.pod, self.port, wall=self.wall, sleep=self.sleep)
            s.begin()
            return s
        except Exception as exc:  # noqa: BLE001 - API and websocket errors: each probe its own exec
            self.no_session = f"{exc.__class__.__name__}: {str(exc).strip()[:200]}"
            log.warning("scale probes: no probe session in %s (%s): one exec per probe", self.pod, exc)
            if ws is not None:
                _close(ws)
            return None

    def timed(self, mode: str, ip: str, change: Callable[[], Any] | None, limit: float) -> float:
        """Seconds from ``change`` (None: from now) until a connect to ``ip`` does ``mode``
        (``reach`` / ``fail``); :class:`ProbeFailed` when it does not within ``limit`` s."""
        limit = max(1, int(limit))
        argv = ["bash", "-c", SCRIPT, "podnet-scale-probe", mode, ip, str(self.port), str(limit)]
        box: dict[str, Any] = {}

        def work() -> None:
            box["r"] = self.kube.exec(self.ns, self.pod, argv, limit + EXEC_SLACK, container="main")

        th = threading.Thread(target=work, name="podnet-scale-probe", daemon=True)
        th.start()
        self.sleep(LEAD)
        t0 = self.wall()
        if change is not None:
            change()
        th.join(limit + EXEC_SLACK + 5)
        r = box.get("r")
        what = (
            f"a TCP connect from {self.pod} to {ip}:{self.port} to {'succeed' if mode == 'reach' else 'fail'}"
        )
        if r is None:
            raise ProbeFailed(f"waiting for {what}: the probe's exec did not return")
        seen = parse_loop(r.stdout)
        if seen.start is None:
            raise ProbeFailed(
                f"waiting for {what}: the probe did not run ({r.error or r.stderr.strip()[-200:]})"
            )
        if change is not None and seen.start > t0:
            raise ProbeFailed(
                f"waiting for {what}: the probe started {seen.start - t0:.2f}s after the change "
                f"(its exec took more than {LEAD:g}s)"
            )
        if seen.outcome != mode or seen.at is None:
            raise ProbeFailed(f"waited {limit}s for {what}: it did not")
        return _after(seen.at, t0, change is not None, what)


def open_exec(core: Any, namespace: str, pod: str, argv: list[str], container: str) -> Any:
    """An exec with stdin open in ``pod``; its websocket, returned as soon as it is set up."""
    from kubernetes.stream import stream

    from podnet.launch.cluster.k8s import _STREAM_SETUP

    kwargs: dict[str, Any] = dict(
        command=list(argv), stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False
    )
    # kubernetes' stream() swaps the shared client's call_api while it sets up: one at a time
    with _STREAM_SETUP:
        return stream(core.connect_get_namespaced_pod_exec, pod, namespace, container=container, **kwargs)


def _close(ws: Any) -> None:
    try:
        ws.close()
    except Exception:  # noqa: BLE001 - closing a stream that broke
        pass


def _after(at: float, t0: float, changed: bool, what: str) -> float:
    """Seconds from the change at ``t0`` to the connect that began at ``at``; :class:`ProbeFailed`
    when that connect began before the change was made (it cannot show the change: the path did
    so on its own)."""
    if changed and at < t0:
        raise ProbeFailed(f"waiting for {what}: a connect begun {t0 - at:.3f}s before the change did it")
    return round(max(at - t0, 0.0), 4)


def _word(text: str | None) -> tuple[str, float | None]:
    word, _, ts = (text or "").strip().partition(" ")
    try:
        return word, float(ts)
    except ValueError:
        return word, None


class ProbeSession:
    """Probe loops in one exec (``ws``: its websocket, or a double with ``readline_stdout``,
    ``write_stdin``, ``is_open`` and ``close``); :meth:`timed` as :meth:`Prober.timed`."""

    def __init__(
        self,
        ws: Any,
        pod: str,
        port: int,
        *,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.ws, self.pod, self.port = ws, pod, port
        self.wall, self.sleep, self.clock = wall, sleep, clock
        #: when the last probe ended or the datapath was last given a change (monotonic clock)
        self.ended: float | None = None

    def touch(self) -> None:
        """Changes were made outside a probe (the probe Services created before their endpoints):
        the next change waits 2 :data:`GAP` s from now (their sync may start up to GAP s later)."""
        self.ended = self.clock() + GAP

    def begin(self) -> None:
        """Wait for the loop's ``start``; :class:`ProbeFailed` when it does not print it in time."""
        word, _ = _word(self.ws.readline_stdout(timeout=EXEC_SLACK))
        if word != "start":
            printed = word or "nothing"
            raise ProbeFailed(f"the probe session in {self.pod} did not start (it printed {printed!r})")

    def timed(self, mode: str, ip: str, change: Callable[[], Any] | None, limit: float) -> float:
        """Seconds from ``change`` (None: from now) until a connect to ``ip`` does ``mode``;
        :class:`ProbeFailed` when it does not within ``limit`` s (the session is then of no use)."""
        limit = max(1, int(limit))
        what = (
            f"a TCP connect from {self.pod} to {ip}:{self.port} to {'succeed' if mode == 'reach' else 'fail'}"
        )
        if not self.ws.is_open():
            raise ProbeFailed(f"waiting for {what}: the probe session ended")
        if change is not None and self.ended is not None:
            wait = GAP - (self.clock() - self.ended)
            if wait > 0:
                self.sleep(wait)
        self.ws.write_stdin(f"{mode} {ip} {limit}\n")
        word, _ = _word(self.ws.readline_stdout(timeout=EXEC_SLACK))
        if word != "go":
            printed = word or "nothing"
            raise ProbeFailed(f"waiting for {what}: the probe session's loop did not start ({printed!r})")
        t0 = self.wall()
        if change is not None:
            change()
        word, at = _word(self.ws.readline_stdout(timeout=limit + EXEC_SLACK))
        self.ended = self.clock()
        if word != mode or at is None:
            raise ProbeFailed(f"waited {limit}s for {what}: it did not ({word or 'no answer'})")
        return _after(at, t0, change is not None, what)

    def close(self) -> None:
        _close(self.ws)
