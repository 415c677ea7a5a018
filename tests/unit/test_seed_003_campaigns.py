"""Seed 003's campaign at its link speed (issue 46): config/campaigns/seed-003.yaml, make compare's
default, shapes every fabric link to 10 Gbit/s; config/campaigns/seed-003-unshaped.yaml is the same
design unshaped, under its own campaign name."""

from __future__ import annotations

import yaml

from podnet.launch.campaign import run as campaign
from podnet.launch.spec.config import from_mapping
from tests.conftest import REPO

SEED3 = REPO / "config" / "campaigns" / "seed-003.yaml"


def test_seed_003_runs_at_10gbit_by_default_and_unshaped_as_an_option(monkeypatch):
    """make compare's seed-003 shapes every fabric link to 10 Gbit/s (seed 003's 10 GbE NICs);
    seed-003-unshaped is the same design without link_rate, under its own campaign name (raw/,
    processed/ and .campaign/ apart), its names without ".10gbit"."""
    monkeypatch.chdir(REPO)
    shaped, unshaped = campaign.load(SEED3), campaign.load(SEED3.with_name("seed-003-unshaped.yaml"))
    assert (shaped.name, unshaped.name) == ("seed-003", "seed-003-unshaped")
    assert {v.link_rate for v in shaped.variants} == {"10gbit"}
    assert {v.link_rate for v in unshaped.variants} == {None}
    assert [v.name for v in shaped.variants] == [f"{v.name}.10gbit" for v in unshaped.variants]
    assert [v.cluster_env()["LINK_RATE"] for v in shaped.variants] == ["10gbit"] * 6
    assert str(from_mapping(campaign.variant_config(unshaped, unshaped.variants[0])).raw_dir) == (
        "raw/seed-003-unshaped"
    )
    # one design: the same launch, the same statistics with the names apart
    assert shaped.experiment["launch"] == unshaped.experiment["launch"]
    strip = yaml.safe_dump(shaped.experiment["stats"], sort_keys=True).replace(".10gbit", "")
    assert strip == yaml.safe_dump(unshaped.experiment["stats"], sort_keys=True)
    names = {v.name for v in shaped.variants}
    for p in shaped.experiment["stats"]["primary"]:
        assert {p["baseline"], *p["treatments"]} <= names
    mapped = {v for v in shaped.experiment["report"]["vs_seed"]["variants"].values() if v}
    assert mapped <= names and "macvlan.iptables.10gbit" in mapped
