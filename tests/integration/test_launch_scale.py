"""The cost of scale on the embedded cluster: config/examples/service-scale.yaml shortened to a
two-point sweep (0 and 200 Services, iperf3 1 s, 2 repeats). The 200 Services and their
EndpointSlices are present and programmed (the probe Services created last answer, each of the
``scale.changes`` of every set-up timed until reached and, deleted, until gone) before the
point's runs, the sidecars record them with the rule counts of each node's network namespace, and
nothing is left after the launch, nor after Ctrl-C in the middle of a point.

Uses the cluster of ``CLUSTER_ID`` (tests/integration/conftest.py: ``.cluster`` or ``.cluster-<k>``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from podnet.launch.cluster.objects import SCALE_LABEL
from podnet.launch.cluster.workload import MANAGED_SELECTOR
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from podnet.parse.scale import probe_table
from tests.integration.conftest import REPO, example_config, sidecars_all_ok

pytestmark = pytest.mark.cluster


def leftovers(core) -> list[str]:
    """podnet namespaces, pods and scale objects (Services, NetworkPolicies) still present."""
    from kubernetes import client

    out = [
        f"namespace {ns.metadata.name}" for ns in core.list_namespace(label_selector=MANAGED_SELECTOR).items
    ]
    out += [
        f"pod {p.metadata.name}"
        for p in core.list_pod_for_all_namespaces(label_selector=MANAGED_SELECTOR).items
    ]
    out += [
        f"service {s.metadata.name}"
        for s in core.list_service_for_all_namespaces(label_selector=SCALE_LABEL).items
    ]
    net = client.NetworkingV1Api(core.api_client)
    out += [
        f"networkpolicy {p.metadata.name}"
        for p in net.list_network_policy_for_all_namespaces(label_selector=SCALE_LABEL).items
    ]
    return out


def _config(tmp_path: Path, name: str, services: list[int], repeats: int = 2) -> dict:
    return example_config(
        "service-scale.yaml",
        name,
        tmp_path,
        disturbance={"enabled": False},  # the test counts runs (creating objects is the machine's work)
        repeats=repeats,
        warmup=0,
        defaults={"duration": 1, "omit": 0},
        tools={"iperf3": {"tests": [{"name": "tcp", "scale": {"services": services, "changes": 3}}]}},
    )


def test_two_point_service_sweep_end_to_end(core, tmp_path):
    assert not leftovers(core), "podnet leftovers before the test: run `make cleanup`"
    cfg = from_mapping(_config(tmp_path, "it-scale", [0, 200]))
    res = launch(cfg)
    assert res.error == "" and not res.interrupted
    side = sidecars_all_ok(cfg.raw_dir)
    assert res.ok == 4
    at = {n: [v["scale"] for k, v in side.items() if f"services-{n}/" in k] for n in (0, 200)}
    for rec in at[200]:
        print("200 Services:", rec["applied"], rec["probe"], rec["ready_s"])
        for node, r in rec["rules"].items():
            print(
                " ",
                node,
                {k: v for k, v in r.items() if k in ("iptables_total", "nft_rules", "nft_elements")},
            )
        assert rec["present"] == {"services": 200, "endpoint_slices": 200, "network_policies": 0}
    for rec in at[0] + at[200]:  # the sweep's 0 times its Service changes too
        p = rec["probe"]
        assert p["changes"] == 3 and p["loop"] == "session", p
        assert len(p["service_effect_s"]) == len(p["service_removed_s"]) == 3
        assert all(0 < v < 60 for v in p["service_effect_s"] + p["service_removed_s"])
    for rec in at[0]:
        assert rec["present"] in ({}, {"services": 0, "endpoint_slices": 0, "network_policies": 0})

    # the rules follow the objects: more at 200 Services than at 0 (when they could be counted); iptables
    # mode: iptables rules, nftables mode: nft rules and set/map elements (kube-proxy's maps)
    def most(r: dict) -> int:
        return max(
            max(v.get("iptables_total") or 0, (v.get("nft_rules") or 0) + (v.get("nft_elements") or 0))
            for v in r.values()
        )

    rules = {n: [r["rules"] for r in recs if "rules" in r] for n, recs in at.items()}
    if rules[200] and "unavailable" not in rules[200][0]:
        top = most(rules[200][0])
        low = [most(r) for r in rules[0] if r and "unavailable" not in r]
        print("rules per node at 0 / 200 Services:", low, top)
        assert all(x < top for x in low)
    assert not leftovers(core)
    parsed = parse_experiment(cfg.raw_dir, cfg.experiment)
    t = parsed.tidy
    assert set(t["sweep_param"].dropna()) == {"services"} and set(t["sweep_value"].dropna()) == {0.0, 200.0}
    probes = probe_table(t)  # scale_probes.csv: 2 rounds x 2 points x 2 probes x 3 changes
    print(probes.groupby(["services", "metric"])["value"].describe().to_string())
    assert len(probes) == 24 and probes["setup"].nunique() == 4


def test_ctrl_c_in_the_middle_of_a_point_leaves_nothing(core, tmp_path):
    assert not leftovers(core)
    path = tmp_path / "scale-sigint.yaml"
    path.write_text(yaml.safe_dump(_config(tmp_path, "it-scale-sigint", [0, 400], repeats=3)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnet.cli", "launch", "--config", str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        deadline = time.monotonic() + 240
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "[1/" in line:  # the first run (0 Services) ended: the 400 Services are being created
                break
            assert time.monotonic() < deadline, "".join(lines)
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=300)
        lines.append(out)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines)
    print(text[-1200:])
    assert proc.returncode == 130, text
    assert not leftovers(core), text


def test_policy_sweep_on_a_cni_that_enforces_policy(core, cluster_info, tmp_path):
    if not str(cluster_info.get("cni", "")).startswith(("calico", "cilium")):
        pytest.skip(f"the cluster's CNI ({cluster_info.get('cni')}) enforces no NetworkPolicy")
    assert not leftovers(core)
    cfg = example_config(
        "policy-scale.yaml",
        "it-scale-policy",
        tmp_path,
        disturbance={"enabled": False},
        repeats=2,
        warmup=0,
        defaults={"duration": 1, "omit": 0},
        tools={"iperf3": {"tests": [{"name": "tcp", "scale": {"network_policies": [0, 20], "changes": 3}}]}},
    )
    c = from_mapping(cfg)
    res = launch(c)
    side = sidecars_all_ok(c.raw_dir)
    assert res.ok == 4
    for k, v in side.items():
        rec = v["scale"]
        print(k, rec["applied"], rec["probe"], rec["ready_s"], {n: r for n, r in rec["rules"].items()})
        p = rec["probe"]
        assert p["loop"] == "session" and len(p["policy_effect_s"]) == len(p["policy_removed_s"]) == 3
        assert p["reach_attempt_every_s"] == 0.01  # a lifted deny seen by attempts that overlap
        assert all(0 < x < 60 for x in p["policy_effect_s"] + p["policy_removed_s"])
        if "network_policies-20/" in k:
            assert rec["present"]["network_policies"] == 20
    assert not leftovers(core)
