# shellcheck shell=bash
# CNI=cilium-vxlan: Cilium's own code on the datapath. Sourced by modes.sh (row cilium-vxlan in modes.tsv).
#
#   brings up  (cilium_start) cilium-operator-generic (its CRDs), then a cilium-agent per node, then the
#              nodes' CNI configs; the same static routes to the peers' podCIDRs as bridge before the
#              agents start (net.sh pod_routes_via_nodes), which the agents then program into cilium_host
#   checks     the agent answers, has cilium_vxlan and a route per other node into cilium_host (start);
#              the agents still run (alive)
#   takes down the agents and the operator by their recorded PIDs (down.sh); their BPF programs, links
#              and maps live in the node namespaces and the agents' private mount namespaces;
#              /run/cilium, /var/lib/cilium (global paths) are removed when they were not there before;
#              check-clean fails on cilium_* or lxc* links, cilium's tc BPF filters, a cilium mount or
#              BPF pin in the root namespace
# Not with EDGE_TUNNEL (refused).
#
#   - cilium-agent v1.15 (build-cilium.sh: github.com/cilium/cilium from the Go module proxy, one patch:
#     a missing /proc/modules reads as "no modules") per node, in the node's network namespace,
#     --routing-mode=tunnel --tunnel-protocol=vxlan (cilium_vxlan, UDP 8472, VNI = the source's
#     security identity), --kube-proxy-replacement=false (kube-proxy keeps the Services),
#     --ipam=kubernetes (each node's podCIDR), --identity-allocation-mode=crd (no kvstore). The agent
#     compiles its BPF datapath with clang (Debian's clang-16) at start and attaches it with tc to
#     cilium_host/cilium_net, cilium_vxlan and each pod's lxc* veth; it enforces NetworkPolicy.
#   - cilium-operator-generic in the control plane's namespace: creates cilium's CRDs, garbage-collects
#     identities and CiliumEndpoints.
#   - cilium-cni per node (containerd runs it from $RUN_DIR/cni-bin through a wrapper cilium-cni-N that
#     sets CILIUM_SOCK to node N's agent socket: the plugin finds its agent only through that variable
#     or the fixed /var/run/cilium/cilium.sock).
#   - Several agents on one kernel: each agent runs in a private mount namespace (unshare -m, as in its
#     container) with its own bpffs mounted on /sys/fs/bpf (its pinned maps: a bpffs mount is its own
#     instance), its own /run/cilium (a bind mount of $RUN_DIR/nodes/N/cilium/run: cilium writes the API,
#     monitor and health sockets, its pid file, the state dir and the CNI delete queue there, some at
#     fixed paths) and its own --lib-dir (a copy of the bpf/ sources). Its cgroup2 mount
#     (/run/cilium/cgroupv2) is made there too. Socket load balancing (cgroup BPF on the shared cgroup
#     root) stays off: no kube-proxy replacement.
#   - The agent sets kernel.unprivileged_bpf_disabled=1 (irreversible until reboot) and
#     kernel.timer_migration=0, both machine-wide; in its mount namespace both files are bind-mounted
#     read-only, so the writes fail (cilium ignores the error) and the machine keeps its settings.
#   - MTU: pods' eth0 keep the device MTU 1500 (cilium's design), their routes carry MTU 1450 (1500 less
#     VXLAN's 50 bytes): the path MTU between pods is 1450 (pod_mtu).

CILIUM_VERSION="${CILIUM_VERSION:-v1.15.19}"
CILIUM_DIR="$CACHE_DIR/cilium/$CILIUM_VERSION"
CILIUM_BIN="$CILIUM_DIR/bin"
CILIUM_MTU=1450        # route MTU: the nodes' 1500 less VXLAN's 50 bytes (pod path MTU)
CILIUM_DEVICE_MTU=1500 # the pods' eth0 and lxc* veths
CILIUM_VXLAN_PORT=8472
CILIUM_AGENT_USER=podnet-cilium-agent
CILIUM_OPERATOR_USER=podnet-cilium-operator

GLOBAL_PATHS+=(/run/cilium /var/lib/cilium)

