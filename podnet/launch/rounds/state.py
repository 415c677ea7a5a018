"""What ``raw/`` already holds for a launch, and which runs are still missing.

Raw paths are deterministic::

    <raw_dir>/<variant>/<scenario>/<tool>-<test>/r<repeat:03d>[.a<attempt>].<ext>

Attempt 1 has no ``.aN`` part; a retry of a failed run gets the next attempt
number, so no raw file is ever rewritten. A (case, repeat) is *done* when one
attempt's sidecar says ``status: ok``; it is *missing* when none does and fewer
than ``max_attempts`` attempts failed (interrupted attempts, and attempts judged
``disturbed`` and re-run, :mod:`podnet.launch.spec.disturbance`, do not count).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from podnet.launch.cluster import provenance
from podnet.launch.spec.config import Case, CaseKey, LaunchConfig
from podnet.parse.raw import SIDECAR_SUFFIX

log = logging.getLogger("podnet.launch")

#: attempt statuses that are not failures: done, or judged disturbed and re-run
NOT_FAILED = ("ok", "disturbed")

_NAME = re.compile(
    r"^r(?P<repeat>\d{3,})(?:\.a(?P<attempt>\d+))?\.[A-Za-z0-9]+" + re.escape(SIDECAR_SUFFIX) + "$"
)


@dataclass
class Attempt:
    """One recorded attempt of a run."""

    repeat: int
    attempt: int
    status: str
    path: Path
    error: str = ""
    interrupted: bool = False


@dataclass
class CaseState:
    """Attempts of one case, by repeat number."""

    attempts: dict[int, list[Attempt]] = field(default_factory=dict)

    def ok_repeats(self) -> set[int]:
        return {r for r, atts in self.attempts.items() if any(a.status == "ok" for a in atts)}

    def failures(self, repeat: int) -> int:
        """Failed attempts of ``repeat`` that count against max_attempts (not disturbed ones)."""
        return sum(
            1 for a in self.attempts.get(repeat, []) if a.status not in NOT_FAILED and not a.interrupted
        )

    def next_attempt(self, repeat: int) -> int:
        return max((a.attempt for a in self.attempts.get(repeat, [])), default=0) + 1

    def last_error(self, repeat: int) -> str:
        errs = [a for a in self.attempts.get(repeat, []) if a.status not in NOT_FAILED]
        return max(errs, key=lambda a: a.attempt).error if errs else ""

    def exhausted(self, repeat: int, max_attempts: int) -> bool:
        return repeat not in self.ok_repeats() and self.failures(repeat) >= max_attempts


def case_dir(raw_dir: Path | str, variant: str, case: Case) -> Path:
    """Directory of a case's raw files."""
    return Path(raw_dir) / variant / case.scenario.name / f"{case.test.tool}-{case.test.name}"


def raw_path(raw_dir: Path | str, variant: str, case: Case, repeat: int, attempt: int, ext: str) -> Path:
    """Raw file of one attempt of one repeat."""
    stem = f"r{repeat:03d}" + (f".a{attempt}" if attempt > 1 else "")
    return case_dir(raw_dir, variant, case) / f"{stem}.{ext}"


def warmup_path(
    raw_dir: Path | str, launch_id: str, variant: str, case: Case, ext: str, number: int = 1
) -> Path:
    """Raw file of a launch's warm-up run ``number`` of a case: under ``_warmup/``, which the parse stage
    never reads (:data:`podnet.parse.raw.DEFAULT_IGNORE`, directories starting with ``_``), one directory per launch."""
    name = f"{case.test.tool}-{case.test.name}" + (f".w{number}" if number > 1 else "") + f".{ext}"
    return Path(raw_dir) / "_warmup" / launch_id / variant / case.scenario.name / name


def scan_case(raw_dir: Path | str, variant: str, case: Case) -> CaseState:
    """Read the sidecars of one case's directory."""
    state = CaseState()
    d = case_dir(raw_dir, variant, case)
    if not d.is_dir():
        return state
    for side in sorted(d.iterdir()):
        m = _NAME.match(side.name)
        if not m:
            continue
        try:
            meta = yaml.safe_load(side.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            meta = {"status": "failed", "error": "unreadable sidecar"}
        raw = side.with_name(side.name[: -len(SIDECAR_SUFFIX)])
        status = str(meta.get("status", "ok"))
        if status == "ok" and not raw.exists():
            status = "failed"  # a sidecar without its raw file does not count as done
        att = Attempt(
            repeat=int(m["repeat"]),
            attempt=int(m["attempt"] or 1),
            status=status,
            path=raw,
            error=str(meta.get("error") or ""),
            interrupted=bool(meta.get("interrupted", False)),
        )
        state.attempts.setdefault(att.repeat, []).append(att)
    return state


def scan(raw_dir: Path | str, variant: str, cases: Iterable[Case]) -> dict[tuple[str, str, str], CaseState]:
    """States of many cases, by case key."""
    return {c.key: scan_case(raw_dir, variant, c) for c in cases}


def missing_repeats(state: CaseState, repeats: Iterable[int], max_attempts: int) -> list[int]:
    """Repeats among ``repeats`` that are neither done nor out of attempts."""
    ok = state.ok_repeats()
    return [r for r in repeats if r not in ok and not state.exhausted(r, max_attempts)]


def initial_repeats(cfg: LaunchConfig) -> int:
    """Repeats of the fixed rounds (adaptive: at least stats.planning.min_repeats)."""
    if not cfg.adaptive:
        return cfg.repeats
    from podnet.stats import resolve

    return max(cfg.repeats, int(resolve(cfg.stats)["planning"]["min_repeats"]))


def pending_runs(
    cfg: LaunchConfig, variant: str, states: dict[CaseKey, CaseState] | None = None
) -> dict[CaseKey, list[int]]:
    """Missing repeats of the fixed rounds, by case key (cases with none are left out)."""
    states = states if states is not None else scan(cfg.raw_dir, variant, cfg.cases)
    reps = range(1, initial_repeats(cfg) + 1)
    out = {}
    for case in cfg.cases:
        miss = missing_repeats(states[case.key], reps, cfg.max_attempts)
        if miss:
            out[case.key] = miss
    return out


def offline_variant(cfg: LaunchConfig) -> str | None:
    """The variant when it is known without asking the cluster (config or info.json), else None."""
    if cfg.variant != "auto":
        return cfg.variant
    if cfg.cni:
        return provenance.variant_name("auto", cfg.cni)
    info = provenance.read_cluster_info(cfg.cluster_info)
    if info and info.get("cni"):
        return provenance.variant_name("auto", str(info["cni"]))
    return None


def launch_complete(cfg: LaunchConfig) -> bool | None:
    """Whether raw/ holds every fixed-round run (done or out of attempts); None if the variant is unknown offline.

    Filesystem only. Adaptive rounds are not judged here: a launch only ends once
    no case needs more, so a finished adaptive launch is complete by construction.
    """
    variant = offline_variant(cfg)
    if variant is None:
        return None
    return not pending_runs(cfg, variant)


def invalidate_stale_manifest(cfg: LaunchConfig, manifest: str | Path) -> bool:
    """Remove the launch checkpoint's manifest when raw/ lacks runs, so Snakemake launches them.

    The manifest marks "raw/ is complete for this config"; once runs are missing
    (never run, deleted, or failed and still retryable) it is stale. Returns True if removed.
    """
    m = Path(manifest)
    if m.exists() and launch_complete(cfg) is False:
        m.unlink()
        log.info("%s: runs are missing in %s, the launch will run again", m, cfg.raw_dir)
        return True
    return False
