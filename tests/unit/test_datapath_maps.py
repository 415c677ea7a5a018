"""Beside the rule counts: each node's ipsets (calico's in total and apart) and, on cilium, its BPF
map entries read in the agent's own mount namespace; where a tool or the agent is not there, the
record says why and the set-up goes on."""

from __future__ import annotations

from pathlib import Path

from podnet.launch.cluster import datapath, datapath_maps

IPSETS = """Name: cali40s:AbCdEf
Type: hash:net
Revision: 7
Header: family inet hashsize 1024 maxelem 1048576
Size in memory: 504
References: 1
Number of entries: 4
Name: cali40this-host
Type: hash:ip
Number of entries: 2
Name: KUBE-CLUSTER-IP
Type: hash:ip,port
Number of entries: 9
"""


def _cluster(tmp_path: Path, comm: str = "cilium-agent") -> dict:
    pids = tmp_path / "pids"
    pids.mkdir()
    (pids / "cilium-agent-2.pid").write_text("4242\n")
    (tmp_path / "proc" / "4242").mkdir(parents=True)
    (tmp_path / "proc" / "4242" / "comm").write_text(comm + "\n")
    return {
        "cni": "cilium-vxlan",
        "daemons": {"pid_dir": str(pids)},
        "nodes": [{"name": "n1", "netns": "ns-n1"}, {"name": "n2", "netns": "ns-n2"}],
    }


def _run(seen: list):
    def run(argv: list[str]) -> str:
        seen.append(argv)
        if argv[-3:] == ["ipset", "list", "-t"]:
            return IPSETS
        if argv[-2:] == ["ls", datapath_maps.GLOBALS]:
            names = "cilium_call_policy cilium_policy_00017 cilium_policy_03010 cilium_lb4_services_v2"
            return names + " cilium_ct4_global cilium_ipcache\n"
        if "bpftool" in argv:
            name = argv[-1].rsplit("/", 1)[-1]
            counts = {"cilium_policy_00017": 12, "cilium_policy_03010": 1, "cilium_lb4_services_v2": 603}
            n = counts.get(name, 40)
            return "key: 01 00  value: 02\n" * 2 + f"Found {n} element{'s' if n != 1 else ''}\n"
        return ""

    return run


def test_ipsets_in_total_and_calicos_apart():
    sets = datapath_maps.ipset_counts(IPSETS)
    assert sets == {"cali40s:AbCdEf": 4, "cali40this-host": 2, "KUBE-CLUSTER-IP": 9}
    rec = datapath_maps.ipsets(["nsenter", "--net=/run/netns/x", "--"], _run([]), lambda t: "/usr/sbin/" + t)
    assert rec == {"ipset_sets": 3, "ipset_entries": 15, "calico_ipsets": 2, "calico_ipset_entries": 6}
    assert datapath_maps.ipsets([], _run([]), lambda t: None) == {"ipset_error": "ipset is not installed"}


def test_cilium_maps_are_read_in_the_agents_mount_namespace(tmp_path):
    info, seen = _cluster(tmp_path), []
    enter = ["nsenter", "--net=x", "--"]
    rec = datapath_maps.node_maps(info, "n2", enter, _run(seen), lambda t: t, tmp_path / "proc")
    assert rec["cilium_maps"] == {
        "cilium_ipcache": 40,
        "cilium_lb4_services_v2": 603,
        "cilium_policy_00017": 12,
        "cilium_policy_03010": 1,
    }
    assert (rec["cilium_policy_entries"], rec["cilium_lb_entries"], rec["calico_ipsets"]) == (13, 603, 2)
    dumps = [a for a in seen if "bpftool" in a]
    assert dumps[0][:5] == ["nsenter", "-t", "4242", "-m", "--"] and len(dumps) == 4
    assert dumps[0][-1] == f"{datapath_maps.GLOBALS}/cilium_ipcache"


def test_without_the_agent_or_its_tools_the_record_says_why(tmp_path):
    info = _cluster(tmp_path, comm="bash")
    rec = datapath_maps.node_maps(info, "n2", [], _run([]), lambda t: t, tmp_path / "proc")
    assert "not cilium-agent" in rec["cilium_error"] and "ipset_sets" in rec
    rec = datapath_maps.node_maps(info, "n1", [], _run([]), lambda t: t, tmp_path / "proc")
    assert "cilium-agent-1.pid" in rec["cilium_error"]  # no pid file
    gone = datapath_maps.cilium_maps(info, "n9", _run([]), lambda t: t)
    assert "not in the cluster" in gone["cilium_error"]
    none = datapath_maps.cilium_maps(info, "n2", _run([]), lambda t: None if t == "bpftool" else t)
    assert none == {"cilium_error": "bpftool is not installed"}
    flannel = {**info, "cni": "flannel-vxlan"}
    assert "cilium_error" not in datapath_maps.node_maps(flannel, "n2", [], _run([]), lambda t: t)
    try:
        datapath_maps.bpftool_count("Error: bpf obj get: No such file")
    except ValueError as exc:
        assert "no element count" in str(exc)
    else:
        raise AssertionError("no count read from an error")


def test_the_rule_counts_carry_them_per_node(tmp_path, monkeypatch):
    monkeypatch.setattr(datapath_maps.shutil, "which", lambda t: "/usr/sbin/" + t)
    info, seen = _cluster(tmp_path), []
    run = _run(seen)
    rec = datapath.rule_counts(info, run=lambda argv: run(argv) if "ipset" in argv or "ls" in argv else "")
    assert set(rec) == {"n1", "n2"} and rec["n1"]["ipset_entries"] == 15
    assert rec["n1"]["iptables_total"] == 0
