# shellcheck shell=bash
# The CNI modes of the embedded cluster and the template renderer. Sourced by up.sh after lib.sh.
#
#   bridge           reference datapath, no overlay: Debian's bridge + host-local CNI plugins per
#                    node, and a static route per peer pod CIDR via the peer's node IP (ours).
#   flannel-vxlan    flanneld (built from the Go module proxy) per node, in the node's network
#   flannel-host-gw  namespace, --kube-subnet-mgr against the embedded API server, backend vxlan
#                    or host-gw: flannel programs flannel.1, the routes, ARP/FDB entries and its
#                    iptables rules. flannel's CNI plugin is not served by any reachable registry,
#                    so the node's CNI config is generated here from flannel's own subnet.env the
#                    way that plugin does it (bridge delegate + host-local IPAM).
#   macvlan          seed 003's "macvlan standalone": Debian's reference macvlan + host-local CNI
#                    plugins, pods on macvlan sub-interfaces (bridge mode) of each node's eth0, so
#                    pods of all nodes share the nodes' L2 segment (pod to pod: no routing, no
#                    encapsulation). Addresses 10.244.0.0/16, node N's pods from 10.244.N.2-254. A
#                    macvlan child cannot reach its parent, so each node gets a host shim (a macvlan
#                    "mvshim" of its own eth0, 10.244.N.1/32, its pods' gateway and the route to
#                    them); other nodes reach a node's pods through that node (routes via its IP).
#                    A pod's reply to a Service goes straight to the client pod over L2, never
#                    through the node that translated it, so kube-proxy masquerades all Service
#                    traffic (masqueradeAll), as macvlan setups with kube-proxy do.
#   calico-vxlan     Calico v3.28 (built from the Go module proxy): calico-node's felix (iptables
#                    dataplane, VXLAN always) per node, the calico CNI plugin and calico-ipam,
#                    Kubernetes datastore; see calico.sh.
#   calico-bgp       seed 003's "calico underlay": the same calico without encapsulation (pools
#                    vxlanMode/ipipMode Never, pod MTU 1500); routes exchanged by a BGP node-to-node
#                    full mesh: per node calico's confd renders calico's BIRD templates (krt_tunnel
#                    dropped) for Debian's bird 1.6.8, one bird per node in its network namespace with
#                    its own config dir, socket and pid file; peers' blocks are `proto bird` routes
#                    via the peer's node IP on eth0; see calico.sh.
#   cilium-vxlan     Cilium v1.15 (built from the Go module proxy): cilium-agent per node (BPF datapath
#                    compiled with clang at start, tunnel routing over cilium_vxlan, UDP 8472, kube-proxy
#                    kept, IPAM from the podCIDRs, CRD identities, NetworkPolicy), cilium-cni,
#                    cilium-operator-generic; each agent in a private mount namespace with its own
#                    bpffs and /run/cilium; see cilium.sh.

# render TEMPLATE OUT VAR=value... : envsubst templates/TEMPLATE into OUT; only the ${VARS} the
# template names are substituted, each must be given (or set in the environment), none may be empty.
render() {
    local name=$1 tpl="$CLUSTER_DIR/templates/$1" out=$2 kv v
    shift 2
    [[ -f $tpl ]] || die "template $tpl missing"
    local vars
    vars=$(grep -o '\${[A-Za-z_][A-Za-z0-9_]*}' "$tpl" | sort -u | tr -d '${}' | tr '\n' ' ')
    (
        for kv in "$@"; do export "${kv?}"; done
        for v in $vars; do
            [[ -n ${!v:-} ]] || die "render $name: \${$v} is not set"
            export "${v?}"
        done
        envsubst "$(printf '${%s} ' $vars)" <"$tpl" >"$out.tmp"
    ) || exit 1
    mv -f "$out.tmp" "$out"
}

source "$CLUSTER_DIR/calico.sh"
source "$CLUSTER_DIR/cilium.sh"

cni_is_flannel() { [[ $CNI == flannel-* ]]; }
cni_is_macvlan() { [[ $CNI == macvlan ]]; }

# the encapsulation of pod-to-pod traffic across nodes (info.json)
cni_encapsulation() { if [[ $CNI == flannel-vxlan || $CNI == calico-vxlan || $CNI == cilium-vxlan ]]; then echo vxlan; else echo none; fi; }

