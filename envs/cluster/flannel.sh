# shellcheck shell=bash
# CNI=flannel-vxlan and CNI=flannel-host-gw: flannel's own code on the datapath. Sourced by modes.sh
# (rows flannel-* in modes.tsv).
#
#   brings up  flanneld (build-flannel.sh: the Go module proxy's flannel) per node, in the node's
#              network namespace, --kube-subnet-mgr against the embedded API server (RBAC as
#              kube-flannel's, templates/flannel-rbac.yaml), backend vxlan (flannel.1, VNI 1, UDP 8472)
#              or host-gw (routes via the node IPs): flannel programs flannel.1, the routes, ARP/FDB
#              entries and its iptables rules. flannel's CNI plugin is not served by any reachable
#              registry, so the node's CNI config is generated here from flannel's own subnet.env the
#              way that plugin does it (bridge delegate + host-local IPAM).
#   checks     the kernel's vxlan (flannel-vxlan) and br_netfilter (probe); flanneld wrote subnet.env
#              for the node's podCIDR (start); flanneld still runs (alive)
#   takes down flanneld by its recorded PID (down.sh); flannel.1, its routes, FDB/ARP entries, FLANNEL-*
#              chains live in the node namespaces and go with them; /run/flannel (global path) is
#              removed when it was not there before; check-clean fails on a flannel.1 or flannel FDB
#              entry in the root namespace
# flannel-vxlan with EDGE_TUNNEL=wireguard: its VXLAN packets are addressed to the peer node's IP, which
# is routed through the tunnel (pods leave room for both encapsulations); flannel-host-gw refused.

GLOBAL_PATHS+=(/run/flannel)

flannel_backend() { echo "${CNI#flannel-}"; }
flannel_subnet_env() { echo "$RUN_DIR/nodes/$1/flannel/subnet.env"; }
# info.json flannel_version (null for the other modes)
flannel_version_json() { if [[ $(cni_field file) == flannel.sh ]]; then json_str "$FLANNEL_VERSION"; else echo null; fi; }

flannel_probe() {
    local p=$1
    if [[ $CNI == flannel-vxlan ]]; then
        ip -n "$p" link add pvx type vxlan id 42 dstport 8472 local 127.0.0.1 2>/dev/null || echo "vxlan (CONFIG_VXLAN), needed for CNI=flannel-vxlan"
    fi
    in_ns "$p" test -e /proc/sys/net/bridge/bridge-nf-call-iptables ||
        echo "br_netfilter (flanneld refuses to start without /proc/sys/net/bridge/bridge-nf-call-iptables)"
}

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
flannel_start() {
    local n
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

flannel_alive() { pid_alive "flanneld-$1" >/dev/null; }

# the pods' MTU: what flannel chose (recorded from subnet.env)
flannel_pod_mtu() { cat "$RUN_DIR/pod_mtu"; }

flannel_datapath() {
    case $CNI in
        flannel-vxlan) echo "flanneld $FLANNEL_VERSION vxlan backend (flannel.1, VNI 1, UDP 8472) + bridge CNI from flannel's subnet.env" ;;
        flannel-host-gw) echo "flanneld $FLANNEL_VERSION host-gw backend (routes via node IPs, no encapsulation) + bridge CNI from flannel's subnet.env" ;;
    esac
}

flannel_tunnel_refusal() { echo "host-gw routes pod CIDRs straight to the peer node over one L2 segment, which edge pools do not have"; }

flannel_check_clean() {
    if ip link show flannel.1 >/dev/null 2>&1; then bad "link flannel.1 in the root namespace"; fi
    if bridge fdb show 2>/dev/null | grep -q "dev flannel"; then bad "FDB entries of a flannel device in the root namespace"; fi
}
