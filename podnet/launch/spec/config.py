"""The ``launch`` section of an experiment config, as typed data.

The YAML is validated against the config schema (``podnet/config/config.schema.yaml``,
strict: unknown keys are errors), then turned into :class:`LaunchConfig`. Every
default comes from the schema's ``default:`` values, server ports from the
adapters. Nothing here talks to a cluster; :mod:`podnet.launch.spec.plan` resolves
placements against nodes.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from podnet.config import schema

# what of a config a launch depends on (in podnet.config.stages: the workflow reads it without
# importing the launch stage)
from podnet.config.stages import STATS_KEYS, launch_view  # noqa: F401

# what a launch runs (re-exported: importers use them from here)
from podnet.launch.spec.case import (  # noqa: F401
    Case,
    CaseKey,
    EndpointSpec,
    Scenario,
    TestSpec,
    expand_sweep,
)

# the ports, timeouts and durations a config's values mean (re-exported: importers use them from here)
from podnet.launch.spec.defaults import (
    HTTP_PORT_KEY,  # noqa: F401
    LaunchConfigError,
    default_ports,
    default_timeouts,
    harness_affinity,
    parse_duration,
    port_key,  # noqa: F401
    read_affinity,
)
from podnet.launch.spec.disturbance import DisturbanceRule

#: the scenario of the interleaved noise floor's runs (podnet.launch.noise.floor); no config scenario may use it
from podnet.parse.tidy import FLOOR_SCENARIO
from podnet.tools.base import Adapter


@dataclass
class LaunchConfig:
    """Everything ``podnet launch`` needs, from one experiment config."""

    experiment: str
    raw_dir: Path
    scenarios: list[Scenario]
    tools: dict[str, list[TestSpec]]
    disabled_tools: list[str]
    stats: dict[str, Any]
    kubeconfig: str | None
    context: str | None
    image: str | None
    image_file: str
    image_pull_policy: str
    variant: str
    cni: str | None
    cluster_info: str
    namespace_prefix: str
    namespace_create: bool
    namespace_name: str | None
    repeats: int
    order: str
    seed: int
    max_attempts: int
    defaults: dict[str, Any]
    ports: dict[str, int]
    timeouts: dict[str, float]
    adaptive: bool
    adaptive_max_runs: int | None
    #: wall-clock budget of one launch in seconds (``launch.adaptive.budget``; None: no limit): limits added rounds only
    budget_s: float | None
    #: ``launch.floor``: tests run on the noise floor at each round's start (empty: off)
    floor_tests: tuple[TestSpec, ...] = ()
    #: uncounted warm-up runs at the start of a launch, of each case or each tool's first case per scenario
    warmup: int = 1
    #: ``launch.warmup_per``: "tool" (each tool's first case on each scenario) or "case"
    warmup_per: str = "tool"
    #: record CPU busy/steal, the launcher's and the daemons' CPU around each run
    interference: bool = True
    #: ``launch.disturbance`` (:class:`podnet.launch.spec.disturbance.DisturbanceRule`; None: the defaults)
    disturbance: Any = None
    #: ``launch.cpu_latency_us``: PM QoS CPU latency held during the launch (podnet.launch.noise.idle); None: none
    cpu_latency_us: int | None = None
    #: Guaranteed QoS: {"cpu": whole CPUs, "memory": "256Mi"} per container, or None
    resources: dict[str, Any] | None = None
    #: {"client": cpu, "server": cpu, "policy": "batch"}: every tool's ends started there (chrt, taskset;
    #: tools with a CPU option given it too; spec.plan.pinned_argv); None: where the scheduler puts them
    affinity: dict[str, Any] | None = None
    #: the raw ``launch`` mapping (recorded as provenance; its hash names the config)
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def cases(self) -> list[Case]:
        """All cases in config order: scenario-major, then tool, then test."""
        return [Case(s, t) for s in self.scenarios for t in s.tests]

    @property
    def config_sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.source, sort_keys=True, default=str).encode()).hexdigest()

    def harness_settings(
        self, adapter: Adapter, params: Mapping[str, Any] | None = None, test: TestSpec | None = None
    ) -> dict[str, Any]:
        """What the launcher did to keep itself and the cluster off the measurement (the sidecar's
        ``harness``); ``adapter``: the case's (:attr:`~podnet.launch.spec.plan.CasePlan.adapter`),
        ``params``: its adapter parameters (an ``affinity`` there, or from the test's placement, pins
        the tool when its adapter has the option); ``test``: the case's, whose own ``affinity``
        replaces ``launch.affinity`` (``harness.affinity.from: test``)."""
        supported = "affinity" in adapter.defaults
        pinned = (params or {}).get("affinity") if supported else None
        own = test is not None and test.affinity is not None
        placed = test.placed(self.affinity) if test is not None else self.affinity
        affinity = harness_affinity(adapter.name, supported, pinned, placed)
        if own and affinity is not None:
            affinity["from"] = "test"
        return {
            "warmup_runs": self.warmup,
            "warmup_per": self.warmup_per,
            "interference": self.interference,
            "resources": dict(self.resources) if self.resources else None,
            "qos": "Guaranteed" if self.resources else "Burstable",
            "affinity": affinity,
        }

    def resolve_image(self) -> str:
        """The test image: ``image``, else the first line of ``image_file``."""
        if self.image:
            return self.image
        p = Path(self.image_file)
        if not p.exists():
            raise LaunchConfigError(
                f"launch: no `image` given and image_file {self.image_file} does not exist "
                "(run `make cluster-up`, or set launch.image to an image that holds the tools)"
            )
        ref = p.read_text(encoding="utf-8").strip().splitlines()
        if not ref or not ref[0].strip():
            raise LaunchConfigError(f"launch: image_file {self.image_file} is empty")
        return ref[0].strip()


def validate(config: Mapping[str, Any]) -> None:
    """Validate a whole experiment config against the schema; :class:`LaunchConfigError` lists the problems."""
    import jsonschema

    try:
        schema.check_moved(config)
    except ValueError as exc:
        raise LaunchConfigError(str(exc)) from None
    validator = jsonschema.Draft202012Validator(schema.load())
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for e in errors[:10]:
            where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            lines.append(f"  {where}: {e.message}")
        raise LaunchConfigError(f"config does not match {schema.SCHEMA_PATH.name}:\n" + "\n".join(lines))


def _endpoint(raw: Mapping[str, Any] | None, where: str) -> EndpointSpec:
    d = schema.defaults_of(schema.section("launch")["$defs"]["endpoint"])
    raw = {**d, **(raw or {})}
    sel = raw.get("selector") or {}
    return EndpointSpec(
        kind=str(raw["kind"]),
        # the schema documents backend's default (pod) without a `default:` key: Snakemake's validate()
        # would write it into every endpoint, and `backend` is an error on a non-service endpoint
        backend=str(raw.get("backend", "pod")),
        node=raw.get("node"),
        selector=tuple(sorted((str(k), str(v)) for k, v in sel.items())),
        same_node_as=raw.get("same_node_as"),
        other_node_than=raw.get("other_node_than"),
        index=int(raw["index"]),
    )


def from_mapping(config: Mapping[str, Any], *, check_schema: bool = True) -> LaunchConfig:
    """Build a :class:`LaunchConfig` from a parsed experiment config (validated first)."""
    if check_schema:
        validate(config)
    if "launch" not in config:
        raise LaunchConfigError("config has no `launch` section: nothing to launch")
    exp = str(config["experiment"])
    launch = copy.deepcopy(dict(config["launch"]))
    raw_dir = Path(config.get("raw_dir") or f"raw/{exp}")

    tools, disabled = _tools(launch)
    scenarios = _scenarios(launch, tools, disabled)

    ns = {**schema.defaults("launch", "namespace"), **(launch.get("namespace") or {})}
    if ns["create"] is False and not ns.get("name"):
        raise LaunchConfigError(
            "launch.namespace: create is false, so `name` (an existing namespace) is required"
        )
    d = schema.defaults("launch")
    adaptive = {**schema.defaults("launch", "adaptive"), **(launch.get("adaptive") or {})}
    ports = default_ports()
    ports.update({k: int(v) for k, v in (launch.get("ports") or {}).items()})
    timeouts = default_timeouts()
    timeouts.update({k: float(v) for k, v in (launch.get("timeouts") or {}).items()})

    def opt(key: str) -> Any:
        return launch.get(key, d.get(key))

    cfg = LaunchConfig(
        experiment=exp,
        raw_dir=raw_dir,
        scenarios=scenarios,
        tools=tools,
        disabled_tools=disabled,
        stats=copy.deepcopy(dict(config.get("stats") or {})),
        kubeconfig=opt("kubeconfig"),
        context=opt("context"),
        image=opt("image"),
        image_file=opt("image_file"),
        image_pull_policy=opt("image_pull_policy"),
        variant=opt("variant"),
        cni=opt("cni"),
        cluster_info=opt("cluster_info"),
        namespace_prefix=ns["prefix"],
        namespace_create=bool(ns["create"]),
        namespace_name=ns.get("name"),
        repeats=int(opt("repeats")),
        order=opt("order"),
        seed=int(opt("seed")),
        max_attempts=int(opt("max_attempts")),
        defaults=dict(launch.get("defaults") or {}),
        ports=ports,
        timeouts=timeouts,
        adaptive=bool(adaptive["enabled"]),
        adaptive_max_runs=adaptive.get("max_runs"),
        budget_s=parse_duration(adaptive.get("budget")),
        floor_tests=_floor_tests(launch.get("floor"), tools),
        warmup=int(opt("warmup")),
        warmup_per=str(opt("warmup_per")),
        interference=bool(opt("interference")),
        disturbance=DisturbanceRule.from_config(launch.get("disturbance")),
        cpu_latency_us=None if opt("cpu_latency_us") is None else int(opt("cpu_latency_us")),
        resources=dict(launch["resources"]) if launch.get("resources") else None,
        affinity=read_affinity(launch.get("affinity")),
        source=launch,
    )
    if not cfg.cases:
        raise LaunchConfigError("launch: no case to run (every scenario's tests are disabled or empty)")
    return cfg


def _tools(launch: Mapping[str, Any]) -> tuple[dict[str, list[TestSpec]], list[str]]:
    """(enabled tool -> its tests, disabled tools) of ``launch.tools``; test names unique per tool."""
    tools: dict[str, list[TestSpec]] = {}
    disabled: list[str] = []
    tool_defaults = schema.defaults_of(schema.section("launch", "tools")["additionalProperties"])
    for tool, spec in launch["tools"].items():
        if not {**tool_defaults, **spec}["enabled"]:
            disabled.append(tool)
            continue
        specs = [p for t in spec["tests"] for p in expand_sweep(tool, t)]
        names = [t["name"] for t in spec["tests"]] + [p.name for p in specs if p.sweep is not None]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise LaunchConfigError(
                f"launch.tools.{tool}: test names (sweep points included) must be unique; "
                f"repeated: {', '.join(dup)}"
            )
        tools[tool] = specs
    return tools, disabled


def _scenarios(
    launch: Mapping[str, Any], tools: dict[str, list[TestSpec]], disabled: list[str]
) -> list[Scenario]:
    """``launch.scenarios`` as :class:`Scenario` s, each placement checked (unique names, no self-reference)."""
    scenarios: list[Scenario] = []
    seen: set[str] = set()
    for i, sc in enumerate(launch["scenarios"]):
        name = sc["name"]
        where = f"launch.scenarios[{i}] ({name})"
        if name in seen:
            raise LaunchConfigError(f"{where}: scenario names must be unique")
        if name == FLOOR_SCENARIO:
            raise LaunchConfigError(f"{where}: {FLOOR_SCENARIO} is the interleaved noise floor's scenario")
        seen.add(name)
        client = _endpoint(sc.get("client"), f"{where}.client")
        server = _endpoint(sc.get("server"), f"{where}.server")
        if "backend" in (sc.get("client") or {}):
            raise LaunchConfigError(f"{where}.client: `backend` is only for a server of kind service")
        if client.kind == "service":
            raise LaunchConfigError(f"{where}.client: a client cannot be a Service (kind pod or host)")
        if client.relative_to == "client" or server.relative_to == "server":
            raise LaunchConfigError(f"{where}: an endpoint cannot be placed relative to itself")
        if client.relative_to and server.relative_to:
            raise LaunchConfigError(
                f"{where}: client and server are both placed relative to each other; place one of them absolutely"
            )
        if server.kind != "service" and "backend" in (sc.get("server") or {}):
            raise LaunchConfigError(f"{where}.server: `backend` is only for kind service")
        tests = _select_tests(sc.get("tests"), tools, disabled, where)
        scenarios.append(
            Scenario(
                name=name,
                client=client,
                server=server,
                tests=tuple(tests),
                description=sc.get("description", ""),
            )
        )
    return scenarios


def _floor_tests(raw: Mapping[str, Any] | None, tools: dict[str, list[TestSpec]]) -> tuple[TestSpec, ...]:
    """The tests of ``launch.floor`` (none when it is off); each must be a test of ``launch.tools``."""
    f = {**schema.defaults("launch", "floor"), **(raw or {})}
    if not f.get("enabled"):
        return ()
    out = []
    for item in f["tests"]:
        tool, _, name = item.partition(":")
        match = [t for t in tools.get(tool, []) if t.name == name]
        if not match:
            raise LaunchConfigError(
                f"launch.floor.tests: {item!r} is not a test of launch.tools (tool:test, tool enabled)"
            )
        out.append(match[0])
    return tuple(out)


def _select_tests(
    selection: list[str] | None, tools: dict[str, list[TestSpec]], disabled: list[str], where: str
) -> list[TestSpec]:
    if not selection:
        return [t for specs in tools.values() for t in specs]
    out: list[TestSpec] = []
    for item in selection:
        tool, _, test = item.partition(":")
        if tool in disabled:
            continue
        if tool not in tools:
            raise LaunchConfigError(
                f"{where}.tests: {item!r} names tool {tool!r}, which launch.tools does not define"
            )
        if test:
            # a sweep's name selects every point of it
            match = [
                t for t in tools[tool] if t.name == test or (t.sweep is not None and t.sweep.test == test)
            ]
            if not match:
                known = ", ".join(dict.fromkeys(t.family for t in tools[tool]))
                raise LaunchConfigError(
                    f"{where}.tests: {item!r}: {tool} has no test {test!r} (its tests: {known})"
                )
        else:
            match = tools[tool]
        for t in match:
            if t not in out:
                out.append(t)
    return out


def load_config(path: str | Path, *, overrides: Mapping[str, Any] | None = None) -> LaunchConfig:
    """Read, validate and convert an experiment config file.

    ``overrides`` are merged into the ``launch`` mapping before validation
    (e.g. ``{"kubeconfig": ...}`` from the command line).
    """
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LaunchConfigError(f"{path}: no such config file") from None
    except yaml.YAMLError as exc:
        raise LaunchConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(config, dict):
        raise LaunchConfigError(f"{path}: a config must be a mapping")
    if overrides and isinstance(config.get("launch"), dict):
        config["launch"].update({k: v for k, v in overrides.items() if v is not None})
    try:
        return from_mapping(config)
    except LaunchConfigError as exc:
        raise LaunchConfigError(f"{path}: {exc}") from None
