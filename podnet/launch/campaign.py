"""A comparison campaign: the same experiment under each cluster variant, one published comparison.

A campaign config (``config/campaigns/*.yaml``) names an experiment config, optional overrides of
its ``launch`` section, and the variants to compare: embedded-cluster settings (CNI mode, kube-proxy
mode, link rate, node count, zones and pools, edge tunnel) or real clusters (one kubeconfig per
variant)::

    campaign: cni                       # experiment name of the comparison: raw/cni/<variant>/...
    experiment: config/config.yaml      # the experiment run under every variant
    launch: {repeats: 3}                # optional: keys replacing the experiment's launch keys
    stats: {primary: [...]}             # optional: keys replacing the experiment's stats keys
    report: {notebooks: [...]}          # optional: keys replacing the experiment's report keys
    side_by_side: true                  # default: every variant up at once where they can coexist
    interleave: false                   # true: round r launches repeat r of every variant in turn
    nodes: 3
    zones: [zone-a, zone-a, zone-b]     # optional, also per variant (make cluster-up ZONES; pools: POOLS)
    variants:                           # the first is the baseline of the variant ratios
      - {cni: bridge}
      - {cni: flannel-vxlan}
      - {cni: flannel-vxlan, proxy: nftables}
      - {cni: flannel-vxlan, edge_tunnel: wireguard}   # zones joined through gateways (seed 000)
      - {name: calico, kubeconfig: ~/.kube/calico.yaml}   # a real cluster

``python -m podnet.launch.campaign run CONFIG`` (``make compare``) runs the variants **side by
side** where they can be up at once (:func:`design`): real clusters (one kubeconfig each) and at most
one embedded cluster set-up (variants sharing it are named apart: an A/A check on one cluster). One
launch (:mod:`podnet.launch.sidebyside`) then interleaves the variants run by run, so the runs of one
round are pairs taken close in time, and adaptive rounds go to the primary variant comparisons
(``stats.primary`` entries ``by: variant``) until each is met or ``launch.adaptive.budget`` ends. Embedded
variants with different cluster settings cannot coexist (:data:`ONE_EMBEDDED_CLUSTER`): they run
**sequentially**, one after another: for each, the campaign takes the cluster lock, brings the
cluster up in that variant, launches the experiment with ``launch.variant`` set to the variant's
name, and always takes the cluster down again. A variant whose runs are all in ``raw/`` is skipped,
and the launcher itself runs only the missing repeats, so an interrupted campaign resumes where it
stopped. With ``interleave: true`` the sequential campaign goes round by round instead (A B A B
...): round r brings each variant up and launches its repeat r only (a cluster bring-up per variant
and round: for small measured comparisons, not for big experiments). Then the normal pipeline
(parse, stats, report) publishes one comparison: the experiment's own comparisons plus ratios of
every variant against the baseline variant, ``variants.csv`` (:mod:`podnet.stats.variants`), by
each design the runs allow: side by side (runs of one launch id and repeat), normalised by each
launch's own host-host baseline, or sequential, naming the design in every row.
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from podnet.config import schema

CNI_MODES = ("bridge", "flannel-vxlan", "flannel-host-gw", "macvlan", "calico-vxlan")
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
    #: run (:mod:`podnet.launch.sidebyside`), where the variants can coexist (:func:`design`)
    side_by_side: bool = True

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


def load(path: str | Path) -> Campaign:
    """Read a campaign config and the experiment config it names."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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
    }
    if unknown:
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
    return Campaign(
        name, exp, variants, path, bool(doc.get("interleave", False)), bool(doc.get("side_by_side", True))
    )


#: why embedded variants with different cluster settings cannot be up at once on one machine
ONE_EMBEDDED_CLUSTER = (
    "the embedded cluster is one per machine (its fabric 10.210.0.0/24 and the root namespace's link "
    "podnet0, the node namespaces podnet-node-N, /run/podnet-cluster, the kubelets' cgroup /podnet): "
    "embedded variants with different cluster settings run one after another, their ratios "
    "drift-normalised by each launch's own baseline path"
)


def design(c: Campaign) -> tuple[str, str]:
    """``("side-by-side" | "sequential", why)``: side by side when every variant can be up at once,
    i.e. real clusters (one kubeconfig each) and at most one embedded cluster set-up (variants that
    share it are an A/A check on one cluster, named apart)."""
    if c.interleave:
        return "sequential", "interleave: true (a cluster bring-up per variant and round)"
    if not c.side_by_side:
        return "sequential", "side_by_side: false"
    envs = {tuple(sorted(v.cluster_env().items())) for v in c.variants if v.embedded}
    if len(envs) > 1:
        return "sequential", ONE_EMBEDDED_CLUSTER
    if envs:
        return "side-by-side", "one embedded cluster set-up shared by its variants, real clusters beside it"
    return "side-by-side", "one cluster per variant (kubeconfigs)"


def variant_config(c: Campaign, v: Variant, repeats: int | None = None) -> dict[str, Any]:
    """The experiment config launched under variant ``v`` (variant name fixed, its kubeconfig;
    ``repeats``: launch only up to this repeat, for interleaved rounds)."""
    cfg = copy.deepcopy(c.experiment)
    stats = cfg.setdefault("stats", {})
    comps = [x for x in stats.get("comparisons", []) if x.get("by") != "variant"]
    stats["comparisons"] = [*comps, {"by": "variant", "baseline": c.baseline}]
    launch = cfg["launch"]
    launch["variant"] = v.name
    if repeats is not None:
        launch["repeats"] = repeats
        # the campaign's interleaved rounds decide the repeats: no adaptive rounds within one step
        launch.pop("adaptive", None)
    if v.embedded:
        launch["kubeconfig"] = ".cluster/kubeconfig"
        launch["cluster_info"] = ".cluster/info.json"
    else:
        launch["kubeconfig"] = v.kubeconfig
        launch.pop("image_file", None)
        launch.pop("cluster_info", None)
    return cfg


def publish_config(c: Campaign) -> dict[str, Any]:
    """The config the pipeline publishes the comparison with: the experiment without its launch
    section (raw/ holds every variant) and a comparison of each variant against the baseline."""
    cfg = copy.deepcopy(c.experiment)
    cfg.pop("launch", None)
    stats = cfg.setdefault("stats", {})
    comps = [x for x in stats.get("comparisons", []) if x.get("by") != "variant"]
    comps.append({"by": "variant", "baseline": c.baseline})
    stats["comparisons"] = comps
    return cfg


def write_configs(c: Campaign, repeats: int | None = None) -> dict[str, Path]:
    """Write the derived configs under ``.campaign/<name>/``; returns them by variant (and "publish")."""
    c.workdir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for v in c.variants:
        p = c.workdir / f"{v.name}.yaml"
        p.write_text(yaml.safe_dump(variant_config(c, v, repeats), sort_keys=False), encoding="utf-8")
        out[v.name] = p
    p = c.workdir / "publish.yaml"
    p.write_text(yaml.safe_dump(publish_config(c), sort_keys=False), encoding="utf-8")
    out["publish"] = p
    return out


def missing_runs(c: Campaign, v: Variant, repeats: int | None = None) -> int:
    """How many fixed-round runs of variant ``v`` raw/ still lacks (0: the variant is done)."""
    from podnet.launch.config import from_mapping
    from podnet.launch.runner import pending_runs

    cfg = from_mapping(variant_config(c, v, repeats))
    return sum(len(r) for r in pending_runs(cfg, v.name).values())


def _cache_dir() -> Path:
    if os.environ.get("PODNET_CACHE"):
        return Path(os.environ["PODNET_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "podnet"


@contextmanager
def cluster_lock() -> Iterator[None]:
    """The embedded cluster's lock (the one cluster-up/cluster-down take), held for a whole
    up/launch/down; the scripts run inside see PODNET_CLUSTER_LOCKED=1 and do not take it again."""
    if os.environ.get("PODNET_CLUSTER_LOCKED") == "1":
        yield
        return
    d = _cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "cluster.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        os.environ["PODNET_CLUSTER_LOCKED"] = "1"
        try:
            yield
        finally:
            os.environ.pop("PODNET_CLUSTER_LOCKED", None)
            fcntl.flock(fh, fcntl.LOCK_UN)


def _say(msg: str) -> None:
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], env: Mapping[str, str] | None = None) -> int:
    _say("$ " + " ".join(cmd))
    return subprocess.run(cmd, env={**os.environ, **(env or {})}, check=False).returncode


