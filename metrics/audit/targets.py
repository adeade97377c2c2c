"""Vulnerable-record selection (Meeus et al., "Achilles' Heels", ESORICS 2023): T's records ranked by
the mean distance to their k nearest other records of T, farthest first.

Distance: the Hamming distance on the codes of the DCR share (docs/definitions/paper.md §4.1,
holdbench.metrics._discretise.distance_codes: numeric columns in 100 quantile bins of T, every
categorical label its own value, missing a value of its own), over the audit's columns. A record with
an exact copy in T has a neighbour at distance 0; an outlier has none near it. Ties of the score are
broken by a seeded permutation of T's rows, so the selection is a function of (T, k, seed).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from holdbench.metrics._discretise import distance_codes, numeric_values


def vulnerability_scores(train: pd.DataFrame, kinds: Mapping[str, str], k: int, n_jobs: int = 1) -> np.ndarray:
    """Mean Hamming distance of each row of `train` to its k nearest OTHER rows (one per row)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k_neighbours must be a positive integer, got {k!r}")
    if len(train) < k + 1:
        raise ValueError(f"vulnerability scores with k_neighbours = {k} need more than {k} rows, T has {len(train)}")
    from holdbench.metrics.privacy import smallest_distances  # numba kernels: imported on use

    (codes,) = distance_codes([train], {c: kinds[c] for c in train.columns})
    near = smallest_distances(codes, codes, k + 1, 0, n_jobs)  # the row itself is one of the zeros
    return near[:, 1:].mean(axis=1).astype(float)


def select_targets(train: pd.DataFrame, kinds: Mapping[str, str], k: int, n_targets: int, seed: int,
                   n_jobs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores): the positions in `train` of the n_targets most vulnerable records, most
    vulnerable first, and their scores."""
    if isinstance(n_targets, bool) or not isinstance(n_targets, int) or n_targets < 1:
        raise ValueError(f"n_targets must be a positive integer, got {n_targets!r}")
    if n_targets > len(train):
        raise ValueError(f"n_targets = {n_targets} is more than T's {len(train)} rows")
    scores = vulnerability_scores(train, kinds, k, n_jobs)
    tie = np.random.default_rng(np.random.SeedSequence([seed, 0x7A6])).permutation(len(train))
    order = np.lexsort((tie, -scores))
    rows = order[:n_targets]
    return rows, scores[rows]


def masked(records: pd.DataFrame, train: pd.DataFrame, kinds: Mapping[str, str], min_count: int = 10) -> pd.DataFrame:
    """Records as a report may show them: a numeric value as the decile interval of T it falls in
    ("[39, 45)"), a categorical label only when at least `min_count` records of T share it (else
    "(rare)"), a missing value as "(missing)"."""
    out = {}
    for col in records.columns:
        if kinds[col] == "numeric":
            x = numeric_values(train[col])
            edges = np.unique(np.nanquantile(x[~np.isnan(x)], np.linspace(0, 1, 11))) if np.isfinite(x).any() \
                else np.array([])
            vals = []
            for v in numeric_values(records[col]):
                if np.isnan(v) or not len(edges):
                    vals.append("(missing)")
                    continue
                i = int(np.clip(np.searchsorted(edges, v, side="right") - 1, 0, max(len(edges) - 2, 0)))
                hi = edges[min(i + 1, len(edges) - 1)]
                vals.append(f"[{edges[i]:.4g}, {hi:.4g}]" if i + 1 >= len(edges) - 1 else
                            f"[{edges[i]:.4g}, {hi:.4g})")
            out[col] = vals
        else:
            counts = train[col].value_counts(dropna=True)
            out[col] = ["(missing)" if pd.isna(v) else (str(v) if counts.get(v, 0) >= min_count else "(rare)")
                        for v in records[col]]
    return pd.DataFrame(out, index=records.index)
