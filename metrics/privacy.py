"""Privacy: the DCR share (docs/definitions/paper.md §4) and the exact nearest-neighbour search behind it.

The search is exact and cheap because (1) every column is a small integer code, (2) S is
collapsed to its distinct rows, (3) rows that occur verbatim in the reference set get
distance 0 from a hash join without any scan, so (4) a scan can stop as soon as its
queries have found distance 1, and (5) the scan itself is a vectorised numba kernel
(one-byte lanes, four queries per pass) run in threads over chunks of queries.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import NormalDist

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from holdbench.metrics._discretise import distance_codes
from holdbench.metrics._kernels import hamming_smallest, tile_buffer
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric, shard_slice

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
    """d_T and d_H for every record of S, and the DCR share (docs/definitions/paper.md §4.3-4.5)."""
    d_train, d_holdout = synthetic_distances(data, holdout_row, n_jobs)
    return dcr_share(d_train, d_holdout, data.train.shape[1], data.holdout.shape[1])


def synthetic_distances(data: DistanceData, holdout_row: bool, n_jobs: int = 1,
                        rows: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """(d_T, d_H) of the records `rows` of S: Hamming distance to the nearest T record, and to the
    nearest H record (the second nearest for the holdout reference row, where S is H)."""
    q, q_ids = data.synthetic[:, rows], data.synthetic_ids[rows]
    d_train = nearest_distance(q, data.train, q_ids, data.train_ids, n_jobs)
    nearest_h = second_nearest_distance if holdout_row else nearest_distance
    return d_train, nearest_h(q, data.holdout, q_ids, data.holdout_ids, n_jobs)


def holdout_distances(data: DistanceData, n_jobs: int = 1, rows: slice = slice(None)) -> np.ndarray:
    """Hamming distance of the records `rows` of H to their nearest T record."""
    return nearest_distance(data.holdout[:, rows], data.train, data.holdout_ids[rows], data.train_ids, n_jobs)


def n_workers(n_jobs: int | None) -> int:
    """joblib's reading of n_jobs: -1 = all cores, -2 = all but one, None/0 = 1."""
    if n_jobs is None or n_jobs == 0:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


@dataclass(frozen=True)
class PrivacyResult:
    """Distance to closest record on the paper's Hamming distance (docs/definitions/paper.md §4)."""

    dcr_share: float = metric(
        "DCR share", "privacy", direction="ideal", ideal=0.5, digits=3, headline=True,
        interval=("dcr_share_ci_low", "dcr_share_ci_high"),
        meaning="Share of S closer to T than to H (ties weighted n_T/(n_T+n_H)): 0.5 is ideal, "
                "above = S sits closer to its training records than to unseen ones.")
    exact_copy_share: float = metric(
        "Exact copies of T (share of S)", "privacy", direction="lower", digits=4,
        meaning="Share of S's records equal in every column (numbers by value, missing as a value) to some "
                "record of T; compare with exact_copy_share_holdout, what unseen real data scores.")
    exact_copy_excess: float = metric(
        "Exact copies beyond H's rate", "privacy", direction="lower", digits=4,
        interval=("exact_copy_excess_ci_low", "exact_copy_excess_ci_high"),
        meaning="exact_copy_share minus H's share of records equal to some T record: 0 = S repeats T's records "
                "no more often than unseen real data happens to; above = training records copied beyond chance.")
    dcr_share_ci_low: float = math.nan
    """Lower end of the 95% Wilson interval of dcr_share."""
    dcr_share_ci_high: float = math.nan
    """Upper end of the 95% Wilson interval of dcr_share."""
    dcr_share_pvalue: float = math.nan
    """One-sided p-value of dcr_share > 0.5 (score test); small = evidence S leaks T."""
    dcr_train_mean: float = math.nan
    """Mean Hamming distance from S to its nearest T record (columns that differ)."""
    dcr_holdout_mean: float = math.nan
    """Mean Hamming distance from S to its nearest H record; about dcr_train_mean is ideal."""
    n_train: int = 0
    """Rows of T."""
    n_holdout: int = 0
    """Rows of H."""
    n_synthetic: int = 0
    """Rows of S (|H| for the holdout reference row)."""
    n_privacy: int = 0
    """Rows of S whose distances were computed (n_synthetic unless privacy_sample)."""
    privacy_sampled: bool = False
    """True when privacy used a seeded subsample of S."""
    n_closer_train: int = 0
    """Records of S strictly closer to T than to H."""
    n_closer_holdout: int = 0
    """Records of S strictly closer to H than to T."""
    n_ties: int = 0
    """Records of S equally close to both (weighted n_T/(n_T+n_H) in dcr_share)."""
    exact_copy_excess_ci_low: float = math.nan
    """Lower end of the 95% interval of exact_copy_excess (Newcombe's hybrid score interval)."""
    exact_copy_excess_ci_high: float = math.nan
    """Upper end of the 95% interval of exact_copy_excess."""
    exact_copy_share_holdout: float = math.nan
    """Share of H's records equal in every column to some T record (the reference)."""
    n_exact_copies: int = 0
    """Records of S equal in every column to some T record."""
    seconds_privacy: float = 0.0
    """Wall time of the DCR part."""
    dcr_histogram: pd.DataFrame | None = artifact(
        "Counts of S by Hamming distance to its nearest T record and to its nearest H record, and of H "
        "by distance to its nearest T record (columns distance, to_train, to_holdout, holdout_to_train): "
        "the DCR distributions side by side (Clearbox; ANITA D2.2 compares S->T with H->T).")


