#!/usr/bin/env bash
# make cluster-status: nodes, their IPs, CNI and kube-proxy modes, versions.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -f $STATE_DIR/kubeconfig || ! -f $STATE_DIR/info.json ]]; then
    echo "cluster: not running (no $STATE_DIR/kubeconfig); start it with: make cluster-up"
    exit 1
fi
PY=$(command -v python3 || echo "$REPO_ROOT/.venv/bin/python")
"$PY" - "$STATE_DIR/info.json" "$STATE_DIR/kubeconfig" <<'EOF'
import json, sys
i = json.load(open(sys.argv[1]))
print(f"cluster:     podnet embedded, {len(i['nodes'])} node(s), kubeconfig {sys.argv[2]}")
print(f"api server:  {i['api_server']}")
print(f"versions:    kubernetes {i['k8s_version']}, containerd {i['containerd_version']}, "
      f"runc {i['runc_version']}, etcd {i['etcd_version']}, kernel {i['kernel']}")
print(f"variant:     {i.get('variant', i['cni'])}")
print(f"cni:         {i['cni']}: {i['cni_datapath']}; pod MTU {i['pod_mtu']}")
print(f"link rate:   {i['link_rate'] or 'unshaped'} ({i['link_shaping']}; "
      f"netem available: {str(i['netem_available']).lower()})")
t = i.get("edge_tunnel")
if t:
    gws = ", ".join(f"{z}: {n}" for z, n in t["gateways"].items())
    print(f"edge tunnel: {t['kind']} ({t['implementation']} {t['version']}), hub {t['hub_zone']}, "
          f"gateways {gws}, MTU {t['mtu']}")
print(f"kube-proxy:  {i['kube_proxy_mode']}; services {i['service_cidr']}; pods {i['pod_cidr']}")
print(f"pod image:   {i['image']}")
cg = i.get("daemon_cgroup")
print("daemons:     " + (f"cgroup {', '.join(cg['paths'])} ({cg['setting']}; pods keep the default weight)" if cg else "no cgroup of their own"))
EOF
down=()
for f in "$RUN_DIR"/pids/*.pid; do
    [[ -f $f ]] || continue
    n=$(basename "$f" .pid)
    pid_alive "$n" >/dev/null || down+=("$n")
done
((${#down[@]})) && echo "NOT RUNNING: ${down[*]}"
echo
kubectl_admin get nodes --request-timeout=10s \
    -o custom-columns='NAME:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,INTERNAL-IP:.status.addresses[?(@.type=="InternalIP")].address,POD-CIDR:.spec.podCIDR,ZONE:.metadata.labels.topology\.kubernetes\.io/zone,POOL:.metadata.labels.podnet\.io/pool,KUBELET:.status.nodeInfo.kubeletVersion,RUNTIME:.status.nodeInfo.containerRuntimeVersion' ||
    {
        echo "API server not reachable"
        exit 1
    }
