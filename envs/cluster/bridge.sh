# shellcheck shell=bash
# CNI=bridge: the reference datapath, no overlay. Sourced by modes.sh (row bridge in modes.tsv).
#
#   brings up  per node Debian's bridge + host-local CNI plugins (cni0, the node's podCIDR
#              10.244.N.0/24, gateway 10.244.N.1, MTU 1500 or the edge tunnel's), and a static route
#              per peer pod CIDR via the peer's node IP on eth0 (host-gw style, ours: net.sh
#              pod_routes_via_nodes); no daemon of its own
#   checks     nothing beyond the nodes being Ready (kubelet runs the plugins)
#   takes down nothing of its own: cni0, the routes and the plugins' iptables rules live in the node
#              namespaces and go with them; check-clean fails on a cni0 in the root namespace
#              (flannel's CNI config uses the same bridge)

bridge_routes() { pod_routes_via_nodes; }

bridge_cni_conf() {
    local n=$1
    render cni-bridge.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_DIR="$(node_dir "$n")" POD_SUBNET="$(node_pod_cidr "$n")" POD_GATEWAY="$(node_pod_gw "$n")" \
        POD_MTU="$(pod_mtu)" POD_ROUTE=0.0.0.0/0 DEFAULT_GATEWAY=false IP_MASQ=false
}

bridge_datapath() { echo "bridge CNI + routed node-to-node (host-gw style, static routes set by podnet, no encapsulation)"; }

bridge_check_clean() {
    if ip link show cni0 >/dev/null 2>&1; then bad "link cni0 in the root namespace"; fi
}
