"""The launch's CPU idle-state hold (podnet.launch.noise.idle): asked, got, refused, released."""

import os
import struct

from podnet.launch.noise.idle import hold_cpu_latency


def _cpuidle(tmp_path):
    d = tmp_path / "cpuidle"
    d.mkdir()
    (d / "current_driver").write_text("haltpoll\n")
    (d / "current_governor").write_text("haltpoll\n")
    return d


def test_held_writes_the_request_and_closes_it(tmp_path):
    dev = tmp_path / "cpu_dma_latency"
    dev.write_bytes(b"")
    fds = len(os.listdir("/proc/self/fd"))
    with hold_cpu_latency(0, device=dev, cpuidle=_cpuidle(tmp_path)) as hold:
        assert hold.held and hold.requested_us == 0 and hold.reason == ""
        assert len(os.listdir("/proc/self/fd")) == fds + 1  # the request lives while the file is open
        assert hold.as_record()["driver"] == "haltpoll"
    assert dev.read_bytes() == struct.pack("i", 0)
    assert len(os.listdir("/proc/self/fd")) == fds


def test_refused_says_why_and_the_launch_goes_on(tmp_path):
    with hold_cpu_latency(0, device=tmp_path / "missing", cpuidle=tmp_path / "none") as hold:
        assert not hold.held and "missing" in hold.reason and hold.driver is None


def test_not_asked_holds_nothing(tmp_path):
    dev = tmp_path / "cpu_dma_latency"
    dev.write_bytes(b"")
    with hold_cpu_latency(None, device=dev, cpuidle=_cpuidle(tmp_path)) as hold:
        assert not hold.held and hold.requested_us is None and hold.reason == ""
    assert dev.read_bytes() == b""


def test_released_on_error(tmp_path):
    dev = tmp_path / "cpu_dma_latency"
    dev.write_bytes(b"")
    fds = len(os.listdir("/proc/self/fd"))
    try:
        with hold_cpu_latency(0, device=dev, cpuidle=tmp_path):
            raise RuntimeError("launch failed")
    except RuntimeError:
        pass
    assert len(os.listdir("/proc/self/fd")) == fds
