# shellcheck shell=bash
# CNI=calico-vxlan: Calico's own code on the datapath. Sourced by cni.sh (after lib.sh and pki.sh).
#
#   - calico-node v3.28 (build-calico.sh: the Go module proxy's release-v3.28 commit) per node, in the
#     node's network namespace, Kubernetes datastore (the embedded API server, calico's CRDs):
#     `calico-node -startup` once (the Calico node: its IPv4 address, ClusterInformation, the
#     NetworkUnavailable condition), `calico-node -allocate-tunnel-addrs -allocate-tunnel-addrs-run-once` (the node's VXLAN
#     tunnel address from calico-ipam), then `calico-node -felix` as a daemon: felix's iptables
#     dataplane (cali-* chains, ipsets), its VXLAN manager (vxlan.calico, VNI 4096, UDP 4789, one
#     route per remote /26 block via the peer's tunnel address, ARP and FDB entries) and its route
#     manager (cali* veth routes, blackholes for its own blocks).
#   - The calico CNI plugin and calico-ipam (one binary, role from argv[0]) create each pod's veth
#     (cali*, proxy ARP, default route via 169.254.1.1) and assign the address from a /26 block of
#     the node's pool; policy type k8s (felix enforces NetworkPolicy).
#   - IP pools: one per node, 10.244.N.0/24 (its podCIDR), blockSize 26, vxlanMode Always,
#     natOutgoing, nodeSelector podnet.io/node-index == "N". calico-ipam thus keeps every node's pods
#     inside its podCIDR as the other modes do: the control plane's static routes to 10.244.N.0/24
#     (net.sh: the API server's replies to pods) and the recorded pod CIDRs stay true. (Calico's
#     default, one pool 10.244.0.0/16 from CALICO_IPV4POOL_CIDR, would give a node any /26 of the /16.)
#   - Per-node paths on one shared filesystem: nodename file, shutdown timestamp, IPAM lock and the
#     felix's cgroup v2 mount point live in $RUN_DIR/nodes/N/calico; felix runs in a private mount
#     namespace (unshare -m, as in its container), so the bpffs and cgroup2 mounts its BPF clean-up
#     code makes vanish with it. The only global path left to calico is /var/lib/calico (felix
#     always writes /var/lib/calico/mtu: the same 1450 on every node); cluster-down removes it.
#   - The nodes have no default route, so each gets a route to 169.254.1.1 on eth0: without one the
#     kernel does not answer the pods' ARP for their gateway (proxy ARP needs a route to the target).
#   - Built without cgo: felix runs with FELIX_DebugSkipCTLBCleanup=true and FELIX_XDPENABLED=false
#     (their libbpf calls are stubs that panic); FELIX_USAGEREPORTINGENABLED=false (no outside traffic).
#   - Not run: calico-kube-controllers (IPAM garbage collection of deleted nodes; the cluster never
#     deletes one), Typha, confd/BIRD (the vxlan backend needs neither).

CALICO_MTU=1450           # the nodes' 1500 less VXLAN's 50 bytes: felix's VXLANMTU and the pods' MTU
CALICO_BLOCK_SIZE=26      # calico-ipam's default block size
CALICO_NODE_USER=podnet-calico-node
CALICO_CNI_USER=podnet-calico-cni

cni_is_calico() { [[ $CNI == calico-* ]]; }
calico_run() { echo "$RUN_DIR/nodes/$1/calico"; }
calico_cni_bin() { echo "$RUN_DIR/cni-bin"; }

# the release calico's charts name for the module version (provenance), from the build stamp
calico_release() {
    local stamp="$CALICO_BIN/.complete"
    [[ -f $stamp ]] && sed -n 's/^[^ ]* (\([^,]*\),.*/\1/p' "$stamp" | head -1
}

# iptables' backend as felix must drive it: the one kube-proxy uses (the `iptables` on PATH)
calico_iptables_backend() { if iptables -V 2>/dev/null | grep -q nf_tables; then echo NFT; else echo Legacy; fi; }

