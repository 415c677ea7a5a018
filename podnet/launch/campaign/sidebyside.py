"""Variants side by side: one launch of the same experiment under several variants at once,
interleaved run by run.

Each variant is one :class:`~podnet.launch.rounds.runner.Launcher` (its own cluster, or its own name on a
shared cluster for an A/A check), all with one launch id. Round r runs repeat r of every pending
case; within the round each case runs under every variant back to back, the variants in an order
drawn per case (``random.Random(f"{seed}:{round}:{case}")``), so the runs of one round are taken
close in time and the machine's drift is common to both sides of a pair. Every variant's runs of one
round carry the same ``round_seq`` (one counter for all; the retry pass is a round of its own). The
statistics pair a variant's run with the baseline variant's run of the same launch id and round
(:func:`podnet.stats.variants.side_by_side`, design ``side-by-side`` in ``variants.csv``).

With ``launch.adaptive``, added rounds go to the variant comparisons of the primary family
(``stats.primary`` entries ``by: variant``) whose side-by-side interval is still wider than its
target (or rests on fewer than ``stats.planning.min_to_stop`` pairs), until every one is met, a
case reaches ``stats.planning.max_repeats`` or ``launch.adaptive.budget`` cannot hold another round:
the stop rule of one launch (:mod:`podnet.launch.rounds.stop`), in this loop's words
(:data:`~podnet.launch.campaign.account.STOP_WORDS`), with every case declared ``every_round``
joining each added round (:class:`~podnet.launch.campaign.variantsampler.VariantSampler`, with
:func:`~podnet.launch.campaign.variantsampler.interleave`). The account is
``raw/<exp>/_side_by_side/<launch id>.json`` (:class:`~podnet.launch.campaign.account.SideBySideAccount`);
each variant's launch log is
``raw/<exp>/_launch/<launch id>.<variant>.json``.

    python -m podnet.launch.campaign.sidebyside CONFIG CONFIG [...]   # one config per variant (make compare)

The configs must be one experiment (same raw_dir, scenarios and tests) with distinct
``launch.variant`` names; the first is the baseline of the variant comparisons. Only the first
runs the interleaved noise floor (``launch.floor``): one floor per machine. Variant i's server
ports are ``launch.ports`` + i x 1000 (:func:`variant_ports`), so variants sharing one cluster (an
A/A) never want one host port for two hostNetwork servers; a test that pins its own ``port`` keeps it.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from podnet.launch.campaign.variantsampler import Pair, VariantSampler, interleave, needed_variants  # noqa: F401
from podnet.launch.cluster.k8s import Kube, KubeError
from podnet.launch.cluster.provenance import now_iso
from podnet.launch.cluster.signals import Interrupted, interruptible
from podnet.launch.noise.idle import hold_cpu_latency
from podnet.launch.noise.interference import link_neighbours
from podnet.launch.rounds.results import LaunchResult, configure_logging, write_logs
from podnet.launch.rounds.runner import Launcher
from podnet.launch.rounds.scale import variant_rounds
from podnet.launch.rounds.schedule import Slot
from podnet.launch.rounds.state import pending_runs
from podnet.launch.rounds.warmup import warm_up
from podnet.launch.spec.config import CaseKey, LaunchConfig, LaunchConfigError, load_config
from podnet.launch.spec.load import LOAD_PORT

log = logging.getLogger("podnet.launch")

#: variant i's server ports are the configured ones + i x this: two variants on one cluster (an A/A)
#: run their hostNetwork servers on the same nodes, and one port cannot serve both
PORT_STRIDE = 1000


def variant_ports(cfg: LaunchConfig, i: int) -> dict[str, int]:
    """Variant ``i``'s server ports (``launch.ports``, the load's too, + ``i`` x :data:`PORT_STRIDE`)."""
    ports = {k: int(v) + PORT_STRIDE * i for k, v in {"load": LOAD_PORT, **cfg.ports}.items()}
    high = [k for k, v in ports.items() if v > 65535]
    if high:
        raise LaunchConfigError(
            f"variant {cfg.variant}: launch.ports {', '.join(high)} + {PORT_STRIDE * i} (its place side by "
            f"side) passes 65535: configure lower ports"
        )
    return ports


def check_configs(cfgs: Sequence[LaunchConfig]) -> None:
    """One experiment under distinct variant names; raises :class:`LaunchConfigError` otherwise."""
    if len(cfgs) < 2:
        raise LaunchConfigError("side by side needs at least two variants")
    names = [c.variant for c in cfgs]
    if any(not n or n == "auto" for n in names) or len(set(names)) != len(names):
        raise LaunchConfigError(f"side by side needs distinct launch.variant names (got {names})")
    first = cfgs[0]
    for c in cfgs[1:]:
        if (c.experiment, Path(c.raw_dir)) != (first.experiment, Path(first.raw_dir)):
            raise LaunchConfigError(
                f"variant {c.variant}: experiment {c.experiment} in {c.raw_dir}, the first is "
                f"{first.experiment} in {first.raw_dir}: side by side is one experiment"
            )
        if [k.key for k in c.cases] != [k.key for k in first.cases]:
            raise LaunchConfigError(f"variant {c.variant}: its cases differ from {first.variant}'s")


class SideBySide:
    """One launch of several variants at once (``kubes[i]`` talks to variant ``cfgs[i]``'s cluster)."""

    def __init__(
        self,
        cfgs: Sequence[LaunchConfig],
        kubes: Sequence[Any],
        *,
        launch_id: str | None = None,
        repo: str | Path = ".",
        clock: Callable[[], float] = time.monotonic,
    ):
        check_configs(cfgs)
        self.launch_id = launch_id or (time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2))
        self.clock = clock
        # one noise floor per machine (the first variant's); each variant its own server ports
        cfgs = [
            cfgs[0],
            *(replace(c, floor_tests=(), ports=variant_ports(c, i)) for i, c in enumerate(cfgs) if i),
        ]
        self.launchers = [
            Launcher(c, k, launch_id=self.launch_id, repo=repo, clock=clock)
            for c, k in zip(cfgs, kubes, strict=True)
        ]
        self.cfg = cfgs[0]
        self.sampler: VariantSampler | None = None
        # one round ordinal for every variant: the runs of one side-by-side round share it
        for L in self.launchers[1:]:
            L.seq = self.launchers[0].seq

    @property
    def results(self) -> list[LaunchResult]:
        return [L.result for L in self.launchers]

    def run_pairs(self, rounds: list[list[Pair]]) -> int:
        """Run side-by-side rounds, then each variant's retry pass; returns runs launched."""
        total = {id(L): 0 for L in self.launchers}
        for rnd in rounds:
            for launcher, _ in rnd:
                total[id(launcher)] += 1
        retry: dict[int, list[Slot]] = {id(L): [] for L in self.launchers}
        done = {id(L): 0 for L in self.launchers}  # this call's runs per variant: the log's [n/total]
        n = 0
        seq = self.launchers[0].seq
        for rnd in rounds:
            now = seq.next()  # this round's ordinal, the same for every variant
            for launcher in self.launchers:
                mine = [s for L, s in rnd if L is launcher]
                if mine:
                    launcher.start_round(mine, now)
            for launcher, slot in rnd:
                cp = launcher.case_plan(slot.case)
                if cp.skipped:
                    continue
                done[id(launcher)] += 1
                n += 1
                status = launcher.run_one(cp, slot, total[id(launcher)], done[id(launcher)])
                if status != "ok" and not launcher.workload.blocked(cp):
                    retry[id(launcher)].append(slot)
        again = seq.next() if any(retry.values()) else None  # one retry pass of every variant: one round
        for launcher in self.launchers:
            before = done[id(launcher)]
            added = launcher.retry(retry[id(launcher)], total[id(launcher)], before, seq=again) - before
            n += added
        return n

    def run(self) -> list[LaunchResult]:
        """Discover every variant, create the workloads, warm up, run the base rounds side by side,
        then the adaptive rounds; always delete everything. Never raises for run failures."""
        t0 = self.clock()
        try:  # the idle-state hold of the first variant's config, as a single launch holds its own
            with interruptible(), hold_cpu_latency(self.cfg.cpu_latency_us) as idle:
                for L in self.launchers:
                    L.result.started, L.result.cpu_latency = now_iso(), idle.as_record()
                pending: dict[int, dict[CaseKey, list[int]]] = {}
                for L in self.launchers:
                    facts = L.discover()
                    pending[id(L)] = pending_runs(L.cfg, facts.variant, L.tally.states)
                adaptive = self.cfg.adaptive
                if adaptive:
                    self.sampler = VariantSampler(self, t0)
                log.info(
                    "side by side, experiment %s, launch %s: %s",
                    self.cfg.experiment,
                    self.launch_id,
                    ", ".join(
                        f"{L.variant} {sum(len(v) for v in pending[id(L)].values())} run(s) missing"
                        for L in self.launchers
                    ),
                )
                if not any(pending.values()) and not adaptive:
                    log.info("nothing to launch: every run is in %s", self.cfg.raw_dir)
                    return self.results
                every = {c.key for c in self.cfg.cases}
                for L in self.launchers:
                    L.prepare(set(pending[id(L)]) | (every if adaptive else set()))
                link_neighbours([L.executor.interference if L.executor else None for L in self.launchers])
                for L in self.launchers:
                    L.result.warmups += warm_up(L, set(pending[id(L)]))
                per_variant = []
                for L in self.launchers:
                    keys = [c.key for c in L.cfg.cases if c.key in pending[id(L)]]
                    per_variant.append((L, variant_rounds(L.cfg, keys, pending[id(L)])))
                self.run_pairs(interleave(per_variant, self.cfg.seed))
                if self.sampler is not None:
                    self.sampler.loop()
        except Interrupted as exc:
            for r in self.results:
                r.interrupted = True
                r.error = f"interrupted ({exc.args[0] if exc.args else 'SIGINT'})"
            log.error("interrupted: cleaning up")
        except (KubeError, LaunchConfigError) as exc:
            for r in self.results:
                r.error = str(exc)
            log.error("%s", exc)
        except Exception as exc:
            for r in self.results:
                r.error = f"{exc.__class__.__name__}: {str(exc).strip()[:500]}"
            log.exception("side-by-side launch failed")
        finally:
            for L in self.launchers:
                L.teardown()
                L.result.ended = now_iso()
        if self.sampler is not None:
            try:
                self.sampler.write_account()
            except Exception as exc:  # noqa: BLE001 - a statistics problem must not hide the launch result
                log.warning("could not write the side-by-side account: %s", exc)
        for L in self.launchers:
            L.result.node_failures.update({**L.workload.unreachable, **L.workload.nodes.seen})
            L.tally.finish(L.cfg.cases)
        return self.results


