"""podnet.config.warm: a job's script runs in a worker forked from the zygote, as it would in its own
process (streams, exit status, directory, environment), or in its own process when there is none;
a killed job takes its worker with it, and the zygote ends with the process that started it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from podnet.config import warm
from tests.conftest import REPO

SCRIPT = textwrap.dedent(
    """
    import os, sys
    from podnet.config.warm import delegate

    delegate()
    mode = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MODE", "ok")
    print("pid", os.getpid(), "ppid", os.getppid(), "cwd", os.getcwd(), "var", os.environ.get("ONLY_IN_JOB"))
    print("to stderr", file=sys.stderr)
    if mode == "exit3":
        sys.exit(3)
    if mode == "raise":
        raise RuntimeError("the job's own failure")
    if mode == "sleep":
        open(os.environ["PIDFILE"], "w").write(str(os.getpid()))
        import time
        time.sleep(60)
    """
)


def _until(what, timeout: float = 20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if what():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def zygote(monkeypatch, tmp_path):
    """A zygote started by this process (preloading one small module), stopped afterwards."""
    monkeypatch.delenv(warm.ENV, raising=False)
    where = warm.start(["json"], log=str(tmp_path / "warm.log"))
    assert where and _until(lambda: Path(where, "socket").exists())
    yield where
    warm.stop()
    assert not Path(where).exists()


def run(tmp_path: Path, env: dict, mode: str = "ok", **kw) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    (tmp_path / "work").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path / "work",
        env={**os.environ, "PYTHONPATH": str(REPO), "MODE": mode, "ONLY_IN_JOB": "yes", **env},
        capture_output=True,
        text=True,
        timeout=60,
        **kw,
    )


def _fields(out: str) -> dict[str, str]:
    words = out.split()
    return dict(zip(words[::2], words[1::2]))


def test_a_job_runs_in_a_worker_as_in_its_own_process(zygote, tmp_path):
    asked = time.time()
    p = run(tmp_path, {warm.ENV: zygote})
    assert p.returncode == 0, p.stderr
    f = _fields(p.stdout)
    # not the job's process, nor its child: a fork of the zygote
    assert f["ppid"] != str(os.getpid())
    assert f["cwd"] == str(tmp_path / "work") and f["var"] == "yes"
    assert "to stderr" in p.stderr
    # the zygote's account of the worker: the job asked for it, and what it ran
    accounts = [json.loads(x) for x in (tmp_path / "warm.log").read_text().splitlines() if x.startswith("{")]
    assert [(a["warm_job"], a["pid"], a["code"]) for a in accounts] == [("job.py", int(f["pid"]), 0)]
    assert asked - 1 <= accounts[0]["at"] <= time.time()  # when the zygote took the request


def test_exit_status_and_tracebacks_reach_the_job(zygote, tmp_path):
    p = run(tmp_path, {warm.ENV: zygote}, mode="exit3")
    assert p.returncode == 3
    p = run(tmp_path, {warm.ENV: zygote}, mode="raise")
    assert p.returncode == 1
    assert "RuntimeError: the job's own failure" in p.stderr and "Traceback" in p.stderr


@pytest.mark.parametrize("where", ["worker", "own process"])
def test_a_jobs_uncaught_error_reaches_its_log_too(zygote, tmp_path, where):
    """Snakemake's job object names the job's log: the traceback is there as well as on standard
    error (podnet.config.joblog), in a worker and in the job's own process alike."""
    log = tmp_path / "job.log"
    log.write_text("started\n")
    script = tmp_path / "job.py"
    job = "snakemake = type('Job', (), {'log': [os.environ['JOBLOG']]})()  # as Snakemake's preamble\n"
    script.write_text(SCRIPT.replace("\ndelegate()\n", "\n" + job + "delegate()\n"))
    (tmp_path / "work").mkdir()
    env = {warm.ENV: zygote if where == "worker" else "0", "MODE": "raise", "JOBLOG": str(log)}
    p = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path / "work", capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )  # fmt: skip
    assert p.returncode == 1 and "RuntimeError: the job's own failure" in p.stderr
    text = log.read_text()
    assert text.startswith("started\nTraceback") and text.rstrip().endswith(
        "RuntimeError: the job's own failure"
    )


@pytest.mark.parametrize("setting", ["off", "missing", "not ready"])
def test_without_a_zygote_the_job_runs_in_its_own_process(tmp_path, setting):
    where = tmp_path / "zygote"
    where.mkdir()
    env = {
        "off": {warm.ENV: "0"},
        "missing": {warm.ENV: str(tmp_path / "none")},
        "not ready": {warm.ENV: str(where)},
    }
    probe = tmp_path / "probe.py"
    probe.write_text(SCRIPT.replace('print("pid"', 'print("self", os.getpid(), "pid"'))
    (tmp_path / "work").mkdir()
    p = subprocess.run(
        [sys.executable, str(probe)], cwd=tmp_path / "work", capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO), **env[setting]},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    f = _fields(p.stdout)
    assert f["self"] == f["pid"]


