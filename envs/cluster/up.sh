#!/usr/bin/env bash
# make cluster-up: bring up the embedded multi-node Kubernetes cluster (idempotent).
# Settings (environment): NODES, CNI, PROXY, LINK_RATE, ZONES, POOLS, K8S_VERSION; see lib.sh / README.md.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$CLUSTER_DIR/net.sh"
source "$CLUSTER_DIR/pki.sh"
source "$CLUSTER_DIR/cni.sh"
source "$CLUSTER_DIR/tunnel.sh"
source "$CLUSTER_DIR/rootns.sh"

need_root cluster-up
cluster_lock

# ---- settings ------------------------------------------------------------------------------
[[ $NODES =~ ^[0-9]+$ ]] && ((NODES >= 1 && NODES <= 20)) || die "NODES must be 1..20 (got '$NODES')"
[[ -n $(cni_field file) ]] || die "CNI must be one of the modes of envs/cluster/modes.tsv: $(cni_modes | paste -sd' ') (got '$CNI')"
[[ $DAEMON_CPU_WEIGHT =~ ^[0-9]+$ ]] && ((DAEMON_CPU_WEIGHT <= 10000)) ||
    die "DAEMON_CPU_WEIGHT must be 0 (no daemon cgroup) or a cgroup cpu.weight 1..10000 (got '$DAEMON_CPU_WEIGHT')"
[[ $PROXY == iptables || $PROXY == nftables ]] || die "PROXY must be 'iptables' or 'nftables' (got '$PROXY')"
if [[ -n $LINK_RATE ]]; then
    link_rate_bytes "$LINK_RATE" >/dev/null || die "LINK_RATE=$LINK_RATE not understood (use e.g. 1gbit, 500mbit)"
fi
tunnel_validate
label_ok='^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'
for ((n = 1; n <= NODES; n++)); do
    [[ $(node_zone "$n") =~ $label_ok ]] || die "ZONES: '$(node_zone "$n")' is not a valid label value"
    [[ $(node_pool "$n") =~ $label_ok ]] || die "POOLS: '$(node_pool "$n")' is not a valid label value"
done

# ---- idempotency ---------------------------------------------------------------------------
fingerprint() {
    echo "id=$CLUSTER_ID k8s=$K8S_VERSION nodes=$NODES cni=$CNI proxy=$PROXY flannel=$FLANNEL_VERSION rate=$LINK_RATE tunnel=$EDGE_TUNNEL zones=$ZONES pools=$POOLS tools=$TOOLS_REF pause=$PAUSE_REF daemon_weight=$DAEMON_CPU_WEIGHT$(cni_hook fingerprint)"
}

cluster_healthy() {
    local name n
    [[ -f $RUN_DIR/config && -f $STATE_DIR/kubeconfig ]] || return 1
    [[ $(cat "$RUN_DIR/config") == "$(fingerprint)" ]] || return 1
    for name in etcd kube-apiserver kube-controller-manager kube-scheduler; do pid_alive "$name" >/dev/null || return 1; done
    for ((n = 1; n <= NODES; n++)); do
        for name in containerd kubelet kube-proxy; do pid_alive "$name-$n" >/dev/null || return 1; done
        cni_hook alive "$n" || return 1
        if tunnel_on && [[ $(gateway_of "$(node_zone "$n")") == "$n" ]]; then pid_alive "wireguard-$n" >/dev/null || return 1; fi
    done
    local ready
    ready=$(kubectl_admin get nodes --request-timeout=5s -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null) || return 1
    [[ $(grep -c '=True$' <<<"$ready") -eq $NODES ]]
}

