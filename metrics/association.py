"""Pairwise association of binned columns: Cramér's V (scipy.stats.contingency.association).

Used to draw a table's association matrix (T's, S's and their difference) on the buckets the
2-way marginals use (holdbench.metrics._discretise.Discretiser with cap 10): numeric columns enter
binned, so every pair, numeric or categorical, is measured the same way.
"""

from __future__ import annotations

import math

import numpy as np


def cramers_v(a: np.ndarray, b: np.ndarray, card_a: int, card_b: int) -> float:
    """Cramér's V of two code arrays (0..card-1): 0 = independent, 1 = each determines the other.
    NaN when either takes a single value (no association is defined)."""
    from scipy.stats.contingency import association

    table = np.bincount(a.astype(np.int64) * card_b + b.astype(np.int64), minlength=card_a * card_b)
    table = table.reshape(card_a, card_b)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return math.nan
    return float(association(table, method="cramer"))


def association_matrix(codes: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """(p, p) symmetric Cramér's V of every pair of rows of `codes` (p, n), 1 on the diagonal."""
    p = codes.shape[0]
    out = np.eye(p)
    for i in range(p):
        for j in range(i + 1, p):
            out[i, j] = out[j, i] = cramers_v(codes[i], codes[j], int(cards[i]), int(cards[j]))
    return out
