"""Snakemake script: the gate (library: podnet.stats.gate), the pipeline's last step.

Writes check.csv; fails the rule only when a ratio's interval lies wholly on
the wrong side of its bound ("inconclusive" does not fail the run).
"""

from podnet.config.warm import delegate

delegate()  # in a warm worker when the run has one (podnet/config/warm.py): exits with its status

import logging

from podnet.stats import gate

sm = snakemake  # noqa: F821 (injected by Snakemake)
logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(message)s", force=True)
verdicts = gate.check(gate.read_table(sm.input.ratios), list(sm.params.thresholds))
for _, v in verdicts.iterrows():
    where = f"[{v.variant}] " if isinstance(v.variant, str) and v.variant else ""
    logging.info(
        "%s %s%s / %s %s %s = %.3g [%.3g, %.3g]: %s",
        v.verdict,
        where,
        v.treatment,
        v.baseline,
        v.test,
        v.metric,
        float(v.ratio),
        float(v.ci_low),
        float(v.ci_high),
        v.reason,
    )
failed = verdicts[verdicts["verdict"] == "fail"]
if len(failed):
    raise SystemExit(f"gate failed: {len(failed)} ratio(s) wholly outside their bound (see {sm.log[0]})")
verdicts.to_csv(sm.output.verdicts, index=False)
