"""What the shadow-model attack sees of one synthetic dataset about one target (Stadler et al. 2022; TAPAS,
Houssiau et al. 2022).

The encoding is fitted on the attacker's auxiliary data (the reference pool, disjoint from the target
cell's T) and then fixed, so a feature means the same in every shadow dataset: numeric columns cut at
`bins` quantiles of the pool (values outside its range fall in the first or last bin), every
categorical label of the pool a code, an unseen label and a missing value one code each.

- query-count features: for every non-empty subset of the columns (all of them up to 8 columns), the
  share of synthetic records equal to the target on that subset (numeric columns: in the same bin);
- closest-distance features: the `n_closest` smallest Hamming distances (on the codes) from the target
  to the synthetic records, and per numeric column the smallest |x − target's x| over the synthetic
  records divided by the pool's interquartile range (1 when it is 0): a value no synthetic record comes
  near is visible even when the rest of the record is common.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from holdbench.metrics._discretise import numeric_values

MAX_ALL_SUBSETS = 8


@dataclass(frozen=True)
class FeatureEncoder:
    columns: tuple[str, ...]
    kinds: Mapping[str, str]
    edges: Mapping[str, np.ndarray]
    labels: Mapping[str, pd.Index]
    scales: Mapping[str, float]
    n_closest: int

    @classmethod
    def fit(cls, pool: pd.DataFrame, kinds: Mapping[str, str], bins: int, n_closest: int) -> FeatureEncoder:
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"bins must be an integer >= 2, got {bins!r}")
        if isinstance(n_closest, bool) or not isinstance(n_closest, int) or n_closest < 1:
            raise ValueError(f"n_closest must be a positive integer, got {n_closest!r}")
        edges, labels, scales = {}, {}, {}
        for col in pool.columns:
            if kinds[col] == "numeric":
                x = numeric_values(pool[col])
                x = x[~np.isnan(x)]
                edges[col] = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1))[1:-1]) if len(x) else np.array([])
                iqr = float(np.subtract(*np.quantile(x, [0.75, 0.25]))) if len(x) else 0.0
                scales[col] = iqr if iqr > 0 else 1.0
            else:
                labels[col] = pd.Index(pool[col].dropna().unique())
        return cls(tuple(pool.columns), dict(kinds), edges, labels, scales, n_closest)

    def codes(self, df: pd.DataFrame) -> np.ndarray:
        """(n_rows, n_columns) integer codes."""
        out = np.empty((len(df), len(self.columns)), dtype=np.int64)
        for j, col in enumerate(self.columns):
            if self.kinds[col] == "numeric":
                x = numeric_values(df[col])
                code = np.searchsorted(self.edges[col], x, side="right")
                out[:, j] = np.where(np.isnan(x), len(self.edges[col]) + 1, code)
            else:
                idx = self.labels[col].get_indexer(df[col])
                n = len(self.labels[col])
                out[:, j] = np.where(df[col].isna().to_numpy(), n + 1, np.where(idx < 0, n, idx))
        return out

    @property
    def subsets(self) -> list[tuple[int, ...]]:
        m = len(self.columns)
        if m > MAX_ALL_SUBSETS:
            raise ValueError(f"query-count features use every subset of the columns: at most {MAX_ALL_SUBSETS} "
                             f"columns, got {m}")
        return [s for r in range(1, m + 1) for s in combinations(range(m), r)]

    def feature_names(self) -> list[str]:
        q = ["query:" + "+".join(self.columns[i] for i in s) for s in self.subsets]
        d = [f"closest:{i + 1}" for i in range(self.n_closest)]
        g = [f"gap:{c}" for c in self.columns if self.kinds[c] == "numeric"]
        return q + d + g

    def features(self, targets: pd.DataFrame, synthetic: pd.DataFrame) -> np.ndarray:
        """(n_targets, n_features) features of `synthetic` about each target (the module doc)."""
        if len(synthetic) == 0:
            raise ValueError("the synthetic dataset has no rows")
        t, s = self.codes(targets[list(self.columns)]), self.codes(synthetic[list(self.columns)])
        n = len(s)
        out = []
        for row in range(len(t)):
            eq = s == t[row]
            query = [eq[:, list(sub)].all(axis=1).sum() / n for sub in self.subsets]
            ham = np.sort((~eq).sum(axis=1))
            close = np.concatenate([ham[:self.n_closest], np.full(max(0, self.n_closest - n), len(self.columns))])
            gaps = []
            for col in self.columns:
                if self.kinds[col] != "numeric":
                    continue
                x, v = numeric_values(synthetic[col]), numeric_values(targets[col].iloc[[row]])[0]
                x = x[~np.isnan(x)]
                gaps.append(np.abs(x - v).min() / self.scales[col] if len(x) and not np.isnan(v) else -1.0)
            out.append(np.concatenate([query, close, gaps]))
        return np.asarray(out, dtype=float)
