"""podnet.config.lean: the Snakefile's figure names are podnet.report.figures' names, skipping jsonschema's
IRI grammar changes no validation result (it only makes imports cheaper), and the end of a run cancels
Snakemake's pending wake-up timers (without calling them)."""

import subprocess
import sys

from podnet.config import lean
from podnet.report import figures
from tests.conftest import REPO

PROBE = """
import json, sys
from pathlib import Path
{skip}
import jsonschema, yaml
from podnet.config import schema

schema_ = schema.load()
out = {{"loaded": "rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is not None}}
for cfg in sorted(Path("config").rglob("*.yaml")):
    doc = yaml.safe_load(cfg.read_text())
    if isinstance(doc, dict) and "experiment" in doc:
        out[cfg.as_posix()] = [e.message for e in jsonschema.Draft202012Validator(schema_).iter_errors(doc)]
bad = {{"experiment": "x", "parse": {{"shards": 0}}, "nonsense": 1}}
out["bad"] = sorted(e.message for e in jsonschema.Draft202012Validator(schema_).iter_errors(bad))
import nbformat
out["notebooks"] = [str(nbformat.validate(nbformat.read(p, as_version=4))) for p in sorted(Path("notebooks").glob("*.ipynb"))]
print(json.dumps(out))
"""


def test_figure_names_are_the_figures():
    assert tuple(figures.FIGURES) == lean.FIGURE_NAMES


def _probe(skip: bool) -> dict:
    import json

    code = PROBE.format(
        skip="from podnet.config.lean import skip_iri_grammar; skip_iri_grammar()" if skip else ""
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def test_skipping_the_iri_grammar_changes_no_validation():
    with_grammar, without = _probe(False), _probe(True)
    assert without.pop("loaded") is False
    with_grammar.pop("loaded")
    assert with_grammar == without
    assert len(without["bad"]) == 2 and len(without) > 5  # the probe validated configs and notebooks


def test_what_the_snakefile_imports_stays_light():
    code = (
        "import sys; from podnet.config.lean import FIGURE_NAMES, skip_iri_grammar; skip_iri_grammar()\n"
        "from podnet.parse.shards import shard_entries; from podnet.parse.raw import sidecar_path\n"
        "from podnet.report import published\n"  # the published list's onerror hook (report.smk)
        "print(sorted(m for m in ('pandas', 'matplotlib', 'seaborn', 'scipy') if m in sys.modules))"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"


def test_cancel_rescheduling_ends_pending_timers_without_calling_them():
    import threading

    called: list[str] = []
    timer = threading.Timer(60, lambda: called.append("timer"))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # not a timer: left alone
    timer.start()
    other.start()
    try:
        lean.cancel_rescheduling()
        timer.join(10)
        assert not timer.is_alive() and called == []
        assert other.is_alive()
    finally:
        stop.set()
        timer.cancel()
        other.join(10)
