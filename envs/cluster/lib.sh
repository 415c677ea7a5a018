# shellcheck shell=bash
# Common settings and helpers for the podnet embedded cluster scripts.
# Sourced by up.sh, down.sh, status.sh, build-*.sh, check-clean.sh.

set -o errexit -o nounset -o pipefail

CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$CLUSTER_DIR/../.." && pwd)"

# ---- settings (overridable from the environment / make command line) ----
K8S_VERSION="${K8S_VERSION:-v1.33.13}"
NODES="${NODES:-2}"
CNI="${CNI:-bridge}"                     # a mode of modes.tsv (bash modes.sh modes); bridge: routed, no overlay
PROXY="${PROXY:-iptables}"               # kube-proxy mode: iptables | nftables
LINK_RATE="${LINK_RATE:-}"               # empty = unshaped; e.g. 1gbit, 500mbit (tc rate syntax)
EDGE_TUNNEL="${EDGE_TUNNEL:-}"           # empty | wireguard: zones joined through gateways (tunnel.sh)
ZONES="${ZONES:-zone-a,zone-a,zone-b}"   # per node, comma separated; last entry repeats
POOLS="${POOLS:-pool-a,pool-a,pool-b}"   # per node, comma separated; last entry repeats
DAEMON_CPU_WEIGHT="${DAEMON_CPU_WEIGHT:-20}" # cgroup cpu.weight of all daemons together (pods: 100); 0 = no cgroup
CACHE_DIR="${PODNET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/podnet}"
GO="${GO:-/usr/local/go/bin/go}"

# ---- instance: several embedded clusters side by side on one machine ----
# CLUSTER_ID=0 (default) is "the" embedded cluster, with the names below; CLUSTER_ID=1..9 is another
# cluster beside it (make compare brings one up per variant set-up): every name, directory, cgroup,
# link and address that would collide gets the id (podnet1-node-2, .cluster-1, /run/podnet-cluster-1,
# fabric 10.211.0.0/24, root-namespace link podnet0-1, kubelets' cgroupRoot /podnet1). The pod and
# Service ranges stay the same: they live in each cluster's own namespaces only.
CLUSTER_ID="${CLUSTER_ID:-0}"
[[ $CLUSTER_ID =~ ^[0-9]$ ]] || {
    printf '[cluster] ERROR: CLUSTER_ID must be 0..9 (got %s)\n' "$CLUSTER_ID" >&2
    exit 1
}
if ((CLUSTER_ID == 0)); then ID_SUFFIX="" NAME_PREFIX="podnet"; else ID_SUFFIX="-$CLUSTER_ID" NAME_PREFIX="podnet$CLUSTER_ID"; fi

# ---- fixed layout ----
STATE_DIR="$REPO_ROOT/.cluster$ID_SUFFIX"     # kubeconfig, image, info.json, logs
RUN_DIR="/run/podnet-cluster$ID_SUFFIX"       # pid files, sockets
LIB_DIR="/var/lib/podnet-cluster$ID_SUFFIX"   # baseline (sysctl snapshot), data/
HOST_LINK="podnet0$ID_SUFFIX"                 # the root namespace's port on the fabric
CGROUP_NAME="$NAME_PREFIX"                    # the kubelets' cgroupRoot /$CGROUP_NAME/node-N
DATA_DIR="$LIB_DIR/data"                      # tmpfs: etcd data, node roots, pki (fast to create and to drop)
PKI_DIR="$DATA_DIR/pki"
CNI_BIN_RUN="$RUN_DIR/cni-bin"                # CNI plugins of modes that bring their own (links + theirs)
LOG_DIR="$STATE_DIR/logs"
K8S_BIN="$CACHE_DIR/k8s/$K8S_VERSION/bin"
FLANNEL_VERSION="${FLANNEL_VERSION:-v0.28.10}"
FLANNEL_BIN="$CACHE_DIR/flannel/$FLANNEL_VERSION/bin"
# calico: the Go module version of github.com/projectcalico/calico (release-v3.28, calico v3.28.5; the
# proxy serves only pseudo-versions), built by build-calico.sh
CALICO_VERSION="${CALICO_VERSION:-v1.11.0-cni-plugin.0.20250813170300-a0db560f0520}"
CALICO_DIR="$CACHE_DIR/calico/$CALICO_VERSION"
CALICO_BIN="$CALICO_DIR/bin"

