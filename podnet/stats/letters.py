"""A ranking's groups, letters and order string (:mod:`podnet.stats.ranking`), from its ordered pairs.

Pure functions of names and sets, no tables. ``letters`` is a compact letter display: one letter
per maximal set of variants no two of which are ordered, so two variants share a letter exactly
when their pair is not ordered. The groups and the order string are read off the letters
(:func:`groups_from_letters`, :func:`order_text`), so the three never disagree: a boundary falls
between two places only where no letter spans it (every variant above is ordered against every
one below) and every such pair is ordered the order's way; a group whose members share no one
letter (A ~ B, B ~ C, A > C) writes its letters beside its members.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def tie_groups(order: Sequence[str], ordered: set[tuple[str, str]]) -> list[int]:
    """Group numbers (1 = best) of ``order`` (best first): a boundary between two places only when
    every variant above it is ordered above every variant below it (``(better, worse)`` in ``ordered``)."""
    groups, g = [], 1
    for k in range(len(order)):
        if k and all((u, w) in ordered for u in order[:k] for w in order[k:]):
            g += 1
        groups.append(g)
    return groups


def letters(order: Sequence[str], ordered: set[tuple[str, str]]) -> list[str]:
    """Compact letter display of ``order`` (best first): one letter per maximal set of variants no
    two of which are ordered (Bron-Kerbosch), lettered by their best member; two variants share a
    letter exactly when their pair is not ordered."""
    n = len(order)
    apart = {(i, j) for i in range(n) for j in range(n) if (order[i], order[j]) in ordered}
    nbr = [{j for j in range(n) if j != i and (i, j) not in apart and (j, i) not in apart} for i in range(n)]
    cliques: list[frozenset[int]] = []

    def grow(r: set[int], p: set[int], x: set[int]) -> None:
        if not p and not x:
            cliques.append(frozenset(r))
            return
        for v in sorted(p):
            grow(r | {v}, p & nbr[v], x & nbr[v])
            p = p - {v}
            x = x | {v}

    grow(set(), set(range(n)), set())
    cliques.sort(key=lambda c: sorted(c))
    out = [""] * n
    for k, c in enumerate(cliques):
        ch = chr(ord("a") + k) if k < 26 else f"[{k}]"
        for i in c:
            out[i] += ch
    return out


def tokens(text: str) -> set[str]:
    """The letters of one variant's letter string (``"ab"`` -> {a, b}; ``"[27]"`` is one letter)."""
    return set(re.findall(r"\[\d+\]|[a-z]", str(text)))


def groups_from_letters(
    order: Sequence[str], lets: Sequence[str], ordered: set[tuple[str, str]] | None = None
) -> list[int]:
    """Group numbers (1 = best) of ``order`` read off its letters ``lets``: a boundary at a place
    no letter spans (and, with ``ordered``, where every pair across it is ordered the order's way:
    a pair ordered against the point estimates' order never makes a boundary)."""
    sets = [tokens(x) for x in lets]
    groups, g = [], 1
    for k in range(len(order)):
        if k and not set().union(*sets[:k]) & set().union(*sets[k:]):
            if ordered is None or all((u, w) in ordered for u in order[:k] for w in order[k:]):
                g += 1
        groups.append(g)
    return groups


def order_text(order: Sequence[str], groups: Sequence[int], lets: Sequence[str] | None = None) -> str:
    """``"macvlan > calico-bgp > {cilium, calico-vxlan}"``: groups by ``>``, members in braces; with
    ``lets``, a group whose members share no one letter names each member's letters
    (``"{A (a), B (ab), C (b)}"``: A > C is ordered, B against neither)."""
    parts = []
    for g in dict.fromkeys(groups):
        idx = [i for i, x in enumerate(groups) if x == g]
        members = [order[i] for i in idx]
        if len(members) == 1:
            parts.append(members[0])
            continue
        shared = set.intersection(*(tokens(lets[i]) for i in idx)) if lets is not None else {"-"}
        names = members if shared else [f"{order[i]} ({lets[i]})" for i in idx]
        parts.append("{" + ", ".join(names) + "}")
    return " > ".join(parts)
