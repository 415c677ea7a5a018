"""Warm workers: a Snakemake run's short jobs forked from one process that imported their libraries.

After one added raw file, about 20 jobs re-run (parse, tidy, stats, figures, notebooks, HTML) and
each used to spend 1-3 s of CPU importing pandas, scipy.stats, matplotlib, seaborn, papermill or
nbconvert before its own work (``benchmarks/bench_scale.py --pipeline``). Here the workflow starts
one *zygote* per Snakemake run (while the DAG is built: ``_start_warm`` in
``workflow/rules/common.smk``), which imports those libraries once; a job's script
then hands itself to the zygote (:func:`delegate`, its first statement), which forks a worker that
runs the same script, with the job's working directory, environment, standard streams and
``snakemake`` object, and reports its exit status back. The job process itself only waits.

- Nothing else changes: the worker runs the script file Snakemake wrote for the job, and a job
  whose zygote is missing, not ready yet or refused runs in its own process as before (also with
  ``PODNET_WARM=0``). The results are the same either way (``tests/pipeline/test_warm_pipeline.py``).
- The zygote is stopped by ``onsuccess``/``onerror`` or at the Snakemake process's exit; it also
  ends by itself when that process is gone. A job whose process is killed has its worker killed too.
- Notebook kernels are warm workers too (:func:`kernel_manager_class`, :func:`kernel`).
- The zygote's log has one line per worker: who asked (PID), what ran, when, its CPU and peak memory
  (``{"warm_job": ...}``; the benchmark reads them: a worker is not a child of its job).

Only the standard library is imported here: this module runs first in every job's process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: the environment variable that tells a job where its zygote listens ("0": never delegate)
ENV = "PODNET_WARM"
#: set in a worker: the script it runs must not delegate again
IN_WORKER = "PODNET_WARM_WORKER"

_zygote: subprocess.Popen | None = None


# ---- the job's side ----------------------------------------------------------------------


def delegate() -> None:
    """Run this job's script in a warm worker and exit with its status; return when there is none.

    Call it first in a Snakemake script (after Snakemake's preamble, which defines ``__file__``).
    """
    main = sys.modules.get("__main__")
    script = getattr(main, "__real_file__", None) or getattr(main, "__file__", None)
    if script:
        _hand_over({"script": os.path.abspath(script), "argv": sys.argv[1:]})
    from .joblog import log_failures

    log_failures()  # the script runs here: its uncaught error goes to its log too


def kernel() -> None:
    """A notebook kernel (``ipykernel_launcher`` with this process's arguments) in a warm worker.

    The command :func:`kernel_manager_class` gives Jupyter; without a zygote the kernel runs here.
    """
    import runpy

    argv = sys.argv[1:]
    _hand_over({"module": "ipykernel_launcher", "argv": argv})
    sys.argv = ["ipykernel_launcher", *argv]
    sys.path.insert(0, os.getcwd())  # as ``python -m``
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


def kernel_manager_class():
    """The Jupyter kernel manager for papermill's ``kernel_manager_class``: its kernel talks over Unix
    sockets in a directory of its own (``transport = "ipc"``), never over TCP ports, and is a warm
    worker (:func:`kernel`) when the run has a zygote.

    Jupyter's TCP transport picks five free ports by binding and releasing them, and the kernel binds
    them again later: two notebooks started at once could be given the same port ("Address already in
    use", then "Kernel died before replying to kernel_info"). A socket file in a fresh private
    directory cannot be taken by another kernel."""
    import shutil

    from jupyter_client.manager import AsyncKernelManager

    warm = os.environ.get(ENV, "0") != "0"

    class IpcKernelManager(AsyncKernelManager):
        _ipc_dir: str | None = None

        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)

        async def _async_pre_start_kernel(self, **kw):
            if self._ipc_dir is None:  # the sockets' directory, made when a kernel is about to start
                self._ipc_dir = tempfile.mkdtemp(prefix="podnet-kernel-")
                self.ip = os.path.join(self._ipc_dir, "k")
            return await super()._async_pre_start_kernel(**kw)

        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            cmd = super().format_kernel_cmd(extra_arguments)
            if not warm:
                return cmd
            f = cmd.index("-f")  # ipykernel's argv: python -m ipykernel_launcher -f <connection file>
            return [sys.executable, "-c", "from podnet.config.warm import kernel; kernel()", *cmd[f:]]

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)  # the sockets and connection file
            if not restart and self._ipc_dir is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)
                self._ipc_dir = None

        cleanup_resources = _async_cleanup_resources  # as AsyncKernelManager's

    return IpcKernelManager


def _hand_over(request: dict) -> None:
    """Send ``request`` (what to run) to the zygote with this process's streams, directory and
    environment; exit with the worker's status. Returns when there is no zygote to take it."""
    if os.environ.get(ENV, "0") == "0":
        return
    if os.environ.get(IN_WORKER) and "script" in request:
        return  # the worker running this script (a kernel a worker starts is handed over)
    try:
        conn = _connect(os.environ[ENV])
        request = {**request, "cwd": os.getcwd(), "env": dict(os.environ), "requester": os.getpid()}
        _send(conn, request, fds=[0, 1, 2])
        pid = _receive(conn)["pid"]
    except (OSError, KeyError, ValueError, EOFError):
        return  # no zygote (not started, not ready, gone, refused): run here

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    try:
        done = _receive(conn)
    except (OSError, ValueError, EOFError):
        sys.stderr.write(f"podnet.config.warm: worker {pid} gave no exit status (zygote gone)\n")
        os._exit(1)
    sys.stderr.flush()
    os._exit(done["code"])


def _connect(where: str, wait: float = 0.3) -> socket.socket:
    """Connect to the zygote in ``where``; a zygote just started gets ``wait`` s to listen."""
    end = time.monotonic() + wait
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(os.path.join(where, "socket"))
            return conn
        except FileNotFoundError:
            conn.close()
            if not os.path.isdir(where) or time.monotonic() > end:
                raise
            time.sleep(0.01)


# ---- the workflow's side ---------------------------------------------------------------


def start(preload: list[str], log: str | None = None) -> str | None:
    """Start this process's zygote importing ``preload``; jobs started from here on find it.

    Returns its directory (also in ``$PODNET_WARM``), or None when warm workers are switched off
    (``PODNET_WARM=0``). The zygote listens at once and loads ``preload`` between jobs (:func:`serve`).
    Called again, it returns the running zygote's directory.
    """
    global _zygote
    if _zygote is not None:
        return os.environ.get(ENV)
    if os.environ.get(ENV) == "0":
        return None
    where = tempfile.mkdtemp(prefix="podnet-warm-")
    out = open(log or os.devnull, "ab")
    # sys.path as a job's: no '' for the working directory (a job runs a script, not -c)
    code = (
        "import sys; sys.path.pop(0); from podnet.config.warm import serve; "
        f"serve({where!r}, {list(preload)!r}, {os.getpid()})"
    )
    import atexit

    atexit.register(stop)  # also when Snakemake ends without its hooks (nothing to do, an error)
    _zygote = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        start_new_session=True,  # a Ctrl-C reaches the jobs (and through them, their workers)
    )
    out.close()
    os.environ[ENV] = where
    return where


def stop() -> None:
    """Stop the zygote this process started (its running workers finish first: jobs are done)."""
    global _zygote
    if _zygote is None:
        return
    where = os.environ.pop(ENV, None)
    _zygote.terminate()
    try:
        _zygote.wait(timeout=10)
    except subprocess.TimeoutExpired:
        _zygote.kill()
        _zygote.wait()
    _zygote = None
    if where:
        for name in ("socket", "socket.tmp"):
            Path(where, name).unlink(missing_ok=True)
        Path(where).rmdir()


# ---- the zygote ------------------------------------------------------------------------


def serve(where: str, preload: list[str], parent: int) -> None:
    """Fork a worker per job until stopped or ``parent`` is gone; meanwhile load ``preload``.

    It listens at once and loads ``preload`` one entry at a time between jobs, in order: a module
    (``package.*``: the package and every module below it) or ``module:function``, a warm-up called
    once (it may load caches, never change what a job computes). A job that comes early gets what is
    loaded by then and imports the rest itself, so the list begins with what the first jobs need.
    """
    import gc
    import selectors

    from podnet.config.lean import skip_iri_grammar

    skip_iri_grammar()  # as every job does, before anything imports jsonschema
    stopping = False
    children: set[int] = set()  # the supervisors of running jobs

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if not children:  # no job running: gone at once, even in the middle of a long import
            os._exit(0)

    # a signal (SIGTERM: stop; SIGCHLD: a job ended) wakes the loop at once through this pipe
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGCHLD, lambda _s, _f: None)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(os.path.join(where, "socket.tmp"))
    os.rename(os.path.join(where, "socket.tmp"), os.path.join(where, "socket"))  # ready
    server.listen(64)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, "job")
    sel.register(wake_r, selectors.EVENT_READ, "signal")
    pending = list(preload)
    t0 = time.monotonic()
    while not (stopping and not children):
        _reap(children)
        if os.getppid() != parent:
            stopping = True  # Snakemake is gone: take no more jobs
        ready = {key.data for key, _ in sel.select(timeout=0 if pending and not stopping else 0.5)}
        if "signal" in ready:
            while True:
                try:
                    if not os.read(wake_r, 512):
                        break
                except BlockingIOError:
                    break
        if stopping:
            if server.fileno() >= 0:
                sel.unregister(server)
                server.close()
            continue
        if "job" not in ready:
            if pending:
                _load(pending)
                if not pending:
                    gc.collect()
                    gc.freeze()  # the loaded objects stay out of the workers' collections
                    print(
                        f"zygote {os.getpid()}: {len(sys.modules)} modules in {time.monotonic() - t0:.1f} s",
                        flush=True,
                    )
            continue
        conn, _ = server.accept()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            sel.close()
            for fd in (wake_r, wake_w):
                os.close(fd)
            server.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            code = 1
            try:
                code = _supervise(conn)
            finally:
                os._exit(code)
        children.add(pid)
        conn.close()