def launch_side_by_side(
    configs: Sequence[str | Path | LaunchConfig], *, kubes: Sequence[Any] | None = None
) -> list[LaunchResult]:
    """Launch the variant configs side by side; write each variant's launch log."""
    cfgs = [c if isinstance(c, LaunchConfig) else load_config(c) for c in configs]
    kubes = (
        list(kubes) if kubes is not None else [Kube(c.kubeconfig, c.context, c.timeouts["api"]) for c in cfgs]
    )
    sbs = SideBySide(cfgs, kubes)
    results = sbs.run()
    for cfg, res in zip(cfgs, results, strict=True):
        write_logs(cfg, res, None, name=f"{res.launch_id}.{cfg.variant}")
        log.info(
            "launch %s, variant %s: %d run(s) launched, %d ok, %d failed%s",
            res.launch_id, cfg.variant, res.launched, res.ok, res.failed, f"; {res.error}" if res.error else "",
        )  # fmt: skip
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m podnet.launch.campaign.sidebyside", description=__doc__.split("\n")[0]
    )
    ap.add_argument("configs", nargs="+", help="one experiment config per variant (the first: the baseline)")
    args = ap.parse_args(argv)
    configure_logging()
    try:
        results = launch_side_by_side(args.configs)
    except (LaunchConfigError, KubeError) as exc:
        print(f"podnet side-by-side: {exc}", file=sys.stderr)
        return 2
    return 1 if any(r.error or r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
