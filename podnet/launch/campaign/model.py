"""A campaign config: its variants (embedded-cluster set-ups or real clusters) and the experiment
run under each; parsed and checked here, run by :mod:`podnet.launch.campaign.run`.

A campaign may derive from another: ``base: <path of a campaign file>`` (relative paths from the
working directory, the repository's root, as ``experiment:``) loads that file (itself perhaps
derived, recursively; a cycle is an error) and merges this file over it (:func:`merge`: mappings key
by key, recursively; a list or scalar replaces the base's). The derived file names its own
``campaign`` (its raw/, processed/ and .campaign/ apart from the base's). Every check below applies
to the merged document, e.g. config/campaigns/seed-003-unshaped.yaml: seed-003.yaml's design, its
own name, description and variants."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from podnet.config import schema

#: the embedded cluster's mode table (one row per CNI mode; envs/cluster/README.md)
#: the repository this package lives in (its envs/cluster scripts and mode table)
REPO = Path(__file__).resolve().parents[3]
MODES_TSV = REPO / "envs" / "cluster" / "modes.tsv"


def read_cni_modes(path: Path = MODES_TSV) -> tuple[str, ...]:
    """The CNI modes of the embedded cluster, in table order: column ``mode`` of ``modes.tsv``
    (lines starting with ``#`` are comments; the first other line is the header)."""
    rows = [ln.split("\t") for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    col = rows[0].index("mode")
    return tuple(r[col] for r in rows[1:])


CNI_MODES = read_cni_modes()
PROXY_MODES = ("iptables", "nftables")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
#: a Kubernetes label value (a zone or pool of the embedded cluster)
_LABEL = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


class CampaignError(ValueError):
    """A campaign config that cannot be run."""


@dataclass(frozen=True)
class Variant:
    """One cluster set-up to run the experiment under."""

    name: str
    cni: str | None = None
    proxy: str = "iptables"
    link_rate: str | None = None
    nodes: int = 2
    kubeconfig: str | None = None
    #: ``wireguard``: zones joined through gateways over wireguard-go (seed 000's edge tunnel)
    edge_tunnel: str | None = None
    #: the nodes' zones and pools (``ZONES``/``POOLS`` of make cluster-up; None: its defaults)
    zones: str | None = None
    pools: str | None = None

    @property
    def embedded(self) -> bool:
        """Whether this variant is the embedded cluster (brought up and down by the campaign)."""
        return self.kubeconfig is None

    def cluster_env(self) -> dict[str, str]:
        """make cluster-up/cluster-down settings of an embedded variant."""
        return {
            "CNI": str(self.cni),
            "PROXY": self.proxy,
            "NODES": str(self.nodes),
            "LINK_RATE": self.link_rate or "",
            "EDGE_TUNNEL": self.edge_tunnel or "",
            **({"ZONES": self.zones} if self.zones else {}),
            **({"POOLS": self.pools} if self.pools else {}),
        }


def variant_name(
    cni: str, proxy: str = "iptables", link_rate: str | None = None, edge_tunnel: str | None = None
) -> str:
    """The name of an embedded variant: ``<cni>.<proxy>[.<link rate>][.edge-<tunnel>]``, e.g.
    ``flannel-vxlan.nftables`` (the name ``envs/cluster/up.sh`` records as ``variant`` in
    ``.cluster/info.json``)."""
    return ".".join(
        [cni, proxy] + ([link_rate] if link_rate else []) + ([f"edge-{edge_tunnel}"] if edge_tunnel else [])
    )


@dataclass(frozen=True)
class Campaign:
    """A parsed campaign config."""

    name: str
    experiment: dict[str, Any]
    variants: tuple[Variant, ...]
    source: Path
    interleave: bool = False
    #: ``side_by_side`` (default true): every variant up at once, one launch interleaving them run by
    #: run (:mod:`podnet.launch.campaign.sidebyside`), where the variants can coexist (:func:`design`)
    side_by_side: bool = True
    #: ``bare_floor``: rounds of ``podnet floor`` (the ``launch.floor`` tests between two bare network
    #: namespaces, variant ``floor``) run before any cluster of the campaign is up: with the
    #: interleaved floor of the launch (clusters up, idle between runs), what idle clusters add
    bare_floor: int = 0

    @property
    def repeats(self) -> int:
        """The experiment's fixed repeats per case (what ``interleave`` goes round by)."""
        return int({**schema.defaults("launch"), **self.experiment["launch"]}["repeats"])

    @property
    def baseline(self) -> str:
        """The variant every other one is compared with (the first)."""
        return self.variants[0].name

    @property
    def workdir(self) -> Path:
        """Where the derived experiment configs are written."""
        return Path(".campaign") / self.name


def _labels(value: Any) -> str | None:
    """ZONES/POOLS from a campaign (a list or a comma-separated string), or None."""
    if value is None:
        return None
    items = [str(x).strip() for x in (value if isinstance(value, list) else str(value).split(","))]
    if not items or not all(_LABEL.match(x) for x in items):
        raise CampaignError(f"zones/pools {value!r}: label values (letters, digits, '-', '_', '.')")
    return ",".join(items)


def _variant(entry: Mapping[str, Any], nodes: int, zones: Any = None, pools: Any = None) -> Variant:
    unknown = set(entry) - {
        "name",
        "cni",
        "proxy",
        "link_rate",
        "nodes",
        "kubeconfig",
        "edge_tunnel",
        "zones",
        "pools",
    }
    if unknown:
        raise CampaignError(f"variant {dict(entry)}: unknown keys {sorted(unknown)}")
    if entry.get("kubeconfig"):
        if not entry.get("name"):
            raise CampaignError(f"variant {dict(entry)}: a real cluster (kubeconfig) needs a name")
        if entry.get("cni") or entry.get("proxy") or entry.get("link_rate") or entry.get("edge_tunnel"):
            raise CampaignError(
                f"variant {entry['name']}: cni/proxy/link_rate/edge_tunnel are for the embedded cluster"
            )
        v = Variant(name=str(entry["name"]), kubeconfig=os.path.expanduser(str(entry["kubeconfig"])))
    else:
        cni = str(entry.get("cni", "bridge"))
        proxy = str(entry.get("proxy", "iptables"))
        rate = entry.get("link_rate")
        if cni not in CNI_MODES:
            raise CampaignError(f"variant {dict(entry)}: cni must be one of {', '.join(CNI_MODES)}")
        if proxy not in PROXY_MODES:
            raise CampaignError(f"variant {dict(entry)}: proxy must be one of {', '.join(PROXY_MODES)}")
        tunnel = entry.get("edge_tunnel")
        if tunnel not in (None, "wireguard"):
            raise CampaignError(f"variant {dict(entry)}: edge_tunnel must be wireguard (or absent)")
        if tunnel and cni not in ("bridge", "flannel-vxlan"):
            raise CampaignError(f"variant {dict(entry)}: edge_tunnel needs cni bridge or flannel-vxlan")
        name = str(entry.get("name") or variant_name(cni, proxy, str(rate) if rate else None, tunnel))
        v = Variant(
            name,
            cni,
            proxy,
            str(rate) if rate else None,
            int(entry.get("nodes", nodes)),
            edge_tunnel=tunnel,
            zones=_labels(entry.get("zones", zones)),
            pools=_labels(entry.get("pools", pools)),
        )
    if not _NAME.match(v.name):
        raise CampaignError(f"variant name {v.name!r}: use letters, digits, '.', '_' and '-'")
    return v


def merge(base: Any, over: Any) -> Any:
    """``over`` deep-merged over ``base`` (a new object; neither is changed): two mappings merge key by
    key, recursively (the base's keys first, then the new ones); anything else (a list, a scalar,
    None, a mapping over a non-mapping) is ``over``'s, replacing the base's whole."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for k, v in over.items():
            out[k] = merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def _document(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The campaign file at ``path`` as one mapping: merged over its ``base`` (recursively; ``chain``:
    the resolved files deriving from this one, to stop a cycle), without the ``base`` key."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(doc, Mapping):
        raise CampaignError(f"{path}: a campaign config is a mapping of keys, not {type(doc).__name__}")
    if "base" not in doc:
        return dict(doc)
    ref = doc["base"]
    if not ref or not isinstance(ref, str):
        raise CampaignError(f"{path}: base {ref!r}: the path of another campaign file")
    base, here = Path(ref), (*chain, path.resolve())
    if base.resolve() in here:
        cycle = " -> ".join(str(p) for p in (*here, base.resolve()))
        raise CampaignError(f"{path}: base {base}: a cycle of bases ({cycle})")
    try:
        under = _document(base, here)
    except OSError as exc:
        raise CampaignError(f"{path}: base {base}: cannot be read ({exc.strerror or exc})") from exc
    except yaml.YAMLError as exc:
        raise CampaignError(f"{path}: base {base}: not YAML ({exc})") from exc
    if not doc.get("campaign"):
        raise CampaignError(f"{path}: a campaign with a base names itself (`campaign`)")
    if str(doc["campaign"]) == str(under.get("campaign")):
        raise CampaignError(
            f"{path}: campaign {doc['campaign']!r} is its base's ({base}): a derived campaign needs its own"
            " name (its raw/, processed/ and .campaign/)"
        )
    return merge(under, {k: v for k, v in doc.items() if k != "base"})


def load(path: str | Path) -> Campaign:
    """Read a campaign config (merged over its ``base``, if any: :func:`_document`) and the
    experiment config it names."""
    path = Path(path)
    doc = _document(path)
    unknown = set(doc) - {
        "campaign",
        "description",
        "experiment",
        "launch",
        "stats",
        "report",
        "nodes",
        "zones",
        "pools",
        "variants",
        "interleave",
        "side_by_side",
        "bare_floor",
    }
    if unknown:  # the merged document's: a base's unknown key counts too
        raise CampaignError(f"{path}: unknown keys {sorted(unknown)}")
    for key in ("campaign", "experiment", "variants"):
        if not doc.get(key):
            raise CampaignError(f"{path}: `{key}` is required")
    name = str(doc["campaign"])
    if not _NAME.match(name):
        raise CampaignError(f"{path}: campaign name {name!r}: use letters, digits, '.', '_' and '-'")
    exp = yaml.safe_load(Path(doc["experiment"]).read_text(encoding="utf-8"))
    if "launch" not in exp:
        raise CampaignError(f"{doc['experiment']}: the experiment has no `launch` section")
    exp = copy.deepcopy(exp)
    exp["launch"].update(copy.deepcopy(doc.get("launch") or {}))
    if doc.get("stats"):  # e.g. the campaign's primary family of variant comparisons
        exp["stats"] = {**(exp.get("stats") or {}), **copy.deepcopy(doc["stats"])}
    if doc.get("report"):  # e.g. the campaign's notebooks and a seed's table beside it (report.vs_seed)
        exp["report"] = {**(exp.get("report") or {}), **copy.deepcopy(doc["report"])}
    exp["experiment"] = name
    exp.pop("raw_dir", None)
    exp.pop("processed_dir", None)
    if doc.get("description"):
        exp["description"] = str(doc["description"])
    variants = tuple(
        _variant(v, int(doc.get("nodes", 2)), doc.get("zones"), doc.get("pools")) for v in doc["variants"]
    )
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise CampaignError(f"{path}: variant names repeat: {names}")
    bare = doc.get("bare_floor", 0)
    if isinstance(bare, bool) or not isinstance(bare, int) or bare < 0:
        raise CampaignError(f"{path}: bare_floor {bare!r}: a number of rounds (0: none)")
    return Campaign(
        name,
        exp,
        variants,
        path,
        bool(doc.get("interleave", False)),
        bool(doc.get("side_by_side", True)),
        bare,
    )


def with_budget(c: Campaign, budget: str | float | None) -> Campaign:
    """The campaign with ``launch.adaptive.budget`` replaced (``--budget``/``BUDGET=`` of make compare:
    the wall-clock limit of the launch's added rounds, e.g. ``25m``); None leaves it as configured."""
    if budget is None:
        return c
    from podnet.launch.spec.defaults import parse_duration

    try:
        parse_duration(budget)
    except ValueError as exc:
        raise CampaignError(f"budget {budget!r}: {exc}") from exc
    exp = copy.deepcopy(c.experiment)
    adaptive = exp["launch"].get("adaptive") or {}
    exp["launch"]["adaptive"] = {**adaptive, "enabled": True, "budget": budget}
    return dataclasses.replace(c, experiment=exp)