# the directory containerd runs CNI plugins from (calico: its plugins beside the reference ones)
cni_bin_dir() { if cni_is_calico || cni_is_cilium; then calico_cni_bin; else echo /usr/lib/cni; fi; }

# the reference CNI plugins' version (Debian's containernetworking-plugins), for provenance
cni_plugins_version() { dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo unknown; }

# kube-proxy's masqueradeAll: macvlan needs it (see above)
kube_proxy_masquerade_all() { if cni_is_macvlan; then echo true; else echo false; fi; }
flannel_backend() { echo "${CNI#flannel-}"; }

# the datapath in words (info.json, status)
cni_datapath() {
    case $CNI in
        bridge) echo "bridge CNI + routed node-to-node (host-gw style, static routes set by podnet, no encapsulation)" ;;
        flannel-vxlan) echo "flanneld $FLANNEL_VERSION vxlan backend (flannel.1, VNI 1, UDP 8472) + bridge CNI from flannel's subnet.env" ;;
        flannel-host-gw) echo "flanneld $FLANNEL_VERSION host-gw backend (routes via node IPs, no encapsulation) + bridge CNI from flannel's subnet.env" ;;
        macvlan) echo "macvlan standalone: reference macvlan CNI $(cni_plugins_version) (bridge mode on each node's eth0, pods on the nodes' L2, no encapsulation) + host shim mvshim per node; Services through kube-proxy with masqueradeAll" ;;
        calico-bgp) echo "calico $(calico_release) bgp (underlay, no encapsulation): calico-node's felix (iptables dataplane) + calico's confd driving Debian $(bird --version 2>&1 | head -1) per node (BGP node-to-node full mesh, AS $CALICO_AS; peers' blocks routed via their node IPs, proto bird) + calico CNI plugin and calico-ipam (a pool per node, /26 blocks, vxlanMode and ipipMode Never), Kubernetes datastore" ;;
        cilium-vxlan) echo "cilium $CILIUM_VERSION vxlan: cilium-agent's BPF datapath (tc on lxc* veths, cilium_host/cilium_net, cilium_vxlan: UDP $CILIUM_VXLAN_PORT, tunnel routing, identity in the VNI; kube-proxy kept; NetworkPolicy in BPF) + cilium-cni, IPAM from the podCIDRs, CRD identities, cilium-operator-generic" ;;
        calico-vxlan) echo "calico $(calico_release) vxlan: calico-node's felix (iptables dataplane; vxlan.calico, VNI 4096, UDP 4789, VXLAN always) + calico CNI plugin and calico-ipam (a pool per node, /26 blocks), Kubernetes datastore" ;;
    esac
}

# node_cni_conf N: the bridge-mode CNI config (flannel modes write theirs from subnet.env)
write_bridge_cni_conf() {
    local n=$1
    render cni-bridge.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_DIR="$(node_dir "$n")" POD_SUBNET="$(node_pod_cidr "$n")" POD_GATEWAY="$(node_pod_gw "$n")" \
        POD_MTU="$(pod_mtu)" POD_ROUTE=0.0.0.0/0 DEFAULT_GATEWAY=false IP_MASQ=false
}

# write_macvlan_cni_conf N: pods on macvlan children of node N's eth0, addresses from its range
write_macvlan_cni_conf() {
    local n=$1
    render cni-macvlan.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_DIR="$(node_dir "$n")" POD_CIDR_ALL="$POD_CIDR_ALL" POD_MTU="$(pod_mtu)" \
        RANGE_START="10.244.$n.2" RANGE_END="10.244.$n.254" POD_GATEWAY="$(node_pod_gw "$n")"
}

# write_node_cni_conf N: the CNI config of modes that need no daemon first (flannel writes its own
# once flanneld has written subnet.env, cni_start)
write_node_cni_conf() {
    if cni_is_flannel || cni_is_calico || cni_is_cilium; then return 0; fi
    if cni_is_macvlan; then write_macvlan_cni_conf "$1"; else write_bridge_cni_conf "$1"; fi
}

flannel_subnet_env() { echo "$RUN_DIR/nodes/$1/flannel/subnet.env"; }

