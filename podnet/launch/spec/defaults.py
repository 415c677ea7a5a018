"""What a launch config's plain values mean: server ports, timeouts, durations, what places the
tools' ends on their CPUs (``launch.affinity``: ``chrt``, ``taskset``), and its error type."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from podnet.config import schema
from podnet.tools.base import cpu_pair

#: the key of ``launch.ports`` shared by every tool whose server is nginx in the server pod
HTTP_PORT_KEY = "http"


def port_key(tool: str) -> str:
    """The ``launch.ports`` key of ``tool``'s server: its name, or ``http`` for nginx-served tools."""
    from podnet import tools as adapters

    return HTTP_PORT_KEY if adapters.get(tool).server_kind == "http" else tool


def default_ports() -> dict[str, int]:
    """Built-in server ports, from each adapter's ``default_port`` (``http`` for nginx-served tools)."""
    from podnet import tools as adapters

    ports: dict[str, int] = {}
    for name, adapter in adapters.all_adapters().items():
        if adapter.default_port is not None:
            ports.setdefault(port_key(name), int(adapter.default_port))
    return ports


def default_timeouts() -> dict[str, float]:
    """``launch.timeouts`` defaults (seconds), from the schema."""
    return {k: float(v) for k, v in schema.defaults("launch", "timeouts").items()}


#: ``launch.affinity.policy`` -> the ``chrt`` option that starts a process under it ("other": the
#: default policy, nothing added; :func:`podnet.launch.spec.plan.pinned_argv`)
POLICIES: dict[str, list[str]] = {"other": [], "batch": ["chrt", "--batch", "0"]}


def read_affinity(raw: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An affinity as the config gives it (``launch.affinity``, a test's, a load's): CPUs as ints, the
    policy as given; None when absent or empty."""
    return {k: v if k == "policy" else int(v) for k, v in raw.items()} if raw else None


def placed_by(affinity: Mapping[str, Any] | None) -> str:
    """The launcher's commands that start the ends ``launch.affinity`` names a CPU for, as the
    sidecar's ``harness.affinity.by`` says them: ``"chrt --batch 0 + taskset"`` under ``policy:
    batch``, ``"taskset"`` under ``other``; ``""`` when it names no CPU (nothing is placed)."""
    a = affinity or {}
    if a.get("client") is None and a.get("server") is None:
        return ""
    chrt = " ".join(POLICIES.get(str(a.get("policy") or "other"), []))
    return " + ".join(x for x in (chrt, "taskset") if x)


def harness_affinity(
    tool: str, supported: bool, pinned: Any, affinity: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The sidecar's ``harness.affinity`` of one case: where its ends were placed and ``by`` what
    (``supported``: the tool's adapter has a CPU option; ``pinned``: the ``affinity`` parameter it
    was given, ``[client, server]``; ``affinity``: the case's placement, its test's own ``affinity``
    else ``launch.affinity``); None when nothing placed it."""
    launcher = placed_by(affinity)
    if pinned is not None:
        c, s = cpu_pair(pinned)
        by = f"{tool}'s own option" + (f" (started under the launcher's {launcher})" if launcher else "")
        policy = {"policy": affinity["policy"]} if "policy" in (affinity or {}) else {}
        return {"client": c, "server": s, "applied": True, "by": by, **policy}
    if not affinity:
        return None
    why = f"{tool} has no CPU option" if not supported else "the test's params unset the option"
    by = f"the launcher's {launcher} ({why})" if launcher else "nothing: launch.affinity names no CPU"
    return {**affinity, "applied": bool(launcher), "by": by}


class LaunchConfigError(ValueError):
    """The launch configuration is invalid; the message says where and why."""


_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([hms])\s*")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(value: str | float | int | None) -> float | None:
    """Seconds of a duration: a number of seconds, or a string like ``"30m"``, ``"1h30m"``, ``"90s"``.

    None stays None (no limit); anything else that is not a positive duration raises
    :class:`LaunchConfigError`.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise LaunchConfigError(f"duration {value!r}: give seconds or a string like 30m, 1h30m, 90s")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = str(value).strip()
        parts = _DURATION.findall(text)
        if not text or _DURATION.sub("", text) or not parts:
            raise LaunchConfigError(f"duration {value!r}: give seconds or a string like 30m, 1h30m, 90s")
        seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        raise LaunchConfigError(f"duration {value!r}: must be more than 0 seconds")
    return seconds