def _load(pending: list[str]) -> None:
    """Load the first entry of ``pending`` (a ``package.*`` puts its modules first in its place)."""
    import importlib
    import pkgutil

    name = pending.pop(0)
    try:
        if name.endswith(".*"):
            package = importlib.import_module(name[:-2])
            pending[:0] = sorted(
                m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
            )
        elif ":" in name:
            module, function = name.split(":")
            getattr(importlib.import_module(module), function)()
        else:
            importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - a job importing it fails the same way, with its own trace
        print(f"zygote: preload {name}: {type(e).__name__}: {e}", flush=True)


def _reap(children: set[int]) -> None:
    for pid in list(children):
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            children.discard(pid)


def _supervise(conn: socket.socket) -> int:
    """One job: fork its worker, tell the job its PID and, at the end, its exit status."""
    import selectors

    request, fds = _receive(conn, with_fds=True)
    t0, at = time.monotonic(), time.time()
    worker = os.fork()
    if worker == 0:
        conn.close()
        _work(request, fds)  # never returns
    for fd in fds:
        os.close(fd)
    _send(conn, {"pid": worker})
    sel = selectors.DefaultSelector()
    sel.register(conn, selectors.EVENT_READ, "job")
    sel.register(os.pidfd_open(worker), selectors.EVENT_READ, "worker")
    if not any(key.data == "worker" for key, _ in sel.select()):
        # the job's process went away (killed, or Snakemake stopping): so does its worker
        os.kill(worker, signal.SIGTERM)
        if not _ended(worker, 5.0):
            os.kill(worker, signal.SIGKILL)
    sel.close()
    _pid, status, usage = os.wait4(worker, 0)
    code = os.waitstatus_to_exitcode(status)
    code = code if code >= 0 else 128 - code
    _account(request, worker, code, t0, at, usage)
    try:
        _send(conn, {"code": code})
    except OSError:
        pass
    return 0