# Addressing (CLUSTER_ID 0; others 10.(210+id)). The fabric is a bridge inside its own network namespace; the root
# namespace joins it with a single veth (podnet0, 10.210.0.1) so kubectl and tests
# can reach the API server. The control plane lives in its own namespace
# (10.210.0.2); node N lives in podnet-node-N with 10.210.0.(10+N).
FABRIC_NS="${NAME_PREFIX}-fabric"
CP_NS="${NAME_PREFIX}-cp"
FABRIC_NET="10.$((210 + CLUSTER_ID)).0"
HOST_IP="$FABRIC_NET.1"
CP_IP="$FABRIC_NET.2"
POD_CIDR_ALL="10.244.0.0/16"
SERVICE_CIDR="10.96.0.0/16"
API_SERVICE_IP="10.96.0.1"

# Global paths the runtimes write to whatever their configuration (containerd 1.6 shim sockets,
# libcni's cache, kubelet's device-plugin socket and container log links, wireguard-go's sockets; each
# CNI mode's file adds its own, e.g. calico.sh /var/lib/calico). cluster-up records which existed
# before; cluster-down removes the ones that did not.
GLOBAL_PATHS=(/run/netns /run/containerd /run/containerd/s /var/lib/cni /var/lib/kubelet
    /var/lib/kubelet/device-plugins /var/log/containers /var/log/pods /run/wireguard)

node_name() { echo "${NAME_PREFIX}-node-$1"; }
node_ns() { node_name "$1"; }
node_ip() { echo "$FABRIC_NET.$((10 + $1))"; }
node_pod_cidr() { echo "10.244.$1.0/24"; }
node_pod_gw() { echo "10.244.$1.1"; }
node_dir() { echo "$DATA_DIR/nodes/$1"; }

