"""Keeping the harness off the measurement: interference in every sidecar, /proc/stat deltas, the
daemons' CPU, no API call during a run, uncounted warm-ups, Guaranteed QoS pods, tool CPU affinity."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from podnet.cli import main as cli_main
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.cluster.manifests import pod_manifest
from podnet.launch.cluster.provenance import to_nodes
from podnet.launch.noise import interference as itf
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.launch.spec.plan import build_plan, case_params
from podnet.parse import parse_experiment, parse_files
from podnet.parse.raw import SidecarError, find_raw_files, read_sidecar, validate_sidecar
from podnet.tools import get as adapter
from podnet.tools.base import UnsupportedTest
from tests.fakekube import PROCSTAT, FakeKube, make_node
from tests.launch_configs import HOST_HOST, experiment, pod_pod
from tests.unit.test_launch_runner import config, iperf_json, nodes, ok_responder

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def _cpu_line(text: str, name: str = "cpu") -> list[int]:
    line = next(ln for ln in text.splitlines() if ln.split()[:1] == [name])
    return [int(x) for x in line.split()[1:9]]


# -- /proc/stat -------------------------------------------------------------------------------------------
def test_proc_stat_deltas_of_real_snapshots():
    b, a = itf.parse_snapshot(PROCSTAT["before"]), itf.parse_snapshot(PROCSTAT["after"])
    got = itf.cpu_usage(b, a)
    d = dict(
        zip(FIELDS, (y - x for x, y in zip(_cpu_line(PROCSTAT["before"]), _cpu_line(PROCSTAT["after"]))))
    )
    total = sum(d.values())
    assert got["busy"] == pytest.approx(1 - (d["idle"] + d["iowait"] + d["steal"]) / total, abs=1e-4)
    assert got["steal"] == pytest.approx(d["steal"] / total, abs=1e-4) and got["steal"] > 0  # a VM
    assert got["cpus"] == 2 and len(got["cpu_busy"]) == 2
    up = [float(t.split()[0]) for t in (PROCSTAT["before"], PROCSTAT["after"])]
    assert got["window_s"] == pytest.approx(up[1] - up[0], abs=1e-3)
    c1 = [y - x for x, y in zip(_cpu_line(PROCSTAT["before"], "cpu1"), _cpu_line(PROCSTAT["after"], "cpu1"))]
    assert got["cpu_busy"][1] == pytest.approx(1 - (c1[3] + c1[4] + c1[7]) / sum(c1), abs=1e-4)


def test_snapshots_of_two_machines_or_in_the_wrong_order_are_rejected():
    b, a = itf.parse_snapshot(PROCSTAT["before"]), itf.parse_snapshot(PROCSTAT["after"])
    with pytest.raises(itf.ProcStatError, match="backwards"):
        itf.cpu_usage(a, b)
    a.boot_id, b.boot_id = PROCSTAT["boot_id"], "00000000-0000-0000-0000-000000000000"
    with pytest.raises(itf.ProcStatError, match="boot ids"):
        itf.cpu_usage(b, a)
    with pytest.raises(itf.ProcStatError, match="not /proc/stat"):
        itf.parse_snapshot("12.0 3.0\nintr 1 2 3\n")
    with pytest.raises(itf.ProcStatError):
        itf.parse_snapshot("cpu  1 2 x 4\n")


def test_the_wrapper_keeps_the_tools_output_and_exit_code_and_snapshots_this_machine(tmp_path):
    wrapper = itf.WRAPPER.replace("/tmp/", f"{tmp_path}/")
    tool = ["sh", "-c", "printf 'out\\n'; echo err >&2; sleep 0.3; exit 3"]  # 0.3 s: ticks pass
    r = subprocess.run(["sh", "-c", wrapper, itf.WRAPPER_NAME, *tool], capture_output=True, text=True)
    assert (r.stdout, r.stderr, r.returncode) == ("out\n", "err\n", 3)
    read = subprocess.run(
        ["sh", "-c", itf.READ_SCRIPT.replace("/tmp/", f"{tmp_path}/")], capture_output=True, text=True
    )
    before, after, boot = itf.split_read(read.stdout)
    usage = itf.cpu_usage(itf.parse_snapshot(before), itf.parse_snapshot(after))
    assert 0 <= usage["busy"] <= 1 and usage["cpus"] == os.cpu_count() and boot
    assert not list(tmp_path.iterdir())  # the read removed the snapshot files


# -- the launcher's machine --------------------------------------------------------------------------------
def test_daemon_cpu_from_recorded_pids_and_cgroup_files(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    me = Path("/proc/self/stat").read_text()
    start = me[me.rfind(")") + 2 :].split()[19]
    (pids / "kube-apiserver.pid").write_text(f"{os.getpid()}\n")
    (pids / "kube-apiserver.start").write_text(start + "\n")
    (pids / "kubelet-1.pid").write_text(f"{os.getpid()}\n")
    (pids / "kubelet-1.start").write_text("1\n")  # a recycled pid: not ours
    (pids / "etcd.pid").write_text("999999999\n")  # gone
    usage = tmp_path / "cpuacct.usage"
    usage.write_text("2500000000\n")
    d = itf.Daemons.from_info(
        {"daemons": {"pid_dir": str(pids)}, "daemon_cgroup": {"cpu_usage_file": str(usage)}}
    )
    before = d.read()
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    usage.write_text("4000000000\n")
    out = itf.daemons_delta(before, d.read(), 1.0)
    assert set(out["by_daemon"]) == {"kube-apiserver"}
    assert out["control_plane_cpu_s"] >= 0.04 and out["node_agents_cpu_s"] == 0
    assert out["cgroup_cpu_s"] == pytest.approx(1.5)
    stat = tmp_path / "cpu.stat"
    stat.write_text("usage_usec 1250000\nuser_usec 1000000\n")
    assert itf.cgroup_cpu_s(stat) == pytest.approx(1.25)
    assert itf.Daemons.from_info({"daemons": {"pid_dir": str(tmp_path / "none")}}) is None


# -- every run's sidecar -----------------------------------------------------------------------------------
def test_every_sidecar_records_interference_that_passes_its_schema(tmp_path):
    cfg = config(tmp_path)
    k = FakeKube(nodes(), ok_responder)
    res = launch(cfg, kube=k)
    assert res.ok == res.launched == 8
    for path in find_raw_files(cfg.raw_dir):
        meta = read_sidecar(path)  # schema-checked
        inter = meta["interference"]
        assert 0 <= inter["busy"] <= 1 and 0 <= inter["steal"] <= 1 and inter["window_s"] > 0
        client = inter["nodes"][meta["client"]["node"]]
        assert client["seen_by"] == "client" and client["boot_id"] == PROCSTAT["boot_id"]
        assert inter["launcher_cpu_s"] >= 0 and inter["exec_wall_s"] >= 0
        # the raw file is the tool's output, byte for byte; the sidecar's command is the tool's
        assert meta["command"][0] in ("iperf3", "ping")
        if meta["tool"] == "iperf3":
            assert path.read_text() == iperf_json(9e9)
    # the wrapper ran the recorded timeout argv, unchanged
    assert all(w[4:] == run for w, (_, run) in zip(k.wrapped, k.client_runs, strict=True))
    bad = {"variant": "v", "scenario": "s", "interference": {**inter, "busy": 1.5}}
    with pytest.raises(SidecarError, match="interference.busy"):
        validate_sidecar(bad)


def test_interference_off_runs_the_bare_client(tmp_path):
    cfg = config(tmp_path, interference=False)
    k = FakeKube(nodes(), ok_responder)
    launch(cfg, kube=k)
    assert not k.wrapped and all(a[0] == "timeout" for _, a in k.client_runs)
    assert all("interference" not in read_sidecar(p) for p in find_raw_files(cfg.raw_dir))


def _nodes_with_boot_ids(same: bool):
    ns = nodes()
    for i, n in enumerate(ns):
        n.status.node_info.boot_id = "b" * 8 + ("" if same else str(i))
    return ns


@pytest.mark.parametrize("same", [True, False])
def test_a_server_is_read_before_and_after_the_client_and_counted_as_a_machine_when_another(tmp_path, same):
    k = FakeKube(_nodes_with_boot_ids(same), ok_responder)
    res = launch(config(tmp_path), kube=k)
    assert res.ok == 8
    snaps = [i for i, (_, a) in enumerate(k.execs) if a == itf.SNAPSHOT]
    runs = [i for i, (_, a) in enumerate(k.execs) if a[:2] == ["sh", "-c"] and a[3:4] == [itf.WRAPPER_NAME]]
    served = [i for i in runs if "iperf3" in k.execs[i][1]]  # ping has no server process to read
    # one before and one after each run with a server (where it ran), on the same machine too
    assert len(snaps) == 2 * len(served)
    for r in served:
        assert r - 1 in snaps and any(s > r for s in snaps)
    for path in find_raw_files(tmp_path / "raw"):
        meta = read_sidecar(path)
        # the machine's counters count once per machine: the server's only when it is another
        want = 1 if same or meta["tool"] == "ping" else 2
        assert len(meta["interference"]["nodes"]) == want
        # where the processes ran: the client's container on CPU 0 (fakekube.PERCPU), the server's on 1
        place = "c0/s1" if meta["tool"] == "iperf3" else "c0"
        assert meta["cpus"]["placement"] == place and "cpus" not in meta["interference"]
        assert meta["cpus"]["softirq"]["cpu"] == 0  # the fixture's softirq ticks grew on CPU 0 alone
    tidy = parse_experiment(tmp_path / "raw", "t").tidy
    assert set(tidy["placement"]) == {"c0/s1", "c0"}


def test_a_snapshot_that_cannot_be_read_leaves_the_run_ok_and_says_why(tmp_path):
    k = FakeKube(nodes(), ok_responder)
    k.no_snapshots = {"client-host-n2", "client-pod-n2"}
    res = launch(config(tmp_path), kube=k)
    assert res.ok == res.launched == 8
    meta = read_sidecar(find_raw_files(tmp_path / "raw")[0])
    client = meta["interference"]["nodes"][meta["client"]["node"]]
    assert "snapshot" in client["error"] and "busy" not in client


def test_no_api_call_and_no_background_thread_while_a_client_runs(tmp_path):
    seen = []

    def responder(pod, argv):
        seen.append((threading.active_count(), len(k.calls)))
        return ok_responder(pod, argv)

    k = FakeKube(nodes(), responder)
    threads = threading.active_count()
    launch(config(tmp_path), kube=k)
    assert seen and all(n == threads for n, _ in seen)
    # the call just before each client run is its exec; the pod checks come before it
    for _, at in seen:
        assert k.calls[at - 2 : at] == ["exec", "client-run"]
        assert "container_ready" in k.calls[max(0, at - 8) : at]


# -- warm-up ------------------------------------------------------------------------------------------------
def test_warmup_runs_are_kept_apart_not_counted_and_never_parsed(tmp_path, capsys):
    cfg = config(tmp_path, warmup=1)
    k = FakeKube(nodes(), ok_responder)
    res = launch(cfg, kube=k)
    assert (res.warmups, res.launched, res.ok) == (4, 8, 8) and len(k.client_runs) == 12
    # the warm-ups ran first, one of each case
    assert [a[4] for _, a in k.client_runs[:4]] == ["iperf3", "ping", "iperf3", "ping"]
    warm = sorted((tmp_path / "raw" / "_warmup").rglob("*.meta.yaml"))
    assert len(warm) == 4 and all(yaml.safe_load(p.read_text())["warmup"] is True for p in warm)
    assert len(find_raw_files(cfg.raw_dir)) == 8  # the parse stage's file list leaves them out
    parsed = parse_experiment(cfg.raw_dir, "t")
    assert parsed.failed.empty and parsed.tidy["run_id"].nunique() == 8
    assert not parsed.tidy["raw_path"].str.contains("/_warmup/").any()
    # even given by name, a warm-up never becomes rows
    raw = Path(str(warm[0])[: -len(".meta.yaml")])
    alone = parse_files([raw], cfg.raw_dir, "t")
    assert alone.tidy.empty and "warm-up" in alone.failed["reason"].iloc[0]
    assert cli_main(["parse", str(raw)]) != 0
    out, err = capsys.readouterr()
    assert "warm-up" in err and "throughput" not in out
    # nothing missing: no launch, no warm-up
    k2 = FakeKube(nodes(), ok_responder)
    assert launch(cfg, kube=k2).warmups == 0 and not k2.client_runs


@pytest.mark.parametrize("per, expected", [("tool", 4), ("case", 6)])
def test_warmup_per_tool_warms_each_tools_first_case_per_scenario(tmp_path, per, expected):
    tools = {
        "iperf3": {"tests": [{"name": "tcp"}, {"name": "tcp-reverse", "params": {"reverse": True}}]},
        "ping": {"tests": [{"name": "plain", "params": {"count": 3}}]},
    }
    cfg = from_mapping(
        experiment(
            [HOST_HOST, pod_pod()],
            tools,
            raw_dir=tmp_path / "raw",
            variant="bridge",
            repeats=1,
            warmup=1,
            warmup_per=per,
        )
    )
    res = launch(cfg, kube=FakeKube(nodes(), ok_responder))
    assert (res.warmups, res.ok) == (expected, 6)
    warm = sorted(p.name for p in (tmp_path / "raw" / "_warmup").rglob("*.meta.yaml"))
    reverse = [n for n in warm if n.startswith("iperf3-tcp-reverse")]
    # per tool: iperf3's first test (tcp) and ping on each scenario; tcp-reverse then runs warm
    assert len(reverse) == (0 if per == "tool" else 2) and len(warm) == expected
    assert all(read_sidecar(p)["harness"]["warmup_per"] == per for p in find_raw_files(cfg.raw_dir))


def test_a_failed_warmup_is_not_counted_and_the_case_still_runs(tmp_path):
    calls = {"n": 0}

    def first_fails(pod, argv):
        calls["n"] += 1
        if calls["n"] == 1:
            return ExecResult(rc=1, stdout="", stderr="iperf3: error - unable to connect")
        return ok_responder(pod, argv)

    res = launch(config(tmp_path, warmup=1), kube=FakeKube(nodes(), first_fails))
    assert (res.warmups, res.ok, res.failed) == (4, 8, 0)
    warm = sorted((tmp_path / "raw" / "_warmup").rglob("iperf3-tcp.json.meta.yaml")) + sorted(
        (tmp_path / "raw" / "_warmup").rglob("iperf3-tcp.txt.meta.yaml")
    )
    assert any(yaml.safe_load(p.read_text())["status"] == "failed" for p in warm)


# -- Guaranteed QoS and affinity (settings for real clusters) ----------------------------------------------
def _qos(pod: dict) -> str:
    """The QoS class Kubernetes gives a pod (core/v1 rules for cpu and memory)."""
    cs = pod["spec"]["containers"]
    if all(
        c.get("resources", {}).get("limits", {}).get(r) is not None
        and c["resources"]["limits"][r]
        == c["resources"].get("requests", {}).get(r, c["resources"]["limits"][r])
        for c in cs
        for r in ("cpu", "memory")
    ):
        return "Guaranteed"
    return "Burstable" if any(c.get("resources") for c in cs) else "BestEffort"


def test_resources_make_every_test_pod_guaranteed_with_whole_cpus(tmp_path):
    cfg = config(tmp_path, resources={"cpu": 1, "memory": "128Mi"})
    k = FakeKube(nodes(), ok_responder)
    launch(cfg, kube=k)
    pods = k.pods_created() or [b for (_, kind, _), b in k.created_log if kind == "Pod"]
    assert pods and all(_qos(p) == "Guaranteed" for p in pods)
    for c in (c for p in pods for c in p["spec"]["containers"]):
        assert c["resources"]["limits"] == c["resources"]["requests"] == {"cpu": "1", "memory": "128Mi"}
    assert all(read_sidecar(p)["harness"]["qos"] == "Guaranteed" for p in find_raw_files(cfg.raw_dir))
    plan = build_plan(config(tmp_path / "b"), to_nodes([make_node("n1"), make_node("n2")]))
    default = pod_manifest(
        next(iter(plan.pods.values())), image="i", pull_policy="Never", labels={}, lifetime=60
    )
    assert _qos(default) == "Burstable"
    for bad in ({"cpu": 0.5, "memory": "1Gi"}, {"cpu": 1, "memory": "1G"}, {"cpu": 1}):
        with pytest.raises(ValueError):
            config(tmp_path, resources=bad)


def test_affinity_flags_in_the_tools_command_lines():
    iperf3, netperf = adapter("iperf3"), adapter("netperf")
    inv = iperf3.invocation({"affinity": [0, 1]}, "10.0.0.2")
    assert inv.client[inv.client.index("-A") + 1] == "0,1" and "-A" not in inv.server
    assert iperf3.invocation({"affinity": 1}, "x").client[-2:] == ["-A", "1"]
    assert "-A" not in iperf3.invocation({}, "x").client
    with pytest.raises(UnsupportedTest):
        iperf3.invocation({"affinity": [None, 1]}, "x")
    nc = netperf.invocation({"test": "TCP_RR", "affinity": "0,1"}, "x").client
    assert nc[nc.index("-T") + 1] == "0,1" and nc.index("-T") < nc.index("--")
    assert "-T" in netperf.invocation({"affinity": [None, 1]}, "x").client
    assert ",1" in netperf.invocation({"affinity": [None, 1]}, "x").client
    with pytest.raises(UnsupportedTest):
        netperf.invocation({"affinity": "a,b"}, "x")
    qc = adapter("qperf").invocation({"tests": ["tcp_lat"], "affinity": [0, 1]}, "x").client
    # qperf counts CPUs from 1 (0: any CPU): CPU 0 is -lca 1
    assert (
        qc[qc.index("-lca") + 1] == "1" and qc[qc.index("-rca") + 1] == "2" and qc[-2:] == ["tcp_lat", "conf"]
    )
    assert "-lca" not in adapter("qperf").invocation({"tests": ["tcp_lat"]}, "x").client
    assert (
        "-lca" not in adapter("qperf").invocation({"tests": ["tcp_lat"], "affinity": [None, 1]}, "x").client
    )


def test_launch_affinity_reaches_the_tools_that_support_it_and_is_recorded(tmp_path):
    cfg = config(tmp_path, affinity={"client": 0, "server": 1})
    by_tool = {t.tool: case_params(cfg, t) for specs in cfg.tools.values() for t in specs}
    assert by_tool["iperf3"]["affinity"] == [0, 1] and "affinity" not in by_tool["ping"]
    k = FakeKube(nodes(), ok_responder)
    launch(cfg, kube=k)
    iperf_runs = [a for _, a in k.client_runs if a[4] == "iperf3"]
    assert iperf_runs and all(a[a.index("-A") + 1] == "0,1" for a in iperf_runs)
    # every client exec (ping's too) starts on the client's CPU, the wrapper and its readings with it;
    # the server's readings on the server's CPU
    wrapped = [(pod, a) for pod, a in k.execs if itf.WRAPPER_NAME in a]
    assert wrapped and all(a[:3] == ["taskset", "-c", "0"] for _, a in wrapped)
    snaps = [a for _, a in k.execs if a[3:] == itf.SNAPSHOT]
    assert snaps and all(a[:3] == ["taskset", "-c", "1"] for a in snaps)
    for p in find_raw_files(cfg.raw_dir):
        meta = read_sidecar(p)
        aff = meta["harness"]["affinity"]
        assert aff["applied"] is True and (aff["client"], aff["server"]) == (0, 1)
        assert ("own option" in aff["by"]) is (meta["tool"] == "iperf3")
        assert meta["placement_command"] == ["taskset", "-c", "0"]
        if meta["tool"] == "iperf3":  # the server container was started on its CPU
            assert meta["server_command"][:3] == ["taskset", "-c", "1"]
    # a pinned iperf3 output parses with its command (the parser knows -A is not -t/-P)
    parsed = parse_experiment(cfg.raw_dir, "t")
    assert parsed.failed.empty and (parsed.tidy["tool"] == "iperf3").any()


def test_a_client_that_never_started_is_not_read_again(tmp_path):
    def refused(pod, argv):  # the exec never reached the kubelet
        return ExecResult(
            rc=None,
            stdout="",
            stderr="",
            error=f"exec in {pod} failed to start: dial tcp n2:10250: connect: connection refused",
        )

    k = FakeKube(nodes(), refused)
    res = launch(config(tmp_path), kube=k)
    assert res.ok == 0
    metas = [read_sidecar(p) for p in find_raw_files(tmp_path / "raw")]
    started = [m for m in metas if "interference" in m]
    assert started and all(m["interference"]["busy"] is None for m in started)
    assert all("did not start" in n["error"] for m in started for n in m["interference"]["nodes"].values())
    assert not any(a == ["sh", "-c", itf.READ_SCRIPT] for _, a in k.execs)


def test_a_tests_own_affinity_param_is_recorded_as_applied(tmp_path):
    cfg = config(tmp_path)
    cfg.tools["iperf3"][0].params["affinity"] = [1, 0]
    k = FakeKube(nodes(), ok_responder)
    launch(cfg, kube=k)
    assert all(a[a.index("-A") + 1] == "1,0" for _, a in k.client_runs if a[4] == "iperf3")
    for p in find_raw_files(cfg.raw_dir):
        meta = read_sidecar(p)
        want = {"client": 1, "server": 0, "applied": True, "by": "iperf3's own option"}
        assert meta["harness"]["affinity"] == (want if meta["tool"] == "iperf3" else None)
