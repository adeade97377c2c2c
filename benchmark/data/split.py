"""Training/holdout splits: a seeded 50/50 split, or the paper's own split files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.contracts.io import NOT_A_HOLDOUT, read_table, same_file
from holdbench.contracts.schema import Schema


def random_split(df: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seeded 50/50 split, |T| = round-half-even(n/2), rows in shuffled order.

    Shuffled order matters: the flip baseline takes "the first n rows" of T, which must be
    a random subset, not the head of a file sorted by source.
    """
    n = len(df)
    n_train = round(n / 2)  # Python rounds half to even
    perm = np.random.default_rng(seed).permutation(n)
    train = df.iloc[perm[:n_train]].reset_index(drop=True)
    holdout = df.iloc[perm[n_train:]].reset_index(drop=True)
    return train, holdout


def provided_split(schema: Schema, train_path: str | Path, holdout_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """T and H read from files (e.g. the paper's <dataset>_trn.csv.gz / _val.csv.gz), coerced."""
    if same_file(train_path, holdout_path):
        raise ValueError(f"dataset {schema.name!r}: its holdout file {holdout_path} is the same table as its training "
                         f"file {train_path}; {NOT_A_HOLDOUT}")
    train = schema.coerce(read_table(train_path), str(train_path))
    holdout = schema.coerce(read_table(holdout_path), str(holdout_path))
    return train, holdout
