# shellcheck shell=bash
# The CNI mode of the cluster being brought up, through the mode table (modes.tsv, modes.sh: one file
# per mode, e.g. flannel.sh, with its hooks), and the template renderer. Sourced by up.sh after lib.sh.

# render TEMPLATE OUT VAR=value... : envsubst templates/TEMPLATE into OUT; only the ${VARS} the
# template names are substituted, each must be given (or set in the environment), none may be empty.
render() {
    local name=$1 tpl="$CLUSTER_DIR/templates/$1" out=$2 kv v
    shift 2
    [[ -f $tpl ]] || die "template $tpl missing"
    local vars
    vars=$(grep -o '\${[A-Za-z_][A-Za-z0-9_]*}' "$tpl" | sort -u | tr -d '${}' | tr '\n' ' ')
    (
        for kv in "$@"; do export "${kv?}"; done
        for v in $vars; do
            [[ -n ${!v:-} ]] || die "render $name: \${$v} is not set"
            export "${v?}"
        done
        envsubst "$(printf '${%s} ' $vars)" <"$tpl" >"$out.tmp"
    ) || exit 1
    mv -f "$out.tmp" "$out"
}

# the encapsulation of pod-to-pod traffic across nodes (info.json)
cni_encapsulation() { cni_field encapsulation; }

# the directory containerd runs CNI plugins from (calico, cilium: theirs beside the reference ones)
cni_bin_dir() {
    local d
    d=$(cni_hook bin_dir)
    echo "${d:-/usr/lib/cni}"
}

# the reference CNI plugins' version (Debian's containernetworking-plugins), for provenance
cni_plugins_version() { dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || echo unknown; }

# kube-proxy's masqueradeAll (macvlan needs it)
kube_proxy_masquerade_all() {
    local m
    m=$(cni_hook masquerade_all)
    echo "${m:-false}"
}

# the datapath in words (info.json, status)
cni_datapath() { cni_hook datapath; }

# write_node_cni_conf N: the CNI config of modes that need no daemon first (the others write theirs
# in cni_start)
write_node_cni_conf() { cni_hook cni_conf "$1"; }

# after the nodes registered with their podCIDRs: the mode's daemons and CNI configs
cni_start() { cni_hook start; }

# pod MTU: the mode's (what flannel chose, felix's, cilium's route MTU), else the edge tunnel's or the
# table's pod_mtu
pod_mtu() {
    local m
    m=$(cni_hook pod_mtu 2>/dev/null) || m=""
    if [[ -n $m ]]; then
        echo "$m"
    elif tunnel_on; then
        tunnel_pod_mtu
    else
        cni_field pod_mtu
    fi
}
