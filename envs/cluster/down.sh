#!/usr/bin/env bash
# make cluster-down: stop everything cluster-up started (only the PIDs podnet recorded), remove
# namespaces, mounts and cgroups, restore sysctls, and remove from the root namespace only the
# chains, ipsets and nft tables a podnet cluster made (rootns.sh: podnet's names, not there at the
# baseline). Safe to run when nothing is running and after a killed cluster-up. --keep-baseline (used
# by up.sh for stale cleanup) keeps the recorded original state so a following up/down pair still
# restores to the very first state.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$CLUSTER_DIR/net.sh"
source "$CLUSTER_DIR/rootns.sh"

KEEP_BASELINE=0
[[ ${1:-} == --keep-baseline ]] && KEEP_BASELINE=1
need_root cluster-down
cluster_lock
set +o errexit # teardown goes on past individual failures

BASE="$LIB_DIR/baseline"
mapfile -t OTHERS < <(other_instances)

# ---- processes ---------------------------------------------------------------------------------
# stop_pids SIGNAL_GRACE_S PID... : TERM, wait, then KILL what is left
stop_pids() {
    local grace=$1
    shift
    local p left end
    (($#)) || return 0
    kill -TERM "$@" 2>/dev/null
    end=$(($(date +%s) + grace))
    while :; do
        left=()
        for p in "$@"; do [[ -d /proc/$p ]] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && left+=("$p"); done
        ((${#left[@]})) || return 0
        (($(date +%s) >= end)) && break
        sleep 0.2
    done
    kill -KILL "${left[@]}" 2>/dev/null
    sleep 0.2
}

# pids recorded for daemons matching a glob (kubelet-*, etcd, ...)
recorded() {
    local f name pid out=()
    for f in "$RUN_DIR"/pids/$1.pid; do
        [[ -f $f ]] || continue
        name=$(basename "$f" .pid)
        pid=$(pid_alive "$name") && out+=("$pid")
    done
    ((${#out[@]})) && podnet_started "$BASE" "${out[@]}" | tr '\n' ' '
}

# pids of processes in the cluster's cgroups (containers, pause processes), started after the baseline
cgroup_pids() {
    local p
    mapfile -t p < <(find /sys/fs/cgroup/*/"$CGROUP_NAME" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un)
    ((${#p[@]})) && podnet_started "$BASE" "${p[@]}"
}

# containerd's shims: each writes its pid to shim.pid in its bundle, under this cluster's run directory
shim_pids() {
    local f p=()
    while read -r f; do p+=("$(cat "$f" 2>/dev/null)"); done < <(find "$RUN_DIR"/nodes/*/containerd -name shim.pid 2>/dev/null)
    ((${#p[@]})) && podnet_started "$BASE" "${p[@]}"
}

# processes whose command line names this cluster's state paths: reported, never stopped by that match
# (podnet stops what it recorded: pid files, shim.pid files, its cgroups)
path_pids() {
    local p cmd re="($RUN_DIR|$LIB_DIR)(/| |\$)"
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $p == "$$" || $p == "$BASHPID" ]] && continue
        cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
        [[ $cmd =~ $re ]] && [[ ! $cmd =~ (down|up|status|check-clean)\.sh ]] && echo "$p ${cmd:0:120}"
    done
}

# every recorded daemon but containerd and the control plane: kubelets, kube-proxies, each CNI mode's
# daemons (flanneld-N, calico-*-N, cilium-*), wireguard-go
recorded_agents() {
    local f name found=""
    for f in "$RUN_DIR"/pids/*.pid; do
        [[ -f $f ]] || continue
        name=$(basename "$f" .pid)
        [[ $name =~ ^(containerd-[0-9]+|etcd|kube-apiserver|kube-controller-manager|kube-scheduler)$ ]] && continue
        found+="$(recorded "$name") "
    done
    echo "$found"
}

log "cluster-down: stopping processes"
# shellcheck disable=SC2046
stop_pids 10 $(recorded_agents)
for _ in 1 2 3 4 5 6 7 8 9 10; do
    mapfile -t cp < <(cgroup_pids)
    ((${#cp[@]})) || break
    kill -KILL "${cp[@]}" 2>/dev/null
    sleep 0.3
done
# shellcheck disable=SC2046
stop_pids 5 $(shim_pids)
# shellcheck disable=SC2046
stop_pids 10 $(recorded 'containerd-*')
# shellcheck disable=SC2046
stop_pids 10 $(recorded kube-scheduler) $(recorded kube-controller-manager)
# shellcheck disable=SC2046
stop_pids 15 $(recorded kube-apiserver)
# shellcheck disable=SC2046
stop_pids 10 $(recorded etcd)
# pids still in the daemons' cgroup (a daemon whose pid file was lost, a helper it started)
daemon_cgroup_pids() {
    local d p
    mapfile -t p < <(for d in $(daemon_cgroup_dirs); do cat "$d/cgroup.procs" 2>/dev/null; done | sort -un)
    ((${#p[@]})) && podnet_started "$BASE" "${p[@]}"
}

# anything left in podnet's cgroups (e.g. a cluster whose pid files were lost)
mapfile -t stray < <(cgroup_pids; daemon_cgroup_pids)
if ((${#stray[@]})); then
    log "stopping ${#stray[@]} leftover process(es) in podnet's cgroups: ${stray[*]}"
    stop_pids 5 "${stray[@]}"
fi
mapfile -t unrecorded < <(path_pids)
((${#unrecorded[@]})) &&
    warn "not stopped (podnet recorded no pid of them, check-clean will list them): $(printf '%s; ' "${unrecorded[@]}")"

# ---- mounts ------------------------------------------------------------------------------------
log "unmounting"
for _ in 1 2 3; do
    mapfile -t mnts < <(awk -v a="$LIB_DIR" -v b="$RUN_DIR" '$2 == a || index($2, a "/") == 1 || $2 == b || index($2, b "/") == 1 {print $2}' /proc/self/mounts | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-)
    ((${#mnts[@]})) || break
    for m in "${mnts[@]}"; do
        m=$(printf '%b' "$m") # /proc/mounts escapes spaces as \040
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
done

# ---- network -----------------------------------------------------------------------------------
log "removing network namespaces"
net_down

# ---- cgroups -----------------------------------------------------------------------------------
for h in /sys/fs/cgroup/*/"$CGROUP_NAME"; do
    [[ -d $h ]] || continue
    find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
    [[ -d $h ]] && warn "cgroup $h could not be removed"
done
for d in $(daemon_cgroup_dirs); do
    rmdir "$d" 2>/dev/null || warn "cgroup $d could not be removed (processes left: $(tr '\n' ' ' <"$d/cgroup.procs"))"
done

# ---- iptables / ipsets / nftables in the root namespace ---------------------------------------
# The cluster's kubelets, kube-proxies, flanneds, felixes and cilium-agents run inside the node
# namespaces, so their chains, ipsets and nft tables vanish with them; this only removes what some
# earlier, differently set-up run left here: podnet-named objects that were not there at the baseline
# (rootns.sh). Without a baseline nothing is removed: what the machine had cannot be told apart.
if [[ -f $BASE/rootns ]]; then
    while read -r what; do log "removed from the root namespace: $what"; done < <(rootns_remove_new "$BASE")
else
    named=$(rootns_objects | rootns_podnet_named | tr '\n' ';')
    [[ -n $named ]] && warn "no root-namespace baseline ($BASE/rootns): left as they are: $named"
fi

# ---- machine-wide state: left to the last cluster to go down ------------------------------------
if ((${#OTHERS[@]})); then
    log "other clusters are up (${OTHERS[*]}): sysctls and the runtimes' global paths stay for the last one to go down"
fi
# ---- sysctls -----------------------------------------------------------------------------------
if [[ -f $BASE/sysctl ]] && ((${#OTHERS[@]} == 0)); then
    restored=()
    while IFS=$'\t' read -r key _ val; do
        if sysctl -qw "$key=$val" 2>/dev/null; then restored+=("$key=$val"); else warn "could not restore sysctl $key=$val"; fi
    done < <(sysctl_diff "$BASE/sysctl")
    ((${#restored[@]})) && log "restored sysctls: ${restored[*]}"
fi

# ---- files the runtimes put in global places ----------------------------------------------------
had() { [[ -f $BASE/paths ]] && grep -qx "$1" "$BASE/paths"; }
if [[ -f $BASE/complete ]] && ((${#OTHERS[@]} == 0)); then
    if ! had /run/containerd; then
        rm -rf /run/containerd
    elif ! had /run/containerd/s; then
        rm -rf /run/containerd/s
    elif [[ -d /run/containerd/s ]]; then
        for s in /run/containerd/s/*; do
            [[ -e $s ]] || continue
            grep -qx "$(basename "$s")" "$BASE/shim-sockets" || rm -f "$s"
        done
    fi
    # every other global path (lib.sh and each CNI mode's file), parents first
    for d in "${GLOBAL_PATHS[@]}"; do
        [[ $d == /run/netns || $d == /run/containerd || $d == /run/containerd/s ]] && continue
        had "$d" || rm -rf "$d"
    done
fi
((${#OTHERS[@]})) || rm -f /var/lib/cni/results/podnet-* 2>/dev/null
if [[ -d /var/log/containers ]]; then
    find /var/log/containers -maxdepth 1 -type l -lname "$LIB_DIR/*" -delete 2>/dev/null
fi
if [[ -d /run/netns ]] && ! had /run/netns && [[ -f $BASE/complete ]] && [[ -z $(ls -A /run/netns) ]]; then
    umount /run/netns 2>/dev/null
    rmdir /run/netns 2>/dev/null
fi

log "removing state"
# ---- state -------------------------------------------------------------------------------------
if [[ -f $BASE/sysctl ]]; then
    mkdir -p "$STATE_DIR"
    cp "$BASE/sysctl" "$STATE_DIR/baseline.sysctl"
    cp "$BASE/paths" "$STATE_DIR/baseline.paths" 2>/dev/null
    # check-clean does not count what the machine had before (objects, processes)
    for f in rootns procs ticks; do
        if [[ -f $BASE/$f ]]; then cp "$BASE/$f" "$STATE_DIR/baseline.$f"; else rm -f "$STATE_DIR/baseline.$f"; fi
    done
fi
# --one-file-system: never follow a mount that could not be removed
rm -rf --one-file-system "$RUN_DIR"
if ((KEEP_BASELINE)); then
    find "$LIB_DIR" -mindepth 1 -maxdepth 1 ! -name baseline -exec rm -rf --one-file-system {} + 2>/dev/null
else
    rm -rf --one-file-system "$LIB_DIR"
fi
rm -f "$STATE_DIR/kubeconfig" "$STATE_DIR/info.json" "$STATE_DIR/image" "$STATE_DIR/kubectl"
rm -rf "${STATE_DIR:?}/bin"
log "cluster-down done"
