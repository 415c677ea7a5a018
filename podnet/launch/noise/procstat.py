"""/proc/stat snapshots: parsing, and the CPU time split between two of them (busy, steal, iowait,
per CPU); :mod:`podnet.launch.noise.interference` takes them around each run."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

#: /proc/stat's per-CPU fields, in order (kernel docs: filesystems/proc.rst); guest time is inside user
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ProcStatError(ValueError):
    """Text that is not /proc/stat (or /proc/uptime + /proc/stat) output."""


@dataclass
class Snapshot:
    """One reading of a machine's CPU counters: the aggregate and each CPU (ticks), uptime, boot id."""

    total: tuple[int, ...]
    cpus: list[tuple[int, ...]] = field(default_factory=list)
    uptime: float | None = None
    boot_id: str | None = None


def parse_snapshot(text: str) -> Snapshot:
    """``/proc/stat`` text, optionally preceded by ``/proc/uptime``'s line and followed by a boot id."""
    total: tuple[int, ...] | None = None
    cpus: list[tuple[int, ...]] = []
    uptime = boot_id = None
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "cpu" or (parts[0].startswith("cpu") and parts[0][3:].isdigit()):
            try:
                ticks = tuple(int(x) for x in parts[1:])
            except ValueError as exc:
                raise ProcStatError(f"not a /proc/stat cpu line: {line[:80]!r}") from exc
            if len(ticks) < 4:
                raise ProcStatError(f"/proc/stat cpu line with {len(ticks)} fields: {line[:80]!r}")
            if parts[0] == "cpu":
                total = ticks
            else:
                cpus.append(ticks)
        elif len(parts) == 2 and total is None and uptime is None:
            try:
                uptime = float(parts[0])
            except ValueError:
                pass
        elif len(parts) == 1 and len(parts[0]) == 36 and parts[0].count("-") == 4:
            boot_id = parts[0]
    if total is None:
        raise ProcStatError("no aggregate 'cpu' line: not /proc/stat output")
    return Snapshot(total, cpus, uptime, boot_id)


def split_ticks(ticks: tuple[int, ...]) -> dict[str, int]:
    """One /proc/stat cpu line's ticks by field name (absent fields 0)."""
    return {name: ticks[i] if i < len(ticks) else 0 for i, name in enumerate(STAT_FIELDS)}


def _fractions(before: tuple[int, ...], after: tuple[int, ...]) -> dict[str, float] | None:
    b, a = split_ticks(before), split_ticks(after)
    d = {k: a[k] - b[k] for k in STAT_FIELDS}
    if any(v < 0 for v in d.values()):
        raise ProcStatError("a /proc/stat counter went backwards: the snapshots are of different machines")
    # guest and guest_nice are already counted in user and nice
    total = sum(d[k] for k in STAT_FIELDS[:8])
    if total <= 0:
        return None
    idle = d["idle"] + d["iowait"] + d["steal"]
    return {
        "busy": (total - idle) / total,
        "steal": d["steal"] / total,
        "iowait": d["iowait"] / total,
        "ticks": total,
    }


def cpu_usage(before: Snapshot, after: Snapshot) -> dict[str, Any]:
    """Fractions of CPU time busy, stolen and in iowait between two snapshots of one machine.

    ``window_s`` is the uptime difference when both have it, else the ticks over the CPU count.
    Raises :class:`ProcStatError` for counters that decrease (snapshots of two machines).
    """
    if before.boot_id and after.boot_id and before.boot_id != after.boot_id:
        raise ProcStatError("the snapshots have different boot ids: two machines, or a reboot between")
    f = _fractions(before.total, after.total)
    ncpu = len(after.cpus) or 1
    if f is None:
        return {"busy": None, "steal": None, "iowait": None, "cpus": ncpu, "window_s": 0.0}
    per_cpu = []
    if len(before.cpus) == len(after.cpus):
        for b, a in zip(before.cpus, after.cpus, strict=True):
            pf = _fractions(b, a)
            per_cpu.append(round(pf["busy"], 4) if pf else None)
    if before.uptime is not None and after.uptime is not None:
        window = after.uptime - before.uptime
    else:
        window = f["ticks"] / CLK_TCK / ncpu
    out: dict[str, Any] = {
        "busy": round(f["busy"], 4),
        "steal": round(f["steal"], 4),
        "iowait": round(f["iowait"], 4),
        "cpus": ncpu,
        "cpu_busy": per_cpu,
        "window_s": round(window, 3),
    }
    if after.boot_id:
        out["boot_id"] = after.boot_id
    return out


def split_read(text: str) -> tuple[str, str, str | None]:
    """The before and after snapshots and the boot id from :data:`READ_SCRIPT`'s output."""
    sections: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("== "):
            cur = line[3:].strip()
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    boot = "".join(sections.get("boot_id", [])).strip() or None
    return "\n".join(sections.get("before", [])), "\n".join(sections.get("after", [])), boot
