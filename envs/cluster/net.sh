# shellcheck shell=bash
# Network namespaces and datapaths of the embedded cluster. Sourced after lib.sh.
#
#   root ns:  podnet0 10.210.0.1/24 (the only thing the cluster adds to the root namespace;
#             CLUSTER_ID=k: podnet0-k 10.(210+k).0.1/24, namespaces podnetk-*, see lib.sh)
#     |
#   podnet-fabric ns: bridge br0 ("the switch"); one veth port per namespace below
#     |-- podnet-cp      eth0 10.210.0.2   etcd, kube-apiserver, controller-manager, scheduler
#     |-- podnet-node-1  eth0 10.210.0.11  containerd, kubelet, kube-proxy, pods (10.244.1.0/24)
#     |-- podnet-node-2  eth0 10.210.0.12  ...                                   (10.244.2.0/24)
#
# What a CNI mode adds (routes, shims, daemons) is in its own file (modes.tsv, modes.sh): its `routes`
# hook runs at the end of net_up, its `probe` hook in probe_kernel.

# ---- kernel feature probe -------------------------------------------------------------
# Sets NETEM_AVAILABLE=true|false. Dies with a clear message when something required is absent.
probe_kernel() {
    local p="${NAME_PREFIX}-probe" missing=()
    ip netns del "$p" 2>/dev/null || true
    if ! ip netns add "$p" 2>/dev/null; then
        die "cannot create network namespaces (ip netns add failed): this needs CAP_SYS_ADMIN and CONFIG_NET_NS"
    fi
    ip -n "$p" link set lo up
    ip -n "$p" link add pa type veth peer name pb 2>/dev/null || missing+=("veth (CONFIG_VETH)")
    ip -n "$p" link add pbr type bridge 2>/dev/null || missing+=("bridge (CONFIG_BRIDGE)")
    local m
    while read -r m; do missing+=("$m"); done < <(cni_hook probe "$p")
    if [[ $PROXY == nftables ]]; then
        { in_ns "$p" nft add table ip podnet-probe && in_ns "$p" nft add chain ip podnet-probe c '{ type nat hook prerouting priority -100 ; }' &&
            in_ns "$p" nft add map ip podnet-probe m '{ type ipv4_addr . inet_proto . inet_service : verdict ; }'; } 2>/dev/null ||
            missing+=("nf_tables with nat chains and verdict maps (CONFIG_NF_TABLES), needed for PROXY=nftables")
    fi
    in_ns "$p" iptables -t nat -S >/dev/null 2>&1 || missing+=("iptables nat table (CONFIG_IP_NF_NAT / nf_tables)")
    in_ns "$p" iptables -t filter -A INPUT -m comment --comment probe -m statistic --mode random --probability 0.5 -j ACCEPT 2>/dev/null ||
        missing+=("iptables comment/statistic matches (needed by kube-proxy)")
    grep -qw overlay /proc/filesystems || missing+=("overlayfs (CONFIG_OVERLAY_FS), containerd's snapshotter")
    local c
    for c in cpu cpuacct cpuset memory pids devices freezer; do
        [[ -d /sys/fs/cgroup/$c ]] || grep -qw "$c" /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
            missing+=("cgroup controller $c")
    done
    if [[ -n $LINK_RATE ]]; then
        in_ns "$p" tc qdisc add dev pa root tbf rate 1gbit burst 128k latency 10ms 2>/dev/null ||
            missing+=("tbf qdisc (CONFIG_NET_SCH_TBF), needed for LINK_RATE")
    fi
    NETEM_AVAILABLE=false
    if in_ns "$p" tc qdisc replace dev pb root netem delay 1ms 2>/dev/null; then NETEM_AVAILABLE=true; fi
    ip netns del "$p"
    if ((${#missing[@]})); then
        die "kernel features missing: ${missing[*]}"
    fi
    if [[ -n $LINK_RATE && $NETEM_AVAILABLE == false ]]; then
        log "note: this kernel has no netem qdisc: LINK_RATE=$LINK_RATE shapes rate only (tbf), no delay/loss emulation"
    fi
}

# link_rate_bytes and shape (a node's link to the switch, and the noise floor's veth: one shaper)
source "$(dirname "${BASH_SOURCE[0]}")/shape.sh"

# ---- bring-up -----------------------------------------------------------------------------
net_up() {
    local n m f=$FABRIC_NS
    log "network: namespaces $FABRIC_NS, $CP_NS, $(node_ns 1)..$(node_ns "$NODES"); CNI=$CNI${LINK_RATE:+, links shaped to $LINK_RATE}"
    ip netns add "$f"
    ip -n "$f" link set lo up
    in_ns "$f" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$f" link add br0 type bridge
    # bridged traffic on the fabric must not go through the fabric's iptables (nothing there anyway)
    in_ns "$f" sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 net.bridge.bridge-nf-call-arptables=0 2>/dev/null || true
    ip -n "$f" link set br0 up

    # root namespace port (kubectl/tests reach the API server through it)
    ip link add "$HOST_LINK" type veth peer name pn-host netns "$f"
    sysctl -qw "net.ipv6.conf.$HOST_LINK.disable_ipv6=1"
    ip addr add "$HOST_IP/24" dev "$HOST_LINK"
    ip link set "$HOST_LINK" up
    ip -n "$f" link set pn-host master br0 up

    # control plane namespace
    ip netns add "$CP_NS"
    ip -n "$CP_NS" link set lo up
    in_ns "$CP_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$f" link add pn-cp type veth peer name eth0 netns "$CP_NS"
    ip -n "$f" link set pn-cp master br0 up
    ip -n "$CP_NS" addr add "$CP_IP/24" dev eth0
    ip -n "$CP_NS" link set eth0 up

    for ((n = 1; n <= NODES; n++)); do
        local ns
        ns=$(node_ns "$n")
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        in_ns "$ns" sysctl -qw net.ipv4.ip_forward=1
        ip -n "$f" link add "pn-node$n" type veth peer name eth0 netns "$ns"
        ip -n "$f" link set "pn-node$n" master br0 up
        in_ns "$ns" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
        ip -n "$ns" addr add "$(node_ip "$n")/24" dev eth0
        ip -n "$ns" link set eth0 up
        # node->Service: a locally generated packet needs a route before kube-proxy's DNAT
        # rewrites it (real nodes have a default route; these get only the Service range)
        ip -n "$ns" route add "$SERVICE_CIDR" dev eth0 src "$(node_ip "$n")"
        if [[ -n $LINK_RATE ]]; then
            shape eth0 "$ns" "$LINK_RATE"         # node -> switch
            shape "pn-node$n" "$f" "$LINK_RATE"   # switch -> node
        fi
    done

    # control plane -> pods (replies of the API server to pods that use the kubernetes Service)
    for ((n = 1; n <= NODES; n++)); do
        ip -n "$CP_NS" route add "$(node_pod_cidr "$n")" via "$(node_ip "$n")" dev eth0
    done

    # the mode's own routes (bridge, macvlan, cilium: pod_routes_via_nodes; flanneld and felix program theirs)
    cni_hook routes
}

# pod_routes_via_nodes: on every node a route to each other node's podCIDR via that node's IP on eth0
# (host-gw style, no encapsulation)
pod_routes_via_nodes() {
    local n m
    for ((n = 1; n <= NODES; n++)); do
        for ((m = 1; m <= NODES; m++)); do
            ((m == n)) && continue
            ip -n "$(node_ns "$n")" route add "$(node_pod_cidr "$m")" via "$(node_ip "$m")" dev eth0
        done
    done
}

# ---- teardown -----------------------------------------------------------------------------
net_down() {
    local ns
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${NAME_PREFIX}-(node-[0-9]+|cp|fabric|probe)$" || true); do
        ip netns del "$ns" 2>/dev/null || warn "could not delete netns $ns"
    done
    ip link del "$HOST_LINK" 2>/dev/null || true
}