# start_flannel N: flanneld in node N's network namespace (after the node has its podCIDR)
start_flannel() {
    local n=$1 d
    d=$(node_dir "$n")
    render flannel-net-conf.json "$d/flannel-net-conf.json" POD_CIDR_ALL="$POD_CIDR_ALL" FLANNEL_BACKEND="$(flannel_backend)"
    # --ip-masq: flanneld masquerades pod traffic leaving the cluster network (pod to pod is never
    # NATed), so the CNI config turns the bridge plugin's own ipMasq off, as flannel's plugin does
    start_daemon "flanneld-$n" "$(node_ns "$n")" env NODE_NAME="$(node_name "$n")" "$FLANNEL_BIN/flanneld" \
        --kube-subnet-mgr --kubeconfig-file="$PKI_DIR/flannel.kubeconfig" \
        --iface=eth0 --ip-masq --subnet-file="$(flannel_subnet_env "$n")" \
        --net-config-path="$d/flannel-net-conf.json" --healthz-port=0 --v=1
}

# write_flannel_cni_conf N: the CNI config flannel's CNI plugin would delegate to the bridge
# plugin, from flannel's subnet.env: FLANNEL_SUBNET (the node's pod subnet, first address =
# gateway), FLANNEL_MTU, FLANNEL_NETWORK (route), isDefaultGateway, ipMasq = !FLANNEL_IPMASQ.
write_flannel_cni_conf() {
    local n=$1 env FLANNEL_NETWORK='' FLANNEL_SUBNET='' FLANNEL_MTU='' FLANNEL_IPMASQ=''
    env=$(flannel_subnet_env "$n")
    # shellcheck disable=SC1090
    source "$env"
    [[ -n $FLANNEL_SUBNET && -n $FLANNEL_MTU && -n $FLANNEL_NETWORK ]] || die "$env lacks FLANNEL_SUBNET/MTU/NETWORK"
    local gw=${FLANNEL_SUBNET%/*} len=${FLANNEL_SUBNET#*/} masq=true
    [[ $FLANNEL_IPMASQ == true ]] && masq=false
    # an edge tunnel carries flannel's VXLAN packets: pods leave room for both encapsulations
    if tunnel_on && ((FLANNEL_MTU > $(tunnel_pod_mtu))); then FLANNEL_MTU=$(tunnel_pod_mtu); fi
    [[ "${gw%.*}.0/$len" == "$(node_pod_cidr "$n")" ]] ||
        die "flannel gave $(node_name "$n") subnet $FLANNEL_SUBNET, not its podCIDR $(node_pod_cidr "$n")"
    render cni-bridge.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_DIR="$(node_dir "$n")" POD_SUBNET="${gw%.*}.0/$len" POD_GATEWAY="$gw" \
        POD_MTU="$FLANNEL_MTU" POD_ROUTE="$FLANNEL_NETWORK" DEFAULT_GATEWAY=true IP_MASQ="$masq"
    echo "$FLANNEL_MTU" >"$RUN_DIR/pod_mtu"
}

# after the nodes registered with their podCIDRs: flanneld per node, then their CNI configs
cni_start() {
    local n
    if cni_is_calico; then
        calico_start
        return 0
    fi
    if cni_is_cilium; then
        cilium_start
        return 0
    fi
    cni_is_flannel || return 0
    render flannel-rbac.yaml "$RUN_DIR/flannel-rbac.yaml" FLANNEL_USER=podnet-flannel
    kubectl_admin apply -f "$RUN_DIR/flannel-rbac.yaml" >/dev/null || die "could not create flannel's RBAC"
    log "starting flanneld $FLANNEL_VERSION ($(flannel_backend) backend) on each node"
    for ((n = 1; n <= NODES; n++)); do start_flannel "$n"; done
    for ((n = 1; n <= NODES; n++)); do
        wait_for "flannel subnet.env on $(node_name "$n")" 60 test -s "$(flannel_subnet_env "$n")" ||
            die "flanneld on $(node_name "$n") wrote no subnet.env (see $LOG_DIR/flanneld-$n.log)"
        write_flannel_cni_conf "$n"
    done
}

# pod MTU (flannel: what flannel chose, recorded from subnet.env; calico: felix's VXLAN MTU, or 1500
# without encapsulation; cilium: its route MTU, the pods' path MTU)
pod_mtu() {
    if cni_is_flannel || cni_is_calico || cni_is_cilium; then
        cat "$RUN_DIR/pod_mtu"
    elif tunnel_on; then
        tunnel_pod_mtu
    else
        echo 1500
    fi
}
