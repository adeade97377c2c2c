"""Bale & Quick legal criteria (docs/definitions/bale-quick.md §8) on tables whose answers are known by construction.

Every expected value here is worked out by hand in the comments (or by scipy's cdist on a grid),
never by holdbench.metrics.legal itself.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from holdbench.metrics import legal
from holdbench.metrics.legal import LegalCriteria
from holdbench.metrics.registry import EvalData


def run(t, h, s, **options):
    kinds = {c: "numeric" for c in t.columns}
    return LegalCriteria(**options).compute(EvalData(t, h, s, kinds))


def frame(points):
    return pd.DataFrame(np.asarray(points, dtype=float), columns=["a", "b"])


# T: a in {0, 2}, b in {0, 1}. T's scaler: a-mean 1, SD 1; b-mean 0.5, SD 0.5 -> T-scaled T is the
# square (+-1, +-1) of side 2. S = (0,0), (2,2): S's scaler is mean 1, SD 1 on both columns, so
# S-scaled T is the 2 x 1 rectangle (-1,-1), (1,-1), (-1,0), (1,0).
T_SQ = frame([(0, 0), (2, 0), (0, 1), (2, 1)])
S_SQ = frame([(0, 0), (2, 2)])
# H = (2,1) -> S-scaled (1,0), a copy of a T point; (1,0.5) -> (0,-0.5), at sqrt(1.25) from all four.
H_SQ = frame([(2, 1), (1, 0.5)])


def test_each_side_uses_its_scaler_k2():
    r = run(T_SQ, H_SQ, S_SQ, k=2, ims_curve_deltas=[0.0, 0.5, 1.0, 2.0])
    # S side (S-scaled): (-1,-1) -> d1 0, d2 1 (ratio 0); (1,1) -> d1 1, d2 2 (ratio 0.5)
    assert r.legal_ims_synthetic == 0.5
    assert r.legal_dcr_p05_synthetic == pytest.approx(0.05, abs=1e-15)      # 5th pct of [0, 1]
    assert r.legal_nndr_p05_synthetic == pytest.approx(0.025, abs=1e-15)    # 5th pct of [0, 0.5]
    # holdout side (S-scaled): d1 = [0, sqrt 1.25], ratios [0, 1]
    assert r.legal_ims_holdout == 0.5
    assert r.legal_dcr_p05_holdout == pytest.approx(0.05 * math.sqrt(1.25), abs=1e-15)
    assert r.legal_nndr_p05_holdout == pytest.approx(0.05, abs=1e-15)
    # leave-one-out side (T-scaled square of side 2): every point d1 = d2 = 2, ratio 1.
    # (On S's scale it would be the rectangle: d1 = 1, d2 = 2, ratio 0.5.)
    assert r.legal_ims_loo == 0.0
    assert r.legal_dcr_p05_loo == pytest.approx(2.0, abs=1e-15)
    assert r.legal_nndr_p05_loo == pytest.approx(1.0, abs=1e-15)
    assert (r.legal_ims_pass_loo, r.legal_dcr_pass_loo, r.legal_nndr_pass_loo) == (False, False, False)
    table = r.legal_criteria.set_index(["criterion", "reference"])
    assert set(table.loc[(slice(None), "loo"), "reference_scaler"]) == {"T"}
    assert set(table.loc[(slice(None), "holdout"), "reference_scaler"]) == {"S"}
    assert set(table["synthetic_scaler"]) == {"S"}
    # IMS curve, d1 <= delta: S d1 [0, 1]; H d1 [0, 1.118]; LOO d1 [2, 2, 2, 2]
    curve = r.legal_ims_curve
    assert curve["delta"].tolist() == [0.0, 0.001, 0.5, 1.0, 2.0]          # the grid plus delta
    assert curve["ims_synthetic"].tolist() == [0.5, 0.5, 0.5, 1.0, 1.0]
    assert curve["ims_holdout"].tolist() == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert curve["ims_loo"].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_exact_duplicates_ims_and_zero_over_zero():
    # 20 distinct T rows on 15 columns with large values (big norms: where |x|^2 - 2xy + |y|^2
    # loses digits), the first one present 7 times. S copies it 3 times and has 7 far rows.
    rng = np.random.default_rng(0)
    base = rng.normal(50, 20, (20, 15))
    t = pd.DataFrame(np.vstack([base, np.repeat(base[:1], 6, axis=0)]), columns=[f"c{i}" for i in range(15)])
    s = pd.DataFrame(np.vstack([np.repeat(base[:1], 3, axis=0), rng.normal(500, 20, (7, 15))]), columns=t.columns)
    h = pd.DataFrame(rng.normal(50, 20, (10, 15)), columns=t.columns)
    r = run(t, h, s, k=5)
    assert r.legal_ims_synthetic == 0.3                       # 3 of 10 exact copies
    assert r.legal_ims_holdout == 0.0
    # 7 copies of row 0 see 6 other copies: d1..d5 = 0 (0/0 := 1); the 19 others are distinct
    assert r.legal_ims_loo == 7 / 26
    assert r.legal_dcr_p05_synthetic == 0.0                   # exact zeros, not ~1e-8
    assert r.legal_dcr_p05_loo == 0.0
    # S's NNDR: the 3 copies have d1 = d5 = 0 -> ratio 1; the far rows have ratios < 1 but the
    # 5th percentile sits among them; LOO: 7 of 26 ratios are exactly 1.
    s_dist = np.sort(cdist(_z(s, s), _z(t, s)), axis=1)
    with np.errstate(invalid="ignore"):
        ratios = np.where(s_dist[:, 4] == 0, 1.0, s_dist[:, 0] / s_dist[:, 4])
    assert ratios[:3].tolist() == [1.0, 1.0, 1.0]
    assert r.legal_nndr_p05_synthetic == pytest.approx(np.percentile(ratios, 5), rel=1e-12)
    loo = cdist(_z(t, t), _z(t, t))
    np.fill_diagonal(loo, np.inf)
    loo = np.sort(loo, axis=1)
    with np.errstate(invalid="ignore"):
        loo_ratio = np.where(loo[:, 4] == 0, 1.0, loo[:, 0] / loo[:, 4])
    assert np.sum(loo_ratio == 1.0) >= 7
    assert r.legal_nndr_p05_loo == pytest.approx(np.percentile(loo_ratio, 5), rel=1e-12)


def _z(x: pd.DataFrame, fit: pd.DataFrame) -> np.ndarray:
    sd = fit.to_numpy().std(axis=0)
    return (x.to_numpy() - fit.to_numpy().mean(axis=0)) / np.where(sd > 0, sd, 1.0)


@pytest.mark.parametrize("max_candidates", [256, 3])
def test_grid_with_many_equal_distances(monkeypatch, max_candidates):
    # An integer grid: many T rows at exactly the same distance from a query, where the fast
    # search's candidate list cannot prove its k-th distance; the exact fallback must kick in.
    monkeypatch.setattr(legal, "_MAX_CANDIDATES", max_candidates)
    g = np.array([(i, j) for i in range(12) for j in range(12)], dtype=float)
    t = pd.DataFrame(np.vstack([g, g[:30]]), columns=["a", "b"])           # 30 grid points twice
    s = pd.DataFrame(np.vstack([g[::7] + 0.5, g[5:40]]), columns=["a", "b"])
    h = pd.DataFrame(g[::5] + 0.25, columns=["a", "b"])
    r = run(t, h, s, k=5, ims_curve_deltas=[0.0, 0.3, 1.0])
    zs, zh, zt, tt = _z(s, s), _z(h, s), _z(t, s), _z(t, t)
    loo = cdist(tt, tt)
    np.fill_diagonal(loo, np.inf)
    got, want = [], []
    for d, who in ((cdist(zs, zt), "synthetic"), (cdist(zh, zt), "holdout"), (loo, "loo")):
        d = np.sort(d, axis=1)[:, :5]
        ratio = np.where(d[:, 4] == 0, 1.0, d[:, 0] / d[:, 4])
        want += [np.mean(d[:, 0] <= 0.001), np.percentile(d[:, 0], 5), np.percentile(ratio, 5)]
        got += [getattr(r, f"legal_ims_{who}"), getattr(r, f"legal_dcr_p05_{who}"), getattr(r, f"legal_nndr_p05_{who}")]
        assert r.legal_ims_curve[f"ims_{who}"].tolist() == [np.mean(d[:, 0] <= x) for x in (0.0, 0.001, 0.3, 1.0)]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_bad_curve_option():
    for bad in ([-0.1], [float("nan")], "x", []):
        with pytest.raises(ValueError, match="ims_curve_deltas"):
            LegalCriteria(ims_curve_deltas=bad)
