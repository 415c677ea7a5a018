# shellcheck shell=bash
# CNI=calico-vxlan and CNI=calico-bgp: Calico's own code on the datapath. Sourced by modes.sh (rows
# calico-* in modes.tsv).
#
#   brings up  (calico_start) CRDs, RBAC, one IP pool per node, then per node calico-node -startup,
#              -allocate-tunnel-addrs (vxlan), felix as a daemon (calico-bgp: also confd and bird), and
#              last the calico CNI config; details below
#   checks     the kernel's vxlan (calico-vxlan) and ipset hash:net (probe); felix programmed
#              vxlan.calico and the routes to the other nodes (vxlan), or every BGP session is
#              Established (bgp); felix (and confd, bird) still run (alive)
#   takes down felix, confd and bird by their recorded PIDs (down.sh); everything they program lives
#              in the node namespaces; /var/lib/calico, /run/calico, /var/log/calico (global paths) are
#              removed when they were not there before; check-clean fails on vxlan.calico or cali*
#              links, proto bird routes, a felix/confd/bird process, calico CNI files in /etc/cni or
#              /opt/cni, or a calico mount in the root namespace
# Not with EDGE_TUNNEL (refused). calico-vxlan:
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
#
# calico-bgp (seed 003's "calico underlay"): the same, with CALICO_NETWORKING_BACKEND=bird, pools with
# vxlanMode Never and ipipMode Never (no encapsulation, pod MTU 1500), felix without VXLAN/IPIP, no
# tunnel addresses, and per node:
#   - `calico-node -confd` (calico's confd, its own config dir $RUN_DIR/nodes/N/calico/confd): renders
#     calico's BIRD templates (bird.cfg, bird_aggr.cfg, bird_ipam.cfg; the module's
#     confd/etc/calico/confd, cached by build-calico.sh) from the Kubernetes datastore: router id =
#     node IP, AS 64512, a node-to-node full mesh (one `protocol bgp Mesh_<ip>` per peer), a blackhole
#     route per block of the node, export of the pools' blocks, kernel export of what is learnt.
#   - Debian's `bird` 1.6.8 (not calico's fork): calico's fork adds only `krt_tunnel` (the IPIP tunnel
#     device of a kernel route); this node's copy of the templates drops those statements (with the
#     cross-subnet if/else around them), which is exact without IPIP pools. The conf.d files are
#     calico's with dest = this node's config dir and reload_cmd `birdc -s <socket> configure` instead
#     of runit's `sv hup bird`; check_cmd stays calico's `bird -p -c`.
#   - `bird -d -c <dir>/config/bird.cfg -s $RUN_DIR/nodes/N/calico/bird.ctl -P .../bird.pid` as a
#     daemon in the node's network namespace (as calico's runit service runs it, minus -R, with a socket and pid
#     file per node instead of the global /var/run/calico/bird.ctl). Routes learnt from the peers are
#     `<peer block>/26 via <peer node IP> dev eth0 proto bird` in the node's namespace.

# the pods' MTU: the nodes' 1500 less VXLAN's 50 bytes (felix's VXLANMTU); calico-bgp: no encapsulation
if [[ $CNI == calico-bgp ]]; then CALICO_MTU=1500; else CALICO_MTU=1450; fi
CALICO_AS=64512           # calico's default AS number (no BGPConfiguration is created)
CALICO_BLOCK_SIZE=26      # calico-ipam's default block size
CALICO_NODE_USER=podnet-calico-node
CALICO_CNI_USER=podnet-calico-cni

GLOBAL_PATHS+=(/var/lib/calico /run/calico /var/log/calico)

cni_is_calico_bgp() { [[ $CNI == calico-bgp ]]; }
calico_backend() { if cni_is_calico_bgp; then echo bird; else echo vxlan; fi; }
calico_run() { echo "$RUN_DIR/nodes/$1/calico"; }

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
        CALICO_NETWORKING_BACKEND="$(calico_backend)" \
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
    # calico-bgp: no encapsulation at all (felix would derive the same from the pools; said explicitly)
    if cni_is_calico_bgp; then printf '%s\n' FELIX_VXLANENABLED=false FELIX_IPINIPENABLED=false; fi
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

# ---- calico-bgp: calico's confd and Debian's bird per node ----
calico_confd_dir() { echo "$(calico_run "$1")/confd"; }
calico_bird_sock() { echo "$(calico_run "$1")/bird.ctl"; }
CALICO_BIRD_CONFS=(bird bird_aggr bird_ipam) # IPv4 only: calico's bird6* templates are not used

