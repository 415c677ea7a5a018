"""Seed 003's campaign at its link speed (issue 46): config/campaigns/seed-003.yaml, make compare's
default, shapes every fabric link to 10 Gbit/s; config/campaigns/seed-003-unshaped.yaml derives from
it (``base:``): the same design unshaped, under its own campaign name, with the same variant names."""

from __future__ import annotations

import copy

import yaml

from podnet.launch.campaign import run as campaign
from podnet.launch.spec.config import from_mapping
from tests.conftest import REPO

SEED3 = REPO / "config" / "campaigns" / "seed-003.yaml"
UNSHAPED = SEED3.with_name("seed-003-unshaped.yaml")


def test_seed_003_runs_at_10gbit_by_default_and_unshaped_as_an_option(monkeypatch):
    """make compare's seed-003 shapes every fabric link to 10 Gbit/s (seed 003's 10 GbE NICs);
    seed-003-unshaped is the same design without link_rate, under its own campaign name (raw/,
    processed/ and .campaign/ apart), its variants named as seed-003's (the tables line up)."""
    monkeypatch.chdir(REPO)
    shaped, unshaped = campaign.load(SEED3), campaign.load(UNSHAPED)
    assert (shaped.name, unshaped.name) == ("seed-003", "seed-003-unshaped")
    assert yaml.safe_load(UNSHAPED.read_text(encoding="utf-8"))["base"] == "config/campaigns/seed-003.yaml"
    assert {v.link_rate for v in shaped.variants} == {"10gbit"}
    assert {v.link_rate for v in unshaped.variants} == {None}
    assert [v.name for v in shaped.variants] == [v.name for v in unshaped.variants]
    assert [v.name for v in shaped.variants] == [
        "macvlan.iptables",
        "macvlan-aa",
        "calico-vxlan.iptables",
        "calico-bgp.iptables",
        "cilium-vxlan.iptables",
        "flannel-vxlan.iptables",
    ]
    assert [v.cluster_env()["LINK_RATE"] for v in shaped.variants] == ["10gbit"] * 6
    assert [v.cluster_env()["LINK_RATE"] for v in unshaped.variants] == [""] * 6
    # otherwise one cluster set-up per variant: the rate is the only difference
    for a, b in zip(shaped.variants, unshaped.variants):
        assert {**a.cluster_env(), "LINK_RATE": ""} == b.cluster_env(), a.name
    for c in (shaped, unshaped):
        assert str(from_mapping(campaign.variant_config(c, c.variants[0])).raw_dir) == f"raw/{c.name}"
    names = {v.name for v in shaped.variants}
    for p in shaped.experiment["stats"]["primary"]:
        assert {p["baseline"], *p["treatments"]} <= names
    mapped = {v for v in shaped.experiment["report"]["vs_seed"]["variants"].values() if v}
    assert mapped <= names and "macvlan.iptables" in mapped


def test_the_unshaped_campaign_is_seed_003_but_for_its_name_description_rates_and_cap_note(monkeypatch):
    """One design: the experiment seed-003-unshaped loads is seed-003's but for the campaign name,
    the description and the vs_seed note on the link cap (the variants: the link rates only)."""
    monkeypatch.chdir(REPO)
    shaped, unshaped = campaign.load(SEED3), campaign.load(UNSHAPED)
    a, b = copy.deepcopy(shaped.experiment), copy.deepcopy(unshaped.experiment)
    assert (a.pop("experiment"), b.pop("experiment")) == ("seed-003", "seed-003-unshaped")
    da, db = a.pop("description"), b.pop("description")
    assert "10 Gbit/s" in da and "unshaped" in db and "10 Gbit/s" not in db
    na, nb = a["report"]["vs_seed"].pop("notes"), b["report"]["vs_seed"].pop("notes")
    assert "tbf caps" in na[0]["note"] and "no cap" in nb[0]["note"]
    assert [{k: v for k, v in n.items() if k != "note"} for n in na] == [
        {k: v for k, v in n.items() if k != "note"} for n in nb
    ]
    assert a == b
    assert (shaped.interleave, shaped.side_by_side, shaped.bare_floor) == (
        unshaped.interleave,
        unshaped.side_by_side,
        unshaped.bare_floor,
    )
    assert campaign.design(shaped) == campaign.design(unshaped)
    assert campaign.cluster_ids(shaped) == campaign.cluster_ids(unshaped)
