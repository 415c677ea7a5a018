# shellcheck shell=bash
# EDGE_TUNNEL=wireguard: seed 000's edge pools joined to the cloud through an encrypted tunnel, the
# way OpenYurt's Raven does it (Raven itself is not served by any reachable registry).
# Sourced after lib.sh and net.sh.
#
#   - The zones of ZONES are the pools: the zone of node 1 is the cloud (the hub), every other
#     zone is an edge. The first node of each zone is its gateway.
#   - Each gateway runs wireguard-go (userspace WireGuard over TUN: this kernel has no WireGuard)
#     with a device pnwg<N> (one name per node: wireguard-go's control socket
#     /run/wireguard/<dev>.sock is a global path), MTU TUNNEL_MTU, listening on UDP WG_PORT of a
#     second address 10.210.1.N on its eth0 (the gateway's "public" address: the tunnel's own
#     packets never match the routes that lead into the tunnel).
#   - Hub and spokes: the cloud gateway has every edge gateway as a peer (AllowedIPs: that edge's
#     node IPs and pod CIDRs); an edge gateway has the cloud gateway as its only peer (AllowedIPs:
#     everything of the other zones), so edge to edge goes edge -> cloud -> edge, as seed 000's
#     "edge-cloud-edge" path does.
#   - Routes: on a gateway, the other zones' node IPs (/32) and, for a mode with edge_tunnel `pods` in
#     modes.tsv (bridge), pod CIDRs go into its pnwg device; on any other node they go via its zone's gateway with the tunnel's MTU.
#     Same-zone traffic is untouched. flannel-vxlan keeps its own pod routes: its VXLAN packets
#     are addressed to the peer node's IP, which is routed through the tunnel.
#   - Pod MTU: the tunnel's MTU less the CNI's own encapsulation (modes.tsv), cluster-wide (cni.sh).
# Not with a mode whose edge_tunnel is - in modes.tsv (flannel-host-gw, macvlan, calico, cilium): the
# reason is the mode file's tunnel_refusal hook.

TUNNEL_MTU=1420   # wireguard-go's default: 1500 less IPv4 (20) + UDP (8) + WireGuard (32) + 20 spare
WG_PORT=51820
TUNNEL_NET="${FABRIC_NET%.0}.1"   # 10.210.1 (CLUSTER_ID k: 10.(210+k).1)

tunnel_on() { [[ $EDGE_TUNNEL == wireguard ]]; }
# pnwg<N> (CLUSTER_ID k: pn<k>wg<N>): wireguard-go's control socket /run/wireguard/<dev>.sock is global
tunnel_dev() { if ((CLUSTER_ID == 0)); then echo "pnwg$1"; else echo "pn${CLUSTER_ID}wg$1"; fi; }
tunnel_endpoint() { echo "$TUNNEL_NET.$1"; }
tunnel_hub_zone() { node_zone 1; }

# gateway_of ZONE: the first node of ZONE
gateway_of() {
    local n
    for ((n = 1; n <= NODES; n++)); do
        [[ $(node_zone "$n") == "$1" ]] && { echo "$n"; return 0; }
    done
    return 1
}

# the zones in node order, each once
tunnel_zones() {
    local n z seen=" "
    for ((n = 1; n <= NODES; n++)); do
        z=$(node_zone "$n")
        [[ $seen == *" $z "* ]] && continue
        seen+="$z "
        echo "$z"
    done
}

# zone_prefixes ZONE: what belongs to ZONE (node IPs /32, and pod CIDRs), comma separated
zone_prefixes() {
    local n out=()
    for ((n = 1; n <= NODES; n++)); do
        [[ $(node_zone "$n") == "$1" ]] || continue
        out+=("$(node_ip "$n")/32" "$(node_pod_cidr "$n")")
    done
    local IFS=,
    echo "${out[*]}"
}

# the checks up.sh makes before anything starts
tunnel_validate() {
    [[ -z $EDGE_TUNNEL || $EDGE_TUNNEL == wireguard ]] || die "EDGE_TUNNEL must be empty or 'wireguard' (got '$EDGE_TUNNEL')"
    tunnel_on || return 0
    if [[ $(cni_field edge_tunnel) == - ]]; then
        local with m
        with=$(for m in $(cni_modes); do [[ $(mode_field "$m" edge_tunnel) == - ]] || echo "$m"; done | sed ':a;N;$!ba;s/\n/ or /g')
        die "EDGE_TUNNEL=wireguard needs CNI=$with (got '$CNI': $(cni_hook tunnel_refusal))"
    fi
    (($(tunnel_zones | wc -l) >= 2)) ||
        die "EDGE_TUNNEL=wireguard needs nodes in at least two zones (NODES=$NODES ZONES=$ZONES puts them all in $(node_zone 1)); e.g. NODES=3 with the default ZONES"
    [[ -c /dev/net/tun ]] || die "EDGE_TUNNEL=wireguard needs /dev/net/tun (CONFIG_TUN) for wireguard-go"
}

