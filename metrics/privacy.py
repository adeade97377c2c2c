"""Privacy: the DCR share (SPEC §4) and the exact nearest-neighbour search behind it.

The search is exact and cheap because (1) every column is a small integer code, (2) S is
collapsed to its distinct rows, (3) rows that occur verbatim in the reference set get
distance 0 from a hash join without any scan, so (4) a scan can stop as soon as its
queries have found distance 1, and (5) the scan itself is a vectorised numba kernel
(one-byte lanes, four queries per pass) run in threads over chunks of queries.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import NormalDist

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from metrics._discretise import distance_codes
from metrics._kernels import hamming_smallest, tile_buffer

_Z95 = NormalDist().inv_cdf(0.975)


def row_ids(tables: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Exact identity of rows across several (p, n) code tables: equal rows, equal id.

    Codes are packed bitwise into as few int64 words as fit, then the words are factorized.
    """
    full = np.concatenate(tables, axis=1)
    ids = np.zeros(full.shape[1], dtype=np.int64)
    word, used = np.zeros(full.shape[1], dtype=np.int64), 0
    for j, col in enumerate(full):
        bits = max(1, int(col.max(initial=0)).bit_length())
        if used + bits > 62:
            ids = _combine(ids, word)
            word, used = np.zeros(full.shape[1], dtype=np.int64), 0
        word |= col.astype(np.int64) << used
        used += bits
        if j == len(full) - 1:
            ids = _combine(ids, word)
    bounds = np.cumsum([0] + [t.shape[1] for t in tables])
    return [ids[a:b] for a, b in pairwise(bounds)]


def _combine(ids: np.ndarray, word: np.ndarray) -> np.ndarray:
    """Dense ids of the pairs (ids, word)."""
    codes, uniques = pd.factorize(word)
    combined, _ = pd.factorize(ids * len(uniques) + codes)
    return combined.astype(np.int64)


def smallest_distances(queries: np.ndarray, refs: np.ndarray, k: int, lower_bound: int = 0,
                       n_jobs: int = 1) -> np.ndarray:
    """(n_q, k) smallest Hamming distances of each query column to the refs, with multiplicity."""
    n_q = queries.shape[1]
    if n_q == 0:
        return np.empty((0, k), dtype=np.int32)
    p = refs.shape[0]
    refs, queries = padded(refs, queries)
    dist_dtype = np.uint8 if refs.shape[0] < 255 else np.int32
    workers = n_workers(n_jobs)
    if workers == 1 or n_q < 64:
        out = hamming_smallest(queries, refs, k, lower_bound, tile_buffer(dist_dtype))
    else:
        step = max(32, math.ceil(n_q / (workers * 8)))

        def run(a: int) -> np.ndarray:
            q = np.ascontiguousarray(queries[:, a:a + step])
            return hamming_smallest(q, refs, k, lower_bound, tile_buffer(dist_dtype))

        parts = Parallel(n_jobs=workers, backend="threading")(delayed(run)(a) for a in range(0, n_q, step))
        out = np.concatenate(parts, axis=0)
    return np.minimum(out, p + 1)  # "no k-th neighbour" is p+1 of the unpadded width


def padded(*tables: np.ndarray, multiple: int = 4) -> list[np.ndarray]:
    """(p, n) tables in one dtype with zero rows appended up to a multiple of `multiple` columns.

    The kernels handle columns in groups; a column that is 0 on both sides adds no distance.
    """
    common = np.result_type(*(t.dtype for t in tables))
    pad = -tables[0].shape[0] % multiple
    return [np.ascontiguousarray(np.pad(t, ((0, pad), (0, 0))) if pad else t, dtype=common) for t in tables]


