"""Latency under load in the config language: a test's ``load`` (N TCP streams beside its probe).

``launch.tools.<tool>.tests[]`` may carry ``load: {streams: N, direction: forward|reverse|both,
tool: iperf3, lead_in: s, lead_out: s, affinity: {client: CPU, server: CPU, policy}}``. The test's own run is then the *probe* (e.g. netperf
TCP_RR); the *load* is ``iperf3 -P N`` (``--bidir`` for ``both``) on the same client and server
pods, against its own iperf3 server on port ``launch.ports.load`` (:data:`LOAD_PORT`). The load
starts first; the probe starts ``lead_in`` seconds later, and the load runs ``lead_out`` seconds
beyond the probe's end, so the probe lies inside the load's steady part. ``streams: 0`` is the idle
point (no load runs; the probe alone, in the same rounds). ``streams: [0, 1, 4]`` is a sweep: one
test per value, named ``<name>-load_streams-<N>``, recorded as a sweep point over ``load_streams``
(:mod:`podnet.launch.spec.sweep`), from which :mod:`podnet.stats.underload` draws latency against
load. ``affinity`` (the shape of ``launch.affinity``) starts the load's client exec and its server
container on CPUs of their own (:meth:`LoadSpec.placed`); absent, the load runs where the probe runs
(the test's own ``affinity``, else ``launch.affinity``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.spec.defaults import read_affinity
from podnet.launch.spec.sweep import SweepPoint

#: the load's iperf3 server port (``launch.ports.load`` overrides it)
LOAD_PORT = 15211
#: the sweep parameter of a swept ``load.streams`` (tidy ``sweep_param``)
SWEEP_PARAM = "load_streams"
#: seconds of the lead-in that are not the load's omitted warm-up: iperf3 stamps its start to the
#: whole second, and each exec takes a moment to start (the parse stage's coverage check allows 1 s)
START_SLACK = 2


@dataclass(frozen=True)
class LoadSpec:
    """The load beside one test's probe (config ``load``; one streams value)."""

    streams: int
    direction: str = "forward"  # forward | reverse | both
    tool: str = "iperf3"
    #: seconds from the load's start to the probe's start
    lead_in: float = 4.0
    #: seconds the load runs on after the probe's expected end
    lead_out: float = 3.0
    #: the load's own CPUs (``client`` / ``server``, ``policy``: the shape of ``launch.affinity``),
    #: or None: the probe's (its test's affinity, else the launch's)
    affinity: Mapping[str, Any] | None = field(default=None, hash=False)

    @property
    def idle(self) -> bool:
        """No load runs: the idle point of a sweep (``streams: 0``)."""
        return self.streams == 0

    def placed(self, launch: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The affinity the load's client and server start under: its own, else ``launch`` (the
        probe's: its test's affinity, else ``launch.affinity``)."""
        return self.affinity if self.affinity is not None else launch

    def apart(self, launch: Mapping[str, Any] | None) -> tuple[int, ...]:
        """The CPUs the load's client is pinned to when they are not the probe's (``launch``'s client
        CPU): the probe's client container's time on them is the load's, not the probe's
        (:func:`podnet.launch.noise.cpus.side`'s ``exclude``). () when the load has no CPU of its
        own, or shares the probe's."""
        if self.affinity is None or self.affinity.get("client") is None:
            return ()
        mine = int(self.affinity["client"])
        probe = (launch or {}).get("client")
        return () if probe is not None and int(probe) == mine else (mine,)

    @property
    def omit(self) -> int:
        """The load's omitted warm-up (iperf3 ``-O``), whole seconds, at least 1."""
        return max(1, int(self.lead_in) - START_SLACK)

    def seconds(self, probe_duration: float) -> int:
        """The load's measured seconds (iperf3 ``-t``): so that omit + this = lead_in + probe + lead_out."""
        return int(math.ceil(self.lead_in + float(probe_duration) + self.lead_out)) - self.omit

    def params(self, probe_duration: float, port: int) -> dict[str, Any]:
        """The iperf3 adapter's parameters of this load (its invocation: ``iperf3 -c ... -J -P N``)."""
        return {
            "streams": self.streams,
            "duration": self.seconds(probe_duration),
            "omit": self.omit,
            "reverse": self.direction == "reverse",
            "bidir": self.direction == "both",
            "port": port,
            "interval": 1,
            "protocol": "tcp",
        }

    def as_meta(self) -> dict[str, Any]:
        return {
            "streams": self.streams,
            "direction": self.direction,
            "tool": self.tool,
            "lead_in": self.lead_in,
            "lead_out": self.lead_out,
            "omit": self.omit,
            **({"affinity": dict(self.affinity)} if self.affinity is not None else {}),
        }


def with_idle_points(cases: Iterable[Any], keys: Iterable[Any]) -> list[Any]:
    """``keys`` (case keys) with the idle point of every loaded point among them: an added round that
    runs a load point also runs its sweep's ``load_streams`` 0 on the same path, so the point's ratio
    to idle (paired by round, :mod:`podnet.stats.underload`) keeps its pairs. ``cases``: the launch's
    :class:`~podnet.launch.spec.config.Case` list (their order is kept)."""
    want = set(keys)
    loaded = {
        (c.key[0], c.key[1], c.test.family)
        for c in cases
        if c.key in want and c.test.load is not None and not c.test.load.idle and c.test.sweep is not None
    }
    idle = {
        c.key
        for c in cases
        if c.test.load is not None and c.test.load.idle and (c.key[0], c.key[1], c.test.family) in loaded
    }
    return [c.key for c in cases if c.key in want or c.key in idle]


def load_points(
    t: Mapping[str, Any],
) -> list[tuple[str, dict[str, Any], str, SweepPoint | None, LoadSpec]] | None:
    """(name, params, description, point, load) of each test a configured test with ``load`` stands
    for; None without ``load``. ValueError when it also has a ``sweep`` (one sweep per test)."""
    raw = t.get("load")
    if not raw:
        return None
    if t.get("sweep"):
        raise ValueError("a test with `load` sweeps load.streams; it cannot have a `sweep` as well")
    params = dict(t.get("params") or {})
    description = t.get("description", "")
    values = raw["streams"] if isinstance(raw["streams"], list) else [raw["streams"]]
    rest: dict[str, Any] = {k: raw[k] for k in ("direction", "tool", "lead_in", "lead_out") if k in raw}
    if raw.get("affinity"):  # as launch.affinity is read: CPUs as ints, the policy as given
        rest["affinity"] = read_affinity(raw["affinity"])
    out = []
    for v in values:
        spec = LoadSpec(streams=int(v), **rest)
        words = "(idle: no load)" if spec.idle else f"(under load: {spec.streams} streams, {spec.direction})"
        text = (description + " " if description else "") + words
        if isinstance(raw["streams"], list):
            name = f"{t['name']}-{SWEEP_PARAM}-{v}"
            out.append((name, params, text, SweepPoint(t["name"], SWEEP_PARAM, int(v)), spec))
        else:
            out.append((t["name"], params, text, None, spec))
    return out
