"""The noise floor interleaved with a launch's rounds (``launch.floor``).

At the start of every round, the launcher runs the floor's version of the tests in
``launch.floor.tests`` (the same adapters' command lines with the same parameters and test
length as the cluster's cases, :func:`podnet.launch.spec.plan.case_params`) between two network
namespaces of its own on this machine, joined by one veth (:class:`podnet.launch.noise.netns_floor.Floor`). The
floor and the cluster then share the session's interference, and "how much does the cluster
add" is a ratio of CVs measured in one launch (:mod:`podnet.stats.noise`).

Runs are ``raw/<exp>/<variant>/floor-netns-veth/<tool>-<test>/r<NNN>.<ext>``: the launch's
variant (the session), scenario :data:`SCENARIO` (a name no config may use), repeat = the next
free number (a resumed launch adds, never overwrites), with the floor's sidecar plus the
launch's ``launch`` (its id: the tidy ``launch_id``) and ``round``. The floor's namespaces
differ from ``podnet floor``'s, so both can run at once; they are created at the first round and
deleted in the launcher's teardown (after success, on errors, Ctrl-C and SIGTERM) and before a
new floor is made (a launcher killed with SIGKILL leaves them until then).

Only where the launcher runs as root on the machine of the embedded cluster (every node of the
launch is a network namespace of this machine, per ``cluster_info``): anywhere else the launch
is refused with :class:`FloorUnavailable` before anything is created.
"""

from __future__ import annotations

import logging
import os
import random
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from podnet import tools as adapters
from podnet.launch.cluster.provenance import read_cluster_info
from podnet.launch.cluster.signals import shielded
from podnet.launch.noise.netns_floor import Floor, FloorBusy, FloorTest, Names
from podnet.launch.spec.config import FLOOR_SCENARIO, LaunchConfig, LaunchConfigError
from podnet.launch.spec.plan import case_params

log = logging.getLogger("podnet.launch")

#: the floor's scenario inside the launch's variant (config scenarios may not use it)
SCENARIO = FLOOR_SCENARIO
#: the interleaved floor's namespaces and addresses (podnet floor's are podnet-floor-c/-s, .1/.2)
NAMES = Names(
    ns_client="podnet-lfloor-c",
    ns_server="podnet-lfloor-s",
    link_client="pnlfloor-c",
    link_server="pnlfloor-s",
    ip_client="10.211.255.5",
    ip_server="10.211.255.6",
)
#: host binaries the floor itself needs (besides each tool's)
HOST_BINARIES = ("ip", "nsenter", "ss")
NETNS_DIR = Path("/var/run/netns")
_REPEAT = re.compile(r"^r(\d{3,})\.")


class FloorUnavailable(LaunchConfigError):
    """``launch.floor`` is on but this launcher cannot run a floor beside the cluster."""


def check_possible(cfg: LaunchConfig, node_names: Sequence[str], netns_dir: Path = NETNS_DIR) -> None:
    """Refuse (:class:`FloorUnavailable`) unless root, with the tools, next to every node of the launch."""
    off = "turn launch.floor off (enabled: false) or run `podnet floor` on the cluster's machine"
    if os.geteuid() != 0:
        raise FloorUnavailable(f"launch.floor needs root (network namespaces); {off}")
    info = read_cluster_info(cfg.cluster_info)
    if not info or not isinstance(info.get("nodes"), list):
        raise FloorUnavailable(
            f"launch.floor runs on the launcher's machine, so the cluster must be the embedded one on this "
            f"machine, and its {cfg.cluster_info} is missing or lists no nodes; {off}"
        )
    netns = {str(n.get("name")): n.get("netns") for n in info["nodes"] if isinstance(n, dict)}
    away = [n for n in node_names if not netns.get(n) or not (netns_dir / str(netns[n])).exists()]
    if away:
        raise FloorUnavailable(
            f"launch.floor: node(s) {', '.join(sorted(away))} are not network namespaces of this machine "
            f"(per {cfg.cluster_info}): the floor would not share their interference; {off}"
        )
    tools = {t.tool for t in cfg.floor_tests}
    lacking = [
        b for b in (*HOST_BINARIES, *(adapters.get(t).binary or t for t in tools)) if not shutil.which(b)
    ]
    if lacking:
        raise FloorUnavailable(
            f"launch.floor: {', '.join(lacking)} not installed on this machine (`make floor-tools`)"
        )


def floor_tests(cfg: LaunchConfig) -> list[FloorTest]:
    """The floor's tests with the parameters and placement (a test's own affinity, else
    ``launch.affinity``) the cluster's cases of the same test use."""
    return [FloorTest(t.tool, t.name, case_params(cfg, t), t.placed(cfg.affinity)) for t in cfg.floor_tests]