# nth_item "a,b,c" N -> item N (1-based); the last item repeats for larger N.
nth_item() {
    local IFS=, arr
    read -r -a arr <<<"$1"
    local i=$(($2 - 1))
    if ((i >= ${#arr[@]})); then i=$((${#arr[@]} - 1)); fi
    echo "${arr[$i]}"
}
node_zone() { nth_item "$ZONES" "$1"; }
node_pool() { nth_item "$POOLS" "$1"; }

# ---- logging ----
_t0="${_t0:-$(date +%s)}"
export _t0
log() { printf '[cluster %4ss] %s\n' "$(($(date +%s) - _t0))" "$*" >&2; }
warn() { printf '[cluster] WARNING: %s\n' "$*" >&2; }
die() {
    printf '[cluster] ERROR: %s\n' "$*" >&2
    exit 1
}

need_root() {
    [[ $(id -u) -eq 0 ]] || die "must run as root (needs network namespaces, mounts, cgroups, iptables); try: sudo make ${1:-cluster-up}"
}

# Run a command inside a named network namespace WITHOUT remounting /sys
# (ip netns exec would, and runc then cannot find the cgroup mounts).
in_ns() {
    local ns=$1
    shift
    nsenter --net="/run/netns/$ns" -- "$@"
}

kubectl_admin() { "$K8S_BIN/kubectl" --kubeconfig "$STATE_DIR/kubeconfig" "$@"; }

# ---- the daemons' cgroup (make cluster-up: etcd, API server, controller-manager, scheduler, and per
# node containerd, kubelet, kube-proxy, flanneld) ----
# One group with a low CPU weight for all daemons together, so under contention the test pods (in the
# kubelets' cgroupRoot /podnet/node-N, default weight) get the CPU first. Its directories (one per
# hierarchy: cgroup v2, or v1's cpu and cpuacct) are listed in $DAEMON_CGROUPS_FILE.
DAEMON_CGROUP_NAME="${NAME_PREFIX}-daemons"
DAEMON_CGROUPS_FILE="$RUN_DIR/daemon-cgroups"
CGROUP_FS="/sys/fs/cgroup"

# cgroup_v1_mount CONTROLLER: where the v1 hierarchy holding CONTROLLER is mounted (empty if none)
cgroup_v1_mount() {
    awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $2; exit } }' /proc/self/mounts
}

# every daemon cgroup directory that exists now (whatever the current settings)
daemon_cgroup_dirs() {
    local d
    for d in "$CGROUP_FS/$DAEMON_CGROUP_NAME" "$CGROUP_FS"/*/"$DAEMON_CGROUP_NAME"; do
        [[ -d $d ]] && echo "$d"
    done
}

json_str() { printf '"%s"' "$1"; }

# other_instances: the other embedded clusters on this machine that are up (or were killed without
# cluster-down): their run directories, one per line. While any is there, cluster-down leaves the
# machine-wide state (sysctls, the runtimes' global paths) to the last cluster to go down.
other_instances() {
    local d
    for d in /run/podnet-cluster /run/podnet-cluster-[0-9]; do
        [[ -d $d && $d != "$RUN_DIR" ]] && echo "$d"
    done
    return 0
}

# make_daemon_cgroup (cluster-up): the daemons' own cgroup, which start_daemon makes them join:
# cpu.weight DAEMON_CPU_WEIGHT on cgroup v2, the same share as cpu.shares on v1 (the kernel's
# conversion: weight 100 = shares 1024), plus a cpuacct group on v1 when cpuacct is a hierarchy of its
# own (the launcher reads the daemons' CPU from it). Sets DAEMON_CGROUP_JSON for info.json.
DAEMON_CGROUP_JSON=null
make_daemon_cgroup() {
    rm -f "$DAEMON_CGROUPS_FILE"
    if ((DAEMON_CPU_WEIGHT == 0)); then
        log "daemons share the machine's root cgroup (DAEMON_CPU_WEIGHT=0)"
        return 0
    fi
    local d usage version setting
    if [[ -f $CGROUP_FS/cgroup.controllers ]]; then
        grep -qw cpu "$CGROUP_FS/cgroup.subtree_control" 2>/dev/null || {
            warn "cgroup v2 without the cpu controller enabled for child groups: daemons not weighted"
            return 0
        }
        d=$CGROUP_FS/$DAEMON_CGROUP_NAME
        mkdir -p "$d"
        echo "$DAEMON_CPU_WEIGHT" >"$d/cpu.weight"
        echo "$d" >>"$DAEMON_CGROUPS_FILE"
        version=2 usage=$d/cpu.stat setting="cpu.weight $DAEMON_CPU_WEIGHT"
    else
        local cpu acct shares=$((DAEMON_CPU_WEIGHT * 1024 / 100))
        ((shares >= 2)) || shares=2
        cpu=$(cgroup_v1_mount cpu)
        acct=$(cgroup_v1_mount cpuacct)
        [[ -n $cpu ]] || {
            warn "no cgroup v1 cpu hierarchy mounted: daemons not weighted"
            return 0
        }
        mkdir -p "$cpu/$DAEMON_CGROUP_NAME"
        echo "$shares" >"$cpu/$DAEMON_CGROUP_NAME/cpu.shares"
        echo "$cpu/$DAEMON_CGROUP_NAME" >>"$DAEMON_CGROUPS_FILE"
        if [[ -n $acct && $acct != "$cpu" ]]; then
            mkdir -p "$acct/$DAEMON_CGROUP_NAME"
            echo "$acct/$DAEMON_CGROUP_NAME" >>"$DAEMON_CGROUPS_FILE"
        fi
        usage=${acct:+$acct/$DAEMON_CGROUP_NAME/cpuacct.usage}
        version=1 setting="cpu.shares $shares"
    fi
    local paths="" p
    while read -r p; do paths+="${paths:+, }$(json_str "$p")"; done <"$DAEMON_CGROUPS_FILE"
    DAEMON_CGROUP_JSON=$(printf '{"cgroup_version": %s, "paths": [%s], "cpu_weight": %s, "setting": "%s", "pods": "%s", "cpu_usage_file": %s}' \
        "$version" "$paths" "$DAEMON_CPU_WEIGHT" "$setting" \
        "the kubelets' cgroupRoot /$CGROUP_NAME/node-N keeps the default weight (100, cpu.shares 1024)" \
        "$(if [[ -n $usage ]]; then json_str "$usage"; else echo null; fi)")
    log "daemons in cgroup $DAEMON_CGROUP_NAME ($setting; pods keep the default weight)"
}

# Start a daemon in the background, record its pid. start_daemon NAME NS CMD...
# NS may be "-" for the root namespace. With a daemon cgroup, the process joins it before it execs
# the daemon (so nothing it starts, e.g. containerd's shims, ever runs outside it); runc still puts
# every container into the pod cgroups the kubelet asks for.
start_daemon() {
    local name=$1 ns=$2
    shift 2
    mkdir -p "$RUN_DIR/pids" "$LOG_DIR"
    local logf="$LOG_DIR/$name.log" join=()
    if [[ -s $DAEMON_CGROUPS_FILE ]]; then
        # shellcheck disable=SC2016 # $0/$$/$@ belong to the inner shell
        join=(bash -c 'while read -r d; do echo $$ >"$d/cgroup.procs" || exit 1; done <"$0"; exec "$@"' "$DAEMON_CGROUPS_FILE")
    fi
    # 9>&-: daemons must not inherit the cluster lock (cluster_lock)
    if [[ $ns == - ]]; then
        setsid "${join[@]}" "$@" >>"$logf" 2>&1 </dev/null 9>&- &
    else
        setsid "${join[@]}" nsenter --net="/run/netns/$ns" -- "$@" >>"$logf" 2>&1 </dev/null 9>&- &
    fi
    local pid=$!
    echo "$pid" >"$RUN_DIR/pids/$name.pid"
    # record the start time so a recycled pid is never mistaken for ours
    awk '{print $22}' "/proc/$pid/stat" >"$RUN_DIR/pids/$name.start" 2>/dev/null || true
}

# pid_alive NAME -> prints pid if the recorded process is still ours
pid_alive() {
    local f="$RUN_DIR/pids/$1.pid" pid st
    [[ -f $f ]] || return 1
    pid=$(cat "$f")
    [[ -d /proc/$pid ]] || return 1
    if [[ -f "$RUN_DIR/pids/$1.start" ]]; then
        st=$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null || true)
        [[ $st == "$(cat "$RUN_DIR/pids/$1.start")" ]] || return 1
    fi
    echo "$pid"
}

# wait_for DESC TIMEOUT_S CMD... : poll until CMD succeeds
wait_for() {
    local desc=$1 timeout=$2
    shift 2
    local end=$(($(date +%s) + timeout))
    until "$@" >/dev/null 2>&1; do
        if (($(date +%s) >= end)); then
            return 1
        fi
        sleep 0.5
    done
}

# await_daemon DAEMON WHO WHAT TIMEOUT_S CMD...: poll CMD until it succeeds; else die saying whether
# WHO (the recorded daemon DAEMON, e.g. calico-felix-2) exited or runs but did not WHAT in time
await_daemon() {
    local daemon=$1 who=$2 what=$3 timeout=$4
    shift 4
    wait_for "$who" "$timeout" "$@" && return 0
    pid_alive "$daemon" >/dev/null || die "$who exited (see $LOG_DIR/$daemon.log)"
    die "$who did not $what in $timeout s (see $LOG_DIR/$daemon.log)"
}

# sysctl_diff BASELINE_FILE: print "key<TAB>current<TAB>baseline" for every writable sysctl whose
# value differs from BASELINE_FILE (the output of `sysctl -a` recorded before the first cluster-up).
# Multi-line values (e.g. kernel.core_modes) are joined; counters and random values are skipped.
SYSCTL_VOLATILE_RE='^(kernel\.random\.|kernel\.ns_last_pid|kernel\.pty\.nr|kernel\.tainted|fs\.dentry-state|fs\.file-nr|fs\.inode-|fs\.quota\.|net\.netfilter\.nf_conntrack_count|vm\.stat_refresh)'
sysctl_diff() {
    local base=$1 line key val
    local -A cur=() old=()
    while IFS= read -r line; do
        key=${line%% = *}
        cur[$key]+="${cur[$key]:+|}${line#* = }"
    done < <(sysctl -a 2>/dev/null)
    while IFS= read -r line; do
        key=${line%% = *}
        old[$key]+="${old[$key]:+|}${line#* = }"
    done <"$base"
    for key in "${!old[@]}"; do
        [[ $key =~ $SYSCTL_VOLATILE_RE ]] && continue
        [[ -v cur[$key] ]] || continue
        [[ ${cur[$key]} == "${old[$key]}" ]] && continue
        local path="/proc/sys/${key//.//}"
        [[ -e $path ]] && [[ $(stat -c %A "$path") != *w* ]] && continue
        printf '%s\t%s\t%s\n' "$key" "${cur[$key]}" "${old[$key]}"
    done | sort
}

# One cluster-up/cluster-down at a time on this machine (the lock file lives in the build cache).
cluster_lock() {
    [[ ${PODNET_CLUSTER_LOCKED:-0} == 1 ]] && return 0
    mkdir -p "$CACHE_DIR"
    exec 9>"$CACHE_DIR/cluster.lock"
    if ! flock -n 9; then
        log "waiting for another cluster-up/cluster-down on this machine to finish"
        flock -w 3600 9 || die "timed out waiting for $CACHE_DIR/cluster.lock"
    fi
    export PODNET_CLUSTER_LOCKED=1
}

# ---- packages: install the missing Debian packages (cluster-up, cluster-build) ----
# ensure_packages [COMMAND=PACKAGE...]: also those (rootns-test.sh: ipset)
ensure_packages() {
    local -A need=(
        [containerd]=containerd [ctr]=containerd [runc]=runc [etcd]=etcd-server
        [iptables]=iptables [ip6tables]=iptables [conntrack]=conntrack [debootstrap]=debootstrap
        [umoci]=umoci [openssl]=openssl [ip]=iproute2 [tc]=iproute2 [bridge]=iproute2
        [nsenter]=util-linux [setsid]=util-linux [sysctl]=procps [curl]=curl
        [envsubst]=gettext-base [nft]=nftables
    )
    local kv
    for kv in "$@"; do need[${kv%%=*}]=${kv#*=}; done
    if [[ $EDGE_TUNNEL == wireguard ]]; then need[wireguard-go]=wireguard-go need[wg]=wireguard-tools; fi
    local c p
    while IFS='=' read -r c p; do need[$c]=$p; done < <(cni_hook packages) # the CNI mode's own (modes.sh)
    local missing=()
    for c in "${!need[@]}"; do command -v "$c" >/dev/null 2>&1 || missing+=("${need[$c]}"); done
    [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback && -x /usr/lib/cni/portmap ]] ||
        missing+=(containernetworking-plugins)
    if ((${#missing[@]})); then
        mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
        command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
        log "installing Debian packages: ${missing[*]}"
        mkdir -p "$CACHE_DIR"
        apt-get update -qq >/dev/null || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$CACHE_DIR/apt.log" 2>&1 ||
            die "apt-get install ${missing[*]} failed (see $CACHE_DIR/apt.log)"
        # the packages' own services are not used; never leave a stray daemon (no systemd here anyway)
    fi
}

# ---- the CNI modes: the table modes.tsv and every mode's file ----
source "$CLUSTER_DIR/modes.sh"