# ---- baseline (what to restore on cluster-down) --------------------------------------------
# sysctls, global paths, and (rootns.sh) the root namespace's chains, ipsets and nft tables and the
# processes that exist: cluster-down removes only podnet-named objects not listed, stops no process
# listed. Recorded at the first cluster-up while no podnet cluster is up; a cluster beside another
# copies the other's. A baseline of an earlier boot (a cluster killed by a reboot) keeps its sysctls
# and paths; its objects and processes are recorded anew (the kernel's state of that boot is gone).
record_baseline() {
    local b="$LIB_DIR/baseline" other boot
    boot=$(cat /proc/sys/kernel/random/boot_id)
    if [[ -f $b/complete ]]; then # keep the oldest: a killed cluster may have changed things since
        if [[ $(cat "$b/boot_id" 2>/dev/null) != "$boot" ]]; then
            rootns_record "$b"
            echo "$boot" >"$b/boot_id"
        fi
        return 0
    fi
    # another cluster is up beside this one: the machine's state before it is the baseline
    for other in /var/lib/podnet-cluster/baseline /var/lib/podnet-cluster-[0-9]/baseline; do
        [[ $other != "$b" && -f $other/complete ]] || continue
        mkdir -p "$b"
        cp -a "$other/." "$b/"
        return 0
    done
    mkdir -p "$b"
    sysctl -a 2>/dev/null | sort >"$b/sysctl"
    local d
    : >"$b/paths"
    for d in "${GLOBAL_PATHS[@]}"; do
        [[ -e $d ]] && echo "$d" >>"$b/paths"
    done
    ls -1 /run/containerd/s 2>/dev/null >"$b/shim-sockets" || true
    rootns_record "$b"
    echo "$boot" >"$b/boot_id"
    touch "$b/complete"
}

# ---- cgroups -------------------------------------------------------------------------------
# Each kubelet gets its own cgroupRoot /$CGROUP_NAME/node-N in every cgroup v1 hierarchy.
make_cgroups() {
    local h n
    for h in /sys/fs/cgroup/*/; do
        h=${h%/}
        [[ -f $h/cgroup.procs ]] || continue
        [[ $h == */unified ]] && continue
        mkdir -p "$h/$CGROUP_NAME"
        if [[ -f $h/cpuset.cpus ]]; then
            cat "$h/cpuset.cpus" >"$h/$CGROUP_NAME/cpuset.cpus"
            cat "$h/cpuset.mems" >"$h/$CGROUP_NAME/cpuset.mems"
        fi
        for ((n = 1; n <= NODES; n++)); do
            mkdir -p "$h/$CGROUP_NAME/node-$n"
            if [[ -f $h/cpuset.cpus ]]; then
                cat "$h/$CGROUP_NAME/cpuset.cpus" >"$h/$CGROUP_NAME/node-$n/cpuset.cpus"
                cat "$h/$CGROUP_NAME/cpuset.mems" >"$h/$CGROUP_NAME/node-$n/cpuset.mems"
            fi
        done
    done
}

# ---- control plane -------------------------------------------------------------------------
start_control_plane() {
    mkdir -p "$DATA_DIR/etcd"
    chmod 700 "$DATA_DIR/etcd"
    log "starting etcd"
    start_daemon etcd "$CP_NS" etcd --name podnet --data-dir "$DATA_DIR/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster podnet=http://127.0.0.1:2380 --initial-cluster-state new \
        --listen-metrics-urls http://127.0.0.1:2381 --snapshot-count 10000 --logger zap --log-outputs stderr
    wait_for "etcd" 30 in_ns "$CP_NS" curl -fsS http://127.0.0.1:2379/health || die "etcd did not become healthy (see $LOG_DIR/etcd.log)"

    log "starting kube-apiserver"
    local p=$PKI_DIR
    start_daemon kube-apiserver "$CP_NS" "$K8S_BIN/kube-apiserver" \
        --advertise-address="$CP_IP" --bind-address=0.0.0.0 --secure-port=6443 \
        --etcd-servers=http://127.0.0.1:2379 \
        --service-cluster-ip-range="$SERVICE_CIDR" --service-node-port-range=30000-32767 \
        --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true \
        --client-ca-file="$p/ca.crt" --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
        --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
        --kubelet-certificate-authority="$p/ca.crt" --kubelet-preferred-address-types=InternalIP \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
        --profiling=false --event-ttl=1h --v=1
    wait_for "kube-apiserver" 120 kubectl_admin get --raw /readyz --request-timeout=3s ||
        die "kube-apiserver did not become ready (see $LOG_DIR/kube-apiserver.log)"
    log "kube-apiserver ready at https://$CP_IP:6443"

    log "starting kube-controller-manager, kube-scheduler"
    start_daemon kube-controller-manager "$CP_NS" "$K8S_BIN/kube-controller-manager" \
        --kubeconfig="$p/controller-manager.kubeconfig" \
        --authentication-kubeconfig="$p/controller-manager.kubeconfig" --authorization-kubeconfig="$p/controller-manager.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
        --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
        --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
        --allocate-node-cidrs=false --cluster-name=podnet --profiling=false --v=1
    start_daemon kube-scheduler "$CP_NS" "$K8S_BIN/kube-scheduler" \
        --kubeconfig="$p/scheduler.kubeconfig" \
        --authentication-kubeconfig="$p/scheduler.kubeconfig" --authorization-kubeconfig="$p/scheduler.kubeconfig" \
        --bind-address=127.0.0.1 --leader-elect=false --profiling=false --v=1
}

