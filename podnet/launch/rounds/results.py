"""What a launch did: per-case counts, the launch manifest (JSON) and the per-launch log under raw/."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podnet.launch.rounds.state import Attempt, CaseState
from podnet.launch.spec.config import Case, CaseKey, LaunchConfig


def configure_logging(log_file: str | None = None) -> None:
    """The launcher's progress log on stderr (and in ``log_file``), without the API clients' chatter."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.insert(0, logging.FileHandler(log_file, mode="w"))
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(message)s",
        datefmt="%H:%M:%S",
        handlers=handlers,
        force=True,
    )
    logging.getLogger("kubernetes").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.WARNING)


@dataclass
class CaseOutcome:
    """Counts of one case after the launch."""

    scenario: str
    tool: str
    test: str
    ok: int = 0
    failed: int = 0
    launched: int = 0
    #: runs recorded ok but marked suspect (a container restarted during the run)
    suspect: int = 0
    #: attempts judged disturbed and re-run (status disturbed), and disturbed runs kept (ok, flagged)
    disturbed: int = 0
    disturbed_kept: int = 0
    skipped: str = ""
    last_error: str = ""
    met_target: bool | None = None


@dataclass
class LaunchResult:
    """What a launch did; written as the launch manifest (JSON)."""

    experiment: str
    launch_id: str
    variant: str = ""
    cni: str = ""
    namespace: str | None = None
    started: str = ""
    ended: str = ""
    launched: int = 0
    ok: int = 0
    failed: int = 0
    rounds: int = 0
    #: uncounted warm-up runs (launch.warmup), not in launched/ok/failed
    warmups: int = 0
    #: attempts judged disturbed and re-run in their round (status disturbed: in launched, not in
    #: ok/failed), and disturbed runs kept as ok with ``disturbed: true`` (no re-run left in the round)
    disturbed: int = 0
    disturbed_kept: int = 0
    interrupted: bool = False
    error: str = ""
    adaptive: bool = False
    #: the adaptive launch's account (raw/<exp>/<variant>/_adaptive/<id>.json; podnet.stats.account)
    adaptive_account: str = ""
    skipped_tools: dict[str, str] = field(default_factory=dict)
    pod_failures: dict[str, str] = field(default_factory=dict)
    #: node -> "node X NotReady since T" for nodes that failed during the launch
    node_failures: dict[str, str] = field(default_factory=dict)
    cases: list[CaseOutcome] = field(default_factory=list)
    order: str = "interleaved"
    seed: int = 1
    namespace_deleted: bool | None = None
    #: what clean-up could not remove (objects still there when its wait ended)
    leftovers: list[str] = field(default_factory=list)
    #: noise-floor runs written by launch.floor (podnet.launch.noise.floor), ok or failed
    floor_runs: int = 0
    #: why the floor stopped before the launch ended ("" when it ran every round; podnet.launch.noise.floor)
    floor_stopped: str = ""
    #: the CPU idle-state hold asked and got (podnet.launch.noise.idle.IdleHold.as_record)
    cpu_latency: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["cases"] = [dict(c.__dict__) for c in self.cases]
        return d

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.error else 0


class Tally:
    """Counts runs into the launch result, its cases' outcomes and the cases' raw/ state."""

    def __init__(self, result: LaunchResult, states: dict[CaseKey, CaseState]):
        self.result = result
        self.states = states
        self.outcomes: dict[CaseKey, CaseOutcome] = {}

    def outcome(self, case: Case) -> CaseOutcome:
        if case.key not in self.outcomes:
            s, t, n = case.key
            self.outcomes[case.key] = CaseOutcome(scenario=s, tool=t, test=n)
        return self.outcomes[case.key]

    def note(
        self,
        case: Case,
        repeat: int,
        attempt: int,
        status: str,
        path: Path,
        error: str = "",
        suspect: bool = False,
        disturbed: bool = False,
    ) -> None:
        """One recorded run (ok, failed or disturbed; ``disturbed``: an ok run kept flagged)."""
        self.states[case.key].attempts.setdefault(repeat, []).append(
            Attempt(repeat, attempt, status, path, error)
        )
        out = self.outcome(case)
        out.launched += 1
        self.result.launched += 1
        if status == "ok":
            out.ok += 1
            out.suspect += int(suspect)
            self.result.ok += 1
            out.disturbed_kept += int(disturbed)
            self.result.disturbed_kept += int(disturbed)
        elif status == "disturbed":
            out.disturbed += 1
            self.result.disturbed += 1
        else:
            out.failed += 1
            out.last_error = error
            self.result.failed += 1

    def finish(self, cases: list[Case]) -> None:
        """Each case's ok count from raw/ (earlier launches included), in config order."""
        for case in cases:
            st = self.states.get(case.key)
            if st is not None:
                self.outcome(case).ok = len(st.ok_repeats())
        self.result.cases = [self.outcome(c) for c in cases]


def write_logs(
    cfg: LaunchConfig, result: LaunchResult, manifest: str | Path | None, name: str | None = None
) -> None:
    """``raw/<exp>/_launch/<id>.json`` (or ``<name>.json``: a side-by-side launch logs each variant)
    when runs were launched, and the manifest when asked (atomically)."""
    text = json.dumps(result.to_dict(), indent=2, sort_keys=False, default=str) + "\n"
    if result.launched and result.launch_id:
        d = cfg.raw_dir / "_launch"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{name or result.launch_id}.json").write_text(text, encoding="utf-8")
    if manifest:
        m = Path(manifest)
        m.parent.mkdir(parents=True, exist_ok=True)
        tmp = m.with_name(m.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(m)


class RunTimes:
    """Wall time of each run of this launch by case: what predicts the next round's length."""

    def __init__(self) -> None:
        self.seconds: dict[CaseKey, list[float]] = {}

    def add(self, key: CaseKey, seconds: float) -> None:
        self.seconds.setdefault(key, []).append(float(seconds))

    def predict(self, keys: Iterable[CaseKey]) -> float:
        """Seconds a round of ``keys`` should take: each case's mean run time (else the mean of all runs)."""
        every = [s for v in self.seconds.values() for s in v]
        overall = sum(every) / len(every) if every else 0.0
        return sum(
            (sum(self.seconds[k]) / len(self.seconds[k])) if self.seconds.get(k) else overall for k in keys
        )
