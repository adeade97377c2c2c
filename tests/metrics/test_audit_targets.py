"""Vulnerable-record scores (Meeus et al. 2023): the mean cosine distance to the k nearest other records
on a one-hot / min-max encoding, against a literal re-implementation with scipy's cdist and a full sort."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from holdbench.metrics.audit import select_targets, vulnerability_scores

KINDS = {"x": "numeric", "y": "numeric", "c": "categorical"}


def literal_scores(df: pd.DataFrame, k: int) -> np.ndarray:
    """By hand: one-hot c (missing its own level), x and y scaled by (v - min) / (max - min), missing 0
    plus an indicator; cosine distances of every pair; each row's k smallest to the OTHER rows, averaged."""
    cols = []
    for name in ("x", "y"):
        v = df[name].to_numpy(float)
        lo, hi = np.nanmin(v), np.nanmax(v)
        z = (v - lo) / (hi - lo)
        cols.append(np.nan_to_num(z, nan=0.0))
        if np.isnan(v).any():
            cols.append(np.isnan(v).astype(float))
    labels = df["c"].fillna("<missing>")
    for level in sorted(labels.unique()):
        cols.append((labels == level).to_numpy(float))
    enc = np.column_stack(cols)
    d = cdist(enc, enc, "cosine")
    np.fill_diagonal(d, np.inf)
    return np.sort(d, axis=1)[:, :k].mean(axis=1)


def table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(5, 2, n), "y": rng.exponential(3, n).round(1),
                       "c": rng.choice(["a", "b", "c", None], n, p=[0.5, 0.3, 0.15, 0.05])})
    df.loc[rng.choice(n, 5, replace=False), "y"] = np.nan
    return df


@pytest.mark.parametrize("k", [1, 5])
def test_scores_equal_a_literal_cosine_knn(k):
    df = table(300, 0)
    np.testing.assert_allclose(vulnerability_scores(df, KINDS, k), literal_scores(df, k), rtol=0, atol=1e-11)


def test_an_outlier_on_one_numeric_column_is_the_first_target_and_a_duplicate_scores_zero_at_k1():
    df = table(400, 1).dropna(subset=["y"]).reset_index(drop=True)  # (a rare missing y is far out too)
    df.loc[7, "x"] = 60.0  # far out on x alone, its label common
    df.loc[8] = df.loc[9]  # an exact copy
    rows, scores = select_targets(df, KINDS, 5, 3, seed=0)
    assert rows[0] == 7 and scores[0] == scores.max()
    one = vulnerability_scores(df, KINDS, 1)
    assert one[8] == 0 and one[9] == 0
