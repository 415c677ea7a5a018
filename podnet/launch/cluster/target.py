"""What a run of one case needs of the cluster, as small frozen values the workload resolves.

:meth:`Workload.target <podnet.launch.cluster.workload.Workload.target>` gives, per
:class:`~podnet.launch.spec.plan.CasePlan`, one :class:`CaseTarget`: the client's container (pod,
container, node), the server's when its pod runs, the address the client targets (the Service's
cluster IP, else the server pod's IP), both pods' :class:`Endpoint` records, the image and the
tool's version. :attr:`Workload.space <podnet.launch.cluster.workload.Workload.space>` gives the
launch's namespace (:class:`Space`) to what makes objects of its own there (a time-to-network run's
pods) or reads beside a run (interference). The executor asks for these through
:class:`podnet.launch.rounds.interface.Pods`, never for the workload's fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from podnet.launch.spec.placement import Placement
from podnet.launch.spec.plan import CasePlan


def object_name(prefix: str, name: str) -> str:
    """The real name of a planned pod or Service: ``prefix`` (the run's, in a shared namespace) and
    ``name``, cut to a DNS label."""
    return (prefix + name)[:63].rstrip("-")


@dataclass(frozen=True)
class Endpoint:
    """A pod as the runs see it (recorded once it is Ready, or failed)."""

    name: str
    ip: str | None = None
    node: str | None = None
    image_id: str | None = None
    interface: str | None = None
    mtu: int | None = None
    failure: str | None = None


class Container(NamedTuple):
    """Where an exec runs: a pod (its real name), one of its containers, and the pod's node."""

    pod: str
    container: str
    node: str | None


@dataclass(frozen=True)
class CaseTarget:
    """Where and with what one case runs, as its pods were recorded."""

    #: the client pod's ``main`` container
    client: Container
    #: the server pod's container of this case (``main`` without a server process); None when the
    #: case has no server pod or it failed
    server: Container | None
    #: what the client targets: the Service's cluster IP (a Service scenario), else the server pod's IP
    address: str | None
    #: the real name of the Service in front of the server pod, if any
    service: str | None
    client_endpoint: Endpoint | None
    server_endpoint: Endpoint | None
    #: where the client pod was placed (a time-to-network run's pods go there too)
    client_placement: Placement | None
    image: str
    tool_version: str | None

    @property
    def image_id(self) -> str | None:
        """The image digest the client pod runs."""
        return self.client_endpoint.image_id if self.client_endpoint else None


def case_target(
    cp: CasePlan,
    endpoints: Mapping[str, Endpoint],
    services: Mapping[str, str],
    prefix: str,
    image: str,
    tool_versions: Mapping[str, str],
    client_placement: Placement | None,
) -> CaseTarget:
    """``cp``'s :class:`CaseTarget` from the workload's records: its endpoints by planned pod name,
    the Services' cluster IPs by server pod, the run's name prefix, image and tool versions."""
    cep = endpoints.get(cp.client_pod or "")
    sep = endpoints.get(cp.server_pod or "")
    client = Container(object_name(prefix, cp.client_pod or ""), "main", cep.node if cep else None)
    server = None
    if cp.server_pod and sep is not None and not sep.failure:
        container = cp.server.container if cp.server else "main"
        server = Container(object_name(prefix, cp.server_pod), container, sep.node)
    if cp.service and cp.server_pod:
        address = services.get(cp.server_pod)
    else:
        address = sep.ip if sep else None
    return CaseTarget(
        client=client,
        server=server,
        address=address,
        service=object_name(prefix, cp.service) if cp.service else None,
        client_endpoint=cep,
        server_endpoint=sep,
        client_placement=client_placement,
        image=image,
        tool_version=tool_versions.get(cp.case.test.tool),
    )


@dataclass(frozen=True)
class Space:
    """The launch's namespace: the API client (a :class:`~podnet.launch.cluster.k8s.Kube` or a
    double), the namespace's name, the labels every object of the run carries and the run's name
    prefix (in a shared namespace)."""

    kube: Any
    namespace: str | None
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    prefix: str = ""

    def name(self, name: str) -> str:
        """The real name of an object this run makes (:func:`object_name`)."""
        return object_name(self.prefix, name)
