"""envs/cluster/modes.tsv: one table of CNI modes that the cluster scripts, make and the campaign model
read; one file per mode with its hooks. Pure shell functions: nothing on the machine is touched."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from podnet.launch.campaign import model as campaign_config

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "envs" / "cluster"
HOOKS = {
    "packages",
    "probe",
    "routes",
    "cni_conf",
    "start",
    "alive",
    "fingerprint",
    "datapath",
    "info_json",
    "bin_dir",
    "masquerade_all",
    "pod_mtu",
    "tunnel_refusal",
    "process_re",
    "check_clean",
}


def sh(script: str, **env: str) -> subprocess.CompletedProcess:
    settings = "".join(f"export {k}='{v}'; " for k, v in env.items())
    return subprocess.run(
        [
            "bash",
            "-c",
            f"{settings}source {CLUSTER}/lib.sh; source {CLUSTER}/cni.sh; "
            f"source {CLUSTER}/net.sh; source {CLUSTER}/tunnel.sh; {script}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def table() -> list[dict[str, str]]:
    rows = [
        ln.split("\t")
        for ln in (CLUSTER / "modes.tsv").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def test_the_campaign_model_and_the_scripts_read_the_same_modes():
    modes = tuple(r["mode"] for r in table())
    assert campaign_config.CNI_MODES == modes
    out = subprocess.run(["bash", str(CLUSTER / "modes.sh"), "modes"], capture_output=True, text=True)
    assert tuple(out.stdout.split()) == modes


def test_every_mode_has_its_file_and_ci_legs():
    matrix = subprocess.run(
        ["bash", str(CLUSTER / "modes.sh"), "ci-matrix"], capture_output=True, text=True
    ).stdout.split()
    for row in table():
        assert (CLUSTER / row["file"]).is_file(), row
        assert row["encapsulation"] in {"vxlan", "none"} and row["pod_mtu"].isdigit(), row
        assert row["edge_tunnel"] in {"pods", "nodes", "-"}, row
        for b in row["build"].split(","):
            assert b == "-" or (CLUSTER / b).is_file(), row
        assert any(leg.startswith(row["mode"] + ":") for leg in matrix), f"{row['mode']} has no CI leg"
    assert matrix[0] == "bridge:2"  # the first leg runs every integration test


def test_mode_files_define_only_known_hooks():
    for f in {r["file"] for r in table()}:
        stem = f.removesuffix(".sh")
        text = (CLUSTER / f).read_text()
        assert re.search(r"^#\s+brings up", text, re.M) and re.search(r"^#\s+takes down", text, re.M), f
        for name in re.findall(rf"^{stem}_(\w+)\(\)", text, re.M):
            # helpers of the file may share its prefix; a hook is one of the documented names
            if name in HOOKS:
                assert f"#   {name}" in (CLUSTER / "modes.sh").read_text()


def test_no_mode_is_dispatched_outside_its_file():
    """`cni_is_*` tests and `$CNI == <mode>` comparisons live only in the mode files."""
    mode_files = {r["file"] for r in table()}
    for f in CLUSTER.glob("*.sh"):
        if f.name in mode_files:
            continue
        text = f.read_text()
        assert "cni_is_" not in text, f.name
        assert not re.search(r"\$CNI\s*(==|=~|!=)", text), f.name


@pytest.mark.parametrize("row", table(), ids=lambda r: r["mode"])
def test_dispatch_through_the_table(row):
    r = sh(
        "echo $(cni_encapsulation); echo $(kube_proxy_masquerade_all); echo $(cni_bin_dir); "
        "cni_datapath | head -c 40; echo; echo $(cni_field file)",
        CNI=row["mode"],
    )
    assert r.returncode == 0, r.stderr
    enc, masq, bindir, datapath, file_ = r.stdout.splitlines()
    assert enc == row["encapsulation"] and file_ == row["file"]
    assert masq == ("true" if row["mode"] == "macvlan" else "false")
    assert bindir == (
        "/usr/lib/cni"
        if row["mode"] in {"bridge", "macvlan"} or "flannel" in row["mode"]
        else "/run/podnet-cluster/cni-bin"
    )
    assert datapath


def test_pod_mtu_without_a_daemon_is_the_tables_or_the_tunnels():
    assert sh("pod_mtu", CNI="bridge").stdout.strip() == "1500"
    assert sh("pod_mtu", CNI="bridge", EDGE_TUNNEL="wireguard").stdout.strip() == "1420"


def test_calico_and_cilium_mtus_agree_with_the_table():
    mtu = {r["mode"]: r["pod_mtu"] for r in table()}
    for mode, var in (
        ("calico-vxlan", "CALICO_MTU"),
        ("calico-bgp", "CALICO_MTU"),
        ("cilium-vxlan", "CILIUM_MTU"),
    ):
        assert sh(f"echo ${var}", CNI=mode).stdout.strip() == mtu[mode], mode


def test_every_mode_adds_its_packages_and_global_paths():
    r = sh("cni_hook packages | paste -sd' '; echo ${GLOBAL_PATHS[@]}", CNI="calico-bgp")
    pkgs, paths = r.stdout.splitlines()
    assert "bird=bird" in pkgs and "ipset=ipset" in pkgs
    # down.sh and check-clean.sh see every mode's paths, whatever CNI is
    for p in ("/run/flannel", "/var/lib/calico", "/run/cilium", "/run/wireguard"):
        assert p in paths.split()


def test_an_unknown_mode_is_refused_with_the_tables_modes():
    text = (CLUSTER / "up.sh").read_text()
    assert "cni_field file" in text and "modes.tsv" in text
    r = sh("cni_field file", CNI="weave")
    assert r.returncode == 0 and r.stdout == ""