def privacy_synthetic(data: EvalData, privacy_sample: int | None) -> pd.DataFrame:
    """S as the privacy metrics see it: all of it, or a seeded subsample (shared by every family)."""
    def pick() -> pd.DataFrame:
        s = data.synthetic
        if privacy_sample is None or privacy_sample >= len(s):
            return s
        rows = np.sort(np.random.default_rng(data.seed).choice(len(s), privacy_sample, replace=False))
        return s.iloc[rows].reset_index(drop=True)
    return data.shared(f"privacy_synthetic:{privacy_sample}", pick)


def shared_distance_data(data: EvalData, synthetic: pd.DataFrame) -> DistanceData:
    return data.shared(f"distance_data:{id(synthetic)}",
                       lambda: distance_data(data.train, data.holdout, synthetic, data.kinds))


def holdout_to_train(data: EvalData, codes: DistanceData, d_train: np.ndarray) -> np.ndarray:
    """Hamming distance of every H record to its nearest T record (computed once per evaluation).

    d_train: S's distances to T. When S is H itself (the holdout row on all of H) they are these
    very distances, and no search is made.
    """
    return data.shared(f"holdout_to_train:{id(codes)}",
                       lambda: d_train if s_is_holdout(data, codes) else holdout_distances(codes, data.n_jobs))


def s_is_holdout(data: EvalData, codes: DistanceData) -> bool:
    """True when S's codes are H's, row for row (the holdout row without privacy_sample)."""
    return data.holdout_row and codes.synthetic.shape[1] == codes.holdout.shape[1]


