#!/usr/bin/env bash
# After `make cluster-down`: verify the cluster left nothing behind. Exit 1 and list every leftover:
# processes, network namespaces, links, mounts, cgroups, podnet-named iptables chains, ipsets and nft
# tables in the root namespace, state directories, and sysctls that differ from the values recorded
# before the first cluster-up. Every embedded cluster of this machine counts (CLUSTER_ID 0..9:
# podnet-*, podnet1-*, ...); the baseline is CLUSTER_ID's (the one that went down last), copied to
# .cluster/baseline.* by cluster-down. What the machine had before the first cluster-up is no
# leftover: a chain, ipset or nft table listed in baseline.rootns, a process listed in baseline.procs
# (same PID and start time) is reported as kept, never as a failure. Without a baseline every
# podnet-named object counts (what was there before cannot be told apart).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$CLUSTER_DIR/rootns.sh"
need_root cluster-check-clean
set +o errexit

problems=()
bad() { problems+=("$*"); }
kept=()

# preexisting PID: the process was there at the baseline (same PID and start time)
preexisting() { [[ -f $STATE_DIR/baseline.procs ]] && grep -qx "$1 $(proc_start "$1")" "$STATE_DIR/baseline.procs"; }

# processes (each CNI mode's file may name its own: its process_re hook, e.g. calico's bird by any path)
mode_procs_re=$(each_mode_hook process_re | paste -sd'|')
for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    if preexisting "$pid"; then
        [[ $cmd =~ (/run/podnet-cluster|/var/lib/podnet-cluster|/(k8s|flannel|cilium|calico)/v[^/]+/bin/|^wireguard-go\ -f\ pn[0-9]?wg) ]] &&
            kept+=("process $pid (there before cluster-up): ${cmd:0:120}")
        continue
    fi
    if [[ $cmd =~ (/run/podnet-cluster|/var/lib/podnet-cluster|/(k8s|flannel|cilium)/v[0-9.]+/bin/|/calico/v[^/]+/bin/|^wireguard-go\ -f\ pn[0-9]?wg) ]] && [[ ! $cmd =~ check-clean ]]; then
        bad "process $pid: ${cmd:0:160}"
    elif [[ -n $mode_procs_re && $cmd =~ $mode_procs_re ]]; then
        bad "process $pid (a CNI mode's daemon): ${cmd:0:160}"
    elif grep -qE ":/podnet[0-9]?(-daemons)?(/|$)" "$p/cgroup" 2>/dev/null; then
        bad "process $pid in a podnet cgroup: ${cmd:0:160}"
    fi
done
# network namespaces and links
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^podnet[0-9]?-"); do bad "network namespace $ns"; done
for l in $(ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^podnet0(-[0-9])?(@|$)/ {sub(/@.*/, "", $2); print $2}'); do
    bad "link $l in the root namespace"
done
ls /run/wireguard/pn*wg*.sock >/dev/null 2>&1 && bad "wireguard-go control sockets $(ls /run/wireguard/pn*wg*.sock | tr '\n' ' ')"
# routes to the pod network and ARP entries (only in node namespaces)
ip -4 route show | grep -qE "^(${POD_CIDR_ALL%.0.0/16}\.|${SERVICE_CIDR%.0.0/16}\.)" && bad "routes to the pod/service network in the root namespace: $(ip -4 route show | grep -E "^(${POD_CIDR_ALL%.0.0/16}\.|${SERVICE_CIDR%.0.0/16}\.)" | tr '\n' ';')"
ip -4 neigh show 2>/dev/null | grep -qE "^${POD_CIDR_ALL%.0.0/16}\." && bad "ARP entries for the pod network in the root namespace"
# mounts
while read -r _ mp fstype _; do
    case $mp in
        /run/podnet-cluster* | /var/lib/podnet-cluster* | /run/netns/podnet-*) bad "mount $mp ($fstype)" ;;
    esac
