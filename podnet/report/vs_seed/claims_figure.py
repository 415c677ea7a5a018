"""A seed's claims beside ours: one row per judged claim, its verdict's colour (issue 46).

What the ``vs_seed`` figure draws for a seed that publishes claims but no CNI ranking (seeds 000,
001, 002 and 004: :mod:`.figure` draws a ranking): per claim of ``vs_seed_claims.csv``
(:mod:`.claims`) the band within its margin (shaded, [1/(1+m), 1+m]), the seed's ratio (open
diamond; a claim of a stated direction has none, its label says the direction) and ours with its 95 %
interval (filled point and line), on a logarithmic ratio axis with a line at 1x; a claim without
our ratio says why in its label. Claims not run or not comparable here are counted in the title
(the table lists them with their reasons). House style of :mod:`podnet.report.figures.style`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from podnet.report.figures import style

from .claims import CLAIM_VERDICTS

#: a verdict's colour (colour-blind safe: Okabe-Ito)
VERDICT_COLORS = {
    "agrees": "#009E73",
    "tie within margin": "#56B4E9",
    "contradicts": "#D55E00",
    "gap not reproduced": "#E69F00",
    "inconclusive here": "#7F7F7F",
}
#: a stated direction as the label prints it
_RELATION = {">": "above", "<": "below", "~": "alike", ">=": "close or above", "<=": "close or below"}
#: inches per claim row, and the figure's other parts (title, axis, legend)
ROW, FRAME = 0.2, 1.5


def drawn(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims the figure draws: those judged here (a verdict other than not run or not comparable)."""
    if claims.empty or "verdict" not in claims.columns:
        return claims.iloc[0:0]
    v = claims["verdict"].fillna("").astype(str)
    return claims[v.isin(VERDICT_COLORS)].reset_index(drop=True)


def _num(s: pd.Series | None, n: int) -> np.ndarray:
    if s is None:
        return np.full(n, np.nan)
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)


def _label(r: pd.Series) -> str:
    text = str(r["claim"])
    rel = str(r.get("seed_relation", "") or "")
    if not np.isfinite(pd.to_numeric(r.get("seed_ratio"), errors="coerce")) and rel:
        text += f" (seed: {_RELATION.get(rel, rel)})"
    if not np.isfinite(pd.to_numeric(r.get("ratio"), errors="coerce")):
        text += " - no ratio here"
    elif not np.isfinite(pd.to_numeric(r.get("ci_low"), errors="coerce")):
        text += " - no interval"
    return text


def claims_figure(claims: pd.DataFrame, seed: str | None = None) -> plt.Figure:
    """The figure (not saved; :func:`podnet.report.figures.style.save` writes it)."""
    style.apply()
    seed = seed or (str(claims["seed"].iloc[0]) if len(claims) and "seed" in claims.columns else "seed")
    d = drawn(claims)
    other = len(claims) - len(d)
    if d.empty:
        fig, ax = plt.subplots(figsize=(style.COLUMN, 1.2), layout="constrained")
        ax.set_axis_off()
        ax.text(0.5, 0.5, f"No claim of {seed} judged here", ha="center", va="center")
        return fig
    n = len(d)
    seed_r, ours = _num(d.get("seed_ratio"), n), _num(d.get("ratio"), n)
    lo, hi = _num(d.get("ci_low"), n), _num(d.get("ci_high"), n)
    margin = np.nan_to_num(_num(d.get("margin"), n), nan=0.0)
    vals = np.concatenate([seed_r, ours, lo, hi, 1 / (1 + margin), 1 + margin])
    vals = vals[np.isfinite(vals) & (vals > 0)]
    height = min(style.PAGE_HEIGHT, FRAME + ROW * n)
    fig, ax = plt.subplots(figsize=(style.PAGE, height), layout="constrained")
    style.ratio_axis(ax, float(vals.min()) / 1.5, float(vals.max()) * 1.5)
    fig.podnet_intervals = []
    for i, r in d.iterrows():
        c = VERDICT_COLORS[str(r["verdict"])]
        if margin[i] > 0:
            ax.fill_betweenx(
                [i - 0.4, i + 0.4], 1 / (1 + margin[i]), 1 + margin[i], color="0.9", lw=0, zorder=0
            )
        if np.isfinite(lo[i]) and np.isfinite(hi[i]):
            ax.plot([lo[i], hi[i]], [i, i], color=c, lw=1.2, solid_capstyle="butt", zorder=2)
            fig.podnet_intervals.append((True, lo[i], hi[i]))
        if np.isfinite(ours[i]):
            ax.plot([ours[i]], [i], marker="o", ms=4, color=c, mec="0.15", mew=0.6, zorder=4)
        if np.isfinite(seed_r[i]):
            ax.plot([seed_r[i]], [i], marker="D", ms=4, color="0.15", mfc="white", mew=1.0, zorder=5)
    ax.set_yticks(range(n), [_label(r) for _, r in d.iterrows()])
    ax.set_ylim(n - 0.5, -0.5)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", lw=0.4, alpha=0.4)
    ax.set_xlabel("Ratio, treatment over baseline (log scale)")
    shown = [v for v in CLAIM_VERDICTS if v in set(d["verdict"])]
    handles: list = [Patch(color=VERDICT_COLORS[v], label=v) for v in shown]
    handles += [
        Line2D([], [], color="0.2", marker="o", ls="-", ms=4, label="podnet: ratio, 95 % CI"),
        Line2D([], [], color="0.15", marker="D", mfc="white", ls="", ms=4, label=f"{seed}: its ratio"),
        Patch(color="0.9", label="within the claim's margin"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    more = f"; {other} not run or not comparable here (table)" if other else ""
    fig.suptitle(f"{seed}'s claims and podnet's ratios: {n} judged here{more}")
    style.thin_ticks(fig)
    return fig
