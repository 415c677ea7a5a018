"""The parse stage's result: its tables side by side (one small module so that
:mod:`podnet.parse.stage` and :mod:`podnet.parse.disturbed` both import it and not each other)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from podnet.parse.tidy import DISTURBED_COLUMNS


@dataclass
class Parsed:
    """The tables the parse stage produces (``disturbed``: after :func:`podnet.parse.stage.combine`
    only; before, its re-run runs are ``failed`` rows with error ``Disturbed``)."""

    tidy: pd.DataFrame
    intervals: pd.DataFrame
    failed: pd.DataFrame
    disturbed: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DISTURBED_COLUMNS))
