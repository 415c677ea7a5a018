"""A workflow job's uncaught error in its own log, not only on Snakemake's output.

Snakemake points at a failed job's log ("check log file(s) for error details"), and the published
list (``podnet.report.published``) gives its last line as the reason a planned file is not there;
a script's traceback went to standard error alone, and the log it had opened stayed empty.
:func:`log_failures` (called by :func:`podnet.config.warm.delegate`, the first statement of every
script, in whichever process runs the script) appends it to the job's log files as well.
Standard library only: it runs first in every job.
"""

from __future__ import annotations

import sys
import traceback
from types import TracebackType


def job_logs() -> list[str]:
    """The log files of the Snakemake job whose script is running here (its ``snakemake.log``), or
    none outside a job."""
    main = sys.modules.get("__main__")
    job = getattr(main, "snakemake", None)
    return [str(p) for p in getattr(job, "log", None) or []]


def log_failures(logs: list[str] | None = None) -> None:
    """From now on an uncaught exception is printed as before and also appended, as its traceback,
    to ``logs`` (default :func:`job_logs`); nothing changes when there are none."""
    paths = job_logs() if logs is None else list(logs)
    if not paths:
        return
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        previous(kind, value, tb)
        text = "".join(traceback.format_exception(kind, value, tb))
        for path in paths:
            try:
                with open(path, "a", encoding="utf-8") as f:
                    f.write(text)
            except OSError:
                pass  # a log that cannot be written: the error is on standard error all the same

    sys.excepthook = hook