# ---- nodes ---------------------------------------------------------------------------------
write_node_configs() {
    local n=$1 d ip name
    d=$(node_dir "$n")
    ip=$(node_ip "$n")
    name=$(node_name "$n")
    local rd="$RUN_DIR/nodes/$n"
    mkdir -p "$d"/{containerd,kubelet,pod-logs,volume-plugins,cni-ipam,opt,net.d} "$rd"

    local common=(NODE_NAME="$name" NODE_INDEX="$n" NODE_IP="$ip" NODE_DIR="$d" NODE_RUN="$rd" PKI_DIR="$PKI_DIR")
    render containerd.toml "$d/containerd.toml" "${common[@]}" PAUSE_REF="$PAUSE_REF" CNI_BIN_DIR="$(cni_bin_dir)"
    render kubelet.yaml "$d/kubelet.yaml" "${common[@]}" CGROUP_NAME="$CGROUP_NAME"
    render kube-proxy.yaml "$d/kube-proxy.yaml" "${common[@]}" PROXY="$PROXY" POD_CIDR_ALL="$POD_CIDR_ALL" \
        MASQUERADE_ALL="$(kube_proxy_masquerade_all)"
    write_node_cni_conf "$n"
}

start_containerd() {
    local n=$1
    start_daemon "containerd-$n" "$(node_ns "$n")" containerd --config "$(node_dir "$n")/containerd.toml"
}

containerd_ready() { ctr --address "$RUN_DIR/nodes/$1/containerd.sock" version; }

import_images() {
    local n=$1 sock="$RUN_DIR/nodes/$1/containerd.sock"
    ctr --address "$sock" -n k8s.io images import --base-name localhost/podnet-pause "$PAUSE_TAR" >/dev/null &&
        ctr --address "$sock" -n k8s.io images import --base-name localhost/podnet-tools "$TOOLS_TAR" >/dev/null
}

start_node_agents() {
    local n=$1 ns name
    ns=$(node_ns "$n")
    name=$(node_name "$n")
    start_daemon "kubelet-$n" "$ns" "$K8S_BIN/kubelet" \
        --config="$(node_dir "$n")/kubelet.yaml" --kubeconfig="$PKI_DIR/kubelet-$n.kubeconfig" \
        --root-dir="$(node_dir "$n")/kubelet" --hostname-override="$name" --node-ip="$(node_ip "$n")" \
        --node-labels="topology.kubernetes.io/zone=$(node_zone "$n"),podnet.io/pool=$(node_pool "$n"),podnet.io/node-index=$n,podnet.io/cni=$CNI,podnet.io/proxy=$PROXY" \
        --v=1
    start_daemon "kube-proxy-$n" "$ns" "$K8S_BIN/kube-proxy" --config="$(node_dir "$n")/kube-proxy.yaml" --v=1
}

