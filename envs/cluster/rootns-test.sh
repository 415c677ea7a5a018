#!/usr/bin/env bash
# The root-namespace guarantee, tested around a cluster-up/cluster-down pair (ci.sh, every leg):
#   rootns-test.sh plant DIR   before cluster-up: objects a machine that is itself a Kubernetes node
#                              (or runs calico, k3s, ...) would have, in the root namespace: a chain
#                              KUBE-SERVICES in table nat holding a rule, an ipset cali40-test, an nft
#                              table inet kube-proxy holding a rule; their listings saved in DIR
#   rootns-test.sh verify DIR  after cluster-down: all three still there, byte for byte (iptables-save,
#                              ipset save and nft list of exactly those objects); then removes them
#   rootns-test.sh remove DIR  removes them (only the ones carrying this test's marker), and the empty nft
#                              table ip nat that iptables-nft made for the chain if there was none before
# The objects carry the comment podnet-rootns-test; a machine that already has one of them without
# it is left alone (plant exits 2: the test is skipped, nothing of the machine is touched).
# Nothing refers to them: the rule's chains are hooked nowhere, no packet passes them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root rootns-test
MARK=podnet-rootns-test

ipt_listing() { iptables-save -t nat 2>/dev/null | grep -E '^(:KUBE-SERVICES |-A KUBE-SERVICES )'; }
ipset_listing() { ipset save cali40-test 2>/dev/null; }
nft_listing() { nft list table inet kube-proxy 2>/dev/null; }
listing() { printf '== iptables nat KUBE-SERVICES\n%s\n== ipset cali40-test\n%s\n== nft inet kube-proxy\n%s\n' "$(ipt_listing)" "$(ipset_listing)" "$(nft_listing)"; }

# state LISTING: absent (0), ours (1: a single rule or element, with the marker), the machine's own (2)
state() {
    if [[ -z $1 ]]; then echo 0; elif [[ $1 == *"$MARK"* && $(grep -cE '^(-A |add |\s+ip daddr)' <<<"$1") == 1 ]]; then echo 1; else echo 2; fi
}
state_ipt() { state "$(ipt_listing)"; }
state_ipset() { state "$(ipset_listing)"; }
state_nft() { state "$(nft_listing)"; }

# remove DIR: this test's objects; iptables-nft's table ip nat too when plant made it and it is empty
remove() {
    [[ $(state_ipt) == 1 ]] && { iptables -t nat -F KUBE-SERVICES && iptables -t nat -X KUBE-SERVICES || return 1; }
    [[ $(state_ipset) == 1 ]] && { ipset destroy cali40-test || return 1; }
    [[ $(state_nft) == 1 ]] && { nft delete table inet kube-proxy || return 1; }
    if [[ -f $1/made-ip-nat && $(nft list table ip nat 2>/dev/null | grep -v '^#' | tr -d ' \t\n') == "tableipnat{}" ]]; then
        nft delete table ip nat || return 1
    fi
    rm -f "$1/made-ip-nat"
}

case ${1:-} in
    plant)
        dir=${2:?DIR}
        mkdir -p "$dir"
        remove "$dir" || die "could not remove an earlier test's objects"
        for s in "ipt $(state_ipt)" "ipset $(state_ipset)" "nft $(state_nft)"; do
            [[ ${s#* } == 2 ]] && {
                echo "rootns-test: SKIPPED: this machine has its own ${s% *} object of that name (left alone)"
                exit 2
            }
        done
        ensure_packages ipset=ipset nft=nftables iptables=iptables
        nft list table ip nat >/dev/null 2>&1 || touch "$dir/made-ip-nat"
        iptables -t nat -N KUBE-SERVICES &&
            iptables -t nat -A KUBE-SERVICES -d 192.0.2.1/32 -p tcp --dport 80 -m comment --comment "$MARK" -j RETURN &&
            ipset create cali40-test hash:ip comment &&
            ipset add cali40-test 192.0.2.1 comment "$MARK" &&
            nft add table inet kube-proxy &&
            nft add chain inet kube-proxy services &&
            nft add rule inet kube-proxy services ip daddr 192.0.2.1 tcp dport 80 drop comment "\"$MARK\"" ||
            die "could not plant the objects"
        listing >"$dir/before"
        echo "rootns-test: planted KUBE-SERVICES (nat), ipset cali40-test, nft table inet kube-proxy"
        ;;
    verify)
        dir=${2:?DIR}
        [[ -f $dir/before ]] || die "nothing planted ($dir/before missing)"
        listing >"$dir/after"
        rc=0
        if cmp -s "$dir/before" "$dir/after"; then
            echo "rootns-test: OK: KUBE-SERVICES (nat), ipset cali40-test and nft table inet kube-proxy identical after cluster-up and cluster-down"
        else
            echo "rootns-test: FAILED: the machine's own objects changed:"
            diff "$dir/before" "$dir/after"
            rc=1
        fi
        remove "$dir" || rc=1
        rm -f "$dir/before" "$dir/after"
        exit "$rc"
        ;;
    remove) remove "${2:?DIR}" ;;
    *) die "usage: rootns-test.sh plant DIR | verify DIR | remove DIR" ;;
esac
