"""The stats defaults have one source (the schema's `default:` values); the docs agree with it."""

from __future__ import annotations

import re

import pytest
import yaml

from podnet.config.schema import SCHEMA_PATH
from podnet.stats import DEFAULTS, METHODS_PATH
from tests.conftest import REPO

#: "`stats.a.b` (default V)" or "`stats.a.b`, default V" in the docs
MENTION = re.compile(r"`(stats\.[a-z_.]+)`[^`]{0,40}?default\s+([^\s),;]+(?: [^\s),;]+)?)")


def _leaf(path: str):
    node = DEFAULTS
    for part in path.split(".")[1:]:
        node = node[part]
    return node


def _same(text: str, value) -> bool:
    text = text.rstrip(".")
    if isinstance(value, bool):
        return text == str(value).lower()
    if value is None:
        return text == "null"
    if isinstance(value, (int, float)):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    if isinstance(value, list):
        return text == "[" + ", ".join(map(str, value)) + "]"
    return text == str(value)


def _leaves(d, prefix="stats."):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


@pytest.mark.parametrize("doc", [METHODS_PATH, REPO / "README.md"], ids=["METHODS.md", "README.md"])
def test_documented_defaults_match_the_schema(doc):
    text = doc.read_text()
    found = MENTION.findall(text)
    for path, value in found:
        first = value.split(" ")[0] if not value.startswith("[") else value
        assert _same(first, _leaf(path)), (
            f"{doc.name}: {path} documented as {value!r}, schema says {_leaf(path)!r}"
        )
    if doc == METHODS_PATH:
        assert len(found) >= 15


def test_every_numeric_default_is_documented_in_methods():
    mentioned = {p for p, _ in MENTION.findall(METHODS_PATH.read_text())}
    skip = {
        "stats.bootstrap.batch",
        "stats.bootstrap.method",
        "stats.comparisons",
        "stats.primary",
        "stats.thresholds",
    }
    missing = [p for p, _ in _leaves(DEFAULTS) if p not in mentioned and p not in skip]
    assert not missing, f"defaults not stated in METHODS.md: {missing}"


def test_defaults_are_read_from_the_schema_not_a_second_dict():
    schema = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["stats"]
    assert (
        DEFAULTS["bootstrap"]["min_n"] == schema["properties"]["bootstrap"]["properties"]["min_n"]["default"]
    )
    src = (REPO / "podnet/stats/settings.py").read_text()
    assert "20240611" not in src and "HEADLINE_METRICS" not in src


def test_test_double_is_not_in_the_package():
    assert not (REPO / "podnet/stats/testing.py").exists()
