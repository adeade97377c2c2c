"""Bale & Quick legal criteria (docs/definitions/bale-quick.md §8): hand-computed and brute-force (scipy cdist) references."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from holdbench.metrics.legal import LegalCriteria, LegalResult, _encode
from holdbench.metrics.registry import EvalData, artifacts, scalars, specs_of


def run(t, h, s, kinds=None, holdout_row=False, n_jobs=1, **options) -> LegalResult:
    kinds = kinds or {c: "numeric" for c in t.columns}
    return LegalCriteria(**options).compute(EvalData(t, h, s, kinds, holdout_row=holdout_row, n_jobs=n_jobs))


def test_hand_example_one_column_k2():
    # S x = [0, 2]: mean 1, SD 1 -> z = x - 1 for every table.
    t = pd.DataFrame({"x": [0.0, 0.0, 1.0, 3.0, 5.0, 10.0]})  # z: -1 -1 0 2 4 9
    h = pd.DataFrame({"x": [0.5, 4.0]})                       # z: -0.5 3
    s = pd.DataFrame({"x": [0.0, 2.0]})                       # z: -1 1
    r = run(t, h, s, k=2)
    # S: d = (0, 0) -> 0/0 := 1; (1, 1) -> 1
    assert r.legal_ims_synthetic == 0.5
    assert r.legal_dcr_p05_synthetic == pytest.approx(0.05)   # 5th pct of [0, 1]
    assert r.legal_nndr_p05_synthetic == pytest.approx(1.0)
    # H: (0.5, 0.5), (1, 1)
    assert r.legal_ims_holdout == 0.0
    assert r.legal_dcr_p05_holdout == pytest.approx(0.525)
    assert r.legal_nndr_p05_holdout == pytest.approx(1.0)
    # LOO (the duplicated -1 rows see each other at 0): d1 = 0 0 1 2 2 5; d2 = 1 1 1 2 4 7
    assert r.legal_ims_loo == pytest.approx(1 / 3)
    assert r.legal_dcr_p05_loo == 0.0
    assert r.legal_nndr_p05_loo == 0.0
    assert (r.legal_ims_pass_holdout, r.legal_dcr_pass_holdout, r.legal_nndr_pass_holdout) == (False, False, True)
    assert r.legal_pass_all_holdout is False
    assert (r.legal_ims_pass_loo, r.legal_dcr_pass_loo, r.legal_nndr_pass_loo) == (False, True, True)
    assert r.legal_pass_all_loo is False and r.legal_reason is None
    table = r.legal_criteria
    assert len(table) == 6 and table["pass"].tolist() == [False, False, True, False, True, True]


def brute(t: np.ndarray, h: np.ndarray, s: np.ndarray, k: int, delta: float):
    """Independent reference: S-fitted z-scores (T-fitted for leave-one-out), full cdist matrices."""
    mu, sd = s.mean(axis=0), s.std(axis=0)
    sd[sd == 0] = 1
    z = [(a - mu) / sd for a in (t, h, s)]
    sd_t = t.std(axis=0)
    sd_t[sd_t == 0] = 1
    zt = (t - t.mean(axis=0)) / sd_t
    loo = cdist(zt, zt)
    np.fill_diagonal(loo, np.inf)
    out = []
    for d in (cdist(z[2], z[0]), cdist(z[1], z[0]), loo):
        d = np.sort(d, axis=1)[:, :k]
        ratio = np.array([1.0 if b == 0 else a / b for a, b in zip(d[:, 0], d[:, -1])])
        out.append((np.mean(d[:, 0] <= delta), np.percentile(d[:, 0], 5), np.percentile(ratio, 5)))
    return out


@pytest.mark.parametrize(("seed", "n_jobs"), [(0, 1), (1, 1), (0, 2)])
def test_matches_brute_force_with_duplicates(seed, n_jobs):
    """Queries in several blocks of the candidate search (300 S rows; 128 per block), in one or two threads."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 4, (300, 3)).astype(float) + np.c_[rng.normal(0, 1, 300), np.zeros((300, 2))]
    t[:40] = t[0]           # 40 copies of one row: more than k+1, so ties push the row itself out
    t[40:43] = t[41]        # a few exact duplicates
    h = rng.integers(0, 4, (150, 3)).astype(float)
    s = np.vstack([t[rng.integers(0, 300, 100)], rng.normal(1.5, 1.2, (200, 3))])
    cols = ["a", "b", "c"]
    r = run(pd.DataFrame(t, columns=cols), pd.DataFrame(h, columns=cols), pd.DataFrame(s, columns=cols), k=5,
            n_jobs=n_jobs)
    (ims_s, dcr_s, n_s), (ims_h, dcr_h, n_h), (ims_l, dcr_l, n_l) = brute(t, h, s, 5, 0.001)
    got = [r.legal_ims_synthetic, r.legal_dcr_p05_synthetic, r.legal_nndr_p05_synthetic,
           r.legal_ims_holdout, r.legal_dcr_p05_holdout, r.legal_nndr_p05_holdout,
           r.legal_ims_loo, r.legal_dcr_p05_loo, r.legal_nndr_p05_loo]
    np.testing.assert_allclose(got, [ims_s, dcr_s, n_s, ims_h, dcr_h, n_h, ims_l, dcr_l, n_l], atol=1e-9)
    assert r.legal_n_distinct_synthetic == len(np.unique(s, axis=0))


