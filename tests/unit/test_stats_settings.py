"""The typed statistics settings (podnet.stats.settings.Settings) say what the resolved mapping says."""

from __future__ import annotations

import dataclasses

import pytest

from podnet.stats.settings import DEFAULTS, Settings, resolve


def test_typed_settings_carry_the_resolved_mapping():
    s = Settings.of({"bootstrap": {"resamples": "500"}, "planning": {"min_repeats": 4, "min_to_stop": 2}})
    assert s.mapping == resolve(
        {"bootstrap": {"resamples": "500"}, "planning": {"min_repeats": 4, "min_to_stop": 2}}
    )
    assert s.bootstrap.resamples == 500 and isinstance(s.bootstrap.resamples, int)
    assert s.bootstrap.seed == DEFAULTS["bootstrap"]["seed"]
    assert s.planning.fewest_to_stop == 4
    assert s.confidence == DEFAULTS["confidence"] and s.alpha == pytest.approx(1 - DEFAULTS["confidence"])
    assert s.paired.adaptive is False  # null: fixed rounds
    assert s.planning.headline_metrics is None


def test_typed_settings_are_built_once_and_frozen():
    s = Settings.of(None)
    assert Settings.of(s) is s
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.confidence = 0.9  # type: ignore[misc]


def test_typed_settings_validate_as_resolve_does():
    with pytest.raises(ValueError, match="resamples"):
        Settings.of({"bootstrap": {"resamples": 10}})
    with pytest.raises(ValueError, match="unknown stats setting"):
        Settings.of({"bootsrap": {}})