write_info() {
    local n first=1 nodes=""
    for ((n = 1; n <= NODES; n++)); do
        ((first)) || nodes+=","
        first=0
        nodes+=$(printf '\n    {"name": "%s", "ip": "%s", "pod_cidr": "%s", "zone": "%s", "pool": "%s", "netns": "%s"}' \
            "$(node_name "$n")" "$(node_ip "$n")" "$(node_pod_cidr "$n")" "$(node_zone "$n")" "$(node_pool "$n")" "$(node_ns "$n")")
    done
    local rate_json=null
    [[ -n $LINK_RATE ]] && rate_json=$(json_str "$LINK_RATE")
    cat >"$STATE_DIR/info.json.tmp" <<EOF
{
  "k8s_version": "$K8S_VERSION",
  "cluster_id": $CLUSTER_ID,
  "name_prefix": "$NAME_PREFIX",
  "cni": "$CNI",
  "variant": "$CNI.$PROXY${LINK_RATE:+.$LINK_RATE}${EDGE_TUNNEL:+.edge-$EDGE_TUNNEL}",
  "cni_datapath": "$(cni_datapath)",
  "flannel_version": $(flannel_version_json),$(cni_hook info_json)
  "cni_plugins_version": "$(cni_plugins_version)",
  "encapsulation": "$(cni_encapsulation)",
  "kube_proxy_masquerade_all": $(kube_proxy_masquerade_all),
  "pod_mtu": $(pod_mtu),
  "link_rate": $rate_json,
  "edge_tunnel": $(tunnel_info_json),
  "link_shaping": "$(if [[ -n $LINK_RATE ]]; then echo "tbf on each node uplink, both directions"; else echo none; fi)",
  "netem_available": $NETEM_AVAILABLE,
  "kube_proxy_mode": "$PROXY",
  "api_server": "https://$CP_IP:6443",
  "service_cidr": "$SERVICE_CIDR",
  "pod_cidr": "$POD_CIDR_ALL",
  "image": "$TOOLS_REF",
  "pause_image": "$PAUSE_REF",
  "containerd_version": "$(containerd --version | awk '{print $3}')",
  "runc_version": "$(runc --version | awk 'NR==1 {print $3}')",
  "etcd_version": "$(etcd --version | awk 'NR==1 {print $3}')",
  "kernel": "$(uname -r)",
  "created": "$(date -u +%FT%TZ)",
  "daemons": {"pid_dir": "$RUN_DIR/pids"},
  "daemon_cgroup": $DAEMON_CGROUP_JSON,
  "nodes": [$nodes
  ]
}
EOF
    mv -f "$STATE_DIR/info.json.tmp" "$STATE_DIR/info.json"
    echo "$TOOLS_REF" >"$STATE_DIR/image"
}

# ================================ main ======================================================
mkdir -p "$STATE_DIR" "$LOG_DIR"
log "cluster-up${ID_SUFFIX:+ (CLUSTER_ID=$CLUSTER_ID)}: NODES=$NODES CNI=$CNI PROXY=$PROXY LINK_RATE=${LINK_RATE:-unshaped} EDGE_TUNNEL=${EDGE_TUNNEL:-none} K8S_VERSION=$K8S_VERSION ZONES=$ZONES POOLS=$POOLS"
ensure_packages
# images (debootstrap: mostly network and dpkg) build while Go compiles
images_env="$STATE_DIR/.images.env"
rm -f "$images_env"
bash "$CLUSTER_DIR/build-images.sh" >"$images_env" &
images_pid=$!
build_go() {
    local b
    bash "$CLUSTER_DIR/build-k8s.sh" || return 1
    for b in $(cni_field build | tr , ' '); do
        [[ $b == - ]] || bash "$CLUSTER_DIR/$b" || return 1
    done
}
build_go || {
    wait "$images_pid"
    exit 1
}
wait "$images_pid" || die "building the images failed"
eval "$(cat "$images_env")"
rm -f "$images_env"

if cluster_healthy; then
    log "cluster already up with these settings; nothing to do"
    bash "$CLUSTER_DIR/status.sh"
    exit 0
fi

if [[ -d $RUN_DIR || -d $DATA_DIR ]] || ip netns list 2>/dev/null | grep -q "^${NAME_PREFIX}-"; then
    log "cleaning up a previous cluster (stale or with other settings)"
    bash "$CLUSTER_DIR/down.sh" --keep-baseline
fi