# calico_env N: the environment of every calico-node invocation on node N
calico_env() {
    local n=$1 rd
    rd=$(calico_run "$n")
    printf '%s\n' \
        DATASTORE_TYPE=kubernetes \
        KUBECONFIG="$PKI_DIR/calico-node.kubeconfig" \
        NODENAME="$(node_name "$n")" \
        CALICO_NODENAME_FILE="$rd/nodename" \
        CALICO_SHUTDOWN_TIMESTAMP_FILE="$rd/shutdownTS" \
        CALICO_CGROUP_PATH="$rd/cgroup" \
        CALICO_DISABLE_FILE_LOGGING=true \
        CALICO_NETWORKING_BACKEND=vxlan \
        CLUSTER_TYPE=k8s,bgp \
        IP="$(node_ip "$n")" \
        IP6=none \
        NO_DEFAULT_POOLS=true \
        WAIT_FOR_DATASTORE=true \
        FELIX_DATASTORETYPE=kubernetes \
        FELIX_FELIXHOSTNAME="$(node_name "$n")" \
        FELIX_IPV6SUPPORT=false \
        FELIX_VXLANMTU="$CALICO_MTU" \
        FELIX_DEFAULTENDPOINTTOHOSTACTION=ACCEPT \
        FELIX_IPTABLESBACKEND="$(calico_iptables_backend)" \
        FELIX_LOGFILEPATH=none \
        FELIX_LOGSEVERITYSCREEN=info \
        FELIX_LOGSEVERITYSYS=none \
        FELIX_HEALTHENABLED=false \
        FELIX_USAGEREPORTINGENABLED=false \
        FELIX_XDPENABLED=false \
        FELIX_DebugSkipCTLBCleanup=true
}

# calico_once N ARG...: a one-shot calico-node command in node N's network namespace, logged to
# calico-node<first ARG>-N.log
calico_once() {
    local n=$1 arg=$2 env
    shift
    mapfile -t env < <(calico_env "$n")
    timeout 120 nsenter --net="/run/netns/$(node_ns "$n")" -- env "${env[@]}" "$CALICO_BIN/calico-node" "$@" \
        >>"$LOG_DIR/calico-node$arg-$n.log" 2>&1 </dev/null 9>&-
}

# start_calico_felix N: felix as a daemon in node N's network namespace and a private mount namespace
start_calico_felix() {
    local n=$1 env
    mapfile -t env < <(calico_env "$n")
    start_daemon "calico-felix-$n" "$(node_ns "$n")" unshare --mount --propagation private \
        env "${env[@]}" "$CALICO_BIN/calico-node" -felix
}

# felix has programmed node N's VXLAN device with its tunnel address, and a route to every other node
calico_vxlan_ready() {
    local n=$1 m ns routes
    ns=$(node_ns "$n")
    ip -n "$ns" -4 -o addr show dev vxlan.calico 2>/dev/null | grep -q "inet $(node_pod_cidr "$n" | cut -d. -f1-3)\." || return 1
    routes=$(ip -n "$ns" -4 route show dev vxlan.calico 2>/dev/null)
    for ((m = 1; m <= NODES; m++)); do
        ((m == n)) && continue
        grep -q "^$(node_pod_cidr "$m" | cut -d. -f1-3)\." <<<"$routes" || return 1
    done
}

# write_calico_cni_conf N
write_calico_cni_conf() {
    local n=$1
    render cni-calico.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_NAME="$(node_name "$n")" CALICO_RUN="$(calico_run "$n")" POD_MTU="$CALICO_MTU" \
        CNI_LOG="$LOG_DIR/calico-cni-$n.log" CNI_KUBECONFIG="$PKI_DIR/calico-cni.kubeconfig"
}

