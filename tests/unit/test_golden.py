"""Golden values for every fixture: ``tests/fixtures/<tool>/<name>.expected.json``.

Each fixture's full parse (tool detected; the command from ``tests/fixtures/commands.yaml``
when its output does not say it) must equal its checked-in expected-values file.
Regenerate with ``pytest tests/unit/test_golden.py --update-golden`` (or
``PODNET_UPDATE_GOLDEN=1``) and review the diff like code.
"""

import json
import math
import os
import sys

import pytest

from tests.conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "tests" / "fuzz"))
import mangle

from podnet.parse import parse_text
from podnet.parse.decode import DecodeError, decode
from podnet.tools.base import ParseError

COMMANDS = mangle.fixture_commands()
FILES = mangle.fixture_files()


def golden_of(path) -> dict:
    """What podnet makes of one fixture, as the expected-values file stores it."""
    rel = path.relative_to(FIXTURES).as_posix()
    command = COMMANDS.get(rel)
    out: dict = {"fixture": rel, "command": command}
    try:
        adapter, result = parse_text(decode(path.read_bytes()), None, command=command)
        if not result.measurements:
            raise ParseError("no measurement")
    except (ParseError, DecodeError, KeyError) as exc:
        out["rejected"] = str(exc)
        return out
    out.update(
        tool=adapter.name,
        test=result.test,
        protocol=result.protocol,
        direction=result.direction,
        streams=result.streams,
        measurements=[
            {
                k: v
                for k, v in {
                    "metric": m.metric,
                    "value": "nan" if math.isnan(m.value) else m.value,
                    "unit": m.unit,
                    "direction": m.direction,
                    "protocol": m.protocol,
                    "test": m.test,
                    "streams": m.streams,
                    "variant": m.variant,
                    "scenario": m.scenario,
                }.items()
                if v is not None
            }
            for m in result.measurements
        ],
        intervals=len(result.intervals),
    )
    return out


def expected_path(path):
    return path.with_name(path.name + ".expected.json")


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_fixture_matches_its_golden_values(path, request):
    got = golden_of(path)
    exp = expected_path(path)
    if request.config.getoption("--update-golden") or os.environ.get("PODNET_UPDATE_GOLDEN"):
        exp.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert exp.exists(), f"no golden file {exp.name}: run pytest {__file__} --update-golden"
    assert got == json.loads(exp.read_text())


def test_every_fixture_has_a_golden_file_and_no_golden_file_is_orphaned():
    goldens = set(FIXTURES.rglob("*.expected.json"))
    assert goldens == {expected_path(p) for p in FILES}
