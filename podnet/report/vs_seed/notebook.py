"""What the ``vs_seed`` notebook shows after the claims: the seed's CNI ranking beside ours, part by
part, or one sentence for a seed that publishes none (issue 46: seeds 000, 001, 002 and 004 are
claims only; an empty table, an empty orders table and an unconfigured ranking are no report).

:func:`ranking_parts` returns the items for :func:`podnet.report.explore.show` (a string is shown as
Markdown), so the notebook holds no logic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from podnet.report import md, ranking

from .orders import shown
from .words import headline_table, markdown

#: the ranking part's headings and what each explains (Markdown)
ORDERS_TEXT = (
    "### Each seed order, judged by the paired ratio (`vs_seed_orders.csv`)\n\n"
    "`a`/`b`: our counterparts of the seed's better and worse CNI; `ratio`: a / b here, paired by "
    "round, with its 95 % interval and Holm-adjusted p from `ranking.csv` (`holm_family`: the pairs it "
    "was adjusted over); `note`: where the seed's set-up changes the physics."
)
RANKING_TEXT = (
    "### Our ranking (`ranking.csv`)\n\n"
    "Per path and measure: the variants in order (braces: a tie group), each variant's ratio to the "
    "reference variant with its paired interval, and in words the first and last, equivalent pairs and "
    "the inconclusive ones (neither ordered nor equivalent)."
)


def no_ranking(seed: str) -> str:
    """The sentence that stands for the ranking part of a seed that publishes no CNI ranking
    (Markdown: ``seed`` as :func:`podnet.report.md.text`)."""
    return (
        f"{md.text(seed)} publishes no CNI ranking to set beside ours (`report.vs_seed.published` is unset): "
        "its claims above are the whole comparison, and the figure draws them."
    )


def ranking_parts(
    vs: pd.DataFrame,
    orders: pd.DataFrame,
    rank: pd.DataFrame,
    processed_dir: str | Path,
    claims: pd.DataFrame | None = None,
    baseline: str = "host-host",
) -> list[Any]:
    """The ranking part of the notebook in order: the headline table, the verdicts in words, the
    seed's orders, our ranking (words, figure, table) and the whole ``vs_seed.csv``; for a seed
    without a published ranking (``vs`` empty) only :func:`no_ranking`, naming the seed from its
    ``claims``."""
    if vs.empty:
        named = claims["seed"].astype(str) if claims is not None and "seed" in claims.columns else []
        return [no_ranking(str(named.iloc[0]) if len(named) and named.iloc[0] else "The seed")]
    from IPython.display import Image

    fig = Path(processed_dir) / "figures" / "ranking.png"
    parts: list[Any] = [
        "### Pod to pod across nodes: each CNI's ratio to its baseline path in the seed beside ours "
        "(95 % interval)",
        headline_table(vs),
        "### Where the ranking agrees and where not",
        markdown(vs, baseline=baseline, orders=orders),
        ORDERS_TEXT,
        shown(orders) if len(orders) else "The seed states no order between two CNIs that both run here.",
        RANKING_TEXT,
        ranking.markdown(rank),
    ]
    if fig.exists():
        parts.append(Image(filename=str(fig), width=700))
    parts += [ranking.shown(rank), "### The whole table (`vs_seed.csv`)", vs]
    return parts
