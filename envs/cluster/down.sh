#!/usr/bin/env bash
# make cluster-down: stop everything cluster-up started (by PID), remove namespaces, mounts,
# cgroups and iptables chains, restore sysctls. Safe to run when nothing is running and after a
# killed cluster-up. --keep-baseline (used by up.sh for stale cleanup) keeps the recorded
# original state so a following up/down pair still restores to the very first state.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$CLUSTER_DIR/net.sh"

KEEP_BASELINE=0
[[ ${1:-} == --keep-baseline ]] && KEEP_BASELINE=1
need_root cluster-down
cluster_lock
set +o errexit # teardown goes on past individual failures

BASE="$LIB_DIR/baseline"
# processes naming this cluster's directories, or (when no other cluster is up beside it: their
# daemons run the same binaries) the cached binaries
mapfile -t OTHERS < <(other_instances)
OUR_PATHS_RE="($RUN_DIR|$LIB_DIR)(/| |\$)"
((${#OTHERS[@]})) || OUR_PATHS_RE="(($RUN_DIR|$LIB_DIR)(/| |\$)|$CACHE_DIR/(k8s|flannel|calico|cilium)/[^/]+/bin/)"

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
    echo "${out[@]}"
}

# pids of processes in the cluster's cgroups (containers, pause processes)
cgroup_pids() {
    find /sys/fs/cgroup/*/"$CGROUP_NAME" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un
}

# pids of processes whose command line names the cluster's state paths (shims, stale daemons)
path_pids() {
    local p cmd
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $p == "$$" || $p == "$BASHPID" ]] && continue
        cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
        [[ $cmd =~ $OUR_PATHS_RE ]] && [[ ! $cmd =~ (down|up|status|check-clean)\.sh ]] && echo "$p"
    done
}

# containerd 1.6 shims write no pid file: find them by their -address (this cluster's sockets)
shim_pids() {
    local p cmd
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
        [[ $cmd == *containerd-shim*" -address $RUN_DIR/"* ]] && echo "$p"
    done
}

log "cluster-down: stopping processes"
# shellcheck disable=SC2046
stop_pids 10 $(recorded 'kubelet-*') $(recorded 'kube-proxy-*') $(recorded 'flanneld-*') $(recorded 'calico-*') $(recorded 'cilium-agent-*') $(recorded cilium-operator) $(recorded 'wireguard-*')
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
    local d
    for d in $(daemon_cgroup_dirs); do cat "$d/cgroup.procs" 2>/dev/null; done | sort -un
}

# anything left that is unmistakably ours (e.g. a cluster whose pid files were lost)
mapfile -t stray < <(path_pids; cgroup_pids; daemon_cgroup_pids)
if ((${#stray[@]})); then
    log "stopping ${#stray[@]} leftover process(es) of an earlier cluster: ${stray[*]}"
    stop_pids 5 "${stray[@]}"
fi

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

# ---- iptables / nftables in the root namespace ------------------------------------------------
# The cluster's kubelets, kube-proxies, flanneds and felixes run inside the node namespaces, so their
# KUBE-*/FLANNEL-*/cali-* chains, calico's ipsets, nft tables, flannel.1/vxlan.calico/cali* links,
# routes and ARP/FDB entries vanish with them; this only removes what some earlier, differently
# set-up run left behind.
for t in iptables ip6tables; do
    command -v "$t-save" >/dev/null || continue
    for table in filter nat mangle raw; do
        if "$t-save" -t "$table" 2>/dev/null | grep -qE '^:(KUBE-|CNI-|FLANNEL-|cali-|CILIUM_)'; then
            log "removing leftover KUBE-*/CNI-*/FLANNEL-*/cali-*/CILIUM_* chains from $t table $table"
            "$t-save" -t "$table" | grep -vE '(^:(KUBE-|CNI-|FLANNEL-|cali-|CILIUM_)|-j (KUBE-|CNI-|FLANNEL-|cali-|CILIUM_)|^-A (KUBE-|CNI-|FLANNEL-|cali-|CILIUM_))' | "$t-restore" -T "$table" 2>/dev/null ||
                warn "could not clean $t $table"
        fi
    done
done
if command -v ipset >/dev/null; then
    for s in $(ipset list -n 2>/dev/null | grep -E '^cali4[06]' || true); do
        ipset destroy "$s" 2>/dev/null && log "removed leftover ipset $s" || warn "could not destroy ipset $s"
    done
fi

if command -v nft >/dev/null; then
    nft list tables 2>/dev/null | while read -r _ fam tab; do
        case $tab in kube-proxy | flannel | podnet-probe)
            log "removing leftover nft table $fam $tab"
            nft delete table "$fam" "$tab" || warn "could not delete nft table $fam $tab"
            ;;
        esac
    done
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
    had /run/flannel || rm -rf /run/flannel
    had /run/wireguard || rm -rf /run/wireguard
    for d in /var/lib/calico /run/calico /var/log/calico /run/cilium /var/lib/cilium; do
        had "$d" || rm -rf "$d"
    done
    for d in /var/lib/cni /var/lib/kubelet /var/lib/kubelet/device-plugins /var/log/containers /var/log/pods; do
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