# calico_start (cni_start, after the nodes registered): CRDs, RBAC, pools, then per node startup,
# tunnel address, felix, and last the CNI config (which makes the node Ready)
calico_start() {
    local n f crds=()
    [[ -x $CALICO_BIN/calico-node && -x $CALICO_BIN/calico && -x $CALICO_BIN/calico-ipam ]] ||
        die "calico $CALICO_VERSION is not built (bash envs/cluster/build-calico.sh)"
    crds=("$CALICO_DIR"/crds/*.yaml)
    [[ -f ${crds[0]} ]] || die "no calico CRDs in $CALICO_DIR/crds (bash envs/cluster/build-calico.sh)"

    mkcert calico-node "$CALICO_NODE_USER"
    mkcert calico-cni "$CALICO_CNI_USER"
    chmod 600 "$PKI_DIR"/calico-*.key
    mkkubeconfig "$PKI_DIR/calico-node.kubeconfig" "$CALICO_NODE_USER" calico-node "https://$CP_IP:6443"
    mkkubeconfig "$PKI_DIR/calico-cni.kubeconfig" "$CALICO_CNI_USER" calico-cni "https://$CP_IP:6443"

    log "calico $(calico_release): applying ${#crds[@]} CRDs, RBAC and one IP pool per node"
    # server-side: some of calico's CRDs exceed the last-applied annotation's size limit
    kubectl_admin apply --server-side -f "$CALICO_DIR/crds" >/dev/null || die "could not create calico's CRDs"
    kubectl_admin wait --for=condition=Established -f "$CALICO_DIR/crds" --timeout=60s >/dev/null ||
        die "calico's CRDs were not established"
    render calico-rbac.yaml "$RUN_DIR/calico-rbac.yaml" CALICO_NODE_USER="$CALICO_NODE_USER" CALICO_CNI_USER="$CALICO_CNI_USER"
    kubectl_admin apply -f "$RUN_DIR/calico-rbac.yaml" >/dev/null || die "could not create calico's RBAC"
    f="$RUN_DIR/calico-ippools.yaml"
    : >"$f"
    for ((n = 1; n <= NODES; n++)); do
        render calico-ippool.yaml "$f.$n" NODE_NAME="$(node_name "$n")" NODE_INDEX="$n" \
            POOL_CIDR="$(node_pod_cidr "$n")" BLOCK_SIZE="$CALICO_BLOCK_SIZE"
        { echo "---"; cat "$f.$n"; } >>"$f"
        rm -f "$f.$n"
    done
    kubectl_admin apply -f "$f" >/dev/null || die "could not create calico's IP pools"

    # containerd looks for CNI plugins in one directory: calico's two and the reference plugins
    local bin
    bin=$(calico_cni_bin)
    mkdir -p "$bin"
    for f in /usr/lib/cni/*; do ln -sfn "$f" "$bin/$(basename "$f")"; done
    ln -sfn "$CALICO_BIN/calico" "$bin/calico"
    ln -sfn "$CALICO_BIN/calico-ipam" "$bin/calico-ipam"

    log "calico-node -startup and -allocate-tunnel-addrs (run once) on each node"
    for ((n = 1; n <= NODES; n++)); do
        mkdir -p "$(calico_run "$n")"
        calico_once "$n" -startup ||
            die "calico-node -startup failed on $(node_name "$n") (see $LOG_DIR/calico-node-startup-$n.log)"
        [[ $(cat "$(calico_run "$n")/nodename" 2>/dev/null) == "$(node_name "$n")" ]] ||
            die "calico-node -startup wrote no nodename file for $(node_name "$n") (see $LOG_DIR/calico-node-startup-$n.log)"
    done
    for ((n = 1; n <= NODES; n++)); do
        calico_once "$n" -allocate-tunnel-addrs -allocate-tunnel-addrs-run-once ||
            die "calico-node -allocate-tunnel-addrs -allocate-tunnel-addrs-run-once failed on $(node_name "$n") (see $LOG_DIR/calico-node-allocate-tunnel-addrs-$n.log)"
    done
    # A pod's default route is calico's link-local gateway 169.254.1.1, which the node answers by proxy
    # ARP on the pod's cali* veth (the CNI plugin turns proxy_arp on); the kernel proxies only for an
    # address it has a unicast route to through another device. Real nodes have a default route;
    # these have none (no outside traffic), so a route to 169.254.1.1 on eth0 stands in for it.
    for ((n = 1; n <= NODES; n++)); do
        ip -n "$(node_ns "$n")" route add 169.254.1.1/32 dev eth0 scope link
    done
    log "starting felix (calico-node -felix, iptables dataplane, VXLAN) on each node"
    for ((n = 1; n <= NODES; n++)); do start_calico_felix "$n"; done
    for ((n = 1; n <= NODES; n++)); do
        wait_for "felix on $(node_name "$n")" 90 calico_vxlan_ready "$n" || {
            pid_alive "calico-felix-$n" >/dev/null || die "felix on $(node_name "$n") exited (see $LOG_DIR/calico-felix-$n.log)"
            die "felix on $(node_name "$n") did not program vxlan.calico and the routes to the other nodes in 90 s (see $LOG_DIR/calico-felix-$n.log)"
        }
        write_calico_cni_conf "$n"
    done
    echo "$CALICO_MTU" >"$RUN_DIR/pod_mtu"
}

# info.json: what calico runs (one more line after flannel_version; nothing for the other modes)
calico_info_json() {
    cni_is_calico || return 0
    printf '\n  "calico": {"version": "%s", "release": "%s", "components": "calico-node (felix iptables dataplane, startup, allocate-tunnel-addrs), calico CNI plugin, calico-ipam", "datastore": "kubernetes", "mode": "vxlan", "vxlan_mode": "Always", "vxlan_device": "vxlan.calico", "vxlan_vni": 4096, "vxlan_port": 4789, "mtu": %s, "ip_pools": "one per node: its podCIDR, blockSize %s, natOutgoing", "iptables_backend": "%s"},' \
        "$CALICO_VERSION" "$(calico_release)" "$CALICO_MTU" "$CALICO_BLOCK_SIZE" "$(calico_iptables_backend)"
}