cilium_run() { echo "$RUN_DIR/nodes/$1/cilium"; }
cilium_sock() { echo "$(cilium_run "$1")/run/cilium.sock"; }
cilium_tools() { echo "$RUN_DIR/cilium-tools"; }

# the build stamp's datapath hash and patch note (provenance)
cilium_stamp() { cat "$CILIUM_BIN/.complete" 2>/dev/null || true; }
cilium_clang() { command -v clang-16 || command -v clang || true; }

# start_cilium_agent N: the agent in node N's network namespace and a private mount namespace with its
# own bpffs, /run/cilium and read-only machine-wide sysctls
start_cilium_agent() {
    local n=$1 rd
    rd=$(cilium_run "$n")
    # shellcheck disable=SC2016 # expanded by the inner shell
    start_daemon "cilium-agent-$n" "$(node_ns "$n")" unshare --mount --propagation private -- bash -c '
        set -e
        rd=$1
        shift
        mount -t bpf podnet-cilium-bpffs /sys/fs/bpf
        mount --bind "$rd/run" /run/cilium
        for s in kernel/unprivileged_bpf_disabled kernel/timer_migration; do
            mount --bind "/proc/sys/$s" "/proc/sys/$s"
            mount -o remount,ro,bind "/proc/sys/$s"
        done
        exec "$@"' cilium-agent-ns "$rd" \
        env PATH="$(cilium_tools):$PATH" K8S_NODE_NAME="$(node_name "$n")" CILIUM_K8S_NAMESPACE=kube-system \
        "$CILIUM_BIN/cilium-agent" \
        --k8s-kubeconfig-path="$PKI_DIR/cilium-agent.kubeconfig" \
        --routing-mode=tunnel --tunnel-protocol=vxlan --tunnel-port="$CILIUM_VXLAN_PORT" \
        --kube-proxy-replacement=false --ipam=kubernetes --k8s-require-ipv4-pod-cidr \
        --identity-allocation-mode=crd --cluster-name=default --cluster-id=0 \
        --enable-ipv4 --enable-ipv6=false --enable-ipv4-masquerade --enable-bpf-masquerade=false \
        --enable-policy=default --enable-l7-proxy=false --enable-hubble=false \
        --enable-health-checking=false --enable-endpoint-health-checking=false \
        --cni-exclusive=false --mtu="$CILIUM_DEVICE_MTU" \
        --lib-dir="$rd/lib" --state-dir=/run/cilium --socket-path=/run/cilium/cilium.sock \
        --bpf-root=/sys/fs/bpf --cgroup-root=/run/cilium/cgroupv2 \
        --preallocate-bpf-maps=false --bpf-ct-global-tcp-max=65536 --bpf-ct-global-any-max=32768 \
        --bpf-nat-global-max=65536 --bpf-neigh-global-max=65536 --bpf-policy-map-max=4096 \
        --agent-health-port=9879
}

# start_cilium_operator: cilium-operator-generic in the control plane's namespace
start_cilium_operator() {
    start_daemon cilium-operator "$CP_NS" env CILIUM_K8S_NAMESPACE=kube-system \
        "$CILIUM_BIN/cilium-operator-generic" \
        --k8s-kubeconfig-path="$PKI_DIR/cilium-operator.kubeconfig" \
        --ipam=kubernetes --identity-allocation-mode=crd --cluster-name=default --cluster-id=0 \
        --enable-ipv4 --enable-ipv6=false --enable-metrics=false \
        --operator-api-serve-addr=127.0.0.1:9234 --leader-election-lease-duration=15s
}

cilium_dbg() { "$CILIUM_BIN/cilium-dbg" -H "unix://$(cilium_sock "$1")" "${@:2}"; }

# the agent of node N answers, says it is healthy, and routes every other node's pods into cilium_host
cilium_ready() {
    local n=$1 m routes
    cilium_dbg "$n" status --brief >/dev/null 2>&1 || return 1
    ip -n "$(node_ns "$n")" link show cilium_vxlan >/dev/null 2>&1 || return 1
    routes=$(ip -n "$(node_ns "$n")" -4 route show dev cilium_host 2>/dev/null)
    for ((m = 1; m <= NODES; m++)); do
        ((m == n)) && continue
        grep -q "^$(node_pod_cidr "$m") " <<<"$routes" || return 1
    done
}

