"""The launch stage against the running cluster (make cluster-up): quick experiment end to end,
clean-up after success / failure / Ctrl-C, skip-existing, least privilege, fidelity.

Each test writes its raw files under a temporary directory and checks that no podnet
namespace or pod is left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from podnet.launch.cluster.workload import MANAGED_SELECTOR
from podnet.launch.rounds.runner import launch
from podnet.launch.spec.config import from_mapping
from podnet.parse import parse_experiment
from podnet.parse.raw import find_raw_files, read_sidecar

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
KUBECONFIG = REPO / ".cluster" / "kubeconfig"
MANAGED = MANAGED_SELECTOR


def quick(tmp_path: Path, name: str = "it-quick", **launch_over) -> dict:
    cfg = yaml.safe_load((REPO / "config/examples/quick.yaml").read_text())
    cfg["experiment"] = name
    cfg["raw_dir"] = str(tmp_path / "raw")
    cfg["launch"]["kubeconfig"] = str(KUBECONFIG)
    cfg["launch"]["image_file"] = str(REPO / ".cluster" / "image")
    cfg["launch"]["cluster_info"] = str(REPO / ".cluster" / "info.json")
    # these tests count runs and attempts; the disturbed-run rule (tests/unit/
    # test_launch_disturbance.py, measured in METHODS.md) re-runs whenever the machine has other work
    cfg["launch"]["disturbance"] = {"enabled": False}
    cfg["launch"].update(launch_over)
    return cfg


def small(tmp_path: Path, name: str, scenarios: list[str], tools: list[str], **launch_over) -> dict:
    cfg = quick(tmp_path, name, **launch_over)
    cfg["launch"]["scenarios"] = [s for s in cfg["launch"]["scenarios"] if s["name"] in scenarios]
    cfg["launch"]["tools"] = {k: v for k, v in cfg["launch"]["tools"].items() if k in tools}
    for s in cfg["launch"]["scenarios"]:
        if "tests" in s:
            s["tests"] = [t for t in s["tests"] if t.split(":")[0] in tools]
    return cfg


def leftovers(core) -> list[str]:
    """podnet namespaces and pods still present (terminating ones included)."""
    out = [f"namespace {ns.metadata.name}" for ns in core.list_namespace(label_selector=MANAGED).items]
    out += [
        f"pod {p.metadata.namespace}/{p.metadata.name}"
        for p in core.list_pod_for_all_namespaces(label_selector=MANAGED).items
    ]
    return out


def sidecars(raw: Path) -> dict[str, dict]:
    return {f.relative_to(raw).as_posix(): read_sidecar(f) for f in find_raw_files(raw)}


@pytest.fixture(scope="module")
def quick_run(core, tmp_path_factory):
    """The quick experiment launched once (every scenario x tool, 1 s tests)."""
    assert not leftovers(core), "podnet leftovers before the test: run `make cleanup`"
    tmp = tmp_path_factory.mktemp("quick")
    cfg = from_mapping(quick(tmp))
    t0 = time.monotonic()
    result = launch(cfg)
    return {"cfg": cfg, "result": result, "seconds": time.monotonic() - t0, "raw": cfg.raw_dir}


def test_quick_experiment_end_to_end(quick_run, core):
    cfg, result = quick_run["cfg"], quick_run["result"]
    print(f"quick launch: {result.launched} runs in {quick_run['seconds']:.0f}s")
    assert result.error == "" and not result.interrupted
    assert result.launched == len(cfg.cases)
    side = sidecars(quick_run["raw"])
    failed = {k: v.get("error") for k, v in side.items() if v["status"] != "ok"}
    assert not failed, failed
    # every scenario x tool has its run
    got = {(s["scenario"], s["tool"]) for s in side.values()}
    assert got == {(c.scenario.name, c.test.tool) for c in cfg.cases}
    parsed = parse_experiment(quick_run["raw"], cfg.experiment)
    assert len(parsed.failed) == 0, parsed.failed.to_dict("records")
    assert {(r.scenario, r.tool) for r in parsed.tidy.itertuples()} == got


def test_sidecars_carry_provenance(quick_run, cluster_info):
    side = sidecars(quick_run["raw"])
    m = next(v for k, v in side.items() if "pod-pod-cross-node/iperf3-tcp" in k)
    assert m["cluster"]["kubernetes_version"].startswith("v1.")
    assert m["cluster"]["cni"] == cluster_info["cni"] and m["variant"] == cluster_info["cni"]
    # the pod interface's MTU; cilium keeps the device at 1500 and puts the path MTU (pod_mtu) on the routes
    if_mtu = cluster_info["cilium"]["device_mtu"] if "cilium" in cluster_info else cluster_info.get("pod_mtu")
    for side_ in ("client", "server"):
        ep = m[side_]
        assert ep["pod"] and ep["ip"] and ep["node"] and ep["mtu"] == (if_mtu or ep["mtu"])
        ni = ep["node_info"]
        for key in ("kernel", "os", "kubelet", "container_runtime"):
            assert ni[key], key
    assert m["client"]["node"] != m["server"]["node"]
    assert m["command"][0] == "iperf3" and m["server"]["ip"] in m["command"]
    assert m["tool_version"].startswith("iperf 3")
    assert m["exit_code"] == 0 and m["started"] < m["ended"] and len(m["sha256"]) == 64
    assert m["launch"]["namespace"].startswith("podnet-") and m["image"]
    host = next(v for k, v in side.items() if k.startswith(f"{m['variant']}/host-host/"))
    assert host["client"]["host_network"] and host["server"]["ip"] in {n["ip"] for n in cluster_info["nodes"]}
    svc = next(v for k, v in side.items() if "/pod-svc-cross-node/" in k)
    assert svc["service"]["cluster_ip"] == svc["target"] and svc["target"] != svc["server"]["ip"]


def test_nothing_left_after_success(quick_run, core):
    assert quick_run["result"].namespace_deleted is True
    assert not leftovers(core)


def test_rerun_launches_nothing_new(quick_run, core):
    before = {p.as_posix() for p in find_raw_files(quick_run["raw"])}
    again = launch(quick_run["cfg"])
    assert again.launched == 0 and again.namespace is None and again.error == ""
    assert {p.as_posix() for p in find_raw_files(quick_run["raw"])} == before
    assert not leftovers(core)


def test_impossible_placement_is_recorded_as_failed_with_events(core, tmp_path):
    cfg = small(
        tmp_path,
        "it-fail",
        ["pod-pod-cross-node"],
        ["iperf3"],
        timeouts={"unschedulable": 8, "pod_ready": 60},
    )
    cfg["launch"]["scenarios"].append(
        {
            "name": "nowhere",
            "client": {"kind": "pod", "same_node_as": "server"},
            "server": {"kind": "pod", "selector": {"podnet.io/pool": "no-such-pool"}},
        }
    )
    result = launch(from_mapping(cfg))
    side = sidecars(tmp_path / "raw")
    bad = {k: v for k, v in side.items() if "/nowhere/" in k}
    good = {k: v for k, v in side.items() if "/pod-pod-cross-node/" in k}
    assert bad and all(v["status"] == "failed" for v in bad.values())
    err = next(iter(bad.values()))["error"]
    assert "FailedScheduling" in err and "node affinity/selector" in err, err
    assert good and all(v["status"] == "ok" for v in good.values())
    assert result.failed == len(bad) and result.ok == len(good)
    assert not leftovers(core)
    parsed = parse_experiment(tmp_path / "raw", "it-fail")
    assert parsed.failed["reason"].str.contains("FailedScheduling").all()


def test_missing_image_fails_fast_with_the_reason(core, tmp_path):
    cfg = small(
        tmp_path, "it-noimage", ["pod-pod-cross-node"], ["iperf3"], image="localhost/podnet-no-such-image:0"
    )
    cfg["launch"].pop("image_file")
    t0 = time.monotonic()
    result = launch(from_mapping(cfg))
    assert time.monotonic() - t0 < 60
    err = next(iter(sidecars(tmp_path / "raw").values()))["error"]
    assert "ErrImageNeverPull" in err or "not present" in err, err
    assert result.failed >= 1 and not leftovers(core)


def test_ctrl_c_mid_run_leaves_nothing(core, tmp_path):
    cfg = small(tmp_path, "it-sigint", ["pod-pod-cross-node", "host-host"], ["iperf3", "ping"], repeats=5)
    cfg["launch"]["defaults"] = {"duration": 3, "omit": 0}
    path = tmp_path / "sigint.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnet.cli", "launch", "--config", str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        deadline = time.monotonic() + 180
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "[2/" in line:  # the first run finished, the second is running
                break
            assert time.monotonic() < deadline, "".join(lines)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=240)
        lines.append(out)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines)
    assert proc.returncode == 130, text
    assert "interrupted" in text
    assert not leftovers(core), text
    # what finished is kept; the interrupted run is not recorded and is launched next time
    side = sidecars(tmp_path / "raw")
    assert 1 <= len(side) < 20 and all(v["status"] == "ok" for v in side.values())


def test_least_privilege_service_account(core, tmp_path):
    from kubernetes import client

    from podnet.launch.cluster.rbac import apply_rbac, service_account_kubeconfig

    apply_rbac(core.api_client)
    end = time.monotonic() + 30  # pods need the namespace's default ServiceAccount (made by a controller)
    while time.monotonic() < end:
        try:
            core.read_namespaced_service_account("default", "podnet")
            break
        except client.ApiException:
            time.sleep(0.3)
    try:
        kc = service_account_kubeconfig(KUBECONFIG, tmp_path / "sa.kubeconfig")
        cfg = small(
            tmp_path,
            "it-rbac",
            ["pod-pod-cross-node", "host-host", "pod-svc-cross-node"],
            ["iperf3", "ping"],
            kubeconfig=str(kc),
            namespace={"create": False, "name": "podnet"},
        )
        result = launch(from_mapping(cfg))
        assert result.error == "" and result.failed == 0 and result.ok == result.launched == 5
        assert not core.list_namespaced_pod("podnet", label_selector=MANAGED).items
        assert not core.list_namespaced_service("podnet", label_selector=MANAGED).items
        # the ServiceAccount cannot do more than it needs
        sa = client.CoreV1Api(_api(kc))
        with pytest.raises(client.ApiException) as exc:
            sa.list_namespaced_pod("kube-system")
        assert exc.value.status == 403
    finally:
        rbac = client.RbacAuthorizationV1Api(core.api_client)
        for fn, name in (
            (rbac.delete_cluster_role_binding, "podnet-launcher-nodes"),
            (rbac.delete_cluster_role, "podnet-launcher-nodes"),
        ):
            try:
                fn(name)
            except client.ApiException:
                pass
        core.delete_namespace("podnet")
        end = time.monotonic() + 120
        while time.monotonic() < end and any(
            ns.metadata.name == "podnet" for ns in core.list_namespace().items
        ):
            time.sleep(1)


def _api(kubeconfig: Path):
    from kubernetes import client, config

    c = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=c)
    return client.ApiClient(c)


@pytest.mark.skipif(
    os.environ.get("PODNET_FIDELITY") != "1", reason="PODNET_FIDELITY=1 runs the fidelity check (~2 min)"
)
def test_fidelity_pod_pod_cross_node(core, tmp_path):
    """Pipeline iperf3 vs iperf3 run by hand (text output, no -J) in the same pods, interleaved."""
    import statistics

    from podnet import tools as adapters
    from podnet.launch.cluster.k8s import Kube
    from podnet.launch.rounds.runner import Launcher
    from podnet.launch.rounds.state import pending_runs

    cfg = from_mapping(
        small(
            tmp_path,
            "it-fidelity",
            ["pod-pod-cross-node"],
            ["iperf3"],
            repeats=6,
            defaults={"duration": 5, "omit": 1},
        )
    )
    kube = Kube(str(KUBECONFIG))
    lau = Launcher(cfg, kube)
    facts = lau.discover()
    pending = pending_runs(cfg, facts.variant, lau.tally.states)
    hand: list[float] = []
    try:
        lau.prepare(set(pending))
        w = lau.workload
        cp = w.plan.cases[0]
        client_pod = w.pod_name(cp.client_pod)
        server_ip = w.endpoints[cp.server_pod].ip
        for r in range(1, 7):
            lau.run_rounds({cp.case.key: [r]})
            out = kube.exec(
                w.namespace,
                client_pod,
                ["iperf3", "-c", server_ip, "-p", "15201", "-t", "5", "-O", "1"],
                60,
                container="main",
            )
            assert out.rc == 0, out.stderr
            res = adapters.get("iperf3").parse(out.stdout)
            hand.append(next(m.value for m in res.measurements if m.metric == "throughput"))
    finally:
        lau.teardown()
    parsed = parse_experiment(cfg.raw_dir, cfg.experiment)
    pipe = parsed.tidy[parsed.tidy["metric"] == "throughput"]["value"].tolist()
    mp, mh = statistics.fmean(pipe), statistics.fmean(hand)
    spread = max(statistics.stdev(pipe), statistics.stdev(hand))
    print(
        f"pipeline {mp / 1e9:.3f} Gbit/s (sd {statistics.stdev(pipe) / 1e9:.3f}, n={len(pipe)}); "
        f"hand {mh / 1e9:.3f} Gbit/s (sd {statistics.stdev(hand) / 1e9:.3f}, n={len(hand)})"
    )
    assert abs(mp - mh) <= 2 * spread + 0.02 * mh
    assert not leftovers(core)


def test_two_variants_side_by_side_on_one_cluster(core, tmp_path):
    """An A/A side by side on the running cluster: two variant names, one launch id, each case's
    repeat under both variants back to back (hostNetwork servers of both on one node: each variant
    its own ports); the statistics pair them (design side-by-side)."""
    from podnet.launch.campaign.sidebyside import launch_side_by_side
    from podnet.stats.variants import variant_table

    cfgs = []
    for name in ("aa-1", "aa-2"):
        cfg = small(
            tmp_path, "it-sbs", ["host-host", "pod-pod-cross-node"], ["iperf3"], variant=name, repeats=2
        )
        cfg["launch"]["defaults"] = {"duration": 2, "omit": 0}
        cfgs.append(from_mapping(cfg))
    results = launch_side_by_side(cfgs)
    assert [(r.launched, r.ok, r.error) for r in results] == [(4, 4, "")] * 2, results
    assert len({r.launch_id for r in results}) == 1
    side = {f: read_sidecar(f) for f in find_raw_files(cfgs[0].raw_dir)}
    assert {s["launch"]["id"] for s in side.values()} == {results[0].launch_id}
    runs = sorted(side.items(), key=lambda kv: kv[1]["started"])
    variants = [p.relative_to(cfgs[0].raw_dir).parts[0] for p, _ in runs]
    assert all(sorted(variants[i : i + 2]) == ["aa-1", "aa-2"] for i in range(0, 8, 2)), variants  # pairs
    tidy = parse_experiment(cfgs[0].raw_dir, experiment="it-sbs").tidy
    vt = variant_table(tidy, {"comparisons": [{"by": "variant", "baseline": "aa-1"}]})
    sbs = vt[(vt["design"] == "side-by-side") & (vt["metric"] == "throughput")]
    assert len(sbs) == 2 and set(sbs["n_pairs"]) == {2}, sbs
    assert leftovers(core) == []
