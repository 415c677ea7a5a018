"""On the embedded cluster: the daemons sit in their low-weight cgroup (the pods do not), and a run's
sidecar records what competed with it (CPU busy/steal, the launcher's and the daemons' CPU), after an
uncounted warm-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse.raw import find_raw_files, read_sidecar
from tests.integration.test_launch import leftovers, small

pytestmark = pytest.mark.cluster


def _cgroup_of(pid: int) -> dict[str, str]:
    """controller(s) -> path, from /proc/<pid>/cgroup ("" for the v2 hierarchy)."""
    out = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def test_daemons_sit_in_the_low_weight_cgroup_and_the_pods_do_not(cluster_info, kube, node_names):
    # a pod of our own: the earlier tests' pods are gone by now (the first CI run found none)
    kube.pod("cg-probe", node_names[0])
    kube.wait_running(["cg-probe"])
    cg = cluster_info.get("daemon_cgroup")
    assert cg, "info.json has no daemon_cgroup (cluster-up with DAEMON_CPU_WEIGHT=0?)"
    assert cg["cpu_weight"] == 20
    for d in cg["paths"]:
        assert Path(d).is_dir(), d
    cpu_dir = Path(cg["paths"][0])
    if cg["cgroup_version"] == 1:
        assert (cpu_dir / "cpu.shares").read_text().strip() == str(20 * 1024 // 100)
        controller = "cpu"
    else:
        assert (cpu_dir / "cpu.weight").read_text().strip() == "20"
        controller = ""
    pids = Path(cluster_info["daemons"]["pid_dir"])
    names = sorted(p.stem for p in pids.glob("*.pid"))
    assert {"etcd", "kube-apiserver", "kubelet-1", "containerd-1"} <= set(names)
    for name in names:
        pid = int((pids / f"{name}.pid").read_text())
        assert _cgroup_of(pid)[controller] == "/podnet-daemons", name
    members = {int(p) for p in (cpu_dir / "cgroup.procs").read_text().split()}
    # the pods' processes (pause, containers) stay in the kubelets' cgroupRoot /podnet/node-N
    pod_root = cpu_dir.parent / "podnet"
    pod_pids = {int(p) for f in pod_root.rglob("cgroup.procs") for p in f.read_text().split()}
    assert pod_pids, "no pod process found under the kubelets' cgroupRoot"
    assert not pod_pids & members
    for pid in list(pod_pids)[:20]:
        try:
            assert _cgroup_of(pid)[controller].startswith("/podnet/node-")
        except FileNotFoundError:  # exited meanwhile
            continue


def test_a_runs_sidecar_records_interference_after_an_uncounted_warmup(core, tmp_path, cluster_info):
    assert not leftovers(core)
    cfg = from_mapping(
        small(
            tmp_path,
            "it-harness",
            ["pod-pod-cross-node"],
            ["iperf3"],
            repeats=2,
            warmup=1,
            defaults={"duration": 2, "omit": 0},
        )
    )
    res = launch(cfg)
    assert res.error == "" and (res.ok, res.warmups) == (2, 1)
    warm = list((cfg.raw_dir / "_warmup").rglob("*.meta.yaml"))
    assert len(warm) == 1 and len(find_raw_files(cfg.raw_dir)) == 2
    for path in find_raw_files(cfg.raw_dir):
        meta = read_sidecar(path)
        inter = meta["interference"]
        print(
            path.name,
            {k: inter.get(k) for k in ("busy", "steal", "window_s", "launcher_cpu_s")},
            inter["daemons"],
        )
        assert inter["nodes"] and inter["busy"] is not None and 0 < inter["busy"] <= 1
        assert inter["window_s"] >= 2  # the snapshots bracket the 2 s test
        assert inter["machines"] == 1  # every embedded node is this machine
        d = inter["daemons"]
        assert {"kube-apiserver", "etcd", "kubelet-1"} <= set(d["by_daemon"]) and d["cpu_s"] >= 0
        assert d.get("cgroup_cpu_s") is None or d["cgroup_cpu_s"] >= 0
        assert meta["cluster"]["embedded"]["daemon_cgroup"]["cpu_weight"] == 20
        # where the client, the server and the softirq work ran, from the containers' cgroups
        cpus = meta["cpus"]
        assert cpus["placement"].startswith("c") and "/s" in cpus["placement"], cpus
        assert sum(cpus["client"]["cpu_s"]) > 0.05 and sum(cpus["server"]["cpu_s"]) > 0.05, cpus
        assert sum(cpus["softirq"]["cpu_s"]) > 0, cpus
    assert not leftovers(core)
