# shellcheck shell=bash
# CNI=macvlan: seed 003's "macvlan standalone". Sourced by modes.sh (row macvlan in modes.tsv).
#
#   brings up  Debian's reference macvlan + host-local CNI plugins: pods on macvlan sub-interfaces
#              (bridge mode) of each node's eth0, so pods of all nodes share the nodes' L2 segment (pod
#              to pod: no routing, no encapsulation). Addresses 10.244.0.0/16, node N's pods from
#              10.244.N.2-254. A macvlan child cannot reach its parent, so each node gets a host shim (a
#              macvlan "mvshim" of its own eth0, 10.244.N.1/32, its pods' gateway and the route to
#              them); other nodes reach a node's pods through that node (routes via its IP, as bridge).
#              A pod's reply to a Service goes straight to the client pod over L2, never through the
#              node that translated it, so kube-proxy masquerades all Service traffic (masqueradeAll),
#              as macvlan setups with kube-proxy do.
#   checks     the kernel's macvlan and the macvlan plugin (probe)
#   takes down nothing of its own: mvshim, the pods' macvlans and the routes live in the node
#              namespaces; check-clean fails on an mvshim in the root namespace
# Not with EDGE_TUNNEL (refused).

macvlan_probe() {
    local p=$1
    ip -n "$p" link add pmv link pa type macvlan mode bridge 2>/dev/null || echo "macvlan (CONFIG_MACVLAN), needed for CNI=macvlan"
    [[ -x /usr/lib/cni/macvlan ]] || echo "the macvlan CNI plugin (/usr/lib/cni/macvlan: apt-get install containernetworking-plugins)"
}

# a node reaches its own pods (macvlan children of its eth0, which the parent cannot talk to) through
# a macvlan of its own, mvshim, that is also its pods' gateway
macvlan_routes() {
    local n ns
    pod_routes_via_nodes
    for ((n = 1; n <= NODES; n++)); do
        ns=$(node_ns "$n")
        ip -n "$ns" link add mvshim link eth0 type macvlan mode bridge
        in_ns "$ns" sysctl -qw net.ipv6.conf.mvshim.disable_ipv6=1
        ip -n "$ns" addr add "$(node_pod_gw "$n")/32" dev mvshim
        ip -n "$ns" link set mvshim up
        ip -n "$ns" route add "$(node_pod_cidr "$n")" dev mvshim src "$(node_pod_gw "$n")"
    done
}

# pods on macvlan children of node N's eth0, addresses from its range
macvlan_cni_conf() {
    local n=$1
    render cni-macvlan.conflist "$(node_dir "$n")/net.d/10-podnet.conflist" \
        NODE_DIR="$(node_dir "$n")" POD_CIDR_ALL="$POD_CIDR_ALL" POD_MTU="$(pod_mtu)" \
        RANGE_START="10.244.$n.2" RANGE_END="10.244.$n.254" POD_GATEWAY="$(node_pod_gw "$n")"
}

macvlan_masquerade_all() { echo true; }

macvlan_datapath() { echo "macvlan standalone: reference macvlan CNI $(cni_plugins_version) (bridge mode on each node's eth0, pods on the nodes' L2, no encapsulation) + host shim mvshim per node; Services through kube-proxy with masqueradeAll"; }

macvlan_tunnel_refusal() { echo "macvlan pods of all nodes share one L2 segment, which edge pools do not"; }

macvlan_check_clean() {
    if ip link show mvshim >/dev/null 2>&1; then bad "link mvshim in the root namespace"; fi
}
