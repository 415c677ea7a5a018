#!/usr/bin/env bash
# CI for the embedded cluster: for each configuration bring the cluster up, run the integration
# tests (pytest -m cluster tests/integration) against it; always take it down at the end, even
# when a test or a bring-up fails, and verify that nothing was left behind (check-clean.sh).
#   CLUSTER_CI_MATRIX="bridge:2 vxlan:3"  (CNI:NODES pairs; default)
#   CLUSTER_CI_TESTS="tests/integration"  (pytest paths; default)
# Exit status: non-zero if any bring-up, test, teardown or cleanliness check failed.
set -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
MATRIX=${CLUSTER_CI_MATRIX:-bridge:2 vxlan:3}
read -r -a TESTS <<<"${CLUSTER_CI_TESTS:-tests/integration}"
PY=${CLUSTER_PYTHON:-.venv/bin/python}
[[ -x $PY ]] || PY=python3
rc=0

finish() {
    echo "== cluster-ci: cluster-down"
    bash envs/cluster/down.sh || rc=1
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
for cfg in $MATRIX; do
    cni=${cfg%%:*} nodes=${cfg##*:}
    echo "== cluster-ci: cluster-up CNI=$cni NODES=$nodes"
    if ! CNI=$cni NODES=$nodes bash envs/cluster/up.sh; then
        rc=1
        continue
    fi
    echo "== cluster-ci: integration tests CNI=$cni NODES=$nodes"
    PODNET_REQUIRE_CLUSTER=1 "$PY" -m pytest -p no:cacheprovider -m cluster "${TESTS[@]}" -v || rc=1
done
