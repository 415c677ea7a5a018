#!/usr/bin/env bash
# Quick datapath check on the running cluster: iperf3 TCP pod->pod on the same node and across
# nodes (node-1 -> node-2), DURATION seconds each (default 5). Prints Gbit/s; cleans up after itself.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DURATION=${DURATION:-5}
NS="podnet-smoke-$$"
K=(kubectl_admin -n "$NS")
[[ -f $STATE_DIR/image ]] || die "no running cluster (make cluster-up)"
img=$(cat "$STATE_DIR/image")
kubectl_admin create namespace "$NS" >/dev/null
trap 'kubectl_admin delete namespace "$NS" --wait=false >/dev/null 2>&1' EXIT
wait_for sa 30 "${K[@]}" get serviceaccount default
for spec in a:1 b:1 c:2; do
    "${K[@]}" run "${spec%%:*}" --image="$img" --image-pull-policy=Never \
        --overrides="{\"spec\":{\"nodeSelector\":{\"kubernetes.io/hostname\":\"$(node_name "${spec##*:}")\"},\"terminationGracePeriodSeconds\":0}}" >/dev/null
done
"${K[@]}" wait --for=condition=Ready pod/a pod/b pod/c --timeout=60s >/dev/null
for srv in b c; do "${K[@]}" exec "$srv" -- iperf3 -s -D -1 >/dev/null; done
sleep 0.5
run() {
    local ip
    ip=$("${K[@]}" get pod "$1" -o jsonpath='{.status.podIP}')
    "${K[@]}" exec a -- iperf3 -c "$ip" -t "$DURATION" -J |
        python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e9))'
}
cni=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1])); print(i["cni"], i["link_rate"] or "unshaped")' "$STATE_DIR/info.json")
echo "iperf3 TCP pod->pod, CNI/link: $cni, ${DURATION}s: same node $(run b) Gbit/s, cross node $(run c) Gbit/s"