def nearest_distance(queries: np.ndarray, refs: np.ndarray, query_ids: np.ndarray,
                     ref_ids: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """Distance from each query to its nearest ref: 0 by hash join, otherwise by scanning.

    Distinct query rows are searched once and the result broadcast back.
    """
    uniq, first, inverse = np.unique(query_ids, return_index=True, return_inverse=True)
    exact = np.isin(uniq, ref_ids)
    out = np.zeros(len(uniq), dtype=np.int32)
    todo = np.flatnonzero(~exact)
    if len(todo):
        out[todo] = smallest_distances(queries[:, first[todo]], refs, 1, 1, n_jobs)[:, 0]
    return out[inverse.reshape(-1)]


def second_nearest_distance(queries: np.ndarray, refs: np.ndarray, query_ids: np.ndarray,
                            ref_ids: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """Distance from each query, itself a row of refs, to its nearest *other* row of refs.

    That is the 2nd smallest distance with the row itself included: 0 when it has a duplicate.
    """
    uniq, first, inverse = np.unique(query_ids, return_index=True, return_inverse=True)
    ref_uniq, ref_counts = np.unique(ref_ids, return_counts=True)
    pos = np.minimum(np.searchsorted(ref_uniq, uniq), len(ref_uniq) - 1)
    if not np.array_equal(ref_uniq[pos], uniq):
        raise AssertionError("second_nearest_distance: every query must be a row of refs")
    out = np.zeros(len(uniq), dtype=np.int32)
    todo = np.flatnonzero(ref_counts[pos] < 2)
    if len(todo):
        out[todo] = smallest_distances(queries[:, first[todo]], refs, 2, 0, n_jobs)[:, 1]
    return out[inverse.reshape(-1)]


@dataclass(frozen=True)
class DcrResult:
    """Per-record distances and the DCR share with its uncertainty."""

    d_train: np.ndarray
    d_holdout: np.ndarray
    share: float
    ci_low: float
    ci_high: float
    pvalue: float
    n_closer_train: int
    n_closer_holdout: int
    n_ties: int


def dcr_share(d_train: np.ndarray, d_holdout: np.ndarray, n_train: int, n_holdout: int) -> DcrResult:
    """P(d_T < d_H) + n_T/(n_T+n_H) P(d_T = d_H), with a Wilson 95% interval and the
    one-sided score-test p-value for share > 0.5 (ties weighted as in the share)."""
    n = len(d_train)
    closer_t = int(np.sum(d_train < d_holdout))
    closer_h = int(np.sum(d_train > d_holdout))
    ties = n - closer_t - closer_h
    if n == 0:
        return DcrResult(d_train, d_holdout, math.nan, math.nan, math.nan, math.nan, 0, 0, 0)
    tie_weight = n_train / (n_train + n_holdout)
    share = float(np.mean(d_train < d_holdout) + tie_weight * np.mean(d_train == d_holdout))
    low, high = wilson_interval(share, n)
    pvalue = 0.5 * math.erfc((share - 0.5) / math.sqrt(0.25 / n) / math.sqrt(2.0))
    return DcrResult(d_train, d_holdout, share, low, high, pvalue, closer_t, closer_h, ties)


def wilson_interval(p: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion p observed on n trials."""
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class DistanceData:
    """Hamming codes of T, H and S plus their exact row identities."""

    train: np.ndarray
    holdout: np.ndarray
    synthetic: np.ndarray
    train_ids: np.ndarray
    holdout_ids: np.ndarray
    synthetic_ids: np.ndarray


def distance_data(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame,
                  kinds: Mapping[str, str]) -> DistanceData:
    """Codes on the bins of the concatenation T∪H∪S (for the holdout row S is H: H counts twice)."""
    codes = distance_codes([train, holdout, synthetic], kinds)
    return DistanceData(*codes, *row_ids(codes))


def privacy(data: DistanceData, holdout_row: bool, n_jobs: int = 1) -> DcrResult:
    """d_T and d_H for every record of S, and the DCR share (SPEC §4.3-4.5)."""
    d_train = nearest_distance(data.synthetic, data.train, data.synthetic_ids, data.train_ids, n_jobs)
    if holdout_row:
        d_holdout = second_nearest_distance(data.synthetic, data.holdout, data.synthetic_ids,
                                            data.holdout_ids, n_jobs)
    else:
        d_holdout = nearest_distance(data.synthetic, data.holdout, data.synthetic_ids, data.holdout_ids,
                                     n_jobs)
    return dcr_share(d_train, d_holdout, data.train.shape[1], data.holdout.shape[1])


def n_workers(n_jobs: int | None) -> int:
    """joblib's reading of n_jobs: -1 = all cores, -2 = all but one, None/0 = 1."""
    if n_jobs is None or n_jobs == 0:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs
