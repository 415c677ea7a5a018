"""A comparison campaign: the same experiment under each cluster variant, one published comparison.

A campaign config (``config/campaigns/*.yaml``) names an experiment config, optional overrides of
its ``launch`` section, and the variants to compare: embedded-cluster settings (CNI mode, kube-proxy
mode, link rate, node count, zones and pools, edge tunnel) or real clusters (one kubeconfig per
variant)::

    campaign: cni                       # experiment name of the comparison: raw/cni/<variant>/...
    base: config/campaigns/x.yaml       # optional: a campaign this one is deep-merged over (model.load)
    experiment: config/config.yaml      # the experiment run under every variant
    launch: {repeats: 3}                # optional: keys replacing the experiment's launch keys
    stats: {primary: [...]}             # optional: keys replacing the experiment's stats keys
    report: {notebooks: [...]}          # optional: keys replacing the experiment's report keys
    side_by_side: true                  # default: every variant up at once where they can coexist
    interleave: false                   # true: round r launches repeat r of every variant in turn
    bare_floor: 10                      # optional: podnet floor rounds before any cluster is up
    nodes: 3
    zones: [zone-a, zone-a, zone-b]     # optional, also per variant (make cluster-up ZONES; pools: POOLS)
    variants:                           # the first is the baseline of the variant ratios
      - {cni: bridge}
      - {cni: flannel-vxlan}
      - {cni: flannel-vxlan, proxy: nftables}
      - {cni: flannel-vxlan, edge_tunnel: wireguard}   # zones joined through gateways (seed 000)
      - {name: calico, kubeconfig: ~/.kube/calico.yaml}   # a real cluster

``python -m podnet.launch.campaign run CONFIG`` (``make compare``) runs the variants **side by
side** where they can be up at once (:func:`design`): real clusters (one kubeconfig each) and one
embedded cluster per distinct embedded set-up, all up at once on this machine (``CLUSTER_ID`` 0, 1,
...: each its own API server, node namespaces, fabric and cgroups; variants with equal settings share
one, named apart: an A/A check). One launch (:mod:`podnet.launch.campaign.sidebyside`) then interleaves the
variants run by run, so the runs of one round are pairs taken close in time, and adaptive rounds go
to the primary variant comparisons (``stats.primary`` entries ``by: variant``) until each is met or
``launch.adaptive.budget`` ends. Where set-ups cannot coexist (:data:`COEXIST_CONFLICTS`, more than
:data:`MAX_EMBEDDED_CLUSTERS`) or ``side_by_side: false``, they run **sequentially**, one after
another: for each, the campaign takes the cluster lock, brings the cluster up in that variant,
launches the experiment with ``launch.variant`` set to the variant's
name, and always takes the cluster down again. A variant whose runs are all in ``raw/`` is skipped,
and the launcher itself runs only the missing repeats, so an interrupted campaign resumes where it
stopped. With ``interleave: true`` the sequential campaign goes round by round instead (A B A B
...): round r brings each variant up and launches its repeat r only (a cluster bring-up per variant
and round: for small measured comparisons, not for big experiments). Then the normal pipeline
(parse, stats, report) publishes one comparison: the experiment's own comparisons plus ratios of
every variant against the baseline variant, ``variants.csv`` (:mod:`podnet.stats.variants`), by
each design the runs allow: side by side (runs of one launch id and repeat), normalised by each
launch's own host-host baseline, or sequential, naming the design in every row.

``bare_floor: N`` first runs N rounds of ``podnet floor`` (the ``launch.floor`` tests between two
bare network namespaces, variant ``floor`` in ``raw/<campaign>/floor/``) before any cluster of the
campaign is up; with the launch's interleaved floor (every cluster up, idle between runs) the
published ``summary.csv`` then holds the same tests' spread with no cluster and with the campaign's
clusters up. ``--budget`` (``make compare BUDGET=25m``) replaces ``launch.adaptive.budget`` for one
run, e.g. to fit a launch into the time a shared machine is free.
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from podnet.launch.campaign.model import (  # noqa: F401 (the campaign's model, re-exported)
    CNI_MODES,
    PROXY_MODES,
    REPO,
    Campaign,
    CampaignError,
    Variant,
    load,
    variant_name,
    with_budget,
)
from podnet.launch.cluster.signals import run_to_end

#: how many embedded clusters may run side by side (envs/cluster/lib.sh CLUSTER_ID 0..9)
MAX_EMBEDDED_CLUSTERS = 10

#: embedded set-ups that cannot be up at once on one machine, with the global resource they would
#: share: ``(predicate over the set of set-ups, reason)``. Every name, directory, cgroup, link, address
#: and wireguard device of a cluster carries its CLUSTER_ID (envs/cluster/lib.sh); none is known to
#: clash today, so the list is empty; a CNI that needs a machine-global resource adds its entry here.
COEXIST_CONFLICTS: tuple[tuple[Any, str], ...] = ()

#: why a campaign's embedded variants ran one after another (``design`` reason; kept for the
#: sequential designs chosen by ``side_by_side: false`` or too many clusters)
ONE_EMBEDDED_CLUSTER = (
    "embedded variants with different cluster settings run one after another, their ratios "
    "drift-normalised by each launch's own baseline path"
)


def _setup_key(v: Variant) -> tuple[tuple[str, str], ...]:
    """What makes two embedded variants one cluster: equal make cluster-up settings."""
    return tuple(sorted(v.cluster_env().items()))


def setups(c: Campaign) -> list[Variant]:
    """The campaign's distinct embedded cluster set-ups, in variant order (one variant each: the
    first with those settings); variants with equal settings share one cluster (an A/A check)."""
    seen: dict[tuple[tuple[str, str], ...], Variant] = {}
    for v in c.variants:
        if v.embedded:
            seen.setdefault(_setup_key(v), v)
    return list(seen.values())


def cluster_ids(c: Campaign) -> dict[str, int]:
    """Each embedded variant's cluster (``CLUSTER_ID`` of make cluster-up): set-ups numbered 0, 1, ...
    in variant order, so a campaign of one set-up uses the embedded cluster ``.cluster`` as before."""
    ids = {_setup_key(v): i for i, v in enumerate(setups(c))}
    return {v.name: ids[_setup_key(v)] for v in c.variants if v.embedded}


def state_dir(cluster_id: int) -> str:
    """The embedded cluster's state directory (kubeconfig, info.json, image): ``.cluster``, ``.cluster-<id>``."""
    return ".cluster" if cluster_id == 0 else f".cluster-{cluster_id}"


def design(c: Campaign) -> tuple[str, str]:
    """``("side-by-side" | "sequential", why)``: side by side when every variant (two or more; one
    variant is one plain launch) can be up at once:
    real clusters (one kubeconfig each) and the embedded set-ups, one embedded cluster each
    (``CLUSTER_ID`` 0, 1, ...), unless a known conflict (:data:`COEXIST_CONFLICTS`) names a global
    resource two of them would need, or they are more than :data:`MAX_EMBEDDED_CLUSTERS`."""
    if c.interleave:
        return "sequential", "interleave: true (a cluster bring-up per variant and round)"
    if len(c.variants) == 1:  # nothing to interleave: the side-by-side launcher needs two variants
        return "sequential", "one variant: one launch on its cluster"
    if not c.side_by_side:
        return "sequential", f"side_by_side: false; {ONE_EMBEDDED_CLUSTER}"
    ups = setups(c)
    if len(ups) > MAX_EMBEDDED_CLUSTERS:
        return "sequential", (
            f"{len(ups)} embedded set-ups, more than the {MAX_EMBEDDED_CLUSTERS} clusters one machine "
            f"holds side by side (CLUSTER_ID 0..9); {ONE_EMBEDDED_CLUSTER}"
        )
    for clash, reason in COEXIST_CONFLICTS:
        if clash(ups):
            return "sequential", f"{reason}; {ONE_EMBEDDED_CLUSTER}"
    real = sum(1 for v in c.variants if not v.embedded)
    parts = []
    if len(ups) > 1:
        parts.append(f"{len(ups)} embedded clusters up at once (CLUSTER_ID 0..{len(ups) - 1})")
    elif ups:
        parts.append("one embedded cluster shared by its variants")
    if real:
        parts.append(f"{real} real cluster(s) (kubeconfigs)")
    return "side-by-side", ", ".join(parts)


def variant_config(c: Campaign, v: Variant, repeats: int | None = None) -> dict[str, Any]:
    """The experiment config launched under variant ``v`` (variant name fixed, its kubeconfig: side by
    side, its own embedded cluster's; ``repeats``: launch only up to this repeat, for interleaved rounds)."""
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
        d = state_dir(cluster_ids(c)[v.name] if design(c)[0] == "side-by-side" else 0)
        launch["kubeconfig"] = f"{d}/kubeconfig"
        launch["cluster_info"] = f"{d}/info.json"
        if launch.get("image_file"):
            launch["image_file"] = f"{d}/image"
    else:
        launch["kubeconfig"] = v.kubeconfig
        launch.pop("image_file", None)
        launch.pop("cluster_info", None)
    return cfg


def publish_config(c: Campaign) -> dict[str, Any]:
    """The config the pipeline publishes the comparison with: the experiment without its launch
    section (raw/ holds every variant) and a comparison of each variant against the baseline."""
    cfg = copy.deepcopy(c.experiment)
    launch = cfg.pop("launch", None) or {}
    stats = cfg.setdefault("stats", {})
    # the launch section goes, but whether its rounds came from the adaptive stop stays: paired
    # intervals after an adaptive stop are stated at 1 - alpha/2 (podnet.stats.robust)
    paired = stats.setdefault("paired", {})
    if paired.get("adaptive") is None:
        paired["adaptive"] = bool((launch.get("adaptive") or {}).get("enabled", False))
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
    from podnet.launch.rounds.runner import pending_runs
    from podnet.launch.spec.config import from_mapping

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
    return run_to_end(cmd, {**os.environ, **(env or {})})


def launch_on(launch: list[str], embedded: Variant | Sequence[tuple[Variant, int]] | None) -> int:
    """Run the ``launch`` command; with ``embedded`` set-ups (a variant, or ``(variant, cluster id)``
    pairs side by side), under the cluster lock between bringing their clusters up and always taking
    them down again (also when a bring-up or the launch fails)."""
    if embedded is None:
        return _run(launch)
    ups = [(embedded, 0)] if isinstance(embedded, Variant) else list(embedded)
    if not ups:
        return _run(launch)
    rc = 0
    with cluster_lock():
        started: list[dict[str, str]] = []
        try:
            for v, i in ups:
                env = {**v.cluster_env(), "CLUSTER_ID": str(i)}
                started.append(env)
                rc = _run(["bash", str(REPO / "envs" / "cluster" / "up.sh")], env)
                if rc:
                    break
            if rc == 0:
                rc = _run(launch)
        finally:
            for env in reversed(started):
                down = _run(["bash", str(REPO / "envs" / "cluster" / "down.sh")], env)
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
    launch = [python, "-m", "podnet.launch.campaign.sidebyside", *(str(files[v.name]) for v in c.variants)]
    ids = cluster_ids(c)
    return launch_on(launch, [(v, ids[v.name]) for v in setups(c)])


#: the busy loop of one CPU hog (``--cpu-hog``): pure user-space spinning, no memory or I/O
HOG_CODE = "while True: pass"


@contextmanager
def cpu_hog(n: int) -> Iterator[list[int]]:
    """``n`` processes spinning on the CPU for the duration (a loaded machine, to check that the
    comparisons hold under load); yields their pids, always ended (by pid) on exit."""
    procs = [subprocess.Popen([sys.executable, "-c", HOG_CODE]) for _ in range(max(0, n))]
    if procs:
        _say(
            f"CPU hog: {n} busy process(es) beside the campaign, pid(s) {' '.join(str(p.pid) for p in procs)}"
        )
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def run(
    path: str | Path,
    *,
    python: str = sys.executable,
    cores: int = 2,
    publish: bool = True,
    hog: int = 0,
    budget: str | None = None,
) -> int:
    """Run a campaign: the bare floor first (``bare_floor``), then its variants side by side where
    they can coexist, else each variant that lacks runs one after another (with ``hog`` CPU hogs
    spinning beside the launches; ``budget`` replacing ``launch.adaptive.budget``); then publish the
    comparison."""
    c = with_budget(load(path), budget)
    with cpu_hog(hog):
        failed = run_bare_floor(c, python)
        failed += _launch_all(c, python)
    return _publish(with_budget(load(path), budget), python, cores, failed, publish)


def floor_tests(c: Campaign) -> list[str]:
    """The campaign's ``launch.floor`` tests (``tool:test``), the schema's default when unset."""
    from podnet.config import schema

    f = {**schema.defaults("launch", "floor"), **(c.experiment["launch"].get("floor") or {})}
    return [str(t) for t in f.get("tests") or []]


def _clusters_up() -> list[str]:
    """The network namespaces of embedded clusters on this machine (``podnet<k>-*``)."""
    netns = Path("/var/run/netns")
    return sorted(p.name for p in netns.iterdir() if p.name.startswith("podnet")) if netns.is_dir() else []


def bare_floor_missing(c: Campaign, tests: list[str]) -> int:
    """How many bare-floor runs ``raw/<campaign>/floor/netns-veth/`` still lacks."""
    from podnet.launch.noise.netns_floor import SCENARIO, VARIANT

    base = Path(c.experiment.get("raw_dir") or Path("raw") / c.name) / VARIANT / SCENARIO
    return sum(
        1
        for t in tests
        for r in range(1, c.bare_floor + 1)
        if not any(
            not p.name.endswith(".meta.yaml") for p in (base / t.replace(":", "-")).glob(f"r{r:03d}.*")
        )
    )


def run_bare_floor(c: Campaign, python: str) -> list[str]:
    """``bare_floor`` rounds of ``podnet floor`` before any cluster of the campaign is up (resumes:
    repeats on disk are skipped); ``["bare floor"]`` when it failed, else ``[]``."""
    if not c.bare_floor:
        return []
    tests = floor_tests(c)
    if not tests:
        raise CampaignError(f"{c.source}: bare_floor needs launch.floor.tests")
    if not bare_floor_missing(c, tests):
        _say(f"bare floor: all {c.bare_floor} round(s) in raw/{c.name}/floor/; nothing to run")
        return []  # a resumed campaign creates no floor namespaces for nothing
    files = write_configs(c)
    with cluster_lock():
        up = _clusters_up()
        _say(
            f"bare floor: {c.bare_floor} round(s) of {', '.join(tests)} with "
            f"{len(up)} podnet network namespace(s) up{': ' + ' '.join(up) if up else ''}"
        )
        cmd = [python, "-m", "podnet.cli", "floor", "--config", str(files[c.baseline])]
        rc = _run([*cmd, "--tests", ",".join(tests), "--repeats", str(c.bare_floor)])
    return ["bare floor"] if rc else []


def _launch_all(c: Campaign, python: str) -> list[str]:
    """Launch every variant that lacks runs (side by side or one after another); the failures."""
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
    return failed


def _publish(c: Campaign, python: str, cores: int, failed: list[str], publish: bool) -> int:
    """Publish the comparison through the pipeline (unless ``publish`` is false)."""
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
            f"publishing processed/{c.name}/ ended with exit {rc}: a job failed (Snakemake's log above names it;"
            f" a failed gate's reasons are in processed/{c.name}/logs/check.log)"
        )
    return rc or (1 if failed else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m podnet.launch.campaign", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every variant that lacks runs, then publish the comparison")
    r.add_argument("config", help="campaign config (config/campaigns/*.yaml)")
    r.add_argument("--cores", type=int, default=2)
    r.add_argument("--no-publish", action="store_true", help="launch only")
    r.add_argument(
        "--budget",
        default=None,
        metavar="DURATION",
        help="replace launch.adaptive.budget for this run (e.g. 25m)",
    )
    r.add_argument(
        "--cpu-hog",
        type=int,
        default=0,
        metavar="N",
        help="N busy processes beside the launches (a loaded machine)",
    )
    s = sub.add_parser("status", help="missing runs per variant")
    s.add_argument("config")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "status":
            c = load(args.config)
            for v in c.variants:
                print(f"{v.name}\t{missing_runs(c, v)} missing")
            return 0
        return run(
            args.config, cores=args.cores, publish=not args.no_publish, hog=args.cpu_hog, budget=args.budget
        )
    except CampaignError as exc:
        print(f"podnet campaign: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
