# shellcheck shell=bash
# The CNI modes: the table modes.tsv and the hooks of each mode's file. Sourced by lib.sh (it then
# sources every mode file: down.sh and check-clean.sh take down and check every mode, whatever CNI
# is); run as a script it prints for make and ci.sh: `bash modes.sh modes|ci-matrix|field MODE COLUMN`.
#
# A mode's file (column `file`, e.g. flannel.sh) says in its header what it brings up, checks and takes
# down, and defines any of these hooks, named <file stem>_<hook> (flannel.sh: flannel_start); a hook it
# does not define does nothing (or the default below). $CNI says which of the file's modes is up.
#   packages        print `command=debian-package` lines cluster-up installs when missing
#   probe NS        (probe_kernel, in the scratch namespace NS with veth pa/pb) print each missing feature
#   routes          (net_up, after the fabric and the nodes) node-to-node routes the CNI does not program
#   cni_conf N      (before the node's daemons) node N's CNI config, when it needs no CNI daemon first
#   start           (after the nodes registered with their podCIDRs) the CNI's daemons and CNI configs
#   alive N         (cluster_healthy) the CNI's daemons of node N still run
#   fingerprint     words added to the settings fingerprint (versions)
#   datapath        the datapath in words (info.json cni_datapath)
#   info_json       more info.json fields, each line starting ,\n (e.g. a "calico" object)
#   bin_dir         the directory containerd runs CNI plugins from (default /usr/lib/cni)
#   masquerade_all  kube-proxy's masqueradeAll (default false)
#   pod_mtu         the pods' MTU once up (default: the table's pod_mtu, or the edge tunnel's)
#   tunnel_refusal  why EDGE_TUNNEL=wireguard is refused (modes with edge_tunnel -)
#   process_re      (check-clean.sh, every mode) a regex of its daemons' command lines by any path
#   check_clean     (check-clean.sh, every mode) call `bad "..."` for each leftover in the root namespace
# A mode file may also add the global paths its daemons write to GLOBAL_PATHS (recorded before the
# first cluster-up, removed by cluster-down when they were not there, checked by check-clean).

MODES_TSV="$CLUSTER_DIR/modes.tsv"

# mode_rows: the table without comments, header first
mode_rows() { grep -v '^#' "$MODES_TSV" | grep .; }

# cni_modes: every mode, in table order
cni_modes() { mode_rows | awk -F'\t' 'NR > 1 { print $1 }'; }

# mode_field MODE COLUMN: the value of COLUMN for MODE (empty for an unknown mode)
mode_field() {
    mode_rows | awk -F'\t' -v m="$1" -v c="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; if (!(c in col)) exit 2; next }
        $1 == m { print $col[c]; exit }'
}
cni_field() { mode_field "$CNI" "$1"; }

# mode_files: each mode file once, in table order
mode_files() { mode_rows | awk -F'\t' 'NR > 1 && !seen[$2]++ { print $2 }'; }

# cni_hook HOOK ARGS...: run the current mode's hook if its file defines it
cni_hook() {
    local f
    f=$(cni_field file)
    f="${f%.sh}_$1"
    shift
    if declare -F "$f" >/dev/null; then "$f" "$@"; fi
}

# each_mode_hook HOOK ARGS...: run HOOK of every mode file that defines it
each_mode_hook() {
    local f h=$1
    shift
    for f in $(mode_files); do
        if declare -F "${f%.sh}_$h" >/dev/null; then "${f%.sh}_$h" "$@"; fi
    done
}

# the CI matrix: every mode's legs as CNI:NODES[:PROXY[:EDGE_TUNNEL[:ZONES]]]
mode_ci_matrix() {
    mode_rows | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { n = split($col["ci"], legs, ","); for (i = 1; i <= n; i++) if (legs[i] != "-") printf "%s%s:%s", sep, $1, legs[i]; sep = " " }
        END { print "" }'
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -o errexit -o nounset -o pipefail
    CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    MODES_TSV="$CLUSTER_DIR/modes.tsv"
    case ${1:-} in
        modes) cni_modes | paste -sd' ' ;;
        ci-matrix) mode_ci_matrix ;;
        field) mode_field "$2" "$3" ;;
        *)
            echo "usage: bash modes.sh modes | ci-matrix | field MODE COLUMN" >&2
            exit 2
            ;;
    esac
    exit 0
fi

for _f in $(mode_files); do
    # shellcheck source=/dev/null
    source "$CLUSTER_DIR/$_f"
done
unset _f
