"""The cost of scale in the config and the launcher: ``scale`` on a test is data (schema-checked,
one count swept like a sweep, 0 the point without objects); before a run the namespace holds the
point's objects, present and programmed (probes created last), recorded in the sidecar; anything
short of that fails the run with its reason; rounds visit each point once."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest

from podnet.launch.cluster import datapath
from podnet.launch.cluster import objects as obj
from podnet.launch.cluster.k8s import ExecResult
from podnet.launch.rounds import scale as sc
from podnet.launch.rounds import scaleprobe
from podnet.launch.rounds.schedule import schedule
from podnet.launch.spec.config import LaunchConfigError, from_mapping
from podnet.launch.spec.scale import NONE, ScaleSpec
from tests.launch_configs import experiment, pod_pod

LABELS = {"app.kubernetes.io/name": "podnet", "podnet.io/run": "r1"}
REAL_MANY = obj.ScaleApi.many  # (tests replace ScaleApi)


def _tools(scale: dict, **extra) -> dict:
    test = {"name": "crr", "params": {"duration": 2}, "scale": scale, **extra}
    return {"iperf3": {"tests": [test]}}


def _cfg(scale: dict, **kw: Any):
    return from_mapping(experiment([pod_pod()], _tools(scale), **kw))


# -- config -------------------------------------------------------------------------------------------
def test_services_are_swept_with_a_zero_point_and_named_like_a_sweep():
    cfg = _cfg({"services": [0, 200, 1000], "endpoints_per_service": 3})
    tests = [c.test for c in cfg.cases]
    assert [t.name for t in tests] == ["crr-services-0", "crr-services-200", "crr-services-1000"]
    assert [t.scale.services for t in tests] == [0, 200, 1000] and tests[0].scale.empty
    assert {(t.sweep.test, t.sweep.param) for t in tests} == {("crr", "services")}
    assert tests[2].scale == ScaleSpec(services=1000, endpoints_per_service=3, swept="services")
    assert tests[0].scale.probes_services and not tests[0].scale.probes_policies  # 0 is probed too
    assert tests[2].scale.changes == 3 == tests[2].scale.as_meta()["changes"]  # the default
    assert _cfg({"services": [0, 1], "changes": 7}).cases[1].test.scale.changes == 7
    assert not ScaleSpec().probes_services and ScaleSpec(network_policies=2).probes_policies
    assert tests[2].params == {"duration": 2} and tests[2].scale.objects == 2000


def test_policies_are_swept_and_one_count_is_one_test():
    cfg = _cfg({"network_policies": [0, 100], "rules_per_policy": 8, "services": 50})
    a, b = (c.test for c in cfg.cases)
    assert (a.name, b.name) == ("crr-network_policies-0", "crr-network_policies-100")
    assert (b.scale.network_policies, b.scale.rules_per_policy, b.scale.services) == (100, 8, 50)
    assert b.sweep.param == "network_policies" and b.sweep.value == 100
    (case,) = _cfg({"services": 300}).cases
    assert case.test.name == "crr" and case.test.sweep is None and case.test.scale.services == 300


def test_bad_scales_are_config_errors():
    for bad in (
        {"services": -1},
        {"services": [5]},
        {"services": 5, "endpoints_per_service": 0},
        {"network_policies": 1, "rules_per_policy": 100},
        {"services": 5, "colour": "red"},
        {"services": 5, "changes": 0},
        {"services": 5, "changes": 1.5},
        {},
    ):
        with pytest.raises(LaunchConfigError):
            _cfg(bad)
    with pytest.raises(LaunchConfigError, match="one count at a time"):
        _cfg({"services": [0, 1], "network_policies": [0, 1]})
    with pytest.raises(LaunchConfigError, match="cannot have `sweep` or `load`"):
        from_mapping(experiment([pod_pod()], _tools({"services": 2}, load={"streams": 1})))


# -- object bodies ------------------------------------------------------------------------------------
def test_services_have_no_selector_and_their_slices_address_the_idle_pods():
    s = obj.service(obj.service_name(7), LABELS)
    assert s["metadata"]["name"] == "podnet-scale-svc-00007" and "selector" not in s["spec"]
    assert s["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podnet"
    assert (
        s["metadata"]["labels"][obj.SCALE_LABEL] == "filler"
        and s["metadata"]["labels"]["podnet.io/run"] == "r1"
    )
    e = obj.endpoint_slice("podnet-scale-svc-00007", ["10.244.1.5", "10.244.2.6"], LABELS, role="probe")
    lab = e["metadata"]["labels"]
    assert lab["kubernetes.io/service-name"] == "podnet-scale-svc-00007" and lab[obj.SCALE_LABEL] == "probe"
    assert lab["endpointslice.kubernetes.io/managed-by"] == "podnet.io"
    assert [x["addresses"] for x in e["endpoints"]] == [["10.244.1.5"], ["10.244.2.6"]]
    assert (
        e["ports"]
        == [{"name": "p", "port": obj.SCALE_PORT, "protocol": "TCP"}]
        == [{**p, "protocol": "TCP"} for p in s["spec"]["ports"]]
    )


def test_policies_select_the_test_pods_and_only_one_lets_traffic_through():
    allow = obj.allow_policy(LABELS)
    sel = allow["spec"]["podSelector"]
    assert sel["matchLabels"] == {"podnet.io/run": "r1"}
    assert sel["matchExpressions"][0]["values"] == ["client", "server"]  # never the idle pods
    assert allow["spec"]["ingress"] == [{}]
    assert sorted([obj.policy_name(999), obj.ALLOW_POLICY])[-1] == obj.ALLOW_POLICY  # walked last
    f = obj.filler_policy(3, 4, LABELS)
    rules = f["spec"]["ingress"]
    assert len(rules) == 4 and f["spec"]["podSelector"] == sel
    cidrs = [r["from"][0]["ipBlock"]["cidr"] for r in rules]
    assert all(c.startswith("198.18.") or c.startswith("198.19.") for c in cidrs) and len(set(cidrs)) == 4
    deny = obj.deny_policy("d", "podnet-scale-idle-target", LABELS)
    assert deny["spec"]["ingress"] == [] and deny["spec"]["podSelector"]["matchLabels"] == {
        "podnet.io/endpoint": "podnet-scale-idle-target"
    }


def test_idle_pods_serve_nginx_on_the_scale_port_with_least_privilege():
    p = obj.idle_pod("podnet-scale-idle-0", image="img:1", pull_policy="Never", labels=LABELS, lifetime=60)
    (c,) = p["spec"]["containers"]
    assert c["command"][0] == "nginx" and c["ports"][0]["containerPort"] == obj.SCALE_PORT
    assert c["securityContext"]["runAsNonRoot"] and c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    lab = p["metadata"]["labels"]
    assert lab["podnet.io/role"] == "scale-idle" and lab[obj.SCALE_LABEL] == "idle"
    assert {v.get("configMap", {}).get("name") for v in p["spec"]["volumes"]} >= {obj.IDLE_CONFIGMAP}
    assert str(obj.SCALE_PORT) in obj.idle_configmap(LABELS)["data"]["nginx.conf"]


# -- rounds -------------------------------------------------------------------------------------------
def test_rounds_visit_each_point_once_up_then_down():
    cfg = from_mapping(
        experiment(
            [pod_pod()],
            {
                "iperf3": {
                    "tests": [
                        {"name": "plain"},
                        {"name": "crr", "scale": {"services": [0, 200, 1000]}},
                        {"name": "rr", "scale": {"services": [0, 200, 1000]}},
                    ]
                }
            },
        )
    )
    keys = [c.key for c in cfg.cases]
    rounds = sc.by_scale(schedule(keys, {k: [1, 2] for k in keys}), cfg)
    names = [[s.case[2] for s in r] for r in rounds]
    assert names[0] == ["plain", "crr-services-0", "rr-services-0", "crr-services-200", "rr-services-200",
                        "crr-services-1000", "rr-services-1000"]  # fmt: skip
    assert names[1][:2] == ["crr-services-1000", "rr-services-1000"] and names[1][-1] == "rr-services-0"
    assert [s.position for s in rounds[1]] == list(range(1, 8))
    plain = from_mapping(experiment([pod_pod()]))
    r = schedule([c.key for c in plain.cases], {c.key: [1] for c in plain.cases})
    assert sc.by_scale(r, plain) is r


# -- a point set up -----------------------------------------------------------------------------------
class FakeApi:
    """Scale objects in memory (:class:`~podnet.launch.cluster.objects.ScaleApi`'s methods)."""

    workers = 8

    def __init__(self, fail: Any = None, vanish: str | None = None, kube: Any = None):
        self.objs: dict[tuple[str, str], dict] = {}
        self.log: list[tuple[str, str, str]] = []
        self.fail, self.vanish, self.ip, self.kube = fail, vanish, 0, kube

    def create(self, body: dict, exist_ok: bool = False) -> Any:
        k = (body["kind"], body["metadata"]["name"])
        if self.fail and self.fail(body):
            raise RuntimeError(f"422 cannot create {k[1]}")
        if k in self.objs and exist_ok:
            return None
        if k != (self.vanish, k[1]):
            if self.kube is not None and k[0] in ("Pod", "ConfigMap"):  # the fake cluster runs the pods
                self.kube.create(self.ns, body)
            self.objs[k] = body
        self.log.append(("create", *k))
        self.ip += 1
        return NS(spec=NS(cluster_ip=f"10.96.1.{self.ip}"))

    def delete(self, kind: str, name: str) -> None:
        self.objs.pop((kind, name), None)
        self.log.append(("delete", kind, name))

    def names(self, kind: str, selector: str) -> set[str]:
        k, _, v = selector.partition("=")
        return {n for (kd, n), b in self.objs.items() if kd == kind and b["metadata"]["labels"].get(k) == v}

    def many(self, calls: list) -> obj.Batch:
        return REAL_MANY(self, calls)


class FakeProber:
    pod = "client-pod-n1"

    def __init__(self, refuse: str | None = None, fail_at: int | None = None):
        self.calls: list[tuple[str, str]] = []
        self.refuse, self.fail_at = refuse, fail_at

    def timed(self, mode: str, ip: str, change: Any, limit: float) -> float:
        self.calls.append((mode, ip))
        if change is not None:
            change()
        if mode == self.refuse or len(self.calls) == self.fail_at:
            raise scaleprobe.ProbeFailed(f"waited {int(limit)}s for a connect to {ip} to {mode}: it did not")
        return 0.25 if mode == "reach" else 0.5


def _state(cfg, api=None, prober=None, **w: Any) -> sc.ScaleState:
    kube = NS(
        wait_ready=lambda ns, names, sel, t, u: (
            {n: NS(status=NS(pod_ip=f"10.244.9.{i}")) for i, n in enumerate(names)},
            {},
        )
    )
    workload = NS(kube=kube, namespace="ns1", labels=LABELS, selector="podnet.io/run=r1", image="img:1", **w)
    rules = lambda info: {"n1": {"iptables_total": 42}}  # noqa: E731
    return sc.ScaleState(
        cfg, workload, None, api=api or FakeApi(), prober=prober or FakeProber(), rules=rules
    )


def test_a_point_is_created_checked_probed_and_recorded_then_taken_down():
    cfg = _cfg({"services": [0, 200], "changes": 2})
    api, prober = FakeApi(), FakeProber()
    st = _state(cfg, api, prober)
    assert st.ensure(None) is None and not api.log  # a test without scale: nothing to do
    assert st.ensure(cfg.cases[1].test.scale) is None
    rec = st.meta()
    assert rec["present"] == {"services": 200, "endpoint_slices": 200, "network_policies": 0}
    assert rec["applied"]["calls"] == 400 and rec["rules"] == {"n1": {"iptables_total": 42}}
    assert len(rec["idle_pods"]) == 2
    p = rec["probe"]
    # each change a fresh Service: reached once its slice exists, then removed until it fails
    assert (
        p["changes"] == 2 and p["service_effect_s"] == [0.25, 0.25] and p["service_removed_s"] == [0.5, 0.5]
    )
    assert "policy_effect_s" not in p and len(set(p["service_ips"])) == 2
    ips = p["service_ips"]
    assert prober.calls == [("reach", ips[0]), ("fail", ips[0]), ("reach", ips[1]), ("fail", ips[1])]
    probe_ops = [(op, k) for op, k, n in api.log if n.startswith("podnet-scale-probe-")]
    # the probe Services first (no Service created between two timed changes), then per change its
    # endpoints (timed until reached) and its removal (timed until gone)
    change = [("create", "EndpointSlice"), ("delete", "Service")]
    gone = [("delete", "EndpointSlice"), ("delete", "Service")]  # the slices after the last change
    assert probe_ops == [("create", "Service")] * 2 + change * 2 + gone * 2
    fillers = [i for i, (op, k, n) in enumerate(api.log) if n.startswith("podnet-scale-svc-")]
    first_probe = next(i for i, (op, k, n) in enumerate(api.log) if n.startswith("podnet-scale-probe-"))
    assert max(fillers) < first_probe  # the probes come after every filler
    assert not api.names("Service", sc.PROBE) and not api.names("EndpointSlice", sc.PROBE)  # none left
    assert st.ensure(cfg.cases[1].test.scale) is None and len(prober.calls) == 4  # same point: as is
    assert st.ensure(cfg.cases[1].test.scale, round_no=2) is None and len(prober.calls) == 8  # next round
    assert st.ensure(cfg.cases[0].test.scale) is None  # the sweep's 0: its Service changes timed too
    assert not api.names("Service", sc.FILLER) and not api.names("Service", sc.PROBE)
    assert len(prober.calls) == 12 and len(st.meta()["probe"]["service_removed_s"]) == 2


def test_policies_come_with_the_allowing_one_and_deny_probes_created_and_removed():
    cfg = _cfg({"network_policies": [0, 5], "rules_per_policy": 2, "changes": 3})
    api, prober = FakeApi(), FakeProber()
    st = _state(cfg, api, prober)
    assert st.ensure(cfg.cases[1].test.scale) is None
    pols = api.names("NetworkPolicy", sc.FILLER)
    assert len(pols) == 5 and obj.ALLOW_POLICY in pols
    first = next(n for op, k, n in api.log if k == "NetworkPolicy")
    assert first == obj.ALLOW_POLICY
    # the target answers, then each deny stops it and its removal lets it answer again
    assert [m for m, _ in prober.calls] == ["reach"] + ["fail", "reach"] * 3
    p = st.meta()["probe"]
    assert p["policy_effect_s"] == [0.5] * 3 and p["policy_removed_s"] == [0.25] * 3 and p["changes"] == 3
    denies = [n for op, k, n in api.log if op == "create" and n.startswith("podnet-scale-deny-")]
    assert len(set(denies)) == 3 and not api.names("NetworkPolicy", sc.PROBE)
    assert "service_effect_s" not in p
    assert st.ensure(None) is None and not api.names("NetworkPolicy", sc.FILLER)


def test_probe_objects_an_interrupted_set_up_left_are_deleted_first():
    cfg = _cfg({"services": [0, 4], "changes": 1})
    api, prober = FakeApi(), FakeProber()
    api.create(obj.service("podnet-scale-probe-7", LABELS, role="probe"))
    api.create(obj.endpoint_slice("podnet-scale-probe-7", ["10.244.9.0"], LABELS, role="probe"))
    api.create(obj.deny_policy("podnet-scale-deny-8", sc.TARGET, LABELS))
    st = _state(cfg, api, prober)
    assert st.ensure(cfg.cases[1].test.scale) is None
    assert not api.names("Service", sc.PROBE) and not api.names("NetworkPolicy", sc.PROBE)
    gone = [(k, n) for op, k, n in api.log if op == "delete" and n.endswith(("-7", "-7-ep", "-8"))]
    assert len(gone) == 3 and len(prober.calls) == 2  # untimed; then the point's one Service change


def test_release_deletes_every_scale_object_fillers_and_probes_at_the_bulk_rate():
    cfg = _cfg({"services": [0, 6], "changes": 1})
    api = FakeApi()
    st = _state(cfg, api)
    assert st.ensure(cfg.cases[1].test.scale) is None
    api.create(obj.service("podnet-scale-probe-9", LABELS, role="probe"))  # as an interrupted probe left it
    api.create(obj.deny_policy("podnet-scale-deny-3", sc.TARGET, LABELS))
    api.create({"kind": "Service", "metadata": {"name": "not-ours", "labels": {}}})
    out = st.release()
    assert out["deleted"] == 6 + 6 + 2 and out["errors"] == [] and st.point is None
    left = [n for (k, n) in api.objs if k in ("Service", "EndpointSlice", "NetworkPolicy")]
    assert left == ["not-ours"]  # only what the launch made (by its scale label)
    assert st.release()["deleted"] == 0  # nothing left: nothing to do


def test_a_point_not_present_or_not_programmed_fails_with_its_reason_and_is_set_up_again():
    cfg = _cfg({"services": [0, 20]})
    point = cfg.cases[1].test.scale
    st = _state(cfg, FakeApi(fail=lambda b: "-00003" in b["metadata"]["name"]))
    why = st.ensure(point)
    assert why.startswith("scale point not ready: 2 API call(s) failed") and "422" in why
    assert st.meta()["error"] and st.point is None
    st = _state(cfg, FakeApi(vanish="EndpointSlice"))
    assert st.ensure(point) == "scale point not ready: present: 0 endpoint_slices of 20"
    st = _state(cfg, FakeApi(), FakeProber(refuse="reach"))
    assert "to reach: it did not" in st.ensure(point)
    st.prober.refuse = None
    assert st.ensure(point) is None  # the next run sets the point up again
    st = _state(_cfg({"services": [0, 20], "changes": 3}), FakeApi(), FakeProber(fail_at=4))
    why = st.ensure(point)  # the second change's removal never took effect: no point, no partial times
    assert why.startswith("scale point not ready: waited") and "to fail" in why
    assert "probe" not in st.meta() and st.meta()["error"] and st.point is None
    st = _state(_cfg({"network_policies": [0, 3]}), FakeApi(), FakeProber(refuse="fail"))
    assert "does the CNI enforce NetworkPolicy?" in st.ensure(ScaleSpec(network_policies=3))
    shared = _cfg({"services": [0, 1]}, namespace={"create": False, "name": "team"})
    assert "namespace.create" in _state(shared).ensure(ScaleSpec(services=1))


def test_the_probe_pod_is_a_ready_client_pod():
    cfg = _cfg({"services": [0, 1]})
    pods = {
        "c-host": NS(role="client", kind="host"),
        "c-pod": NS(role="client", kind="pod"),
        "s": NS(role="server", kind="pod"),
    }
    eps = {n: NS(failure=None) for n in pods}
    st = _state(cfg, plan=NS(pods=pods), endpoints=eps, pod_name=lambda n: "x-" + n)
    assert st.probe_pod() == "x-c-pod"
    eps["c-pod"].failure = "broken"
    assert st.probe_pod() == "x-c-host"
    assert NONE.empty and sc.key(NONE) == sc.key(ScaleSpec(endpoints_per_service=3))
    assert sc.key(NONE) == (0, 0, 0, 0, False, False) != sc.key(ScaleSpec(swept="services"))


# -- probes and rule counts ---------------------------------------------------------------------------
def test_the_probe_loop_times_from_the_change_and_refuses_a_late_start(monkeypatch):
    out = {"text": "start 100.0\nreach 102.5\n"}
    kube = NS(
        exec=lambda ns, pod, argv, timeout, container=None: ExecResult(rc=0, stdout=out["text"], stderr="")
    )
    p = scaleprobe.Prober(kube, "ns1", "client", obj.SCALE_PORT, wall=lambda: 101.0, sleep=lambda s: None)
    changed = []
    assert p.timed("reach", "10.96.0.9", lambda: changed.append(1), 30) == 1.5 and changed == [1]
    out["text"] = "start 101.5\nreach 102.5\n"
    with pytest.raises(scaleprobe.ProbeFailed, match="started 0.50s after the change"):
        p.timed("reach", "10.96.0.9", lambda: None, 30)
    out["text"] = "start 100.0\ntimeout 130.0\n"
    with pytest.raises(scaleprobe.ProbeFailed, match="to fail: it did not"):
        p.timed("fail", "10.96.0.9", None, 30)
    assert scaleprobe.parse_loop("junk\nstart 1.5\nfail 2.0").outcome == "fail"


def test_rule_counts_per_node_from_iptables_save_and_nft():
    save = "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j X\n-A X -j Y\nCOMMIT\n*filter\n-A INPUT -j Z\nCOMMIT\n"
    assert datapath.iptables_counts(save) == {"nat": 2, "filter": 1}
    nft = (
        '{"nftables": [{"metainfo": {}}, {"table": {"family": "ip", "name": "kube-proxy"}},'
        ' {"map": {"family": "ip", "table": "kube-proxy", "name": "m", "elem": [1, 2, 3]}},'
        ' {"rule": {"family": "ip", "table": "kube-proxy"}}, {"set": {"family": "ip", "table": "kube-proxy"}}]}'
    )
    assert datapath.nft_counts(nft) == {"ip kube-proxy": {"rules": 1, "elements": 3}}
    info = {"nodes": [{"name": "n1", "netns": "podnet-n1"}]}
    seen = []

    def run(argv):
        seen.append(argv)
        return save if "iptables-save" in argv else nft

    rec = datapath.rule_counts(info, run=run)
    assert rec["n1"]["iptables_total"] == 3 and rec["n1"]["nft_elements"] == 3
    assert seen[0][:2] == ["nsenter", "--net=/run/netns/podnet-n1"]
    assert "not the embedded cluster" in datapath.rule_counts(None)["unavailable"]


# -- a launch ----------------------------------------------------------------------------------------
def _fake_launch(tmp_path, monkeypatch, prober: FakeProber, repeats: int = 2):
    from pathlib import Path

    from podnet.launch.rounds.runner import launch
    from podnet.parse.raw import find_raw_files, read_sidecar
    from tests.fakekube import FakeKube, make_node

    out = (Path(__file__).resolve().parents[1] / "fixtures" / "iperf3" / "tcp-forward.json").read_text()

    def respond(pod, argv):
        return ExecResult(rc=0, stdout=out if "iperf3" in argv else "", stderr="")

    k = FakeKube([make_node("n1", {}, "10.1.0.1"), make_node("n2", {}, "10.1.0.2")], respond)
    api = FakeApi(kube=k)
    monkeypatch.setattr(obj, "ScaleApi", lambda kube, ns: setattr(api, "ns", ns) or api)
    monkeypatch.setattr(sc, "Prober", lambda kube, ns, pod, port: prober)
    tools = {"iperf3": {"tests": [{"name": "tcp", "params": {"duration": 1}, "scale": {"services": [0, 3]}}]}}
    cfg = from_mapping(experiment([pod_pod()], tools, raw_dir=tmp_path / "raw", repeats=repeats, warmup=0))
    res = launch(cfg, kube=k)
    side = {f.relative_to(cfg.raw_dir).as_posix(): read_sidecar(f) for f in find_raw_files(cfg.raw_dir)}
    return res, side, api


def test_a_launch_records_each_point_in_its_sidecars(tmp_path, monkeypatch):
    res, side, api = _fake_launch(tmp_path, monkeypatch, FakeProber())
    assert (res.ok, res.failed) == (4, 0)
    at3 = [v for k, v in side.items() if "services-3/" in k]
    assert len(at3) == 2 and all(v["scale"]["present"]["services"] == 3 for v in at3)
    assert all(v["scale"]["wanted"]["services"] == 0 for k, v in side.items() if "services-0/" in k)
    assert all(len(v["scale"]["probe"]["service_effect_s"]) == 3 for v in side.values())  # the default
    # round 1 up (0 then 3), round 2 down (3 then 0): the 3 Services are created once and deleted once
    made = [n for op, kind, n in api.log if kind == "Service" and n.startswith("podnet-scale-svc")]
    assert len(made) == 6 and [op for op, kind, n in api.log if kind == "Service"][-1] == "delete"
    order = sorted(side.values(), key=lambda v: (v["round_seq"], v["position"]))
    assert [v["test"] for v in order] == [
        "tcp-services-0",
        "tcp-services-3",
        "tcp-services-3",
        "tcp-services-0",
    ]


def test_a_point_never_programmed_is_a_failed_run_with_its_reason(tmp_path, monkeypatch):
    res, side, _ = _fake_launch(tmp_path, monkeypatch, FakeProber(refuse="reach"))
    failed = [v for v in side.values() if v["status"] == "failed"]
    assert len(failed) == len(side) >= 4 and res.ok == 0  # 0 of the sweep times its Services too
    assert all(v["error"].startswith("scale point not ready: waited") for v in failed)
    assert all("error" in v["scale"] for v in failed)


def test_a_launch_ending_at_a_point_deletes_its_objects_before_the_namespace(tmp_path, monkeypatch):
    res, side, api = _fake_launch(tmp_path, monkeypatch, FakeProber(), repeats=1)
    assert (res.ok, res.failed) == (2, 0)  # one round, up: it ends holding 3 Services
    assert not api.names("Service", sc.FILLER) and not api.names("EndpointSlice", sc.FILLER)
    last = [(op, kind) for op, kind, n in api.log if n.startswith("podnet-scale-svc")][-6:]
    assert last == [("delete", "EndpointSlice")] * 3 + [("delete", "Service")] * 3
