"""Vulnerable-record selection (Meeus et al., "Achilles' Heels", ESORICS 2023): T's records ranked by
the mean distance to their k nearest other records of T, farthest first.

Distance: Meeus et al.'s, the cosine distance between records encoded with every categorical column
one-hot (missing a level of its own) and every numeric column min-max scaled to [0, 1] by T's own
range (a missing value 0, with a 0/1 missing indicator when the column has any). An outlier on one
numeric column is far from every other record; a record with an exact copy in T has a neighbour at
distance 0. A row whose encoding is all zeros (possible only without categorical columns) is at
distance 1 from everything, as scikit-learn defines the cosine distance of a zero vector. Scores are
rounded to 12 decimals and ties broken by a seeded permutation of T's rows, so the selection is a
function of (T, k, seed).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from holdbench.metrics._discretise import numeric_values

#: which vulnerability score selects the targets: part of every shadow fit's identity (FIT_SETTINGS), so
#: fits made for targets another score chose are never reused
SCORE = "meeus-cosine"


def encode(train: pd.DataFrame, kinds: Mapping[str, str]) -> np.ndarray:
    """Meeus et al.'s encoding of T's rows: categorical columns one-hot (missing a level of its own),
    numeric ones min-max scaled to [0, 1] by T's range (constant: 0; missing: 0 plus an indicator)."""
    parts = []
    for col in train.columns:
        if kinds[col] == "numeric":
            x = numeric_values(train[col])
            seen = x[~np.isnan(x)]
            lo, span = (float(seen.min()), float(seen.max() - seen.min())) if len(seen) else (0.0, 0.0)
            z = np.zeros_like(x) if span == 0 else (x - lo) / span
            missing = np.isnan(z)
            parts.append(np.where(missing, 0.0, z)[:, None])
            if missing.any():
                parts.append(missing.astype(np.float64)[:, None])
        else:
            codes, _ = pd.factorize(train[col].astype(object), use_na_sentinel=False)
            parts.append(np.eye(codes.max() + 1 if len(codes) else 0)[codes])
    return np.hstack(parts) if parts else np.zeros((len(train), 0))


def vulnerability_scores(train: pd.DataFrame, kinds: Mapping[str, str], k: int, n_jobs: int = 1) -> np.ndarray:
    """Mean cosine distance of each row of `train` to its k nearest OTHER rows (one per row), Meeus et
    al.'s encoding (the module doc), rounded to 12 decimals."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k_neighbours must be a positive integer, got {k!r}")
    if len(train) < k + 1:
        raise ValueError(f"vulnerability scores with k_neighbours = {k} need more than {k} rows, T has {len(train)}")
    from sklearn.neighbors import NearestNeighbors

    x = encode(train, kinds)
    dist, _ = NearestNeighbors(n_neighbors=k + 1, metric="cosine", algorithm="brute",
                               n_jobs=n_jobs).fit(x).kneighbors(x)
    dist = np.sort(np.clip(dist, 0.0, None), axis=1)  # the row itself is one of the zeros
    return np.round(dist[:, 1:].mean(axis=1), 12)


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