class DCRShare(MetricFamily):
    """The paper's privacy measure: DCR share on the Hamming distance (docs/definitions/paper.md §4)."""

    name = "privacy"
    result_type = PrivacyResult
    definition = "definitions/paper.md#4-privacy-distance-to-closest-record-dcr-share"
    reference = (
        "dcr_share equals Platzer & Reutterer's published adult numbers at their 10 significant "
        "digits and the DCR means to 1e-6 (the published code's float32 rounding): "
        "tests/metrics/test_reference.py (synthpop, flip50, mostly and the holdout row), "
        "scripts/reference/check_paper_reference.py (all 17 rows). exact_copy_excess's interval equals "
        "Newcombe's (1998) published method-10 examples to their four digits, and the copy counts a "
        "hand-worked table: tests/metrics/test_exact_copies.py."
    )

    def __init__(self, privacy_sample: int | None = None):
        """privacy_sample: evaluate on a seeded subsample of S of this size; None = all of S, as the paper."""
        if privacy_sample is not None and (not isinstance(privacy_sample, int) or privacy_sample < 1):
            raise ValueError(f"privacy: privacy_sample must be None or a positive integer, got {privacy_sample!r}")
        self.privacy_sample = privacy_sample

    shardable = True

    def partial(self, data: EvalData, shard: int, of: int) -> dict[str, np.ndarray]:
        """d_T and d_H of shard `shard` of `of` of S's rows, and d_T of the same share of H's rows
        (integer distances, in row order). Codes are always cut on all of T, H and S."""
        s = privacy_synthetic(data, self.privacy_sample)
        codes = shared_distance_data(data, s)
        if of == 1 and shard == 0:  # the whole table: shared with the panel, computed once
            dcr = data.shared(f"dcr:{id(s)}", lambda: privacy(codes, data.holdout_row, data.n_jobs))
            return {"d_train": dcr.d_train, "d_holdout": dcr.d_holdout,
                    "holdout_to_train": holdout_to_train(data, codes, dcr.d_train)}
        rows = shard_slice(codes.synthetic.shape[1], shard, of)
        h_rows = shard_slice(codes.holdout.shape[1], shard, of)
        d_train, d_holdout = synthetic_distances(codes, data.holdout_row, data.n_jobs, rows)
        h_to_t = d_train if s_is_holdout(data, codes) else holdout_distances(codes, data.n_jobs, h_rows)
        return {"d_train": d_train, "d_holdout": d_holdout, "holdout_to_train": h_to_t}

    def merge(self, data: EvalData, partials: Sequence[Mapping[str, np.ndarray]]) -> PrivacyResult:
        start = time.perf_counter()
        s = privacy_synthetic(data, self.privacy_sample)
        d_train, d_holdout, h_to_t = (np.concatenate([p[key] for p in partials])
                                      for key in ("d_train", "d_holdout", "holdout_to_train"))
        if len(d_train) != len(s) or len(d_holdout) != len(s) or len(h_to_t) != len(data.holdout):
            raise ValueError(f"privacy: the partial results cover {len(d_train)} rows of S and {len(h_to_t)} "
                             f"of H, not {len(s)} and {len(data.holdout)}")
        # what compute() leaves for the panel: the same distances, without searching again
        dcr = data.shared(f"dcr:{id(s)}", lambda: dcr_share(d_train, d_holdout, len(data.train), len(data.holdout)))
        codes = shared_distance_data(data, s)
        h_to_t = data.shared(f"holdout_to_train:{id(codes)}", lambda: h_to_t)
        top = int(max(dcr.d_train.max(initial=0), dcr.d_holdout.max(initial=0), h_to_t.max(initial=0)))
        hist = pd.DataFrame({"distance": np.arange(top + 1),
                             "to_train": np.bincount(dcr.d_train.astype(np.int64), minlength=top + 1),
                             "to_holdout": np.bincount(dcr.d_holdout.astype(np.int64), minlength=top + 1),
                             "holdout_to_train": np.bincount(h_to_t.astype(np.int64), minlength=top + 1)})
        copies = exact_copies(data, s)
        return PrivacyResult(
            **copies,
            dcr_share=dcr.share, dcr_share_ci_low=dcr.ci_low, dcr_share_ci_high=dcr.ci_high,
            dcr_share_pvalue=dcr.pvalue,
            dcr_train_mean=float(np.mean(dcr.d_train)), dcr_holdout_mean=float(np.mean(dcr.d_holdout)),
            n_train=len(data.train), n_holdout=len(data.holdout), n_synthetic=len(data.synthetic),
            n_privacy=len(s), privacy_sampled=len(s) < len(data.synthetic),
            n_closer_train=dcr.n_closer_train, n_closer_holdout=dcr.n_closer_holdout, n_ties=dcr.n_ties,
            seconds_privacy=time.perf_counter() - start, dcr_histogram=hist,
        )

    def compute(self, data: EvalData) -> PrivacyResult:
        start = time.perf_counter()
        result = self.merge(data, [self.partial(data, 0, 1)])
        return dataclasses.replace(result, seconds_privacy=time.perf_counter() - start)