def _account(request: dict, worker: int, code: int, t0: float, at: float, usage) -> None:
    """One line in the zygote's log: the worker, who asked for it, what it ran, when the zygote took
    the request (``at``, Unix time: a job that waited before it is told from one that ran long)
    and what it cost."""
    what = request.get("script") or request.get("module")
    line = {
        "warm_job": Path(what).name,
        "pid": worker,
        "requester": request.get("requester"),
        "code": code,
        "at": round(at, 3),
        "wall_s": round(time.monotonic() - t0, 3),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "maxrss_mib": round(usage.ru_maxrss / 1024, 1),
    }
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def _ended(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` has ended within ``timeout`` s (left to be reaped)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
            return True
        time.sleep(0.05)
    return False


def _work(request: dict, fds: list[int]) -> None:
    """The worker: become the job (streams, directory, environment) and run its script."""
    import runpy

    for target, fd in zip((0, 1, 2), fds):
        os.dup2(fd, target)
    for fd in fds:
        os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh Python
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[IN_WORKER] = "1"
    code = 0
    try:
        if "script" in request:
            sys.argv = [request["script"], *request.get("argv", [])]
            sys.path.insert(0, os.path.dirname(request["script"]))
            runpy.run_path(request["script"], run_name="__main__")
        else:
            _as_kernel()
            sys.argv = [request["module"], *request["argv"]]
            sys.path.insert(0, os.getcwd())  # as ``python -m``
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - the job's failure, reported as Python would
        sys.excepthook(*sys.exc_info())  # the job's hook (podnet.config.joblog) or Python's own
        code = 1
    try:
        import logging

        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _as_kernel() -> None:
    """What a kernel process sees that the zygote's imports settled before the kernel existed."""
    # ipykernel makes the inline backend matplotlib's default through MPLBACKEND, which matplotlib
    # reads when imported: in the zygote, before there was a kernel
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].rcParams["backend"] = os.environ["MPLBACKEND"]
    # the kernel watches its parent, which here is the worker's supervisor (it lives as long as
    # the process Jupyter started)
    if os.environ.get("JPY_PARENT_PID"):
        os.environ["JPY_PARENT_PID"] = str(os.getppid())


# ---- framing: a length, a JSON message, optionally file descriptors ----------------------


def _send(conn: socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    head = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(conn, [head], fds)
        conn.sendall(data)
    else:
        conn.sendall(head + data)


def _receive(conn: socket.socket, with_fds: bool = False):
    if with_fds:
        head, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    else:
        head, fds = conn.recv(4, socket.MSG_WAITALL), []
    if len(head) < 4:
        raise EOFError("connection closed")
    (size,) = struct.unpack("!I", head)
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("connection closed")
        data += chunk
    message = json.loads(data)
    return (message, list(fds)) if with_fds else message