# the version of wireguard-go (provenance)
wireguard_version() { dpkg-query -W -f '${Version}' wireguard-go 2>/dev/null || echo unknown; }

# tunnel_route_mtu: the MTU routes into the tunnel carry
tunnel_pod_mtu() {
    local overhead=0
    [[ $(cni_field encapsulation) == vxlan ]] && overhead=50
    echo $((TUNNEL_MTU - overhead))
}

tunnel_up() {
    tunnel_on || return 0
    local hub z g n m ns dev dir="$RUN_DIR/tunnel"
    hub=$(tunnel_hub_zone)
    mkdir -p "$dir"
    chmod 700 "$dir"
    log "edge tunnel: wireguard-go $(wireguard_version) between zone gateways, hub $hub (node $(gateway_of "$hub")), MTU $TUNNEL_MTU"
    for z in $(tunnel_zones); do
        g=$(gateway_of "$z")
        ns=$(node_ns "$g")
        dev=$(tunnel_dev "$g")
        ip -n "$ns" addr add "$(tunnel_endpoint "$g")/24" dev eth0
        wg genkey >"$dir/$g.key"
        wg pubkey <"$dir/$g.key" >"$dir/$g.pub"
        # -f: stay in the foreground, so the pid file is wireguard-go's own
        start_daemon "wireguard-$g" "$ns" wireguard-go -f "$dev"
        wait_for "wireguard-go on $(node_name "$g")" 20 test -S "/run/wireguard/$dev.sock" ||
            die "wireguard-go did not create $dev on $(node_name "$g") (see $LOG_DIR/wireguard-$g.log)"
        in_ns "$ns" wg set "$dev" listen-port "$WG_PORT" private-key "$dir/$g.key"
        ip -n "$ns" link set "$dev" mtu "$TUNNEL_MTU" up
        in_ns "$ns" sysctl -qw "net.ipv4.conf.$dev.rp_filter=0"
    done
    # peers: the hub has every edge; an edge has the hub only, for everything not its own
    local hg eg allowed y
    hg=$(gateway_of "$hub")
    for z in $(tunnel_zones); do
        [[ $z == "$hub" ]] && continue
        eg=$(gateway_of "$z")
        in_ns "$(node_ns "$hg")" wg set "$(tunnel_dev "$hg")" peer "$(cat "$dir/$eg.pub")" \
            endpoint "$(tunnel_endpoint "$eg"):$WG_PORT" allowed-ips "$(zone_prefixes "$z")"
        allowed=""
        for y in $(tunnel_zones); do
            [[ $y == "$z" ]] && continue
            allowed+="${allowed:+,}$(zone_prefixes "$y")"
        done
        in_ns "$(node_ns "$eg")" wg set "$(tunnel_dev "$eg")" peer "$(cat "$dir/$hg.pub")" \
            endpoint "$(tunnel_endpoint "$hg"):$WG_PORT" allowed-ips "$allowed"
    done
    # routes: other zones' nodes (and, for bridge, their pods) into the tunnel
    for ((n = 1; n <= NODES; n++)); do
        ns=$(node_ns "$n")
        z=$(node_zone "$n")
        g=$(gateway_of "$z")
        for ((m = 1; m <= NODES; m++)); do
            [[ $(node_zone "$m") == "$z" ]] && continue
            local dst=("$(node_ip "$m")/32")
            [[ $(cni_field edge_tunnel) == pods ]] && dst+=("$(node_pod_cidr "$m")")
            local d
            for d in "${dst[@]}"; do
                if ((n == g)); then
                    ip -n "$ns" route replace "$d" dev "$(tunnel_dev "$g")" src "$(node_ip "$n")"
                else
                    ip -n "$ns" route replace "$d" via "$(node_ip "$g")" dev eth0 mtu "$TUNNEL_MTU"
                fi
            done
        done
    done
}

# the tunnel in info.json (null without one)
tunnel_info_json() {
    if ! tunnel_on; then
        echo null
        return 0
    fi
    local z gws="" first=1
    for z in $(tunnel_zones); do
        ((first)) || gws+=", "
        first=0
        gws+="\"$z\": \"$(node_name "$(gateway_of "$z")")\""
    done
    printf '{"kind": "wireguard", "implementation": "wireguard-go (userspace, TUN)", "version": "%s", "hub_zone": "%s", "gateways": {%s}, "mtu": %s, "port": %s, "topology": "hub and spokes: edge zones reach each other through the hub"}' \
        "$(wireguard_version)" "$(tunnel_hub_zone)" "$gws" "$TUNNEL_MTU" "$WG_PORT"
}
