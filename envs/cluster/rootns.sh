# shellcheck shell=bash
# The machine's root network namespace and its processes: what was there before podnet's first
# cluster-up, so cluster-down removes only what a podnet cluster made. Sourced after lib.sh by up.sh,
# down.sh and check-clean.sh.
#
# The embedded clusters program nothing in the root namespace (every kubelet, kube-proxy, flanneld,
# felix and cilium-agent runs in its node namespace), so in a normal run there is nothing to remove;
# cluster-down removes only an object that (1) was not there when the baseline was recorded (the
# first cluster-up while no podnet cluster was up) and (2) has a name a podnet cluster's components
# give (ROOTNS_CHAIN_RE, ROOTNS_IPSET_RE, ROOTNS_NFT_RE). A machine that is itself a Kubernetes node,
# or runs k3s or Docker beside podnet, keeps its own KUBE-* chains, cali4* ipsets and kube-proxy nft
# tables, byte for byte. Processes: cluster-down stops only PIDs podnet recorded (its daemons' pid
# files, containerd's shim.pid files under the cluster's run directory, the cgroup.procs of the
# cgroups podnet made), and never one that existed at the baseline or started before it.

ROOTNS_CHAIN_RE='^(KUBE-|CNI-|FLANNEL-|cali-|CILIUM_)'
ROOTNS_IPSET_RE='^(cali4[06]|cilium_node_set_v[46])'
ROOTNS_NFT_RE='^(kube-proxy|flannel|podnet-probe)$'

# the iptables save commands of this machine: each backend present (legacy, nft), IPv4 and IPv6;
# the plain iptables(-save) only where no backend-named command exists
rootns_ipt_cmds() {
    local fam b found
    for fam in iptables ip6tables; do
        found=0
        for b in legacy nft; do
            command -v "$fam-$b-save" >/dev/null 2>&1 && { echo "$fam-$b" && found=1; }
        done
        ((found)) || ! command -v "$fam-save" >/dev/null 2>&1 || echo "$fam"
    done
}

# rootns_objects: the root namespace's netfilter objects, one per line, sorted:
#   chain <cmd> <table> <chain>     (every chain of every table, each iptables backend)
#   ipset <name>
#   nft <family> <table>
# (iptables-save without -t dumps only the tables that exist: nothing is created by looking)
rootns_objects() {
    local cmd
    {
        for cmd in $(rootns_ipt_cmds); do
            "$cmd-save" 2>/dev/null | awk -v c="$cmd" '/^\*/ { t = substr($0, 2) } /^:/ { print "chain", c, t, substr($1, 2) }'
        done
        if command -v ipset >/dev/null 2>&1; then ipset list -n 2>/dev/null | sed 's/^/ipset /'; fi
        if command -v nft >/dev/null 2>&1; then nft list tables 2>/dev/null | awk '$1 == "table" { print "nft", $2, $3 }'; fi
    } | LC_ALL=C sort -u
}

# rootns_podnet_named: the lines of rootns_objects (stdin) whose object has a podnet cluster's name
rootns_podnet_named() {
    awk -v c="$ROOTNS_CHAIN_RE" -v s="$ROOTNS_IPSET_RE" -v n="$ROOTNS_NFT_RE" '
        ($1 == "chain" && $4 ~ c) || ($1 == "ipset" && $2 ~ s) || ($1 == "nft" && $3 ~ n)'
}

# rootns_new BASE: podnet-named objects present now that the baseline BASE/rootns lacks
rootns_new() {
    LC_ALL=C comm -13 "$1/rootns" <(rootns_objects) | rootns_podnet_named
}

# proc_start PID: the process's start time (clock ticks since boot; field 22 of /proc/PID/stat,
# read after the command name, which may hold spaces)
proc_start() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    s=${s##*) }
    awk '{ print $20 }' <<<"$s"
}

# rootns_record DIR: the baseline files rootns (objects), procs ("PID START" of every process) and
# ticks (clock ticks since boot when recorded)
rootns_record() {
    local d=$1 p hz up
    rootns_objects >"$d/rootns"
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        echo "$p $(proc_start "$p")"
    done 2>/dev/null | awk 'NF == 2' | LC_ALL=C sort >"$d/procs"
    hz=$(getconf CLK_TCK)
    read -r up _ </proc/uptime
    awk -v u="$up" -v h="$hz" 'BEGIN { printf "%d\n", u * h }' >"$d/ticks"
}

# podnet_started BASE PID...: of the PIDs (recorded by podnet), those still running that started
# after the baseline BASE was recorded and are not one of its processes (a recycled or foreign PID
# never is); without a baseline, those still running
podnet_started() {
    local base=$1 p st ticks=0
    shift
    [[ -f $base/ticks ]] && ticks=$(cat "$base/ticks")
    for p in "$@"; do
        st=$(proc_start "$p") || continue
        if [[ -f $base/procs ]]; then
            ((st >= ticks)) || continue
            grep -qx "$p $st" "$base/procs" && continue
        fi
        echo "$p"
    done
}

# rootns_remove_new BASE: remove the podnet-named objects the baseline BASE/rootns lacks: chains (first the
# rules of other chains that jump to them, then flush, then delete; one atomic --noflush restore per
# backend and table), then ipsets (a rule may have used one), then nft tables. Prints what it removed.
rootns_remove_new() {
    local base=$1 new cmd table ch line from to script chains=()
    local -A del=()
    new=$(rootns_new "$base")
    [[ -n $new ]] || return 0
    while read -r cmd table; do
        script="*$table"$'\n'
        mapfile -t chains < <(awk -v c="$cmd" -v t="$table" '$1 == "chain" && $2 == c && $3 == t { print $4 }' <<<"$new")
        del=()
        for ch in "${chains[@]}"; do del[$ch]=1; done
        # rules of kept chains that jump (-j) or go (-g) to a removed chain
        while read -r line; do
            from=$(awk '{ print $2 }' <<<"$line")
            to=$(sed -nE 's/.* -[jg] ([^ ]+)( .*)?$/\1/p' <<<"$line")
            [[ -n $to && -v del[$to] && ! -v del[$from] ]] && script+="-D ${line#-A }"$'\n'
        done < <("$cmd-save" -t "$table" 2>/dev/null | grep '^-A ')
        for ch in "${chains[@]}"; do script+="-F $ch"$'\n'; done
        for ch in "${chains[@]}"; do script+="-X $ch"$'\n'; done
        script+="COMMIT"
        if "$cmd-restore" --noflush <<<"$script" 2>/dev/null; then
            echo "$cmd table $table: chains ${chains[*]}"
        else
            warn "could not remove chains ${chains[*]} from $cmd table $table"
        fi
    done < <(awk '$1 == "chain" { print $2, $3 }' <<<"$new" | sort -u)
    while read -r _ ch; do
        if ipset destroy "$ch" 2>/dev/null; then echo "ipset $ch"; else warn "could not destroy ipset $ch"; fi
    done < <(awk '$1 == "ipset"' <<<"$new")
    while read -r _ cmd table; do
        if nft delete table "$cmd" "$table" 2>/dev/null; then echo "nft table $cmd $table"; else warn "could not delete nft table $cmd $table"; fi
    done < <(awk '$1 == "nft"' <<<"$new")
}
