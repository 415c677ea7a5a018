"""Snakemake script: execute a notebook with papermill (parameters: the experiment's paths) and
render it as one self-contained HTML page beside it (library: podnet.report.notebook_html).

The executed notebook is written once, when every cell has run: papermill's default writes (and
validates) the whole notebook before and after each cell, about 2 x cells + 2 times, to show
progress nobody watches here; the file it leaves is the same. The kernel is stopped at once after
the last cell (nothing is left to collect from it) instead of waiting for its own shutdown.
"""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

from podnet.config.lean import skip_iri_grammar

skip_iri_grammar()  # before anything imports jsonschema (podnet/config/lean.py)

import logging
import os

import papermill

from podnet.config.warm import kernel_manager_class
from podnet.report.notebook_html import render_node
from podnet.report.paths import from_root, notebook_params

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
extra = dict(sm.params.extra)
lists = {k: extra.pop(k) for k in ("compare_with",) if k in extra}
# papermill logs the three paths it is given: relative to the project root, as every published file
# names one (tests/pipeline/test_notebooks_anywhere.py)
nb = papermill.execute_notebook(
    from_root(sm.input.notebook),
    from_root(sm.output.notebook),
    parameters={
        "experiment": sm.params.experiment,
        # relative to the executed notebook's folder, where it runs here and where nbval and
        # JupyterLab start it: no machine's path in a published file (podnet.report.paths)
        **notebook_params(
            sm.output.notebook,
            {"processed_dir": sm.params.processed_dir, "raw_dir": sm.params.raw_dir},
            lists,
        ),
        **extra,
    },
    kernel_name="python3",
    cwd=os.path.dirname(from_root(sm.output.notebook)),
    progress_bar=False,
    log_output=False,
    request_save_on_cell_execute=False,  # one write at the end (see the docstring)
    shutdown_kernel="immediate",  # nbclient: the kernel is killed once the last cell ran
    # Unix sockets, never TCP ports two kernels could both be given; a warm worker when the run has a
    # zygote (podnet/config/warm.py)
    kernel_manager_class=kernel_manager_class(),
)
logging.info("executed %s -> %s", from_root(sm.input.notebook), from_root(sm.output.notebook))
render_node(nb, sm.output.html)  # the executed notebook as papermill returns it, not read back
logging.info("rendered %s", from_root(sm.output.html))
