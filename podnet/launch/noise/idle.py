"""The machine's CPU idle states during a launch: hold them shallow through PM QoS, as tuned's
``latency-performance`` profile does (``force_latency``), so that a CPU waiting for the next packet
polls instead of halting.

On a VM a halted vCPU wakes through the hypervisor. This machine (a Firecracker guest, cpuidle driver
``haltpoll`` with ``guest_halt_poll_ns=0``) showed it plainly (benchmarks/qperf_length.yaml, 2-node
bridge cluster): qperf tcp_lat on a quiet machine was 28-36 µs, with 15 % of other work on the
machine 13-17 µs, and with ``/dev/cpu_dma_latency`` held at 0 11-16 µs; the latency level and its
run-to-run spread followed whatever else kept the CPUs awake. The kernel keeps a PM QoS request only
while its file stays open (``Documentation/power/pm_qos_interface.rst``): :func:`hold_cpu_latency`
opens it for the launch and closing it (at the end, on any error, or when the process dies) restores
the machine.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

PM_QOS = Path("/dev/cpu_dma_latency")
CPUIDLE = Path("/sys/devices/system/cpu/cpuidle")


@dataclass(frozen=True)
class IdleHold:
    """What a launch asked of the idle states and what it got (the launch manifest's ``cpu_latency``)."""

    #: the PM QoS latency asked for in µs (0: idle CPUs poll); None: the machine's own idle states
    requested_us: int | None
    held: bool
    #: why it is not held ("" when held or not asked)
    reason: str = ""
    #: the machine's cpuidle driver and governor (e.g. haltpoll), None where unreadable
    driver: str | None = None
    governor: str | None = None

    def as_record(self) -> dict[str, object]:
        return asdict(self)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


@contextmanager
def hold_cpu_latency(us: int | None, device: Path = PM_QOS, cpuidle: Path = CPUIDLE) -> Iterator[IdleHold]:
    """Hold a PM QoS CPU latency request of ``us`` µs while the block runs (None: hold nothing).

    A machine without the device or without the right to open it gets ``held: False`` with the
    reason, logged: the launch goes on with the machine's own idle states, and says so.
    """
    driver, governor = _read(cpuidle / "current_driver"), _read(cpuidle / "current_governor")
    if us is None:
        yield IdleHold(None, False, "", driver, governor)
        return
    try:
        fd = os.open(device, os.O_WRONLY)
    except OSError as exc:
        reason = f"{device}: {exc.strerror or exc}"
        log.warning(
            "CPU idle states not held at %d µs (%s): latencies follow the machine's idle states", us, reason
        )
        yield IdleHold(us, False, reason, driver, governor)
        return
    try:
        os.write(fd, struct.pack("i", int(us)))
        log.info("CPU idle states held at %d µs (PM QoS %s; cpuidle %s/%s)", us, device, driver, governor)
        yield IdleHold(us, True, "", driver, governor)
    finally:
        os.close(fd)  # the kernel drops the request with the file