done </proc/self/mounts
if [[ -f $STATE_DIR/baseline.paths ]] && ! grep -qx /run/netns "$STATE_DIR/baseline.paths"; then
    awk '$2 == "/run/netns"' /proc/self/mounts | grep -q . && bad "mount /run/netns (not there before cluster-up)"
    [[ -e /run/netns ]] && bad "/run/netns exists (not there before cluster-up)"
fi
# cgroups
for h in /sys/fs/cgroup/*/podnet /sys/fs/cgroup/*/podnet[0-9]; do [[ -e $h ]] && bad "cgroup $h"; done
for h in /sys/fs/cgroup/podnet{,[0-9]}-daemons /sys/fs/cgroup/*/podnet{,[0-9]}-daemons; do [[ -d $h ]] && bad "cgroup $h (the daemons' group)"; done
# podnet-named iptables chains (every backend), ipsets and nft tables in the root namespace that
# were not there at the baseline
podnet_named=$(rootns_objects | rootns_podnet_named)
if [[ -f $STATE_DIR/baseline.rootns ]]; then
    left=$(LC_ALL=C comm -13 "$STATE_DIR/baseline.rootns" <(echo "$podnet_named") | grep . | tr '\n' ';')
    there=$(LC_ALL=C comm -12 "$STATE_DIR/baseline.rootns" <(echo "$podnet_named") | grep . | tr '\n' ';')
    [[ -n $there ]] && kept+=("root-namespace objects there before cluster-up: $there")
else
    left=$(echo "$podnet_named" | grep . | tr '\n' ';')
    [[ -n $left ]] && left+=" (no baseline $STATE_DIR/baseline.rootns: cannot tell whether they were there before)"
fi
[[ -n $left ]] && bad "chains/ipsets/nft tables in the root namespace: $left"
# state directories and files the runtimes write to global places
for d in /run/podnet-cluster /run/podnet-cluster-[0-9] /var/lib/podnet-cluster /var/lib/podnet-cluster-[0-9]; do [[ -e $d ]] && bad "directory $d"; done
if [[ -f $STATE_DIR/baseline.paths ]]; then
    for d in "${GLOBAL_PATHS[@]}"; do
        [[ $d == /run/netns ]] && continue
        [[ -e $d ]] && ! grep -qx "$d" "$STATE_DIR/baseline.paths" && bad "$d exists (not there before cluster-up)"
    done
fi
ls /var/lib/cni/results/podnet-* >/dev/null 2>&1 && bad "CNI results cache entries /var/lib/cni/results/podnet-*"
# what each CNI mode's file checks (links, routes, mounts, BPF pins it could leave in the root namespace)
each_mode_hook check_clean
# sysctls
if [[ -f $STATE_DIR/baseline.sysctl ]]; then
    while IFS=$'\t' read -r key now was; do bad "sysctl $key = $now (was $was)"; done < <(sysctl_diff "$STATE_DIR/baseline.sysctl")
else
    echo "check-clean: no sysctl baseline ($STATE_DIR/baseline.sysctl, written by cluster-down): sysctls not compared"
fi

((${#kept[@]})) && printf 'check-clean: kept (the machine had it before cluster-up): %s\n' "${kept[@]}"
if ((${#problems[@]})); then
    echo "check-clean: FAILED, left behind:"
    printf '  - %s\n' "${problems[@]}"
    exit 1
fi
echo "check-clean: OK (no process (incl. bird, confd), netns, link (podnet0[-k], flannel.1, cni0, vxlan.calico, cali*, cilium_*, lxc*), cilium tc filter or BPF pin, pod/service route, proto bird route, flannel FDB/ARP entry, mount, cgroup (podnet[k], podnet[k]-daemons), KUBE-*/CNI-*/FLANNEL-*/cali-*/CILIUM_* chain, cali4*/cilium ipset or kube-proxy/flannel nft table not there before cluster-up, state dir, /run/flannel, /var/lib/calico, /run/cilium or changed sysctl left)"