def launch_on(launch: list[str], embedded: Variant | None) -> int:
    """Run the ``launch`` command; with an ``embedded`` variant, under the cluster lock between
    bringing its cluster up and always taking it down again (also when the launch fails)."""
    if embedded is None:
        return _run(launch)
    env = embedded.cluster_env()
    with cluster_lock():
        rc = _run(["bash", "envs/cluster/up.sh"], env)
        try:
            if rc == 0:
                rc = _run(launch)
        finally:
            down = _run(["bash", "envs/cluster/down.sh"], env)
            rc = rc or down
    return rc


def run_variant(c: Campaign, v: Variant, config: Path, python: str) -> int:
    """Launch the experiment under one variant (its embedded cluster up and down around it)."""
    return launch_on(
        [python, "-m", "podnet.cli", "launch", "--config", str(config)], v if v.embedded else None
    )


def run_side_by_side(c: Campaign, files: Mapping[str, Path], python: str) -> int:
    """One launch of every variant at once; the embedded cluster set-up the variants share (if any)
    is brought up first and always taken down again."""
    launch = [python, "-m", "podnet.launch.sidebyside", *(str(files[v.name]) for v in c.variants)]
    return launch_on(launch, next((v for v in c.variants if v.embedded), None))


def run(path: str | Path, *, python: str = sys.executable, cores: int = 2, publish: bool = True) -> int:
    """Run a campaign: its variants side by side where they can coexist, else each variant that
    lacks runs one after another; then publish the comparison."""
    c = load(path)
    files = write_configs(c)
    failed: list[str] = []
    how, why = design(c)
    _say(f"design {how}: {why}")
    rounds: list[int | None] = list(range(1, c.repeats + 1)) if c.interleave else [None]
    if how == "side-by-side":
        missing = {v.name: missing_runs(c, v) for v in c.variants}
        rounds = []
        if any(missing.values()):
            _say(", ".join(f"{n}: {m} run(s) missing" for n, m in missing.items()))
            if run_side_by_side(c, files, python):
                failed.append("side-by-side launch")
        else:
            _say(f"all runs in raw/{c.name}/; nothing to launch")
    for r in rounds:
        if r is not None:
            _say(f"round {r} of {c.repeats}")
            files = write_configs(c, r)
        for v in c.variants:
            missing = missing_runs(c, v, r)
            if not missing:
                _say(f"{v.name}: all runs in raw/{c.name}/{v.name}; skipped")
                continue
            where = "embedded cluster" if v.embedded else str(v.kubeconfig)
            _say(f"{v.name}: {missing} run(s) missing; {where}")
            if run_variant(c, v, files[v.name], python) and v.name not in failed:
                failed.append(v.name)
    files = write_configs(c)
    if failed:
        _say(f"variants with failures: {', '.join(failed)} (re-run to resume)")
    if not publish:
        return 1 if failed else 0
    snakemake = str(Path(python).with_name("snakemake"))
    # --keep-going: a failed gate (rule check, exit 1) must not stop the figures and notebooks
    rc = _run(
        [
            snakemake,
            "--cores",
            str(cores),
            "--configfile",
            str(files["publish"]),
            "--keep-going",
            "-q",
            "rules",
        ]
    )
    if rc == 0:
        _say(f"comparison published under processed/{c.name}/ (baseline variant {c.baseline})")
    else:
        _say(
            f"publishing processed/{c.name}/ ended with exit {rc} (a failed gate: see processed/{c.name}/logs/check.log)"
        )
    return rc or (1 if failed else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m podnet.launch.campaign", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every variant that lacks runs, then publish the comparison")
    r.add_argument("config", help="campaign config (config/campaigns/*.yaml)")
    r.add_argument("--cores", type=int, default=2)
    r.add_argument("--no-publish", action="store_true", help="launch only")
    s = sub.add_parser("status", help="missing runs per variant")
    s.add_argument("config")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "status":
            c = load(args.config)
            for v in c.variants:
                print(f"{v.name}\t{missing_runs(c, v)} missing")
            return 0
        return run(args.config, cores=args.cores, publish=not args.no_publish)
    except CampaignError as exc:
        print(f"podnet campaign: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
