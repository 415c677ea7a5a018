"""A seed's run that lost most of what it sent: its claims are not comparable (issue 46).

What arrived of a stream that lost most of what was sent measures the drops, not the path: seed
004's own host to host qperf udp_bw received 1.12 Mbit/s of the 944 Mbit/s it sent (99.9 % lost),
so every udp_bw ratio over it (0.94x to 16,928x) is of that collapse. The rule, from the seed's own
numbers (:func:`.claims.seed_values`, never typed into config):

- a seed run's loss is its tool's ``loss`` figure where it printed one (iperf's lost / total
  datagrams), else 1 - received / sent rate (``throughput`` over ``sender_throughput``: qperf
  udp_bw's ``recv_bw`` over ``send_bw``); a run is the rows of the claim's seed figure that share
  its variant, scenario, tool, test, direction and file;
- a claim whose seed treatment or baseline run lost at least :data:`LOSS_DOMINATED` of what it sent
  (0.5, the share above which the ratio figures leave a UDP ratio out:
  :mod:`podnet.report.figures.withheld`) is ``not comparable here``, its reason naming each lossy
  side's received and sent rates and the share lost. Any measure of that run counts (its receive
  rate, its receiver's CPU per byte, its message rate all describe the collapse).

A run without both rates nor a loss figure (TCP, latency tests) is never judged lossy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from podnet.report.figures import data
from podnet.report.figures.withheld import LOSS_DOMINATED, loss_text

#: the columns that make a seed figure's run: its sibling rows share them
RUN_KEYS = ("variant", "scenario", "tool", "test", "direction", "file")


def _run(values: pd.DataFrame, row: pd.Series) -> pd.DataFrame:
    """The rows of ``values`` of the same run as ``row`` (every :data:`RUN_KEYS` column present)."""
    sel = np.ones(len(values), dtype=bool)
    for k in RUN_KEYS:
        if k in values.columns and k in row.index:
            sel &= values[k].fillna("").astype(str).to_numpy() == str("" if pd.isna(row[k]) else row[k])
    return values[sel]


def _one(run: pd.DataFrame, metric: str) -> float:
    """The run's one value of ``metric`` (NaN: none, or several)."""
    hit = run[run["metric"].astype(str) == metric] if "metric" in run.columns else run.iloc[0:0]
    return float(hit["value"].iloc[0]) if len(hit) == 1 else np.nan


def run_loss(values: pd.DataFrame, row: pd.Series) -> tuple[float, str]:
    """The share of what was sent that the run of seed figure ``row`` lost, and its words ("received
    1.12 Mbit/s of 944 Mbit/s sent, 99.9 % lost"); (NaN, "") when the seed printed neither a loss
    figure nor both rates."""
    run = _run(values, row)
    loss = _one(run, "loss")
    if np.isfinite(loss):
        return loss, f"printed {loss_text(loss)}"
    got, sent = _one(run, "throughput"), _one(run, "sender_throughput")
    if not (np.isfinite(got) and np.isfinite(sent) and sent > 0):
        return np.nan, ""
    loss = max(0.0, 1.0 - got / sent)
    tool = str(row.get("tool", "") or "") or None
    got_text, sent_text = (data.human(v, "throughput", tool, "bit/s") for v in (got, sent))
    return loss, f"received {got_text} of {sent_text} sent, {loss_text(loss)}"


def _side_name(selector: Mapping[str, Any] | None, side: str) -> str:
    """A side as the claim selects it: "baseline (host-host)"."""
    picked = " ".join(str(v) for v in (selector or {}).values())
    return f"{side} ({picked})" if picked else side


def lossy_reason(
    claim: Mapping[str, Any],
    values: pd.DataFrame,
    treatment: pd.Series,
    baseline: pd.Series,
    threshold: float = LOSS_DOMINATED,
) -> str:
    """Why a claim is not comparable when its seed ``treatment`` or ``baseline`` figure (rows of
    ``values``) is of a run that lost at least ``threshold`` of what it sent; "" otherwise."""
    s = claim.get("seed") or {}
    bits = []
    for side, row in (("baseline", baseline), ("treatment", treatment)):
        loss, words = run_loss(values, row)
        if np.isfinite(loss) and loss >= threshold:
            test = f"{row.get('tool', '')} {row.get('test', '')}".strip()
            bits.append(f"its {_side_name(s.get(side), side)} {test} {words}")
    if not bits:
        return ""
    return (
        f"the seed's own run lost most of what it sent: {'; '.join(bits)}. A run that lost at least "
        f"{100 * threshold:.0f} % of what it sent measures its drops, not the path, so a ratio of it "
        "judges nothing"
    )
