# shellcheck shell=bash
# The link shaper of the embedded cluster (net.sh: every node's port on the fabric, LINK_RATE) and
# of the noise floor's veth (podnet floor --link-rate): one token bucket, so a shaped floor and a
# shaped cluster are the same link. Sourced, or run as
#   bash envs/cluster/shape.sh NAMESPACE DEVICE RATE      (e.g. podnet-floor-c pnfloor-c 1gbit)
# tbf counts each frame's bytes from its Ethernet header (no preamble, gap or FCS); a GSO
# super-packet counts as its segments with their headers.

# link_rate_bytes RATE -> bytes per second (accepts 10gbit, 1gbit, 500mbit, 800kbit, also Gbit/Mbit, G/M/K)
link_rate_bytes() {
    local r=${1,,}
    r=${r%/s}
    [[ $r =~ ^([0-9]+(\.[0-9]+)?)([kmg]?)(bit|bps|b)?$ ]] || return 1
    local num=${BASH_REMATCH[1]} unit=${BASH_REMATCH[3]} kind=${BASH_REMATCH[4]:-bit}
    awk -v n="$num" -v u="$unit" -v k="$kind" 'BEGIN {
        m = (u == "k") ? 1e3 : (u == "m") ? 1e6 : (u == "g") ? 1e9 : 1;
        b = n * m; if (k != "bps") b = b / 8; printf "%d\n", b }'
}

# shape DEV NS RATE: token bucket on DEV's egress
shape() {
    local dev=$1 ns=$2 rate=$3 bytes burst
    bytes=$(link_rate_bytes "$rate") || die "LINK_RATE=$rate not understood (use e.g. 1gbit, 500mbit, 100mbit)"
    # burst: 2 ms worth of bytes, at least 128 KiB so GSO super-packets pass unsplit
    burst=$((bytes / 500))
    ((burst < 131072)) && burst=131072
    ip -n "$ns" link set "$dev" txqueuelen 1000
    ip -n "$ns" link set "$dev" gso_max_size 65536 2>/dev/null || true
    tc -n "$ns" qdisc replace dev "$dev" root tbf rate "$((bytes * 8))bit" burst "$burst" latency 20ms
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -euo pipefail
    die() { echo "shape.sh: $*" >&2; exit 1; }
    (($# == 3)) || die "usage: shape.sh NAMESPACE DEVICE RATE"
    shape "$2" "$1" "$3"
fi