def test_leave_one_out_keeps_duplicates_of_the_record():
    # 8 copies of (0, 0) and 4 distinct points; k = 5 -> each copy's 5 nearest others are copies.
    t = pd.DataFrame({"x": [0.0] * 8 + [1.0, 2.0, 3.0, 4.0], "y": [0.0] * 12})
    s = pd.DataFrame({"x": [0.0, 2.0], "y": [0.0, 1.0]})      # z_x = x - 1, z_y = 2y - 1
    h = pd.DataFrame({"x": [9.0], "y": [1.0]})
    r = run(t, h, s, k=5, delta=0.001)
    # copies: d1..d5 = 0 (ratio 1); x=1: d1 = 1 to 8 copies... d1 = d5 = 1 (ratio 1);
    # x=2: neighbours 1, 1(x=1? no, |2-1|=1) -> d = 1,1,2,2,2 ratio .5; x=3: 1,1,2,3,3; x=4: 1,2,3,4,4
    assert r.legal_ims_loo == pytest.approx(8 / 12)
    d1 = np.array([0] * 8 + [1, 1, 1, 1], dtype=float)
    assert r.legal_dcr_p05_loo == pytest.approx(np.percentile(d1, 5))
    ratios = np.array([1.0] * 8 + [1.0, 0.5, 1 / 3, 0.25])
    assert r.legal_nndr_p05_loo == pytest.approx(np.percentile(ratios, 5))


def test_pass_flips_when_synthetic_copies_train():
    rng = np.random.default_rng(3)
    t, h, s = (pd.DataFrame(rng.normal(size=(400, 3)), columns=list("abc")) for _ in range(3))
    fresh = run(t, h, s)
    assert fresh.legal_ims_synthetic == 0.0 and fresh.legal_ims_pass_holdout is True
    copy = run(t, h, t.copy())
    assert copy.legal_ims_synthetic == 1.0 and copy.legal_dcr_p05_synthetic == pytest.approx(0.0, abs=1e-6)
    assert copy.legal_ims_pass_holdout is False and copy.legal_dcr_pass_holdout is False
    assert copy.legal_pass_all_holdout is False and copy.legal_pass_all_loo is False


