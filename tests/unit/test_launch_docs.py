"""podnet/launch/README.md agrees with the schema's defaults and the adapters' ports."""

from __future__ import annotations

import re
from pathlib import Path

from podnet.config import schema
from podnet.launch.spec.config import default_ports

README = (Path(__file__).resolve().parents[2] / "podnet" / "launch" / "README.md").read_text()
TABLE = README[README.index("## Config (") : README.index("An endpoint is")]


def _rows() -> dict[str, str]:
    rows = {}
    for line in TABLE.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            for key in re.findall(r"`([a-z_]+)", cells[0]):
                rows[key] = cells[1]
    return rows


def _text(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def test_every_launch_key_is_in_the_table():
    rows = _rows()
    missing = [k for k in schema.section("launch")["properties"] if k not in rows]
    assert not missing, f"podnet/launch/README.md lacks launch keys {missing}"


def test_defaults_in_the_table_are_the_schemas():
    rows = _rows()
    for key, value in schema.defaults("launch").items():
        assert f"`{key}` (`{_text(value)}`" in rows[key], (key, value)
    for section in ("timeouts", "namespace", "adaptive"):
        for key, value in schema.defaults("launch", section).items():
            assert f"`{key}` (`{_text(value)}`)" in rows[section], (section, key, value)


def test_ports_in_the_table_are_the_adapters():
    row = _rows()["ports"]
    documented = {k: int(v) for k, v in re.findall(r"([a-z0-9]+) `(\d+)`", row)}
    assert documented == default_ports()
