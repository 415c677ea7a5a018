"""What a launch runs, as typed data: endpoints, tests (with their sweep point, load, scale point and
placement), scenarios and cases (one (scenario, tool, test) each). :mod:`.config` builds them from an
experiment config and re-exports them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from podnet.launch.spec.defaults import LaunchConfigError, read_affinity
from podnet.launch.spec.load import LoadSpec, load_points
from podnet.launch.spec.scale import ScaleSpec, scale_points
from podnet.launch.spec.sweep import SweepPoint, points


@dataclass(frozen=True)
class EndpointSpec:
    """One side of a scenario: what kind of endpoint and where it should run."""

    kind: str = "pod"  # pod | host | service
    backend: str = "pod"  # for service: the kind of the pod behind it
    node: str | None = None
    selector: tuple[tuple[str, str], ...] = ()
    same_node_as: str | None = None
    other_node_than: str | None = None
    index: int = 0

    @property
    def pod_kind(self) -> str:
        """The kind of the pod this endpoint runs in (a Service's backend for kind service)."""
        return self.backend if self.kind == "service" else self.kind

    @property
    def relative_to(self) -> str | None:
        return self.same_node_as or self.other_node_than

    def describe(self) -> str:
        """Short human text, e.g. ``pod on node podnet-node-1``."""
        where = []
        if self.node:
            where.append(f"node {self.node}")
        if self.selector:
            where.append("nodes with " + ",".join(f"{k}={v}" for k, v in self.selector))
        if self.same_node_as:
            where.append(f"same node as the {self.same_node_as}")
        if self.other_node_than:
            where.append(f"another node than the {self.other_node_than}")
        kind = f"service->{self.backend}" if self.kind == "service" else self.kind
        return (
            f"{kind} on "
            + (", ".join(where) if where else "the first node")
            + (f" (#{self.index})" if self.index else "")
        )


@dataclass(frozen=True)
class TestSpec:
    """One named test of one tool, with its adapter parameters."""

    tool: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    description: str = ""
    #: a point of a sweep (config ``sweep``): the configured test's name, the parameter and its value
    sweep: SweepPoint | None = field(default=None, compare=False)
    #: the load run beside this test's probe (config ``load``; :mod:`.load`), None: a plain test
    load: LoadSpec | None = field(default=None, compare=False)
    #: the objects the cluster holds while it runs (config ``scale``; :mod:`.scale`), None: none
    scale: ScaleSpec | None = field(default=None, compare=False)
    #: the test's own placement (config ``affinity``, the shape of ``launch.affinity``), or None
    affinity: Mapping[str, Any] | None = field(default=None, hash=False, compare=False)
    #: config ``every_round``: the test joins every adaptive round too, not only the base rounds
    #: (:mod:`podnet.launch.rounds.everyround`)
    every_round: bool = field(default=False, compare=False)

    def placed(self, launch: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """Where the test's client exec and server container start: its own ``affinity`` (whole: a
        key it leaves out is not taken from ``launch``), else ``launch`` (``launch.affinity``)."""
        return self.affinity if self.affinity is not None else launch

    @property
    def key(self) -> str:
        return f"{self.tool}:{self.name}"

    @property
    def family(self) -> str:
        """The configured test's name: a sweep point's base name, else the test's own."""
        return self.sweep.test if self.sweep is not None else self.name


def expand_sweep(tool: str, t: Mapping[str, Any]) -> list[TestSpec]:
    """The tests of one configured test: itself, or one per point of its ``sweep`` (:mod:`.sweep`)
    or of its ``load.streams`` (:mod:`.load`) or ``scale`` counts (:mod:`.scale`), each with the
    test's ``affinity`` and ``every_round``."""
    a, every = read_affinity(t.get("affinity")), bool(t.get("every_round", False))
    try:
        if (scaled := scale_points(t)) is not None:
            return [
                TestSpec(tool, n, p, d, point, scale=s, affinity=a, every_round=every)
                for n, p, d, point, s in scaled
            ]
        loads = load_points(t)
        if loads is not None:
            return [
                TestSpec(tool, n, p, d, point, load, affinity=a, every_round=every)
                for n, p, d, point, load in loads
            ]
        return [TestSpec(tool, n, p, d, point, affinity=a, every_round=every) for n, p, d, point in points(t)]
    except ValueError as e:
        raise LaunchConfigError(f"launch.tools.{tool}.{t['name']}: {e}") from None


@dataclass(frozen=True)
class Scenario:
    """A path measured: client endpoint -> server endpoint, and the tests run on it."""

    name: str
    client: EndpointSpec
    server: EndpointSpec
    tests: tuple[TestSpec, ...]
    description: str = ""


#: case key: (scenario, tool, test)
CaseKey = tuple[str, str, str]


@dataclass(frozen=True)
class Case:
    """One (scenario, tool, test): the unit that is repeated and interleaved."""

    scenario: Scenario
    test: TestSpec

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.scenario.name, self.test.tool, self.test.name)

    @property
    def label(self) -> str:
        return f"{self.scenario.name}/{self.test.tool}-{self.test.name}"
