"""Fidelity F1-F3: mean TVD of k-way marginals between T and S, and T and H (SPEC §3).

T's buckets and T's codes do not depend on S, so `FidelityModel` fits them once and can
score many synthetic tables (the reference check scores 16 against one T/H pair).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from metrics._discretise import Discretiser
from metrics._kernels import marginal_tvds

#: bucket cap c_k per marginal order k (SPEC §3.1)
BUCKET_CAPS = {1: 100, 2: 10, 3: 5}
MARGINAL_COLUMNS = ["columns", "k", "tvd_synthetic", "tvd_holdout"]

#: combinations handed to one kernel call; small enough to balance 2-8 workers
_COMBOS_PER_TASK = 64


@dataclass(frozen=True)
class FidelityScores:
    """Per-k mean TVDs plus the combinations they were averaged over."""

    F: dict[int, float]
    F_holdout: dict[int, float]
    n_combinations: dict[int, int]
    combinations_sampled: bool
    marginals: pd.DataFrame

    def ratio(self, k: int) -> float:
        """F_k(T,S) / F_k(T,H); NaN when the holdout reference is 0 or undefined."""
        num, den = self.F[k], self.F_holdout[k]
        if not (math.isfinite(num) and math.isfinite(den)) or den == 0:
            return math.nan
        return num / den


def select_combinations(n_columns: int, k: int, max_combinations: int | None,
                        rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """All k-combinations of column indices, or a seeded sample of max_combinations of them.

    Returns (array of shape (m, k) in lexicographic order, whether it was sampled).
    """
    total = math.comb(n_columns, k)
    if max_combinations is None or total <= max_combinations:
        combos = np.array(list(itertools.combinations(range(n_columns), k)), dtype=np.int64)
        return combos.reshape(total, k), False
    pick = np.sort(rng.choice(total, size=max_combinations, replace=False))
    combos = np.array([_unrank_combination(int(r), n_columns, k) for r in pick], dtype=np.int64)
    return combos.reshape(max_combinations, k), True


def _unrank_combination(rank: int, n: int, k: int) -> list[int]:
    """The rank-th k-combination of range(n) in lexicographic order (no full enumeration)."""
    out, start = [], 0
    for slots in range(k, 0, -1):
        for c in range(start, n):
            block = math.comb(n - c - 1, slots - 1)
            if rank < block:
                out.append(c)
                start = c + 1
                break
            rank -= block
    return out


class FidelityModel:
    """T's buckets for every k and F_k(T,H), ready to score synthetic tables."""

    def __init__(self, train: pd.DataFrame, holdout: pd.DataFrame, kinds: Mapping[str, str], *,
                 max_combinations: int | None = None, n_jobs: int = 1, seed: int = 0):
        self.columns = list(train.columns)
        self.n_jobs = n_jobs
        self.n_train, self.n_holdout = len(train), len(holdout)
        rng = np.random.default_rng(seed)
        self.discretisers: dict[int, Discretiser] = {}
        self.train_codes: dict[int, np.ndarray] = {}
        self.holdout_codes: dict[int, np.ndarray] = {}
        self.combos: dict[int, np.ndarray] = {}
        self.sampled = False
        for k, cap in BUCKET_CAPS.items():
            disc = Discretiser(train, kinds, cap)
            self.discretisers[k] = disc
            self.train_codes[k] = disc.transform(train)
            self.holdout_codes[k] = disc.transform(holdout)
            self.combos[k], sampled = select_combinations(len(self.columns), k, max_combinations, rng)
            self.sampled |= sampled
        self._holdout_tvds = {k: self._tvds(k, [self.holdout_codes[k]])[:, 0] for k in BUCKET_CAPS}

    def _tvds(self, k: int, tables: list[np.ndarray]) -> np.ndarray:
        """(n_combinations, len(tables)) TVDs of T against each coded table."""
        combos = self.combos[k]
        if len(combos) == 0:
            return np.empty((0, len(tables)))
        others = np.ascontiguousarray(np.concatenate(tables, axis=1))
        sizes = np.array([t.shape[1] for t in tables], dtype=np.int64)
        cards = self.discretisers[k].cardinalities
        train = self.train_codes[k]
        chunks = [combos[i:i + _COMBOS_PER_TASK] for i in range(0, len(combos), _COMBOS_PER_TASK)]
        if self.n_jobs == 1 or len(chunks) == 1:
            parts = [marginal_tvds(train, others, sizes, cards, c) for c in chunks]
        else:
            parts = Parallel(n_jobs=self.n_jobs, backend="threading")(
                delayed(marginal_tvds)(train, others, sizes, cards, c) for c in chunks
            )
        return np.concatenate(parts, axis=0)

    def score(self, synthetic: pd.DataFrame | None) -> FidelityScores:
        """Score S against T (None means S is H: the holdout reference row)."""
        F, F_h, n_comb, rows = {}, {}, {}, []
        for k in BUCKET_CAPS:
            tvd_h = self._holdout_tvds[k]
            if synthetic is None:
                tvd_s = tvd_h
            else:
                tvd_s = self._tvds(k, [self.discretisers[k].transform(synthetic)])[:, 0]
            F[k] = float(np.mean(tvd_s)) if len(tvd_s) else math.nan
            F_h[k] = float(np.mean(tvd_h)) if len(tvd_h) else math.nan
            n_comb[k] = len(tvd_s)
            names = [" | ".join(str(self.columns[j]) for j in c) for c in self.combos[k]]
            rows.append(pd.DataFrame({"columns": names, "k": k,
                                      "tvd_synthetic": tvd_s, "tvd_holdout": tvd_h}))
        marginals = pd.concat(rows, ignore_index=True)[MARGINAL_COLUMNS]
        return FidelityScores(F, F_h, n_comb, self.sampled, marginals)