# write_calico_confd N: node N's confd config dir: calico's conf.d and BIRD templates (build-calico.sh
# caches them from the module's confd/etc/calico/confd) made fit for this node and Debian's bird
write_calico_confd() {
    local n=$1 src="$CALICO_DIR/confd" d sock t
    d=$(calico_confd_dir "$n")
    sock=$(calico_bird_sock "$n")
    rm -rf "$d"
    mkdir -p "$d/conf.d" "$d/templates" "$d/config"
    for t in "${CALICO_BIRD_CONFS[@]}"; do
        [[ -f $src/templates/$t.cfg.template && -f $src/conf.d/$t.toml ]] ||
            die "calico's confd files for $t are not in $src (rm $CALICO_BIN/.complete; bash envs/cluster/build-calico.sh)"
        # Debian's bird has no krt_tunnel (calico's fork: the IPIP device of a kernel route). Drop the
        # cross-subnet IPIP if/else whole and every other krt_tunnel assignment (all set it to the pool's
        # IPIP device, empty here: the pools have ipipMode Never); the `accept;` after each stays.
        sed -e '/if defined(bgp_next_hop) && ( bgp_next_hop ~/,/krt_tunnel = "{{$data.ipip}}";/d' \
            -e '/krt_tunnel/d' "$src/templates/$t.cfg.template" >"$d/templates/$t.cfg.template"
        ! grep -q krt_tunnel "$d/templates/$t.cfg.template" || die "could not strip krt_tunnel from $t.cfg.template"
        # this node's config dir instead of /etc/calico/confd/config, and a reload through this node's
        # bird socket instead of runit's `sv hup bird` (as calico, a failed reload is not an error:
        # bird is started once the three files exist, and reads them then)
        sed -e "s#^dest = \"/etc/calico/confd/config/#dest = \"$d/config/#" \
            -e "s#^reload_cmd = .*#reload_cmd = \"birdc -s $sock configure >/dev/null 2>\&1 || true\"#" \
            "$src/conf.d/$t.toml" >"$d/conf.d/$t.toml"
        grep -qx "dest = \"$d/config/$t.cfg\"" "$d/conf.d/$t.toml" ||
            die "calico's conf.d/$t.toml has an unexpected dest (layout changed?)"
    done
}

start_calico_confd() {
    local n=$1 env
    mapfile -t env < <(calico_env "$n")
    start_daemon "calico-confd-$n" "$(node_ns "$n")" env "${env[@]}" "$CALICO_BIN/calico-node" -confd \
        -confd-confdir="$(calico_confd_dir "$n")"
}

calico_bird_cfg_ready() {
    local t
    for t in "${CALICO_BIRD_CONFS[@]}"; do [[ -s $(calico_confd_dir "$1")/config/$t.cfg ]] || return 1; done
}

# bird as calico's runit service runs it (-d: foreground, log to stderr), with this node's socket and
# pid file; no -R (graceful-restart recovery is for bird restarts inside a running node)
start_calico_bird() {
    local n=$1
    start_daemon "calico-bird-$n" "$(node_ns "$n")" bird -d -c "$(calico_confd_dir "$n")/config/bird.cfg" \
        -s "$(calico_bird_sock "$n")" -P "$(calico_run "$n")/bird.pid"
}

