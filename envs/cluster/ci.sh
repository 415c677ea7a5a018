#!/usr/bin/env bash
# CI for the embedded cluster: for each configuration bring the cluster up, run the integration
# tests (pytest -m cluster tests/integration) against it, take it down, and verify that nothing was
# left behind (check-clean.sh); always take it down at the end, even when a test or a bring-up fails.
# Every leg also tests the root-namespace guarantee (rootns-test.sh): a KUBE-SERVICES chain in nat, an
# ipset cali40-test and an nft table inet kube-proxy planted before cluster-up are identical after
# cluster-down (then removed, and check-clean passes).
#   CLUSTER_CI_MATRIX="bridge:2 flannel-vxlan:3:nftables ..."
#                                         (CNI:NODES[:PROXY[:EDGE_TUNNEL[:ZONES with /]]]; default: every
#                                         mode's legs, column ci of modes.tsv: bash modes.sh ci-matrix)
#   CLUSTER_CI_TESTS="tests/integration"  (pytest paths of the first entry; default)
#   CLUSTER_CI_MORE_TESTS="tests/integration/test_cluster.py"  (pytest paths of the other entries:
#       the datapath tests; the launcher's tests do not depend on the CNI, and the CNI campaign
#       (make compare-ci) runs the launcher under every CNI anyway)
# Exit status: non-zero if any bring-up, test, teardown or cleanliness check failed.
set -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
MATRIX=${CLUSTER_CI_MATRIX:-$(bash envs/cluster/modes.sh ci-matrix)}
read -r -a TESTS <<<"${CLUSTER_CI_TESTS:-tests/integration}"
read -r -a MORE_TESTS <<<"${CLUSTER_CI_MORE_TESTS:-tests/integration/test_cluster.py}"
PY=${CLUSTER_PYTHON:-.venv/bin/python}
[[ -x $PY ]] || PY=python3
rc=0
ROOTNS_DIR=$(mktemp -d)

finish() {
    echo "== cluster-ci: cluster-down"
    bash envs/cluster/down.sh || rc=1
    bash envs/cluster/rootns-test.sh remove "$ROOTNS_DIR" || rc=1
    rm -rf "$ROOTNS_DIR"
    echo "== cluster-ci: check-clean"
    bash envs/cluster/check-clean.sh || rc=1
    echo "== cluster-ci: $( ((rc == 0)) && echo PASSED || echo FAILED)"
    exit "$rc"
}
trap finish EXIT
trap 'rc=130; exit' INT TERM

"$PY" -c 'import kubernetes, pytest' 2>/dev/null || {
    echo "cluster-ci: $PY lacks the 'kubernetes' and/or 'pytest' packages (make setup)"
    rc=1
    exit
}
times=()
first=1
for cfg in $MATRIX; do
    IFS=: read -r cni nodes proxy tunnel zones <<<"$cfg"
    proxy=${proxy:-iptables}
    zones=${zones:-${ZONES:-zone-a,zone-a,zone-b}}
    zones=${zones//\//,}
    t0=$(date +%s)
    bash envs/cluster/rootns-test.sh plant "$ROOTNS_DIR"
    planted=$?
    ((planted == 0 || planted == 2)) || rc=1
    echo "== cluster-ci: cluster-up CNI=$cni NODES=$nodes PROXY=$proxy EDGE_TUNNEL=${tunnel:-none} ZONES=$zones"
    if CNI=$cni NODES=$nodes PROXY=$proxy EDGE_TUNNEL=$tunnel ZONES=$zones bash envs/cluster/up.sh; then
        t1=$(date +%s)
        echo "== cluster-ci: integration tests CNI=$cni NODES=$nodes PROXY=$proxy"
        if ((first)); then tests=("${TESTS[@]}"); else tests=("${MORE_TESTS[@]}"); fi
        first=0
        PODNET_REQUIRE_CLUSTER=1 "$PY" -m pytest -p no:cacheprovider -m cluster "${tests[@]}" -v || rc=1
        times+=("$cfg: up $((t1 - t0)) s, tests $(($(date +%s) - t1)) s")
    else
        rc=1
        times+=("$cfg: bring-up FAILED after $(($(date +%s) - t0)) s")
    fi
    echo "== cluster-ci: cluster-down, root-namespace objects, check-clean CNI=$cni"
    CNI=$cni NODES=$nodes PROXY=$proxy EDGE_TUNNEL=$tunnel ZONES=$zones bash envs/cluster/down.sh || rc=1
    if ((planted == 0)); then bash envs/cluster/rootns-test.sh verify "$ROOTNS_DIR" || rc=1; fi
    bash envs/cluster/check-clean.sh || rc=1
done
echo "== cluster-ci: leg times"
printf '   %s\n' "${times[@]}"
