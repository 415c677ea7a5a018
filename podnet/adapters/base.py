"""What every tool adapter provides.

An adapter owns both sides of one tool: the command line the launcher runs
(:meth:`Adapter.invocation`) and the parser that turns the tool's output into
tidy measurements (:meth:`Adapter.parse`). Adding a tool means adding one module
in this package that defines a module-level ``ADAPTER`` instance, plus fixtures
under ``tests/fixtures/<tool>/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from podnet.tidy import ParseResult


class ParseError(ValueError):
    """The output cannot be parsed; the message says what was expected."""


class UnsupportedTest(ValueError):
    """The adapter cannot build a command for the requested test parameters."""


@dataclass
class Invocation:
    """How to run one test of a tool between a client and a server endpoint.

    ``client`` and ``server`` are argv lists (never shell strings), so config
    values never reach a shell. ``server`` is ``None`` when the server side is a
    service already running in the server pod (e.g. nginx for ab/wrk) or not
    needed (ping).
    """

    client: list[str]
    server: list[str] | None = None
    #: TCP port the server listens on; the launcher waits for it before the client starts
    port: int | None = None
    #: seconds the client is expected to run (the launcher adds a margin for its timeout)
    duration: float = 10.0
    #: the test name / protocol / direction / streams this invocation measures
    test: str = ""
    protocol: str = ""
    direction: str = "forward"
    streams: int = 1
    #: argv that prints the tool's version (recorded as provenance)
    version: list[str] = field(default_factory=list)


class Adapter:
    """Base class of tool adapters. Subclasses set ``name`` and implement the methods."""

    #: tool name as used in configs, sidecars and the tidy table
    name: ClassVar[str] = ""
    #: the binary the image must contain for this tool to run
    binary: ClassVar[str] = ""
    #: default test parameters (merged under the config's per-tool settings)
    defaults: ClassVar[dict[str, Any]] = {}

    def sniff(self, text: str) -> float:
        """How sure we are (0..1) that ``text`` is this tool's output."""
        raise NotImplementedError

    def parse(self, text: str) -> ParseResult:
        """Parse one raw output. Raises :class:`ParseError` naming what was expected."""
        raise NotImplementedError

    def invocation(self, params: dict[str, Any], target: str) -> Invocation:
        """The command lines for one test with ``params`` against address ``target``."""
        raise UnsupportedTest(f"{self.name}: launching is not implemented")

    def __repr__(self) -> str:
        return f"<adapter {self.name}>"
