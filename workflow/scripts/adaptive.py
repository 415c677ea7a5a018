"""Snakemake script: the adaptive launches' accounts -> adaptive.csv (library: podnet.stats.account)."""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

from podnet.stats import account

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
out = account.write_csv(list(sm.input.accounts), sm.output.csv)
logging.info("wrote %s from %d account(s)", out, len(sm.input.accounts))
