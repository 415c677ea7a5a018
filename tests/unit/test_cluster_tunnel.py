"""envs/cluster/tunnel.sh (EDGE_TUNNEL=wireguard): zones, gateways, what each peer carries, the checks
cluster-up makes before starting anything. Pure shell functions: nothing on the machine is touched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

CLUSTER = Path(__file__).resolve().parents[2] / "envs" / "cluster"


def sh(script: str, **env: str) -> subprocess.CompletedProcess:
    settings = "".join(f"export {k}='{v}'; " for k, v in env.items())
    return subprocess.run(
        ["bash", "-c", f"{settings}source {CLUSTER}/lib.sh; source {CLUSTER}/tunnel.sh; {script}"],
        capture_output=True,
        text=True,
        timeout=30,
    )


FOUR = {"NODES": "4", "ZONES": "zone-a,zone-a,zone-b,zone-c", "EDGE_TUNNEL": "wireguard"}


def test_zones_gateways_and_what_each_zone_owns():
    r = sh(
        'tunnel_zones | tr "\\n" " "; echo; gateway_of zone-b; gateway_of zone-c; tunnel_hub_zone; '
        "zone_prefixes zone-a",
        **FOUR,
        CNI="bridge",
    )
    assert r.returncode == 0, r.stderr
    zones, gb, gc, hub, a = r.stdout.splitlines()
    assert zones.split() == ["zone-a", "zone-b", "zone-c"] and (gb, gc, hub) == ("3", "4", "zone-a")
    assert a == "10.210.0.11/32,10.244.1.0/24,10.210.0.12/32,10.244.2.0/24"


@pytest.mark.parametrize(("cni", "mtu"), [("bridge", "1420"), ("flannel-vxlan", "1370")])
def test_pods_leave_room_for_the_tunnel_and_their_own_encapsulation(cni, mtu):
    r = sh("tunnel_pod_mtu", **FOUR, CNI=cni)
    assert r.stdout.strip() == mtu


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"CNI": "macvlan"}, "needs CNI=bridge or flannel-vxlan"),
        ({"CNI": "flannel-host-gw"}, "one L2 segment"),
        ({"CNI": "calico-vxlan"}, "calico with the edge tunnel is not wired up"),
        ({"CNI": "bridge", "NODES": "2"}, "at least two zones"),
        ({"CNI": "bridge", "EDGE_TUNNEL": "ipsec"}, "must be empty or 'wireguard'"),
    ],
)
def test_cluster_up_refuses_what_cannot_work_with_the_reason(env, why):
    r = sh("tunnel_validate", **{**FOUR, **env})
    assert r.returncode != 0 and why in r.stderr, r.stderr


def test_no_tunnel_is_nothing_to_check_and_null_in_info():
    r = sh("tunnel_validate && tunnel_info_json", NODES="2", CNI="macvlan", EDGE_TUNNEL="")
    assert r.returncode == 0 and r.stdout.strip() == "null", r.stderr
