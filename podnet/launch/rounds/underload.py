"""The load of a latency-under-load run: started before the probe, judged and written beside it.

:class:`LoadRun` execs the load (``iperf3 -c ... -J -P N``, :meth:`CasePlan.load_invocation`) in the
case's client pod on a thread of its own, against its own iperf3 server container in the server pod
(:attr:`CasePlan.load_server`). The executor then waits the load's lead-in (:func:`pause`), runs the
probe as any run, and :meth:`LoadRun.finish` waits for the load, writes its output beside the
probe's (``r001.load.json``, :func:`podnet.parse.underload.load_name`; no sidecar of its own) and
returns the sidecar's ``load`` record: file, command line, the launcher's start and end times,
exit code, status and sha256. A load that failed, was cut, or whose steady part does not cover the
probe's window (:func:`podnet.parse.underload.check_load`, the same check the parse stage makes)
makes the run a failed run with that reason, so the launcher runs the repeat again.

Warm-up runs run the probe alone. Nothing asks the API while the load's exec sets up and the
probe runs: the load thread only reads its websocket once started.
"""

from __future__ import annotations

import hashlib
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.cluster.target import Container
from podnet.launch.rounds.interface import Pods
from podnet.launch.spec.plan import CasePlan
from podnet.parse.underload import check_load, load_name
from podnet.tools.base import Invocation, ParseError


def pause(seconds: float) -> None:
    """Wait ``seconds`` (the load's lead-in; a seam for tests)."""
    if seconds > 0:
        time.sleep(seconds)


@dataclass
class LoadRun:
    """One load beside one probe: its exec on a thread, its times and result."""

    inv: Invocation
    argv: list[str]
    #: what the exec starts with (``taskset -c CPU``), or []
    pin: list[str] = field(default_factory=list)
    started: str = ""
    ended: str = ""
    t0: float = 0.0
    elapsed: float = 0.0
    result: ExecResult | None = None
    thread: threading.Thread | None = field(default=None, repr=False)

    @classmethod
    def start(
        cls,
        pods: Pods,
        client: Container,
        cp: CasePlan,
        target: str,
        probe_duration: float,
        margin: float,
        grace: float,
        pin: list[str] | None = None,
    ) -> LoadRun:
        """Start the load in the case's ``client`` container against ``target`` (``timeout`` ends it
        ``margin`` s after its own length); ``pin``: ``taskset -c CPU`` of the load's ``affinity``, else
        of its probe's (its test's affinity, else ``launch.affinity``), as its server's container is."""
        inv = cp.load_invocation(target, probe_duration)
        limit = float(inv.duration) + margin
        argv = ["timeout", "-k", str(int(grace)), f"{limit:g}", *[str(a) for a in inv.client]]
        run = cls(inv=inv, argv=argv, pin=list(pin or []))

        def work() -> None:
            run.result = pods.exec(client, [*run.pin, *argv], limit + grace + 15)
            run.ended = now_iso()
            run.elapsed = time.monotonic() - run.t0

        run.started, run.t0 = now_iso(), time.monotonic()
        run.thread = threading.Thread(target=work, name="podnet-load", daemon=True)
        run.thread.start()
        return run

    def lead_in(self, seconds: float) -> None:
        """Wait until ``seconds`` have passed since the load's start."""
        pause(seconds - (time.monotonic() - self.t0))

    def finish(
        self, cp: CasePlan, probe_path: Path, meta: dict[str, Any], judge: Any, timeout: float
    ) -> tuple[dict[str, Any], str]:
        """Wait for the load, write its output beside ``probe_path`` and check it against the probe's
        window (``meta``'s started/ended): the sidecar's ``load`` record and the reason the run
        failed because of its load ("" when it did not)."""
        assert self.thread is not None and cp.case.test.load is not None
        self.thread.join(timeout)
        spec = cp.case.test.load
        r = self.result
        rec: dict[str, Any] = {
            **spec.as_meta(),
            "file": load_name(probe_path),
            "port": cp.load_port,
            "command": [str(a) for a in self.inv.client],
            "command_line": shlex.join(str(a) for a in self.inv.client),
            "timeout_command": self.argv[:4],
            "server_command": [*cp.load_server.pin, *cp.load_server.argv] if cp.load_server else None,
            **({"placement_command": self.pin} if self.pin else {}),
            "started": self.started,
            "ended": self.ended or now_iso(),
            "elapsed_s": round(self.elapsed, 3),
            "exit_code": r.rc if r else None,
            "stderr": (r.stderr[-2000:] if r and r.stderr else ""),
        }
        if r is None:
            rec.update(status="failed", error="the load did not end within its time limit")
            return rec, f"load: {rec['error']}"
        verdict = judge(cp.load_adapter, r)
        data = verdict.content.encode("utf-8")
        path = probe_path.with_name(rec["file"])
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as fh:  # written once, as every raw file
            fh.write(data)
        rec.update(sha256=hashlib.sha256(data).hexdigest(), status=verdict.status)
        if verdict.status != "ok":
            rec["error"] = verdict.error
            return rec, f"load: {verdict.error}"
        try:
            check_load(probe_path, {**meta, "load": rec}, data)  # the bytes just written and hashed
        except ParseError as exc:
            rec.update(status="failed", error=str(exc))
            return rec, f"load: {exc}"
        return rec, ""


class LoadStart(NamedTuple):
    """What starting a case's load gave the executor (:meth:`Executor._start_load`): the load running
    (``run``), no load (``run`` None: another case, or a warm-up, which runs the probe alone), or
    ``failed``: its server was not ready (recorded as a failed run)."""

    run: LoadRun | None = None
    failed: bool = False