def exact_row_ids(frames: Sequence[pd.DataFrame], kinds: Mapping[str, str]) -> list[np.ndarray]:
    """Exact identity of rows across frames (equal rows, equal id): numbers by value (float64, so 1 and
    1.0 are equal), labels as written, missing a value of its own."""
    return row_ids(distance_codes(frames, kinds, n_bins=None))


def exact_copies(data: EvalData, synthetic: pd.DataFrame) -> dict[str, float | int]:
    """S's and H's shares of records equal to some T record, and S's excess over H with its 95% interval."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    ids_t, ids_h, ids_s = exact_row_ids([data.train, data.holdout, synthetic], data.kinds)
    n_s, n_h = len(ids_s), len(ids_h)
    c_s, c_h = int(np.isin(ids_s, ids_t).sum()), int(np.isin(ids_h, ids_t).sum())
    if n_s == 0 or n_h == 0:
        return {"exact_copy_share": math.nan, "exact_copy_excess": math.nan, "n_exact_copies": c_s}
    low, high = confint_proportions_2indep(c_s, n_s, c_h, n_h, method="newcomb", compare="diff", alpha=0.05)
    return {"exact_copy_share": c_s / n_s, "exact_copy_excess": c_s / n_s - c_h / n_h,
            "exact_copy_excess_ci_low": float(low), "exact_copy_excess_ci_high": float(high),
            "exact_copy_share_holdout": c_h / n_h, "n_exact_copies": c_s}


def record_exposure(data: DistanceData, n_jobs: int = 1) -> pd.DataFrame:
    """Per record of T: how near S comes to it, against how near S comes to unseen records (H).

    The mirror image of the DCR share, record by record: if S were drawn independently of T, a
    record of T would have an S neighbour no nearer than an H record typically has. Columns:
    `row` (T's row number), `d_synthetic` (Hamming distance to its nearest S record),
    `n_copies` (S records equal to it on every code), `d_holdout` (distance to its nearest H
    record: large = rare among unseen records) and `percentile`, the share of H records whose
    nearest S record is at most as near (ties halved): near 0 = S comes closer to this record
    than to nearly every unseen one. Sorted most exposed first (percentile, then rarer, then
    more copies)."""
    d_s = nearest_distance(data.train, data.synthetic, data.train_ids, data.synthetic_ids, n_jobs)
    h_s = np.sort(nearest_distance(data.holdout, data.synthetic, data.holdout_ids, data.synthetic_ids, n_jobs))
    d_h = nearest_distance(data.train, data.holdout, data.train_ids, data.holdout_ids, n_jobs)
    below = np.searchsorted(h_s, d_s, side="left")
    at = np.searchsorted(h_s, d_s, side="right") - below
    percentile = (below + 0.5 * at) / max(len(h_s), 1)
    uniq, counts = np.unique(data.synthetic_ids, return_counts=True)
    pos = np.minimum(np.searchsorted(uniq, data.train_ids), max(len(uniq) - 1, 0))
    copies = np.where(uniq[pos] == data.train_ids, counts[pos], 0) if len(uniq) else np.zeros(len(d_s), np.int64)
    table = pd.DataFrame({"row": np.arange(len(d_s)), "d_synthetic": d_s, "n_copies": copies,
                          "d_holdout": d_h, "percentile": percentile})
    return table.sort_values(["percentile", "d_holdout", "n_copies", "row"],
                             ascending=[True, False, False, True], kind="stable").reset_index(drop=True)