# node N's BGP sessions to all other nodes (the full mesh) are Established
calico_bgp_ready() {
    local n=$1 up
    up=$(birdc -s "$(calico_bird_sock "$n")" show protocols 2>/dev/null | grep -c '^Mesh_.* Established') || return 1
    ((up == NODES - 1))
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
            POOL_CIDR="$(node_pod_cidr "$n")" BLOCK_SIZE="$CALICO_BLOCK_SIZE" VXLAN_MODE="$(calico_vxlan_mode)"
        { echo "---"; cat "$f.$n"; } >>"$f"
        rm -f "$f.$n"
    done
    kubectl_admin apply -f "$f" >/dev/null || die "could not create calico's IP pools"

    # containerd looks for CNI plugins in one directory: calico's two and the reference plugins
    local bin
    bin=$CNI_BIN_RUN
    mkdir -p "$bin"
    for f in /usr/lib/cni/*; do ln -sfn "$f" "$bin/$(basename "$f")"; done
    ln -sfn "$CALICO_BIN/calico" "$bin/calico"
    ln -sfn "$CALICO_BIN/calico-ipam" "$bin/calico-ipam"

    log "calico-node -startup$(cni_is_calico_bgp || echo " and -allocate-tunnel-addrs (run once)") on each node"
    for ((n = 1; n <= NODES; n++)); do
        mkdir -p "$(calico_run "$n")"
        calico_once "$n" -startup ||
            die "calico-node -startup failed on $(node_name "$n") (see $LOG_DIR/calico-node-startup-$n.log)"
        [[ $(cat "$(calico_run "$n")/nodename" 2>/dev/null) == "$(node_name "$n")" ]] ||
            die "calico-node -startup wrote no nodename file for $(node_name "$n") (see $LOG_DIR/calico-node-startup-$n.log)"
    done
    # (calico-bgp: no VXLAN or IPIP pool, so no tunnel address to allocate)
    for ((n = 1; n <= NODES; n++)); do
        cni_is_calico_bgp && break
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
    if cni_is_calico_bgp; then
        calico_start_bgp
        echo "$CALICO_MTU" >"$RUN_DIR/pod_mtu"
        return 0
    fi
    log "starting felix (calico-node -felix, iptables dataplane, VXLAN) on each node"
    for ((n = 1; n <= NODES; n++)); do start_calico_felix "$n"; done
    for ((n = 1; n <= NODES; n++)); do
        await_daemon "calico-felix-$n" "felix on $(node_name "$n")" "program vxlan.calico and the routes to the other nodes" \
            90 calico_vxlan_ready "$n"
        write_calico_cni_conf "$n"
    done
    echo "$CALICO_MTU" >"$RUN_DIR/pod_mtu"
}

# calico-bgp, after startup: felix (no encapsulation), then confd and bird per node, and each node's
# CNI config once its BGP sessions to all other nodes are Established. No block exists before a node's
# first pod (calico-ipam claims one then): the routes follow within seconds (confd renders the block's
# blackhole route, bird exports it, the peers program `proto bird` routes).
calico_start_bgp() {
    local n
    command -v bird >/dev/null && command -v birdc >/dev/null || die "CNI=calico-bgp needs Debian's bird 1.6 (apt-get install bird)"
    log "starting felix (calico-node -felix, iptables dataplane, no encapsulation) on each node"
    for ((n = 1; n <= NODES; n++)); do start_calico_felix "$n"; done
    log "starting calico's confd (calico-node -confd, BIRD templates) and $(bird --version 2>&1 | head -1) on each node"
    for ((n = 1; n <= NODES; n++)); do
        write_calico_confd "$n"
        start_calico_confd "$n"
    done
    for ((n = 1; n <= NODES; n++)); do
        await_daemon "calico-confd-$n" "confd on $(node_name "$n")" "render a bird config" 60 calico_bird_cfg_ready "$n"
        start_calico_bird "$n"
    done
    for ((n = 1; n <= NODES; n++)); do
        wait_for "BGP mesh on $(node_name "$n")" 60 calico_bgp_ready "$n" || {
            pid_alive "calico-bird-$n" >/dev/null || die "bird on $(node_name "$n") exited (see $LOG_DIR/calico-bird-$n.log)"
            die "bird on $(node_name "$n") did not establish BGP with all $((NODES - 1)) other nodes in 60 s: $(birdc -s "$(calico_bird_sock "$n")" show protocols 2>&1 | grep Mesh_ | tr -s ' ' | tr '\n' ';') (see $LOG_DIR/calico-bird-$n.log)"
        }
        pid_alive "calico-felix-$n" >/dev/null || die "felix on $(node_name "$n") exited (see $LOG_DIR/calico-felix-$n.log)"
        write_calico_cni_conf "$n"
    done
    log "BGP full mesh established ($NODES nodes, AS $CALICO_AS)"
}

# felix, and with calico-bgp confd and bird, still run on node N (up.sh: cluster_healthy)
calico_alive() {
    local n=$1 d
    for d in felix $(cni_is_calico_bgp && echo confd bird); do pid_alive "calico-$d-$n" >/dev/null || return 1; done
}

calico_vxlan_mode() { if cni_is_calico_bgp; then echo Never; else echo Always; fi; }

# info.json: what calico runs (one more line after flannel_version; nothing for the other modes)
calico_info_json() {
    if cni_is_calico_bgp; then
        local n socks=""
        for ((n = 1; n <= NODES; n++)); do socks+="${socks:+, }$(json_str "$(calico_bird_sock "$n")")"; done
        printf '\n  "calico": {"version": "%s", "release": "%s", "components": "calico-node (felix iptables dataplane, startup, confd), calico CNI plugin, calico-ipam, Debian bird", "datastore": "kubernetes", "mode": "bgp", "encapsulation": "none", "vxlan_mode": "Never", "ipip_mode": "Never", "bgp": "node-to-node full mesh, AS %s, one bird per node in its network namespace", "bird": "%s (Debian %s, not calico fork: krt_tunnel dropped from calico templates)", "confd_templates": "bird.cfg, bird_aggr.cfg, bird_ipam.cfg of the module", "route_protocol": "bird", "bird_sockets": [%s], "mtu": %s, "ip_pools": "one per node: its podCIDR, blockSize %s, natOutgoing", "iptables_backend": "%s"},' \
            "$CALICO_VERSION" "$(calico_release)" "$CALICO_AS" "$(bird --version 2>&1 | head -1)" \
            "$(dpkg-query -W -f '${Version}' bird 2>/dev/null || echo unknown)" "$socks" "$CALICO_MTU" "$CALICO_BLOCK_SIZE" "$(calico_iptables_backend)"
        return 0
    fi
    printf '\n  "calico": {"version": "%s", "release": "%s", "components": "calico-node (felix iptables dataplane, startup, allocate-tunnel-addrs), calico CNI plugin, calico-ipam", "datastore": "kubernetes", "mode": "vxlan", "vxlan_mode": "Always", "vxlan_device": "vxlan.calico", "vxlan_vni": 4096, "vxlan_port": 4789, "mtu": %s, "ip_pools": "one per node: its podCIDR, blockSize %s, natOutgoing", "iptables_backend": "%s"},' \
        "$CALICO_VERSION" "$(calico_release)" "$CALICO_MTU" "$CALICO_BLOCK_SIZE" "$(calico_iptables_backend)"
}

# ---- hooks (modes.sh) ----
calico_packages() {
    echo ipset=ipset # felix's iptables dataplane programs ipsets
    if cni_is_calico_bgp; then printf '%s\n' bird=bird birdc=bird; fi # Debian's bird 1.6, driven by calico's confd
}

calico_probe() {
    local p=$1
    if [[ $CNI == calico-vxlan ]]; then
        ip -n "$p" link add pvx type vxlan id 4096 dstport 4789 local 127.0.0.1 2>/dev/null || echo "vxlan (CONFIG_VXLAN), needed for CNI=calico-vxlan"
    fi
    in_ns "$p" ipset create podnet-probe hash:net 2>/dev/null || echo "ipset hash:net (CONFIG_IP_SET_HASH_NET), needed by calico's felix"
}

calico_fingerprint() { echo " calico=$CALICO_VERSION"; }
calico_bin_dir() { echo "$CNI_BIN_RUN"; }
# felix's VXLAN MTU, or 1500 without encapsulation (recorded by calico_start)
calico_pod_mtu() { cat "$RUN_DIR/pod_mtu"; }

calico_datapath() {
    case $CNI in
        calico-bgp) echo "calico $(calico_release) bgp (underlay, no encapsulation): calico-node's felix (iptables dataplane) + calico's confd driving Debian $(bird --version 2>&1 | head -1) per node (BGP node-to-node full mesh, AS $CALICO_AS; peers' blocks routed via their node IPs, proto bird) + calico CNI plugin and calico-ipam (a pool per node, /26 blocks, vxlanMode and ipipMode Never), Kubernetes datastore" ;;
        calico-vxlan) echo "calico $(calico_release) vxlan: calico-node's felix (iptables dataplane; vxlan.calico, VNI 4096, UDP 4789, VXLAN always) + calico CNI plugin and calico-ipam (a pool per node, /26 blocks), Kubernetes datastore" ;;
    esac
}

calico_tunnel_refusal() { echo "calico with the edge tunnel is not wired up: felix's VXLAN MTU and the pods' would have to leave room for the tunnel"; }

# check-clean: calico-bgp's bird (config and socket under the cluster's run dir), confd and felix by any path
calico_process_re() { echo '^(/usr/sbin/)?bird6? .*(podnet|/calico/)|calico-node -(confd|felix)'; }

calico_check_clean() {
    local cali birdroutes mp fstype
    if ip link show vxlan.calico >/dev/null 2>&1; then bad "link vxlan.calico in the root namespace"; fi
    cali=$(ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^cali[0-9a-f]+(@|$)/ {print $2}' | tr '\n' ' ')
    [[ -n $cali ]] && bad "calico veths in the root namespace: $cali"
    # routes bird installed (calico-bgp's birds run only in the node namespaces; `persist` keeps their
    # routes after bird exits, so a bird in the wrong namespace would leave them here)
    birdroutes=$(ip -4 route show proto bird 2>/dev/null | tr '\n' ';')
    [[ -n $birdroutes ]] && bad "routes installed by bird (proto bird) in the root namespace: $birdroutes"
    # calico's own installer would write these (the cluster never runs it): a guard
    if compgen -G '/etc/cni/net.d/*calico*' >/dev/null || [[ -e /opt/cni/bin/calico || -e /opt/cni/bin/calico-ipam ]]; then
        bad "calico CNI files in /etc/cni/net.d or /opt/cni/bin: $(find /etc/cni/net.d /opt/cni/bin -maxdepth 1 -name '*calico*' 2>/dev/null | tr '\n' ' ')"
    fi
    # felix mounts bpffs and cgroup2 (CALICO_CGROUP_PATH, /run/calico/bpffs) in its own mount namespace only
    while read -r _ mp fstype _; do
        [[ $mp == *calico* ]] && bad "mount $mp ($fstype): felix's, outside its mount namespace"
    done </proc/self/mounts
    return 0
}
