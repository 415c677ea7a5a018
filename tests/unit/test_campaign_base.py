"""A campaign derived from another (``base:``, podnet.launch.campaign.model): the base loaded first,
recursively, the derived file deep-merged over it; a missing base, a cycle and a derived campaign
under its base's name are errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podnet.launch.campaign import model
from podnet.launch.campaign import run as campaign

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def _write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _base(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "base.yaml",
        {
            "campaign": "b",
            "description": "the base",
            "experiment": "config/config.yaml",
            "launch": {"repeats": 3, "defaults": {"duration": 3, "omit": 1}},
            "stats": {"primary": [{"by": "variant", "baseline": "bridge.iptables"}], "thresholds": []},
            "bare_floor": 2,
            "variants": [{"cni": "bridge", "link_rate": "10gbit"}, {"cni": "flannel-vxlan"}],
        },
    )


def test_merge_mappings_key_by_key_lists_and_scalars_replaced():
    base = {"a": {"x": 1, "y": {"p": 1, "q": 2}}, "l": [1, 2], "s": "b", "m": {"k": 1}}
    over = {"a": {"y": {"q": 3}, "z": 4}, "l": [9], "s": None, "m": [1], "n": {"new": 1}}
    out = model.merge(base, over)
    assert out == {
        "a": {"x": 1, "y": {"p": 1, "q": 3}, "z": 4},
        "l": [9],
        "s": None,
        "m": [1],
        "n": {"new": 1},
    }
    assert list(out) == ["a", "l", "s", "m", "n"]  # the base's keys first
    out["a"]["y"]["p"] = 7
    out["l"].append(1)
    assert base["a"]["y"]["p"] == 1 and over["l"] == [9]  # neither input changed


def test_a_derived_campaign_is_merged_over_its_base(in_repo, tmp_path):
    base = _base(tmp_path)
    derived = _write(
        tmp_path / "derived.yaml",
        {
            "campaign": "d",
            "base": str(base),
            "launch": {"defaults": {"duration": 5}},
            "stats": {"primary": [{"by": "variant", "baseline": "bridge.iptables", "tests": ["iperf3:tcp"]}]},
            "variants": [{"cni": "bridge"}, {"cni": "flannel-vxlan", "proxy": "nftables"}],
        },
    )
    b, d = campaign.load(base), campaign.load(derived)
    assert (d.name, d.source, d.bare_floor) == ("d", derived, 2)
    assert d.experiment["experiment"] == "d" and d.experiment["description"] == "the base"
    # mappings merge key by key: duration replaced, omit and repeats kept from the base
    assert d.experiment["launch"]["defaults"] == {**b.experiment["launch"]["defaults"], "duration": 5}
    assert d.experiment["launch"]["repeats"] == 3
    # a list replaces the base's whole (primary, variants); the base's other stats keys stay
    assert d.experiment["stats"]["primary"] == [
        {"by": "variant", "baseline": "bridge.iptables", "tests": ["iperf3:tcp"]}
    ]
    assert d.experiment["stats"]["thresholds"] == []
    assert [v.name for v in d.variants] == ["bridge.iptables", "flannel-vxlan.nftables"]
    assert {v.link_rate for v in d.variants} == {None}
    # a base may itself derive from one (recursively)
    again = _write(tmp_path / "again.yaml", {"campaign": "e", "base": str(derived), "bare_floor": 0})
    e = campaign.load(again)
    assert (e.name, e.bare_floor, e.experiment["launch"]["defaults"]["duration"]) == ("e", 0, 5)
    assert [v.name for v in e.variants] == [v.name for v in d.variants]


def test_a_relative_base_is_read_from_the_working_directory_as_experiment(in_repo, tmp_path):
    derived = _write(
        tmp_path / "d.yaml",
        {"campaign": "ci-derived", "base": "config/campaigns/cni-ci.yaml", "variants": [{"cni": "bridge"}]},
    )
    c = campaign.load(derived)
    assert c.name == "ci-derived" and [v.name for v in c.variants] == ["bridge.iptables"]
    assert c.experiment["launch"] == campaign.load("config/campaigns/cni-ci.yaml").experiment["launch"]


def test_a_missing_or_bad_base_names_the_file(in_repo, tmp_path):
    missing = tmp_path / "nowhere.yaml"
    derived = _write(
        tmp_path / "d.yaml", {"campaign": "d", "base": str(missing), "variants": [{"cni": "bridge"}]}
    )
    with pytest.raises(campaign.CampaignError, match="cannot be read") as e:
        campaign.load(derived)
    assert str(derived) in str(e.value) and str(missing) in str(e.value)
    bad = tmp_path / "bad.yaml"
    bad.write_text("campaign: [unclosed\n", encoding="utf-8")
    _write(derived, {"campaign": "d", "base": str(bad)})
    with pytest.raises(campaign.CampaignError, match="not YAML") as e:
        campaign.load(derived)
    assert str(bad) in str(e.value)
    bad.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(campaign.CampaignError, match="a mapping of keys") as e:
        campaign.load(derived)
    assert str(bad) in str(e.value)
    for ref in ("", 3, ["a.yaml"]):
        _write(derived, {"campaign": "d", "base": ref})
        with pytest.raises(campaign.CampaignError, match="the path of another campaign file"):
            campaign.load(derived)
    # a base's own missing base: the error names that base and what it lacks
    mid = _write(tmp_path / "mid.yaml", {"campaign": "m", "base": str(missing)})
    _write(derived, {"campaign": "d", "base": str(mid)})
    with pytest.raises(campaign.CampaignError, match="cannot be read") as e:
        campaign.load(derived)
    assert str(e.value).startswith(str(mid)) and str(missing) in str(e.value)


def test_a_cycle_of_bases_is_an_error(in_repo, tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    _write(a, {"campaign": "a", "base": str(b)})
    _write(b, {"campaign": "b", "base": str(a)})
    with pytest.raises(campaign.CampaignError, match="a cycle of bases") as e:
        campaign.load(a)
    assert str(a) in str(e.value) and str(b) in str(e.value)
    _write(a, {"campaign": "a", "base": str(a)})  # its own base
    with pytest.raises(campaign.CampaignError, match="a cycle of bases"):
        campaign.load(a)


def test_a_derived_campaign_names_itself_apart_from_its_base(in_repo, tmp_path):
    base = _base(tmp_path)
    derived = _write(tmp_path / "d.yaml", {"base": str(base), "variants": [{"cni": "bridge"}]})
    with pytest.raises(campaign.CampaignError, match="names itself"):
        campaign.load(derived)
    _write(derived, {"campaign": "b", "base": str(base)})
    with pytest.raises(campaign.CampaignError, match="is its base's") as e:
        campaign.load(derived)
    assert str(derived) in str(e.value)


def test_unknown_keys_are_checked_on_the_merged_document(in_repo, tmp_path):
    base = _base(tmp_path)
    doc = yaml.safe_load(base.read_text(encoding="utf-8"))
    _write(base, {**doc, "lanuch": {}})
    derived = _write(tmp_path / "d.yaml", {"campaign": "d", "base": str(base)})
    with pytest.raises(campaign.CampaignError, match="unknown keys.*lanuch"):
        campaign.load(derived)
    _write(base, doc)
    _write(derived, {"campaign": "d", "base": str(base), "varaints": []})
    with pytest.raises(campaign.CampaignError, match="unknown keys.*varaints"):
        campaign.load(derived)
    # required keys may come from the base
    _write(derived, {"campaign": "d", "base": str(base)})
    assert [v.name for v in campaign.load(derived).variants] == [
        "bridge.iptables.10gbit",
        "flannel-vxlan.iptables",
    ]
