#!/usr/bin/env bash
# make cluster-status: nodes, their IPs, CNI mode, versions.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ ! -f $STATE_DIR/kubeconfig || ! -f $STATE_DIR/info.json ]]; then
    echo "cluster: not running (no $STATE_DIR/kubeconfig); start it with: make cluster-up"
    exit 1
fi
info=$STATE_DIR/info.json
field() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$info" | head -1; }
echo "cluster:     podnet embedded, kubeconfig $STATE_DIR/kubeconfig"
echo "api server:  $(field api_server)"
echo "kubernetes:  $(field k8s_version) (containerd $(field containerd_version), runc $(field runc_version), etcd $(field etcd_version), kernel $(field kernel))"
echo "cni:         $(field cni) - $(field cni_datapath); pod MTU $(field pod_mtu)"
echo "link rate:   $(field link_rate) (netem available: $(field netem_available))"
echo "kube-proxy:  $(field kube_proxy_mode)"
echo "pod image:   $(cat "$STATE_DIR/image" 2>/dev/null)"
down=()
for f in "$RUN_DIR"/pids/*.pid; do
    [[ -f $f ]] || continue
    n=$(basename "$f" .pid)
    pid_alive "$n" >/dev/null || down+=("$n")
done
((${#down[@]})) && echo "NOT RUNNING: ${down[*]}"
echo
if [[ -x $K8S_BIN/kubectl ]]; then
    kubectl_admin get nodes --request-timeout=10s \
        -o custom-columns='NAME:.metadata.name,STATUS:.status.conditions[?(@.type=="Ready")].type,READY:.status.conditions[?(@.type=="Ready")].status,INTERNAL-IP:.status.addresses[?(@.type=="InternalIP")].address,POD-CIDR:.spec.podCIDR,ZONE:.metadata.labels.topology\.kubernetes\.io/zone,POOL:.metadata.labels.podnet\.io/pool,KUBELET:.status.nodeInfo.kubeletVersion,RUNTIME:.status.nodeInfo.containerRuntimeVersion' ||
        { echo "API server not reachable"; exit 1; }
fi
