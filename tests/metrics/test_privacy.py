"""DCR share (docs/definitions/paper.md §4): hand-computed cases and the fast search against brute force."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from holdbench.metrics import DCRShare, Fidelity, PrivacyPanel, evaluate, paper_families
from holdbench.metrics._kernels import hamming_smallest, tile_buffer
from holdbench.metrics.privacy import (
    dcr_share,
    nearest_distance,
    row_ids,
    second_nearest_distance,
    smallest_distances,
    wilson_interval,
)

CAT2 = {"u": "categorical", "v": "categorical"}


def frame(rows):
    return pd.DataFrame(rows, columns=["u", "v"])


def test_share_with_tie_weighting_by_hand():
    t = frame([("a", "x"), ("b", "y")])
    h = frame([("a", "y"), ("c", "z"), ("d", "w")])
    s = frame([
        ("a", "x"),  # d_T 0, d_H 1 -> closer to T
        ("c", "z"),  # d_T 2, d_H 0 -> closer to H
        ("a", "w"),  # d_T 1, d_H 1 -> tie, weight n_T/(n_T+n_H) = 2/5
    ])
    d = evaluate(t, h, s, CAT2, families=paper_families()).to_dict()
    assert d["dcr_share"] == pytest.approx((1 + 2 / 5) / 3, abs=1e-15)
    assert (d["n_closer_train"], d["n_closer_holdout"], d["n_ties"]) == (1, 1, 1)
    assert d["dcr_train_mean"] == pytest.approx(1.0)
    assert d["dcr_holdout_mean"] == pytest.approx(2 / 3)


def test_holdout_row_uses_second_nearest_in_h():
    t = frame([("a", "y")])
    h = frame([("a", "x"), ("a", "x"), ("b", "y"), ("c", "y")])
    d = evaluate(t, h, None, CAT2, holdout_row=True, families=paper_families()).to_dict()
    # d_T: every H row differs from (a, y) in one column -> 1, 1, 1, 1
    # d_H (self excluded): (a,x) has a twin -> 0, 0; (b,y) and (c,y) are 1 apart -> 1, 1
    # -> two closer to H, two ties weighted 1/(1+4)
    assert d["dcr_share"] == pytest.approx(2 / 4 * 1 / 5, abs=1e-15)
    assert d["n_synthetic"] == 4 and d["dcr_holdout_mean"] == pytest.approx(0.5)
    assert d["F1_ratio"] == 1.0


def test_numeric_bins_missing_and_garbage():
    kinds = {"n": "numeric", "c": "categorical"}
    t = pd.DataFrame({"n": [1.0, 2.0, np.nan], "c": ["p", "p", "p"]})
    h = pd.DataFrame({"n": [3.0, 3.0, 3.0], "c": ["p", "p", "p"]})
    s = pd.DataFrame({"n": ["abc", 1.0, 3.0], "c": ["p", "q", "p"]}, dtype=object)
    d = evaluate(t, h, s, kinds, families=paper_families()).to_dict()
    # "abc" is missing, as T's NaN: d_T 0, d_H 1; (1, q): d_T 1, d_H 2; (3, p): d_T 1, d_H 0
    assert (d["n_closer_train"], d["n_closer_holdout"], d["n_ties"]) == (2, 1, 0)
    assert d["dcr_train_mean"] == pytest.approx(2 / 3)


def test_unseen_category_and_one_row():
    t = pd.DataFrame({"u": ["a"]})
    s = pd.DataFrame({"u": ["never-seen"]})
    d = evaluate(t, t, s, {"u": "categorical"}).to_dict()
    assert d["dcr_train_mean"] == 1 and d["dcr_holdout_mean"] == 1 and d["dcr_share"] == 0.5


def test_wilson_interval_and_pvalue_against_scipy():
    for k, n in ((30, 100), (0, 17), (17, 17), (5123, 10000)):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson_interval(k / n, n)
        assert low == pytest.approx(ci.low, abs=1e-9) and high == pytest.approx(ci.high, abs=1e-9)
    d_t = np.array([0] * 60 + [1] * 40)
    d_h = np.array([1] * 60 + [0] * 40)
    res = dcr_share(d_t, d_h, 10, 10)
    assert res.share == pytest.approx(0.6)
    assert res.pvalue == pytest.approx(stats.norm.sf((0.6 - 0.5) / math.sqrt(0.25 / 100)))


def brute_smallest(q, r, k):
    dist = (q.T[:, None, :] != r.T[None, :, :]).sum(axis=2)
    dist.sort(axis=1)
    out = np.full((q.shape[1], k), q.shape[0] + 1)
    width = min(k, dist.shape[1])
    out[:, :width] = dist[:, :width]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_fast_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 9))
    cards = rng.integers(1, 5, p)
    n_r, n_q = int(rng.integers(1, 5000)), int(rng.integers(1, 300))
    dtype = np.uint16 if seed % 2 else np.uint8
    refs = np.stack([rng.integers(0, c, n_r) for c in cards]).astype(dtype)
    # queries partly copied from refs so that exact matches and duplicates occur
    queries = np.stack([rng.integers(0, c, n_q) for c in cards]).astype(dtype)
    copy = rng.random(n_q) < 0.3
    queries[:, copy] = refs[:, rng.integers(0, n_r, copy.sum())]
    for k in (1, 2, 5):
        want = brute_smallest(queries, refs, k)
        got = hamming_smallest(queries, refs, k, 0, tile_buffer(np.uint8))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(smallest_distances(queries, refs, k, 0, n_jobs=2), want)
    q_ids, r_ids = row_ids([queries, refs])
    want1 = brute_smallest(queries, refs, 1)[:, 0]
    np.testing.assert_array_equal(nearest_distance(queries, refs, q_ids, r_ids), want1)
    np.testing.assert_array_equal(nearest_distance(queries, refs, q_ids, r_ids, n_jobs=2), want1)
    # 2nd-nearest rule: queries that are rows of refs
    rows = rng.integers(0, n_r, min(n_r, 50))
    ids = row_ids([refs])[0]
    got2 = second_nearest_distance(refs[:, rows], refs, ids[rows], ids)
    want2 = brute_smallest(refs[:, rows], refs, 2)[:, 1]
    np.testing.assert_array_equal(got2, want2)


def test_row_ids_identify_equal_rows_only():
    a = np.array([[0, 1, 0, 2], [5, 5, 5, 5]], dtype=np.uint8)
    b = np.array([[2, 0], [5, 4]], dtype=np.uint8)
    ia, ib = row_ids([a, b])
    assert ia[0] == ia[2] != ia[1] and ib[0] == ia[3] and ib[1] not in set(ia)


def test_row_ids_over_several_packed_words():
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 300, (20, 3000)).astype(np.uint16)  # 9 bits x 20 columns: 3 words
    codes[:, 1500:] = codes[:, rng.integers(0, 1500, 1500)]  # plenty of duplicate rows
    ids = row_ids([codes[:, :1000], codes[:, 1000:]])
    _, want = np.unique(codes.T, axis=0, return_inverse=True)
    got = np.concatenate(ids)
    # same partition of the rows: ids equal exactly where rows are equal
    assert len(np.unique(got)) == len(np.unique(want))
    assert len(np.unique(np.stack([got, want.reshape(-1)]), axis=1)[0]) == len(np.unique(got))


def sampled(n):
    return [Fidelity(), DCRShare(privacy_sample=n), PrivacyPanel(privacy_sample=n)]


def test_privacy_sample_and_n_jobs():
    rng = np.random.default_rng(4)
    cols = {"a": rng.integers(0, 20, 400), "b": rng.choice(list("pqrst"), 400), "c": rng.normal(size=400)}
    t = pd.DataFrame(cols)
    h = t.sample(frac=1, random_state=1).reset_index(drop=True).iloc[:200]
    s = pd.DataFrame({k: rng.permutation(v) for k, v in cols.items()})
    kinds = {"a": "numeric", "b": "categorical", "c": "numeric"}
    one = evaluate(t, h, s, kinds, families=sampled(100), seed=3).to_dict()
    again = evaluate(t, h, s, kinds, families=sampled(100), seed=3, n_jobs=2).to_dict()
    other = evaluate(t, h, s, kinds, families=sampled(100), seed=4).to_dict()
    full = evaluate(t, h, s, kinds).to_dict()
    assert one["privacy_sampled"] and one["n_privacy"] == 100 and one["n_synthetic"] == 400
    assert one["n_closer_train"] + one["n_closer_holdout"] + one["n_ties"] == 100
    skip = {"seconds_fidelity", "seconds_privacy", "seconds_extended"}
    def same(d):
        return {k: v for k, v in d.items() if k not in skip}

    assert same(one) == same(again)
    assert one["dcr_train_mean"] != other["dcr_train_mean"] or one["dcr_share"] != other["dcr_share"]
    assert not full["privacy_sampled"] and full["n_privacy"] == 400
    assert evaluate(t, h, s, kinds, families=sampled(10_000)).to_dict()["privacy_sampled"] is False


def brute_nearest(queries: pd.DataFrame, refs: pd.DataFrame, skip_self: bool = False) -> np.ndarray:
    """Hamming distance of each query row to its nearest ref row, all pairs (categorical columns:
    the codes are the values themselves); skip_self: queries are refs, each its own row excluded."""
    q, r = queries.to_numpy(dtype=str), refs.to_numpy(dtype=str)
    dist = (q[:, None, :] != r[None, :, :]).sum(axis=2)
    if skip_self:
        np.fill_diagonal(dist, q.shape[1] + 1)
    return dist.min(axis=1)


@pytest.mark.parametrize(("holdout_row", "sample"), [(False, None), (True, None), (True, 50)])
def test_dcr_histogram_against_brute_force(holdout_row, sample):
    rng = np.random.default_rng(11)
    cols = ["a", "b", "c", "d"]
    t = pd.DataFrame({c: rng.choice(list("pqrs"), 300) for c in cols})
    h = pd.DataFrame({c: rng.choice(list("pqrs"), 140) for c in cols})
    s = pd.DataFrame({c: rng.choice(list("pqrs"), 260) for c in cols})
    h.iloc[:30] = t.iloc[:30].to_numpy()  # H rows also in T: distance 0 by the hash join
    s.iloc[:40] = t.iloc[40:80].to_numpy()
    kinds = dict.fromkeys(cols, "categorical")
    res = evaluate(t, h, None if holdout_row else s, kinds, families=[DCRShare(privacy_sample=sample)],
                   holdout_row=holdout_row)
    hist = res.results["privacy"].dcr_histogram
    s_ref = h if holdout_row else s
    if sample:  # the seeded subsample privacy_synthetic draws (seed 0): S is part of H only
        s_ref = s_ref.iloc[np.sort(np.random.default_rng(0).choice(len(s_ref), sample, replace=False))]
    want_h_to_t = brute_nearest(h, t)
    to_h = brute_nearest(s_ref, h, skip_self=True) if holdout_row and not sample else None
    if holdout_row and sample:  # each sampled record's nearest *other* H record
        q, r = s_ref.to_numpy(dtype=str), h.to_numpy(dtype=str)
        dist = (q[:, None, :] != r[None, :, :]).sum(axis=2)
        dist[np.arange(sample), s_ref.index.to_numpy()] = len(cols) + 1
        to_h = dist.min(axis=1)
    want = {"to_train": brute_nearest(s_ref, t), "to_holdout": brute_nearest(s_ref, h) if to_h is None else to_h,
            "holdout_to_train": want_h_to_t}
    top = max(int(v.max()) for v in want.values())
    assert hist["distance"].tolist() == list(range(top + 1))
    for col, dist in want.items():
        assert hist[col].tolist() == np.bincount(dist, minlength=top + 1).tolist(), col
    assert hist["holdout_to_train"].sum() == len(h) and hist["holdout_to_train"][0] >= 30
