"""Signals during a launch: SIGTERM behaves like Ctrl-C while runs go on; clean-up is shielded."""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator, Mapping
from typing import Any


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived during the launch."""


@contextlib.contextmanager
def _signal_handlers(handler: Any) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` while the block runs (main thread only)."""
    old: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def interruptible() -> contextlib.AbstractContextManager[None]:
    """SIGTERM behaves like Ctrl-C (raises :class:`Interrupted`) while the block runs."""

    def handler(signum: int, frame: Any) -> None:
        raise Interrupted(signal.Signals(signum).name)

    return _signal_handlers(handler)


def shielded() -> contextlib.AbstractContextManager[None]:
    """Clean-up must finish: ignore SIGINT/SIGTERM while it runs."""
    return _signal_handlers(signal.SIG_IGN)


def run_to_end(cmd: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``cmd`` to its end; a SIGTERM meanwhile is passed on to it (a launch then cleans up its pods;
    a Ctrl-C reaches its process group by itself) and, once it has ended, raised as :class:`Interrupted`,
    so the caller's ``finally`` still runs (a campaign killed by SIGTERM left its launch and clusters up)."""
    proc = subprocess.Popen(cmd, env=None if env is None else dict(env))
    got: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        got.append(signum)
        if signum == signal.SIGTERM and proc.poll() is None:
            proc.send_signal(signum)

    with _signal_handlers(forward):
        rc = proc.wait()
    if got:
        raise Interrupted(signal.Signals(got[0]).name)
    return rc
