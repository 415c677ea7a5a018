"""From a :class:`LaunchConfig` and the cluster's nodes to pods, Services and runnable cases.

Endpoints are deduplicated: one client pod per (kind, node) and one server pod
per (kind, node), shared by every scenario that needs it. A server pod runs one
container per distinct server argv (e.g. ``iperf3 -s -p 15201``), straight from
the adapter's :class:`~podnet.tools.base.Invocation` (argv, never a shell
string), plus nginx for HTTP tools. A ClusterIP Service is put in front of a
server pod when a scenario's server is ``kind: service``.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from podnet import tools as adapters
from podnet.launch.spec.config import Case, LaunchConfig, LaunchConfigError, TestSpec, port_key
from podnet.launch.spec.defaults import POLICIES as _POLICIES
from podnet.launch.spec.load import LOAD_PORT
from podnet.launch.spec.placement import Node, Placement, resolve_scenario
from podnet.tools.base import Adapter, Invocation, UnsupportedTest

#: placeholder target used to build server argv at plan time (TEST-NET-1, never contacted)
PLACEHOLDER_TARGET = "192.0.2.1"


@dataclass
class ServerProc:
    """One server process = one container of a server pod."""

    tool: str
    container: str
    argv: list[str]
    #: the port it listens on (the adapter's TCP port, else the test's ``port`` param)
    port: int | None
    #: protocols the tests using it speak (tcp, udp, http)
    protocols: set[str] = field(default_factory=set)
    http: bool = False
    #: the adapter names a TCP port to wait for (Invocation.port)
    tcp_port: bool = True
    #: further ports the tests use (e.g. qperf's data port), TCP and UDP
    extra_ports: set[int] = field(default_factory=set)
    #: the server also listens on TCP for control when the test is UDP (the adapter's ``tcp_control``)
    tcp_control: bool = False
    #: the CPU the server process is started on (its test's placement, ``launch.affinity.server`` unless
    #: the test has its own: ``taskset -c``), or None
    cpu: int | None = None
    #: the scheduling policy it is started under (``launch.affinity.policy``: ``chrt``), or None
    policy: str | None = None
    #: the test it was first started for (named when another asks it for another placement)
    owner: str = field(default="", compare=False)

    @property
    def pin(self) -> list[str]:
        """What the container's command starts with to place the server (``taskset -c cpu``, after
        ``chrt`` when a policy is set), or []."""
        return pinned_argv(
            {"server": self.cpu, "policy": self.policy} if self.cpu is not None else None, "server"
        )

    @property
    def tcp(self) -> bool:
        """Listens on TCP: probed before clients start."""
        return self.port is not None and (self.http or self.tcp_port or self.tcp_control)

    @property
    def udp(self) -> bool:
        return "udp" in self.protocols


@dataclass
class PodPlan:
    """A pod to create: a client (sleeps; clients are exec'd) or a server (runs servers)."""

    name: str
    role: str  # client | server
    kind: str  # pod | host
    placement: Placement
    servers: list[ServerProc] = field(default_factory=list)
    #: name of the ClusterIP Service in front of it, if a scenario needs one
    service: str | None = None
    #: a client that sends ICMP (ping), and a server pod the launcher pings from (netready), keep the
    #: NET_RAW capability; nothing else does
    net_raw: bool = False

    @property
    def host_network(self) -> bool:
        return self.kind == "host"

    @property
    def needs_privileged_namespace(self) -> bool:
        """Pod Security ``baseline`` forbids hostNetwork and NET_RAW: this pod needs ``privileged``."""
        return self.host_network or self.net_raw


@dataclass
class CasePlan:
    """A case bound to its pods: what a run of it executes."""

    case: Case
    params: dict[str, Any]
    client_pod: str | None
    server_pod: str | None
    service: str | None
    server: ServerProc | None
    #: the invocation built with a placeholder target (the real target is known once pods run)
    template: Invocation | None
    #: the case cannot run: recorded as failed with this reason
    error: str | None = None
    #: the case is skipped (tool missing from the image): not recorded, reported
    skipped: str | None = None
    #: the load's server container (a test with ``load`` and streams > 0), and its port
    load_server: ServerProc | None = None
    load_port: int = LOAD_PORT
    #: the case's tool adapter, and its load's (iperf3; None without a load), resolved once by
    #: :func:`build_plan`: they travel with the case and are never written (raw names, sidecars and
    #: manifests come from the case, its params and its invocations)
    adapter: Adapter = field(kw_only=True, repr=False, compare=False)
    load_adapter: Adapter | None = field(default=None, kw_only=True, repr=False, compare=False)

    def invocation(self, target: str) -> Invocation:
        """The adapter's invocation against the real ``target`` address."""
        return self.adapter.invocation(self.params, target)

    @property
    def load(self) -> bool:
        """A run of this case starts a load beside its probe (``load`` with streams > 0)."""
        spec = self.case.test.load
        return spec is not None and not spec.idle

    def load_invocation(self, target: str, probe_duration: float) -> Invocation:
        """The load's iperf3 invocation against ``target`` (:class:`podnet.launch.spec.load.LoadSpec`)."""
        spec = self.case.test.load
        assert spec is not None and self.load_adapter is not None
        return self.load_adapter.invocation(spec.params(probe_duration, self.load_port), target)


@dataclass
class Plan:
    """Pods, Services and cases of one launch."""

    pods: dict[str, PodPlan]
    cases: list[CasePlan]

    def pods_of(self, cp: CasePlan) -> list[PodPlan]:
        return [self.pods[n] for n in (cp.client_pod, cp.server_pod) if n]

    @property
    def services(self) -> list[PodPlan]:
        return [p for p in self.pods.values() if p.service]


def slug(text: str, limit: int = 40) -> str:
    """A DNS-label-safe fragment of ``text``."""
    s = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    if len(s) > limit:
        s = s[:limit].rstrip("-")
    return s or "x"


def _pod_name(role: str, kind: str, placement: Placement) -> str:
    if placement.resolved:
        return f"{role}-{kind}-{slug(placement.node or '')}"
    h = hashlib.sha256(placement.key().encode()).hexdigest()[:6]
    return f"{role}-{kind}-unplaced-{h}"


#: ``launch.affinity.policy`` -> the ``chrt`` option that starts a process under it (its home:
#: :data:`podnet.launch.spec.defaults.POLICIES`, beside what the sidecar says of it)
POLICIES = _POLICIES


def pinned_argv(affinity: Mapping[str, Any] | None, side: str) -> list[str]:
    """``taskset -c CPU`` for one side (``client`` / ``server``) of ``launch.affinity``, after ``chrt
    --batch 0`` when its ``policy`` is ``batch``, or [] when it names no CPU for the side: the launcher
    places every tool's processes, also those without an option of their own (ping, iperf2, ab, wrk,
    sockperf, nginx), and the pinnable ones get their option too."""
    cpu = (affinity or {}).get(side)
    if cpu is None:
        return []
    policy = str((affinity or {}).get("policy") or "other")
    if policy not in POLICIES:
        raise ValueError(f"launch.affinity.policy {policy!r}: one of {', '.join(POLICIES)}")
    return [*POLICIES[policy], "taskset", "-c", str(int(cpu))]


def case_params(cfg: LaunchConfig, test: TestSpec) -> dict[str, Any]:
    """A test's adapter parameters: config ``defaults`` (keys the adapter knows), the test's
    own ``params``, the launcher's server port for the tool unless the test sets one, and the
    test's placement (its own ``affinity``, else ``launch.affinity``) as ``affinity: [client,
    server]`` for adapters that support it."""
    adapter = adapters.get(test.tool)
    known = set(adapter.defaults)
    params = {k: v for k, v in cfg.defaults.items() if k in known}
    placed = test.placed(cfg.affinity)
    if placed and "affinity" in known:
        params["affinity"] = [placed.get("client"), placed.get("server")]
    params.update(dict(test.params))
    key = port_key(test.tool)
    if "port" in known and "port" not in test.params and key in cfg.ports:
        params["port"] = cfg.ports[key]
        if "data_port" in known and "data_port" not in test.params:
            params["data_port"] = cfg.ports.get(f"{key}_data", cfg.ports[key] + 1)
    return params


def build_plan(cfg: LaunchConfig, nodes: list[Node], missing_tools: dict[str, str] | None = None) -> Plan:
    """Resolve placements, deduplicate pods, build every case's command lines.

    ``missing_tools`` maps a tool to the reason it cannot run (e.g. the image
    lacks its binary): its cases are skipped and its servers not started.
    """
    missing_tools = missing_tools or {}
    pods: dict[tuple[str, str, str], PodPlan] = {}
    names: dict[str, tuple[str, str, str]] = {}
    cases: list[CasePlan] = []

    def pod_for(role: str, kind: str, placement: Placement) -> PodPlan:
        key = (role, kind, placement.key())
        if key not in pods:
            name = _pod_name(role, kind, placement)
            if name in names and names[name] != key:
                name = f"{name[:55]}-{hashlib.sha256(repr(key).encode()).hexdigest()[:6]}"
            names[name] = key
            pods[key] = PodPlan(name=name, role=role, kind=kind, placement=placement)
        return pods[key]

    for case in cfg.cases:
        test = case.test
        tool = test.tool
        sc = case.scenario
        try:
            adapter = adapters.get(tool)
        except KeyError as exc:
            raise LaunchConfigError(f"launch.tools: {exc.args[0]}") from None
        load = test.load if test.load is not None and not test.load.idle else None
        load_adapter = adapters.get(load.tool) if load is not None else None
        params = case_params(cfg, test)
        if tool in missing_tools:
            cases.append(
                CasePlan(
                    case,
                    params,
                    None,
                    None,
                    None,
                    None,
                    None,
                    skipped=missing_tools[tool],
                    adapter=adapter,
                    load_adapter=load_adapter,
                )
            )
            continue
        try:
            template = adapter.invocation(params, PLACEHOLDER_TARGET)
        except (UnsupportedTest, ValueError, TypeError, KeyError) as exc:
            raise LaunchConfigError(f"launch.tools.{tool} test {test.name!r}: {exc}") from None
        if sc.server.kind == "service" and template.protocol == "icmp":
            raise LaunchConfigError(
                f"scenario {sc.name!r}: {tool}:{test.name} sends ICMP, which a ClusterIP Service does not "
                "forward; restrict the scenario's `tests` to TCP/UDP/HTTP tests"
            )
        client_pl, server_pl = resolve_scenario(sc, nodes)
        errors = []
        for side, pl in (("client", client_pl), ("server", server_pl)):
            if not pl.resolved:
                errors.append(f"{side}: {pl.reason}")

        client = None if client_pl.blocked_by_peer else pod_for("client", sc.client.kind, client_pl)
        if client is not None and template.protocol == "icmp":
            client.net_raw = True
        server_pod = None if server_pl.blocked_by_peer else pod_for("server", sc.server.pod_kind, server_pl)
        proc = load_proc = None
        load_port = int(cfg.ports.get("load", LOAD_PORT))
        if server_pod is not None:
            who = f"launch.tools.{tool} test {test.name!r}"
            placed = test.placed(cfg.affinity)
            proc = _server_proc(server_pod, adapter, template, params, cfg, placed, who=who)
            if getattr(adapter, "probes_from_server", False):  # netready pings from the server pod too
                server_pod.net_raw = True
            if load is not None and load_adapter is not None:
                load_inv = load_adapter.invocation(
                    load.params(template.duration, load_port), PLACEHOLDER_TARGET
                )
                load_proc = _server_proc(
                    server_pod,
                    load_adapter,
                    load_inv,
                    {"port": load_port},
                    cfg,
                    load.placed(placed),
                    own=load.affinity is not None,
                    who=f"{who}'s load",
                )
        service = None
        if sc.server.kind == "service" and server_pod is not None:
            server_pod.service = server_pod.service or f"svc-{server_pod.name}"[:63].rstrip("-")
            service = server_pod.service
        # an unplaced endpoint still gets a pod (the scheduler's events say why it cannot run);
        # only an endpoint placed relative to an unplaced peer has none
        error = ("placement failed: " + "; ".join(errors)) if (client is None or server_pod is None) else None
        cases.append(
            CasePlan(
                case=case,
                params=params,
                client_pod=client.name if client else None,
                server_pod=server_pod.name if server_pod else None,
                service=service,
                server=proc,
                template=template,
                error=error,
                load_server=load_proc,
                load_port=load_port,
                adapter=adapter,
                load_adapter=load_adapter,
            )
        )
    return Plan(pods={p.name: p for p in pods.values()}, cases=cases)


def _server_proc(
    pod: PodPlan,
    adapter: Adapter,
    inv: Invocation,
    params: dict[str, Any],
    cfg: LaunchConfig,
    placed: Mapping[str, Any] | None,
    *,
    own: bool = False,
    who: str = "",
) -> ServerProc | None:
    """The server container a case needs in ``pod`` (shared with identical argv and placement), or
    None. ``placed``: the affinity it starts under (its test's, :meth:`TestSpec.placed`, or its
    load's, :meth:`LoadSpec.placed`): the server CPU, and the policy for nginx, or for a tool's own
    server only when ``own`` (a load's own affinity); ``who``: the test it serves, named when it asks
    a server process another test started elsewhere for a placement of its own
    (:class:`LaunchConfigError`: one process, one placement)."""
    tool = adapter.name
    placed = placed or {}
    http = inv.server is None and adapter.server_kind == "http"
    if inv.server is None and not http:
        return None  # e.g. ping: nothing to start
    argv = [] if http else [str(a) for a in inv.server or []]
    # launch.affinity's (and a test's) policy is not given to a tool's own server container (nginx's
    # only); a load's own affinity places its server with its policy
    cpu, policy = placed.get("server"), (placed.get("policy") if http or own else None)
    pin = pinned_argv({"server": cpu, "policy": policy}, "server")
    if http:
        port = inv.port or cfg.ports.get(port_key(tool))
        for s in pod.servers:
            if s.http and s.port == port:
                _one_placement(pod, s, pin, who, "nginx")
                s.protocols.add("http")
                return s
        proc = ServerProc(
            tool="nginx",
            container=f"http-{len([s for s in pod.servers if s.http]) + 1}",
            argv=[],
            port=port,
            http=True,
            cpu=cpu,
            policy=policy,
            owner=who,
        )
        proc.protocols.add("http")
        pod.servers.append(proc)
        return proc
    extra = {int(v) for k, v in params.items() if k.endswith("_port") and isinstance(v, int)}
    protocols = set((inv.protocol or "tcp").split("+")) if inv.protocol else {"tcp"}
    # a test named after its protocols (qperf's tcp_bw+udp_lat, iperf's udp) needs each of them
    protocols |= {p.split("_")[0] for p in str(inv.test).split("+") if p.startswith(("tcp", "udp"))}
    for s in pod.servers:
        if s.tool == tool and s.argv == argv:
            _one_placement(pod, s, pin, who, shlex.join(argv))
            s.protocols |= protocols
            s.extra_ports |= extra
            return s
    k = len([s for s in pod.servers if s.tool == tool]) + 1
    port = inv.port if inv.port is not None else params.get("port")
    proc = ServerProc(
        tool=tool,
        container=f"{slug(tool, 20)}-{k}",
        argv=argv,
        port=int(port) if port is not None else None,
        tcp_port=inv.port is not None,
        extra_ports=extra,
        tcp_control=adapter.tcp_control,
        cpu=cpu,
        policy=policy,
        owner=who,
    )
    proc.protocols |= protocols
    pod.servers.append(proc)
    return proc


def _one_placement(pod: PodPlan, s: ServerProc, pin: list[str], who: str, what: str) -> None:
    """:class:`LaunchConfigError` when ``who`` asks server ``s`` (started for ``s.owner``) for another
    placement than its own: one server process serves one placement."""
    if s.pin == pin:
        return
    mine, theirs = shlex.join(pin) or "no pin", shlex.join(s.pin) or "no pin"
    raise LaunchConfigError(
        f"{who or 'a test'}: its server `{what}` in pod {pod.name} would start under {mine}, and "
        f"{s.owner or 'another test'} starts it under {theirs}: one server process serves both; give "
        "them one placement (tests[].affinity, load.affinity) or the test a port of its own (params.port)"
    )


def server_binaries(cfg: LaunchConfig) -> dict[str, list[str]]:
    """Per tool, the binaries its client and server need in the image (for the image probe)."""
    out: dict[str, list[str]] = {}
    for tool, tests in cfg.tools.items():
        adapter = adapters.get(tool)
        bins = [adapter.binary] if adapter.binary else []
        for t in tests:
            try:
                inv = adapter.invocation(case_params(cfg, t), PLACEHOLDER_TARGET)
            except (UnsupportedTest, ValueError, TypeError, KeyError):
                continue
            for argv in (inv.client, inv.server):
                if argv and argv[0] not in bins:
                    bins.append(str(argv[0]))
        if adapter.server_kind == "http" and "nginx" not in bins:
            bins.append("nginx")
        loads = {t.load.tool for t in tests if t.load is not None and not t.load.idle}
        bins += [b for b in sorted(loads) if b not in bins]  # the load generator's binary
        out[tool] = bins
    return out


def test_lengths(config: Mapping[str, Any]) -> dict[tuple[str, str], float]:
    """Seconds each (tool, test) of a config's launch section runs (its invocation's duration)."""
    if not config.get("launch"):
        return {}
    from podnet import tools as adapters
    from podnet.launch.spec.config import from_mapping

    cfg = from_mapping(config, check_schema=False)
    out = {}
    for tool, specs in cfg.tools.items():
        for t in specs:
            out[(tool, t.name)] = float(
                adapters.get(tool).invocation(case_params(cfg, t), PLACEHOLDER_TARGET).duration
            )
    return out