def test_encoding_categoricals_unseen_and_missing():
    t = pd.DataFrame({"c": ["b", "a", "b"], "x": [1.0, np.nan, 1.0]})
    h = pd.DataFrame({"c": [None, "a", "b"], "x": [1.0, 1.0, 1.0]})
    s = pd.DataFrame({"c": ["c", "a", "a"], "x": [0.0, 2.0, np.nan]})
    kinds = {"c": "categorical", "x": "numeric"}
    zt, zh, zs = _encode([t, h, s], kinds)
    # codes: a=0, b=1 (T's levels, sorted), c=2 (unseen), missing=3; S codes [2,0,0]: mean 2/3, SD sqrt(8/9)
    mu, sd = 2 / 3, math.sqrt(8 / 9)
    np.testing.assert_allclose(zt[:, 0], (np.array([1, 0, 1]) - mu) / sd)
    np.testing.assert_allclose(zh[:, 0], (np.array([3, 0, 1]) - mu) / sd)
    np.testing.assert_allclose(zs[:, 0], (np.array([2, 0, 0]) - mu) / sd)
    # x: S's observed 0, 2 -> mean 1, SD 1; missing -> 0 plus an unscaled indicator column
    np.testing.assert_allclose(zt[:, 1:], [[0, 0], [0, 1], [0, 0]])
    np.testing.assert_allclose(zs[:, 1:], [[-1, 0], [1, 0], [0, 1]])
    np.testing.assert_allclose(zh[:, 1:], [[0, 0]] * 3)


def test_holdout_row_pass_fields_none_with_reason():
    rng = np.random.default_rng(4)
    t, h = (pd.DataFrame(rng.normal(size=(200, 2)), columns=list("ab")) for _ in range(2))
    r = run(t, h, h, holdout_row=True)
    assert r.legal_ims_pass_holdout is None and r.legal_pass_all_holdout is None
    assert "holdout row" in r.legal_reason
    assert r.legal_ims_synthetic == r.legal_ims_holdout
    assert r.legal_dcr_p05_synthetic == r.legal_dcr_p05_holdout
    assert isinstance(r.legal_dcr_pass_loo, bool)


def test_result_contract_and_bad_options():
    names = [m.name for m in specs_of(LegalResult)]
    assert len(names) == 17 and all(n.startswith("legal_") for n in names)
    t = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    r = run(t, t.iloc[:3], t.iloc[2:])
    assert set(scalars(r)) >= set(names) and "legal_criteria" in artifacts(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.legal_ims_synthetic = 0.0
    tiny = run(t.iloc[:3], t, t)
    assert math.isnan(tiny.legal_ims_synthetic) and "k=5" in tiny.legal_reason
    for bad in ({"delta": -1.0}, {"k": 0}, {"percentile": 101}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            LegalCriteria(**bad)
    with pytest.raises(ValueError, match="'x'"):
        LegalCriteria().compute(EvalData(t, t, t, {}))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_candidate_search_returns_the_nearest_rows_within_its_error_bound(n_jobs):
    """The fast candidate search (|q|² − 2q·r + |r|² by blocks of matrix products, the m smallest kept by a
    numba kernel) against exact distances from scipy: each row's m candidates are m distinct T rows, their
    values ascending and within the documented bound of their exact squared distances, and no T row left
    out is nearer than the m-th candidate beyond that bound; two threads give the one-thread result exactly."""
    from holdbench.metrics.legal import _Reference

    rng = np.random.default_rng(5)
    t = np.round(rng.normal(0, 1, (900, 4)), 1)  # rounded: many equal distances
    t[:60] = t[0]
    q = np.vstack([t[rng.integers(0, 900, 200)], np.round(rng.normal(0, 1.2, (400, 4)), 1)])  # 5 blocks
    ref = _Reference(t, n_jobs=n_jobs)
    m = 12
    sq, idx = ref._candidates(q, m)
    exact = cdist(q, ref.rows, "sqeuclidean")
    tol = 1e-10 * ((q * q).sum(axis=1) + ref.max_sq + 1.0)
    assert (np.diff(sq, axis=1) >= 0).all()
    assert all(len(set(row)) == m for row in idx)
    picked = np.take_along_axis(exact, idx, axis=1)
    assert (np.abs(picked - sq) <= tol[:, None]).all()
    left = exact.copy()
    np.put_along_axis(left, idx, np.inf, axis=1)
    assert (left.min(axis=1) >= picked.max(axis=1) - 2 * tol).all()
    if n_jobs == 2:
        assert [a.tolist() for a in ref._candidates(q, m)] == [a.tolist() for a in
                                                              _Reference(t, n_jobs=1)._candidates(q, m)]