def _sleeping_job(zygote: str, tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """A job whose script sleeps in its worker: (the job's process, the worker's PID)."""
    pidfile = tmp_path / "worker.pid"
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    (tmp_path / "work").mkdir()
    job = subprocess.Popen(
        [sys.executable, str(script), "sleep"], cwd=tmp_path / "work",
        env={**os.environ, "PYTHONPATH": str(REPO), warm.ENV: zygote, "PIDFILE": str(pidfile)},
    )  # fmt: skip
    assert _until(lambda: pidfile.exists() and pidfile.read_text())
    worker = int(pidfile.read_text())
    return job, worker


def test_a_killed_job_takes_its_worker_with_it(zygote, tmp_path):
    job, worker = _sleeping_job(zygote, tmp_path)
    assert worker != job.pid
    job.kill()
    job.wait()
    assert _until(lambda: not _alive(worker), timeout=15), "the worker outlived its job"


@pytest.mark.parametrize("end", ["killed", "exits"])
def test_the_zygote_ends_with_the_process_that_started_it(tmp_path, end):
    """Killed (no hook, no atexit): the zygote sees its parent gone; a normal exit stops it (atexit)
    and removes its directory."""
    last = "os.kill(os.getpid(), 9)" if end == "killed" else "sys.exit(0)"
    code = (
        "import os, sys, time; from pathlib import Path; from podnet.config import warm; "
        "w = warm.start(['json']); print(w, warm._zygote.pid, flush=True); "
        "[time.sleep(0.05) for _ in range(400) if not Path(w, 'socket').exists()]; " + last
    )
    p = _python(code, without=warm.ENV)
    assert p.returncode == (-9 if end == "killed" else 0), p.stderr
    where, pid = p.stdout.split()
    assert _until(lambda: not _alive(int(pid)), timeout=15), "the zygote outlived its Snakemake"
    if end == "exits":
        assert not Path(where).exists()
    else:
        Path(where, "socket").unlink(missing_ok=True)
        os.rmdir(where)


def _python(code: str, without: str) -> subprocess.CompletedProcess:
    """``python -c code`` with this repository's podnet and without the variable ``without``."""
    env = {k: v for k, v in os.environ.items() if k != without}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "PYTHONPATH": str(REPO)},
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (not yet reaped by its parent) is gone for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_worker_gets_the_job_signals(zygote, tmp_path):
    """SIGTERM to the job (Snakemake stopping it) reaches the worker: the job ends with its status."""
    job, worker = _sleeping_job(zygote, tmp_path)
    job.send_signal(signal.SIGTERM)
    assert job.wait(timeout=15) == 128 + signal.SIGTERM
    assert _until(lambda: not _alive(worker), timeout=5)


def test_preload_entries_load_in_order_between_jobs(tmp_path, monkeypatch):
    """Modules, packages (``pkg.*``) and warm-ups (``module:function``) load one at a time; a bad one
    is logged and the rest still load."""
    monkeypatch.delenv(warm.ENV, raising=False)
    log = tmp_path / "warm.log"
    where = warm.start(
        ["json", "no_such_module_here", "podnet.tools.*", "podnet.report.notebook_html:warm_up"], log=str(log)
    )
    try:
        assert _until(lambda: "modules in" in log.read_text(), timeout=60)
        text = log.read_text()
        assert "preload no_such_module_here: ModuleNotFoundError" in text
        assert text.count("zygote:") == 1  # nothing else failed
    finally:
        warm.stop()
    assert not Path(where).exists()


def test_the_figure_warm_up_leaves_no_trace_on_matplotlib():
    """style.warm_up runs in the zygote before notebook kernels are forked: matplotlib's settings are
    as before and pyplot has no backend yet (a kernel still gets its inline one)."""
    code = (
        "import sys, matplotlib, matplotlib.pyplot as plt; rc = matplotlib.rcParams; "
        # (rcParams._get: reading "backend" through [] would choose one)
        "before = {k: rc._get(k) for k in rc}; "
        "from podnet.report.figures import style; style.warm_up(); "
        "assert {k: rc._get(k) for k in rc} == before; assert plt._backend_mod is None; print('ok')"
    )
    p = _python(code, without="MPLBACKEND")
    assert p.stdout.strip() == "ok", p.stderr
