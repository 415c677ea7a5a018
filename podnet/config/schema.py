"""The experiment config schema (package data: ``podnet/config/config.schema.yaml``) and its defaults;
the JSON schemas of podnet's own files (``podnet/config/schemas/``: sidecars, adaptive accounts).

The schema is the one source of config defaults: code reads a key's default
with :func:`defaults` instead of repeating it. Snakemake's ``validate()`` and
:func:`podnet.launch.spec.config.validate` check configs against the same file.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

#: the schema file inside the installed package
SCHEMA_PATH = Path(str(resources.files("podnet.config").joinpath("config.schema.yaml")))


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The schema as a mapping (parsed once)."""
    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


@cache
def data_schema(name: str) -> dict[str, Any]:
    """The JSON schema of one of podnet's own files (``podnet/config/schemas/<name>.schema.yaml``:
    ``sidecar``, ``account``), parsed once."""
    path = Path(str(resources.files("podnet.config").joinpath("schemas", f"{name}.schema.yaml")))
    return yaml.safe_load(path.read_text(encoding="utf-8"))


#: config keys that moved: old dotted path -> new dotted path (a config using the old one is refused
#: with both named, never silently ignored)
MOVED = {"launch.budget": "launch.adaptive.budget"}


def check_moved(config: Any, where: str = "config") -> None:
    """Raise ValueError naming ``where`` when ``config`` uses a key of :data:`MOVED`."""
    for old, new in MOVED.items():
        node, *parts = [config, *old.split(".")]
        for p in parts[:-1]:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict) and parts[-1] in node:
            raise ValueError(
                f"{where}: `{old}` moved to `{new}` (the adaptive stop's launch limits live together: "
                f"enabled, budget, max_runs)"
            )


def section(*path: str) -> dict[str, Any]:
    """The schema node of a config key path, e.g. ``section("launch", "timeouts")``."""
    node = load()
    for key in path:
        node = node["properties"][key]
    return node


def defaults_of(node: dict[str, Any]) -> dict[str, Any]:
    """``default:`` of every property of an object schema node (properties without one left out)."""
    props = node.get("properties", {})
    return {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}


def defaults(*path: str) -> dict[str, Any]:
    """``default:`` of every property directly under a config key path (properties without one left out)."""
    return defaults_of(section(*path))