# write_cilium_cni_conf N: node N's conflist names its wrapper cilium-cni-N (CILIUM_SOCK = its agent)
write_cilium_cni_conf() {
    local n=$1 bin
    bin=$CNI_BIN_RUN
    printf '#!/bin/sh\n# podnet: node %s'"'"'s cilium-cni talks to its own agent\nCILIUM_SOCK=%s exec %s "$@"\n' \
        "$n" "$(cilium_sock "$n")" "$CILIUM_BIN/cilium-cni" >"$bin/cilium-cni-$n"
    chmod 755 "$bin/cilium-cni-$n"
    render cni-cilium.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        CNI_TYPE="cilium-cni-$n" CNI_LOG="$LOG_DIR/cilium-cni-$n.log"
}

# cilium_start (cni_start, after the nodes registered with their podCIDRs): operator (CRDs), then an
# agent per node, then the CNI configs (which make the nodes Ready)
cilium_start() {
    local n rd clang bin f
    for f in cilium-agent cilium-cni cilium-operator-generic cilium-dbg; do
        [[ -x $CILIUM_BIN/$f ]] || die "cilium $CILIUM_VERSION is not built (bash envs/cluster/build-cilium.sh)"
    done
    [[ -f $CILIUM_DIR/bpf/bpf_lxc.c ]] || die "no cilium datapath sources in $CILIUM_DIR/bpf (bash envs/cluster/build-cilium.sh)"
    clang=$(cilium_clang)
    [[ -n $clang ]] || die "cilium-agent compiles its datapath with clang: install clang-16"
    mkdir -p "$(cilium_tools)"
    ln -sfn "$clang" "$(cilium_tools)/clang"

    mkcert cilium-agent "$CILIUM_AGENT_USER"
    mkcert cilium-operator "$CILIUM_OPERATOR_USER"
    chmod 600 "$PKI_DIR"/cilium-*.key
    mkkubeconfig "$PKI_DIR/cilium-agent.kubeconfig" "$CILIUM_AGENT_USER" cilium-agent "https://$CP_IP:6443"
    mkkubeconfig "$PKI_DIR/cilium-operator.kubeconfig" "$CILIUM_OPERATOR_USER" cilium-operator "https://$CP_IP:6443"
    render cilium-rbac.yaml "$RUN_DIR/cilium-rbac.yaml" CILIUM_AGENT_USER="$CILIUM_AGENT_USER" CILIUM_OPERATOR_USER="$CILIUM_OPERATOR_USER"
    kubectl_admin apply -f "$RUN_DIR/cilium-rbac.yaml" >/dev/null || die "could not create cilium's RBAC"

    log "cilium $CILIUM_VERSION: starting cilium-operator-generic (creates cilium's CRDs)"
    start_cilium_operator
    await_daemon cilium-operator cilium-operator-generic "create cilium's CRDs" 120 kubectl_admin get crd \
        ciliumnodes.cilium.io ciliumidentities.cilium.io ciliumendpoints.cilium.io ciliumnetworkpolicies.cilium.io \
        ciliumclusterwidenetworkpolicies.cilium.io
    kubectl_admin wait --for=condition=Established crd -l io.cilium/app=operator --timeout=60s >/dev/null 2>&1 || true

    # containerd runs plugins from one directory: the wrappers and the reference plugins
    bin=$CNI_BIN_RUN
    mkdir -p "$bin"
    for f in /usr/lib/cni/*; do ln -sfn "$f" "$bin/$(basename "$f")"; done
    # the host's mount point for each agent's private /run/cilium (empty outside the agents' namespaces)
    mkdir -p /run/cilium
    log "starting cilium-agent on each node (compiles and loads its BPF datapath)"
    for ((n = 1; n <= NODES; n++)); do
        rd=$(cilium_run "$n")
        mkdir -p "$rd/run" "$rd/lib"
        cp -r "$CILIUM_DIR/bpf" "$rd/lib/bpf"
        start_cilium_agent "$n"
    done
    for ((n = 1; n <= NODES; n++)); do
        await_daemon "cilium-agent-$n" "cilium-agent on $(node_name "$n")" \
            "get ready (status, cilium_vxlan, routes to the other nodes)" 240 cilium_ready "$n"
        write_cilium_cni_conf "$n"
    done
    echo "$CILIUM_MTU" >"$RUN_DIR/pod_mtu"
}

# info.json: what cilium runs (one more line after flannel_version; nothing for the other modes)
cilium_info_json() {
    local stamp clang_v
    stamp=$(cilium_stamp)
    clang_v=$("$(cilium_clang)" --version 2>/dev/null | head -1)
    printf '\n  "cilium": {"version": "%s", "module": "github.com/cilium/cilium@%s", "components": "cilium-agent per node (BPF datapath compiled at start), cilium-cni, cilium-operator-generic", "build": "%s", "clang": "%s", "mode": "vxlan", "routing_mode": "tunnel", "tunnel_protocol": "vxlan", "vxlan_device": "cilium_vxlan", "vxlan_port": %s, "mtu": %s, "device_mtu": %s, "ipam": "kubernetes", "identity_allocation": "crd", "kube_proxy_replacement": false, "masquerade": "iptables", "policy_enforcement": "default"},' \
        "$CILIUM_VERSION" "$CILIUM_VERSION" "${stamp//\"/}" "${clang_v//\"/}" "$CILIUM_VXLAN_PORT" "$CILIUM_MTU" "$CILIUM_DEVICE_MTU"
}

# ---- hooks (modes.sh) ----
# cilium-agent compiles its datapath with clang at start, probes with bpftool, programs ipsets
cilium_packages() { printf '%s\n' clang-16=clang-16 llvm-strip-16=llvm-16 bpftool=bpftool ipset=ipset; }
cilium_routes() { pod_routes_via_nodes; }
cilium_alive() { pid_alive "cilium-agent-$1" >/dev/null; }
cilium_fingerprint() { echo " cilium=$CILIUM_VERSION"; }
cilium_bin_dir() { echo "$CNI_BIN_RUN"; }
# its route MTU, the pods' path MTU (recorded by cilium_start)
cilium_pod_mtu() { cat "$RUN_DIR/pod_mtu"; }
cilium_datapath() { echo "cilium $CILIUM_VERSION vxlan: cilium-agent's BPF datapath (tc on lxc* veths, cilium_host/cilium_net, cilium_vxlan: UDP $CILIUM_VXLAN_PORT, tunnel routing, identity in the VNI; kube-proxy kept; NetworkPolicy in BPF) + cilium-cni, IPAM from the podCIDRs, CRD identities, cilium-operator-generic"; }
cilium_tunnel_refusal() { echo "cilium with the edge tunnel is not wired up: the agent's route MTU would have to leave room for the tunnel"; }

cilium_check_clean() {
    local l lxc dir dev mp fstype pins
    for l in cilium_host cilium_net cilium_vxlan; do
        if ip link show "$l" >/dev/null 2>&1; then bad "link $l in the root namespace"; fi
    done
    lxc=$(ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^lxc/ {print $2}' | tr '\n' ' ')
    [[ -n $lxc ]] && bad "cilium lxc* veths in the root namespace: $lxc"
    # cilium's BPF programs (tc filters) on any link of the root namespace
    for l in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}'); do
        for dir in ingress egress; do
            tc filter show dev "$l" "$dir" 2>/dev/null | grep -qE 'bpf.*(cil_|bpf_(lxc|host|overlay|netdev))' && bad "cilium tc BPF filter on $l $dir in the root namespace"
        done
    done
    # each agent mounts its own bpffs (its pinned maps) and cgroup2 in its private mount namespace only
    while read -r dev mp fstype _; do
        [[ $dev == podnet-cilium-bpffs || $mp == *cilium* ]] && bad "mount $mp ($fstype): cilium's, outside its mount namespace"
    done </proc/self/mounts
    if [[ $(stat -f -c %T /sys/fs/bpf 2>/dev/null) == bpf_fs ]]; then
        pins=$(find /sys/fs/bpf -maxdepth 4 -name 'cilium_*' 2>/dev/null | head -5 | tr '\n' ' ')
        [[ -n $pins ]] && bad "cilium BPF pins in the machine's bpffs: $pins"
    fi
    return 0
}
