"""Shared test helpers."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture
def fixture_text():
    """Read a fixture by its path under tests/fixtures/."""

    def read(rel: str) -> str:
        return (FIXTURES / rel).read_text(encoding="utf-8")

    return read


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help=(
            "rewrite tests/fixtures/**/<name>.expected.json from the parsers and "
            "tests/golden/examples/<experiment>/*.csv from the pipeline (review the diff)"
        ),
    )