record_baseline
on_failure() {
    local rc=$?
    ((rc)) || return 0
    if [[ ${PODNET_KEEP_ON_FAILURE:-0} == 1 ]]; then
        warn "bring-up failed; the half-up cluster is left as it is for debugging (PODNET_KEEP_ON_FAILURE=1); logs: $LOG_DIR; clean with: make cluster-down"
    else
        warn "bring-up failed; tearing down what was started (logs kept in $LOG_DIR; PODNET_KEEP_ON_FAILURE=1 keeps it)"
        bash "$CLUSTER_DIR/down.sh" >"$STATE_DIR/down-after-failure.log" 2>&1 || true
    fi
    exit "$rc"
}
trap on_failure EXIT
probe_kernel
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR" "$RUN_DIR" "$DATA_DIR"
# node roots (containerd images and snapshots, kubelet), etcd and certificates live on a tmpfs:
# no fsync stalls, and cluster-down drops it at once instead of deleting ~10^4 files per node
mount -t tmpfs -o size=40%,mode=0700 "podnet-cluster$ID_SUFFIX" "$DATA_DIR"
log "generating certificates"
make_pki
make_daemon_cgroup
net_up
tunnel_up
make_cgroups
start_control_plane

log "starting $NODES node(s): containerd"
for ((n = 1; n <= NODES; n++)); do
    write_node_configs "$n"
    start_containerd "$n"
done
for ((n = 1; n <= NODES; n++)); do
    wait_for "containerd-$n" 30 containerd_ready "$n" || die "containerd on $(node_name "$n") did not start (see $LOG_DIR/containerd-$n.log)"
done
log "importing images $TOOLS_REF, $PAUSE_REF"
pids=()
for ((n = 1; n <= NODES; n++)); do
    import_images "$n" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "image import failed"; done

log "starting kubelet and kube-proxy on each node"
# Every kubelet serves its device-plugin registry on one fixed path, /var/lib/kubelet/device-plugins/
# kubelet.sock (not configurable): started at once, two can race (remove, remove, bind, bind: "address
# already in use", and that kubelet never registers). Each next kubelet starts once this one has bound it.
DP_SOCK=/var/lib/kubelet/device-plugins/kubelet.sock
dp_sock_id() { stat -c '%i %z' "$DP_SOCK" 2>/dev/null || echo none; }
dp_sock_rebound() { [[ $(dp_sock_id) != "$1" && -S $DP_SOCK ]]; }
for ((n = 1; n <= NODES; n++)); do
    before=$(dp_sock_id)
    start_node_agents "$n"
    wait_for "kubelet-$n's device-plugin socket" 20 dp_sock_rebound "$before" ||
        warn "kubelet on $(node_name "$n") did not bind $DP_SOCK within 20 s (see $LOG_DIR/kubelet-$n.log)"
done

for ((n = 1; n <= NODES; n++)); do
    name=$(node_name "$n")
    wait_for "$name registered" 120 kubectl_admin get node "$name" ||
        die "$name did not register (see $LOG_DIR/kubelet-$n.log)"
    cidr=$(node_pod_cidr "$n")
    kubectl_admin patch node "$name" --type merge -p "{\"spec\":{\"podCIDR\":\"$cidr\",\"podCIDRs\":[\"$cidr\"]}}" >/dev/null ||
        warn "could not record podCIDR on $name"
done
cni_start
log "waiting for nodes to be Ready"
kubectl_admin wait --for=condition=Ready node --all --timeout=180s >/dev/null ||
    die "nodes not Ready in time (see $LOG_DIR/kubelet-*.log)"
wait_for "default service account" 60 kubectl_admin get serviceaccount default -n default ||
    die "the default ServiceAccount was not created (see $LOG_DIR/kube-controller-manager.log)"
wait_for "kube-root-ca.crt" 60 kubectl_admin get configmap kube-root-ca.crt -n default ||
    die "the kube-root-ca.crt ConfigMap was not created (see $LOG_DIR/kube-controller-manager.log)"

fingerprint >"$RUN_DIR/config"
write_info
mkdir -p "$STATE_DIR/bin"
ln -sfn "$K8S_BIN/kubectl" "$STATE_DIR/bin/kubectl"
printf '#!/bin/sh\nexec "%s" --kubeconfig "%s" "$@"\n' "$K8S_BIN/kubectl" "$STATE_DIR/kubeconfig" >"$STATE_DIR/kubectl"
chmod +x "$STATE_DIR/kubectl"
trap - EXIT
log "cluster up in $(($(date +%s) - _t0)) s; kubeconfig: $STATE_DIR/kubeconfig; pod image: $TOOLS_REF"
bash "$CLUSTER_DIR/status.sh"
