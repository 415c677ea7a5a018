"""Config defaults have one source, the schema's `default:` values: the workflow reads them from
podnet.config.schema, and where the READMEs state a default it is the schema's."""

from __future__ import annotations

import re

import pytest
import yaml

from podnet.config import schema
from tests.conftest import REPO

DOCS = ["README.md", "podnet/launch/README.md"]
#: "`parse.shards` (default 8)", "`report.notebooks` (default `report`, `explore`, ...)"
MENTION = re.compile(r"`((?:parse|report|launch)\.[a-z_.]+)`\s*\(default\s+([^)]*)\)")


def _default(path: str):
    *parents, key = path.split(".")
    return schema.defaults(*parents)[key]


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9_.-]+", text)


def mentions() -> list[tuple[str, str, str]]:
    out = []
    for doc in DOCS:
        text = " ".join((REPO / doc).read_text(encoding="utf-8").split())  # one line: mentions may wrap
        out += [(doc, m[1], m[2]) for m in MENTION.finditer(text)]
    return out


def test_the_readmes_state_workflow_defaults():
    found = {path for _, path, _ in mentions()}
    assert {"parse.shards", "report.notebooks"} <= found, found


@pytest.mark.parametrize("doc,path,text", mentions())
def test_a_stated_default_is_the_schemas(doc, path, text):
    value = _default(path)
    expected = [str(v) for v in value] if isinstance(value, list) else [str(value).lower()]
    assert _words(text.lower()) == [e.lower() for e in expected], (
        f"{doc}: `{path}` (default {text}): schema {value}"
    )


def test_the_workflow_repeats_no_schema_default():
    # the workflow takes parse/report/stats defaults from podnet.config.schema; a literal copy would drift
    src = "\n".join(p.read_text() for p in sorted((REPO / "workflow").rglob("*.smk")))
    assert "schema.defaults(" in src
    notebooks = schema.defaults("report")["notebooks"]
    assert repr(notebooks) not in src and repr(notebooks).replace("'", '"') not in src
    shards = schema.defaults("parse")["shards"]
    assert not re.search(rf"""["']shards["']\s*,\s*{shards}\b""", src)
    assert not re.search(r"""\.get\(\s*["'](thresholds|compare_with|notebooks)["']\s*,""", src)


def test_the_launch_config_reads_endpoint_and_tool_defaults_from_the_schema():
    from podnet.launch.spec.config import from_mapping

    cfg = from_mapping(
        {
            "experiment": "x",
            "launch": {
                "tools": {"iperf3": {"tests": [{"name": "tcp"}]}},
                "scenarios": [{"name": "s", "client": {}, "server": {"kind": "host"}, "tests": ["iperf3"]}],
            },
        }
    )
    endpoint = schema.defaults_of(schema.section("launch")["$defs"]["endpoint"])
    (case,) = cfg.cases
    assert case.scenario.client.kind == endpoint["kind"] and case.scenario.client.index == endpoint["index"]
    assert cfg.namespace_create is schema.defaults("launch", "namespace")["create"]


def test_a_campaign_goes_round_by_the_schemas_repeats_when_the_experiment_sets_none(tmp_path):
    from podnet.launch.campaign import run as campaign
    from tests.launch_configs import experiment, pod_pod

    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump(experiment([pod_pod()])))  # no launch.repeats
    doc = {"campaign": "c", "experiment": str(exp), "interleave": True, "variants": [{"cni": "bridge"}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(doc))
    c = campaign.load(tmp_path / "c.yaml")
    assert c.repeats == schema.defaults("launch")["repeats"]  # what each variant's launch runs


def test_a_threshold_without_by_compares_by_the_schemas_default():
    import pandas as pd

    from podnet.stats import gate

    by = schema.defaults_of(schema.section("stats", "thresholds")["items"])["by"]
    ratios = pd.DataFrame(
        {
            "by": [by],
            "baseline": ["a"],
            "treatment": ["b"],
            "tool": ["iperf3"],
            "test": ["tcp"],
            "metric": ["throughput"],
            "ratio": [0.5],
            "ci_low": [0.4],
            "ci_high": [0.6],
        }
    )
    (row,) = gate.check(
        ratios, [{"baseline": "a", "treatment": "b", "metric": "throughput", "min": 0.8}]
    ).to_dict("records")
    assert row["by"] == by and row["verdict"] == "fail"


def test_the_default_headline_metrics_null_is_read_as_each_tools_own():
    from podnet.report.figures.data import headline_for
    from podnet.stats import DEFAULTS

    assert DEFAULTS["planning"]["headline_metrics"] is None  # the schema's default
    assert headline_for("iperf3", DEFAULTS) == ["throughput"]
    assert headline_for("no-such-tool", DEFAULTS) == []  # was list(None): TypeError
    assert headline_for("no-such-tool", {"planning": {"headline_metrics": ["x"]}}) == ["x"]


def test_the_schemas_enums_are_the_launchers_choices():
    """launch.order and launch.affinity.policy: the schema's enum is what the launcher can do
    (podnet.launch.rounds.schedule.ORDERS, podnet.launch.spec.plan.POLICIES), in the same order."""
    from podnet.launch.rounds.schedule import ORDERS
    from podnet.launch.spec.plan import POLICIES

    assert schema.section("launch", "order")["enum"] == list(ORDERS)
    assert schema.section("launch", "affinity", "policy")["enum"] == list(POLICIES)
