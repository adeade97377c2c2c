"""Flip perturbation baselines flip10 ... flip90 (docs/definitions/paper.md §5).

They calibrate the metrics: each keeps T's univariate marginals while its joint structure
and its closeness to T decay as p grows, so a synthesizer can be placed between them.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import pandas as pd

from holdbench.synthesizers.base import FitContext, Synthesizer


class Flip(Synthesizer):
    """Perturbed copies of T: each cell replaced with probability p by a random value of its column.

    sample(n, seed): the base rows are T's first n rows if n <= |T|, else n rows drawn from
    T with replacement. Then, column by column in schema order, every cell is replaced
    with probability p by a value drawn with replacement from T's column (it may equal
    the original). One `numpy.random.default_rng(seed)` drives it all, in that order.
    """

    def __init__(self, p: float) -> None:
        if isinstance(p, bool) or not isinstance(p, Real) or math.isnan(p) or not 0 <= p <= 1:
            raise ValueError(f"Flip: p must be a number between 0 and 1 (inclusive), got {p!r}")
        self.p = float(p)
        self._train: pd.DataFrame | None = None

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        if len(train) == 0:
            raise ValueError("Flip: the training table T has no rows")
        self._train = train.reset_index(drop=True)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._train is None:
            raise RuntimeError("Flip: sample() called before fit()")
        rng = np.random.default_rng(seed)
        size = len(self._train)
        base = np.arange(n) if n <= size else rng.integers(0, size, n)
        columns = {}
        for name in self._train.columns:
            flipped = rng.random(n) < self.p
            donors = rng.integers(0, size, n)
            rows = np.where(flipped, donors, base)
            columns[name] = self._train[name].take(rows).reset_index(drop=True)
        return pd.DataFrame(columns, index=pd.RangeIndex(n))