def next_repeat(directory: Path) -> int:
    """One more than the highest repeat number of the raw files in ``directory`` (1 when none)."""
    nums = [int(m[1]) for p in directory.glob("r*") if (m := _REPEAT.match(p.name))]
    return max(nums, default=0) + 1


#: how many times a launch rebuilds a floor whose namespaces vanished before it stops the floor
MAX_REBUILDS = 2


class LaunchFloor:
    """The floor of one launch: :meth:`round` at each round's start, :meth:`close` in the teardown."""

    def __init__(self, cfg: LaunchConfig, variant: str, floor: Any = None):
        self.cfg = cfg
        self.variant = variant
        self.tests = floor_tests(cfg)
        self.floor = floor if floor is not None else Floor(names=NAMES)
        self.up = False
        self.runs: list[Path] = []
        self.rebuilds = 0
        self.stopped = ""  # why the floor stopped for the rest of this launch ("" while it runs)

    @classmethod
    def start(cls, cfg: LaunchConfig, variant: str, node_names: Sequence[str]) -> LaunchFloor | None:
        """The launch's floor (None when ``launch.floor`` is off); refuses where it cannot run."""
        if not cfg.floor_tests:
            return None
        check_possible(cfg, node_names)
        return cls(cfg, variant)

    def round(
        self, rnd: Sequence[Any], launch_meta: dict[str, Any], round_seq: int | None = None
    ) -> list[Path]:
        """Run each floor test once (shuffled per round from the launch's seed); return the raw paths.

        ``rnd`` is the round's slots (its number is theirs), ``launch_meta`` the sidecar's ``launch``,
        ``round_seq`` the round's ordinal (the sidecars' ``round_seq``, as the cluster's runs).
        """
        if not rnd:
            return []
        number = int(getattr(rnd[0], "round", 0))
        if not self.up:
            try:
                self.floor.__enter__()
            except subprocess.CalledProcessError as exc:
                why = (exc.stderr or "").strip() or f"exit code {exc.returncode}"
                raise FloorUnavailable(
                    f"launch.floor: could not make the floor ({shlex.join(exc.cmd)}: {why})"
                ) from None
            except FloorBusy as exc:
                raise FloorUnavailable(f"launch.floor: {exc}") from None
            self.up = True
        elif not self._intact(number):
            return []
        order = list(self.tests)
        random.Random(f"floor:{self.cfg.seed}:{number}").shuffle(order)
        paths = []
        for t in order:
            d = Path(self.cfg.raw_dir) / self.variant / SCENARIO / f"{t.tool}-{t.name}"
            repeat = next_repeat(d)
            extra = {"launch": launch_meta, "round": number, "source": "podnet launch (floor)"}
            if round_seq is not None:
                extra["round_seq"] = round_seq
            try:
                path = self.floor.run(
                    t, repeat, Path(self.cfg.raw_dir), self.cfg.experiment,
                    variant=self.variant, scenario=SCENARIO, extra=extra,
                )  # fmt: skip
            except RuntimeError as exc:  # a server that would not start: the round goes on
                log.error("floor %s-%s round %d: %s", t.tool, t.name, number, exc)
                continue
            log.info("floor %s-%s round %d -> %s", t.tool, t.name, number, path)
            paths.append(path)
        self.runs.extend(paths)
        return paths

    def _intact(self, number: int) -> bool:
        """Whether the floor can run this round: a floor whose namespaces vanished is rebuilt (up to
        MAX_REBUILDS times a launch), then stopped with an error rather than failing every round."""
        if self.stopped:
            return False
        intact = getattr(self.floor, "intact", None)
        if intact is None or intact():
            return True
        if self.rebuilds >= MAX_REBUILDS:
            self.stopped = f"its namespaces vanished {self.rebuilds + 1} times"
            log.error("floor stopped at round %d for the rest of this launch: %s", number, self.stopped)
            return False
        self.rebuilds += 1
        log.warning("floor namespaces vanished before round %d: rebuilding them", number)
        try:
            self.floor.rebuild()
        except (subprocess.CalledProcessError, OSError) as exc:
            self.stopped = f"rebuilding its namespaces failed ({exc})"
            log.error("floor stopped at round %d for the rest of this launch: %s", number, self.stopped)
            return False
        return True

    def close(self) -> None:
        """Stop the floor's servers and delete its namespaces (signals ignored until done)."""
        with shielded():
            self.floor.__exit__(None, None, None)
            self.up = False
