"""Signals during a launch: SIGTERM behaves like Ctrl-C while runs go on; clean-up is shielded."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
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
