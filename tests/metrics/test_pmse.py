"""pMSE (docs/definitions/bale-quick.md §8): hand-computed cases, a statsmodels recomputation and the null calibration."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from holdbench.metrics.pmse import PMSEScore, encode_numeric, expected_pmse, pmse_ratio
from tests.conftest import PAPER, needs_shared

KINDS = {"a": "numeric", "b": "numeric", "g": "categorical", "d": "numeric"}


def draw(n: int, seed: int) -> pd.DataFrame:
    """Mixed columns with dependence: b depends on a, g (4 levels) on a, d (0/1) on g."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = 0.8 * a + rng.normal(scale=0.6, size=n)
    g = np.array(["p", "q", "r", "s"])[np.clip((a + 2).astype(int), 0, 3)]
    d = (rng.random(n) < np.where(g == "p", 0.7, 0.3)).astype(int)
    return pd.DataFrame({"a": a, "b": b, "g": g, "d": d})


def test_expected_pmse_by_hand():
    # m c (1-c) / N = 3 * 0.25 * 0.75 / 8 = 0.5625 / 8 (Bale & Quick's 2 m (1-c)^2 c / N would be 0.84375 / 8)
    assert expected_pmse(3, 0.25, 8) == pytest.approx(0.0703125, abs=1e-15)
    assert expected_pmse(815, 0.5, 48842) == pytest.approx(2 * 815 * 0.25 * 0.5 / 48842, rel=1e-14)
    with pytest.raises(ValueError, match="c must be"):
        expected_pmse(3, 1.0, 8)


def test_encoding_by_hand():
    t = pd.DataFrame({"x": ["b", "a", None, "b"], "y": [1.0, np.nan, 3.0, 10.0]})
    s = pd.DataFrame({"x": ["z", "a", "c", None], "y": [2.0, 4.0, np.nan, 5.0]})
    tm, sm_, names = encode_numeric(t, s, {"x": "categorical", "y": "numeric"})
    assert names == ["x", "y", "y__missing"]
    # T's levels a=0, b=1; missing=2; unseen in sorted order c=3, z=4
    np.testing.assert_array_equal(tm[:, 0], [1, 0, 2, 1])
    np.testing.assert_array_equal(sm_[:, 0], [4, 0, 3, 2])
    # T's median of (1, 3, 10) = 3 fills the gaps, plus an indicator
    np.testing.assert_array_equal(tm[:, 1], [1, 3, 3, 10])
    np.testing.assert_array_equal(sm_[:, 1], [2, 4, 3, 5])
    np.testing.assert_array_equal(tm[:, 2], [0, 1, 0, 0])
    np.testing.assert_array_equal(sm_[:, 2], [0, 0, 1, 0])


def _hand_design(t: pd.DataFrame, s: pd.DataFrame, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Independent construction for columns a, b (numeric) and g (4 levels, codes by hand)."""
    codes = {"p": 0, "q": 1, "r": 2, "s": 3}
    x = np.vstack([np.column_stack([f["a"], f["b"], f["g"].map(codes)]) for f in (t, s)]).astype(float)
    x = (x - x.mean(0)) / x.std(0)
    cols = [x[:, i] for i in range(3)]
    terms = []
    for k in range(1, degree + 1):  # all monomials by brute force
        for combo in __import__("itertools").combinations_with_replacement(range(3), k):
            terms.append(np.prod([cols[i] for i in combo], axis=0))
    z = np.column_stack(terms)
    z = (z - z.mean(0)) / z.std(0)
    y = np.r_[np.zeros(len(t)), np.ones(len(s))]
    return z, y


def test_matches_statsmodels_logit():
    t, s = draw(300, 1)[["a", "b", "g"]], draw(200, 2)[["a", "b", "g"]]
    s = s.assign(a=s["a"] * 1.3)  # a real difference so that pMSE is not tiny
    z, y = _hand_design(t, s, 3)
    assert np.linalg.matrix_rank(z) == z.shape[1] == 19
    fit = sm.Logit(y, sm.add_constant(z)).fit(disp=0, method="newton", maxiter=100, tol=1e-12)
    c = 200 / 500
    want = float(np.mean((fit.predict() - c) ** 2))
    got = pmse_ratio(t, s, {"a": "numeric", "b": "numeric", "g": "categorical"}, degree=3)
    assert got.n_terms == 19 and got.degree == 3 and got.n == 500 and got.c == pytest.approx(c)
    assert got.pmse == pytest.approx(want, rel=1e-4)
    assert got.expected == pytest.approx(19 * c * (1 - c) / 500, rel=1e-14)
    assert got.ratio == pytest.approx(want / got.expected, rel=1e-4)
    assert got.converged and got.reason == ""


def test_far_apart_tables_match_statsmodels_logit():
    # p̂ far from c: the fit needs the Hessian-preconditioned phase (more than 30 iterations)
    t, s = draw(300, 1)[["a", "b", "g"]], draw(300, 2)[["a", "b", "g"]]
    s = s.assign(a=s["a"] * 1.3 + 1.0, b=s["b"] - 0.5)
    z, y = _hand_design(t, s, 3)
    fit = sm.Logit(y, sm.add_constant(z)).fit(disp=0, method="newton", maxiter=200, tol=1e-8)
    assert fit.mle_retvals["converged"]
    got = pmse_ratio(t, s, {"a": "numeric", "b": "numeric", "g": "categorical"}, degree=3)
    assert got.n_iter > 30 and got.converged
    assert got.pmse == pytest.approx(float(np.mean((fit.predict() - 0.5) ** 2)), rel=1e-4)


def test_aliased_terms_do_not_count():
    # d is 0/1 with P(1) != 1/2: d^2, d^3 are affine in d -> aliased; d*d*a = d*a, ... At degree 2
    # with (a, d): a, d, a^2, a*d, d^2 -> d^2 aliased -> m = 4 of 5 terms.
    rng = np.random.default_rng(5)
    t = pd.DataFrame({"a": rng.normal(size=400), "d": (rng.random(400) < 0.3).astype(int)})
    s = pd.DataFrame({"a": rng.normal(size=400) + 0.2, "d": (rng.random(400) < 0.4).astype(int)})
    got = pmse_ratio(t, s, {"a": "numeric", "d": "numeric"}, degree=2)
    assert (got.n_terms, got.n_columns) == (4, 5)
    # same span as the full-rank design (a, d, a^2, a*d) fitted by statsmodels
    x = np.vstack([t.to_numpy(float), s.to_numpy(float)])
    a, d = x[:, 0], x[:, 1]
    z = np.column_stack([a, d, a * a, a * d])
    y = np.r_[np.zeros(400), np.ones(400)]
    fit = sm.Logit(y, sm.add_constant(z)).fit(disp=0, method="newton", maxiter=100, tol=1e-12)
    assert got.pmse == pytest.approx(float(np.mean((fit.predict() - 0.5) ** 2)), rel=1e-4)


def test_null_ratio_is_about_one_over_seeds():
    ratios = []
    for seed in range(30):
        t, s = draw(500, 2 * seed), draw(500, 2 * seed + 1)
        ratios.append(pmse_ratio(t, s, KINDS, degree=3).ratio)
    ratios = np.array(ratios)
    # m = 29 of 34 terms (powers of the 0/1 d aliased); N * pMSE / (c(1-c)) ~ chi2_m asymptotically,
    # so ratio ~ chi2_m / m: mean 1, sd sqrt(2/29) = 0.26; the mean of 30 has sd 0.05
    assert abs(ratios.mean() - 1.0) < 0.15, ratios.mean()
    assert 0.1 < ratios.std() < 0.45, ratios.std()
    assert ratios.max() < 3.0


def test_shuffled_column_gives_a_large_ratio():
    t = draw(500, 3)
    s = t.copy()
    s["b"] = np.random.default_rng(0).permutation(s["b"].to_numpy())  # breaks b ~ a
    got = pmse_ratio(t, s, KINDS, degree=3)
    assert got.ratio > 5, got
    same = pmse_ratio(t, draw(500, 4), KINDS, degree=3)
    assert same.ratio < 2.5, same


def test_degree_falls_back_when_the_design_does_not_fit():
    t, s = draw(500, 1), draw(500, 2)
    # 4 inputs: degree 3 -> 34 terms (0.259 MB for 1000 rows), degree 2 -> 14 (0.107 MB)
    got = pmse_ratio(t, s, KINDS, degree=3, max_design_mb=0.2)
    assert got.degree == 2
    assert "degree 3" in got.reason and "used degree 2" in got.reason and "max_design_mb=0.2" in got.reason
    assert pmse_ratio(t, s, KINDS, degree=3, max_design_mb=1.0).reason == ""
    with pytest.raises(ValueError, match="max_design_mb"):
        pmse_ratio(t, s, KINDS, degree=3, max_design_mb=0.001)


def test_subsample_makes_s_the_size_of_t_and_is_seeded():
    t, s = draw(300, 1), draw(900, 2)
    a = pmse_ratio(t, s, KINDS, degree=2, subsample=True, seed=1)
    b = pmse_ratio(t, s, KINDS, degree=2, subsample=True, seed=1)
    c = pmse_ratio(t, s, KINDS, degree=2, subsample=True, seed=2)
    assert (a.n, a.c) == (600, 0.5)
    assert a == b and a.pmse != c.pmse
    full = pmse_ratio(t, s, KINDS, degree=2)
    assert (full.n, full.c) == (1200, 0.75)


def test_identical_inputs_give_identical_bytes():
    t, s = draw(400, 1), draw(400, 2)
    a, b = pmse_ratio(t, s, KINDS), pmse_ratio(t, s, KINDS)
    assert isinstance(a, PMSEScore)
    assert a.pmse.hex() == b.pmse.hex() and a == b


def test_bad_input_names_the_column():
    t = draw(50, 1)
    with pytest.raises(ValueError, match="'d'"):
        pmse_ratio(t, t.drop(columns="d"), KINDS)
    with pytest.raises(ValueError, match="'a'"):
        pmse_ratio(t, t.assign(a="x"), KINDS)
    with pytest.raises(ValueError, match="'g'"):
        pmse_ratio(t, t, {**KINDS, "g": "text"})


def test_all_constant_gives_nan_with_reason():
    t = pd.DataFrame({"a": [1.0] * 10})
    got = pmse_ratio(t, t.copy(), {"a": "numeric"})
    assert math.isnan(got.ratio) and "constant" in got.reason



def test_an_unconverging_fit_far_above_stop_ratio_is_stopped_and_says_so(monkeypatch):
    import holdbench.metrics.pmse as pmse_module

    # no fit reaches a gradient of 1e-300: every fit runs its rounds, as on almost separable data
    monkeypatch.setattr(pmse_module, "_GRAD_TOL", 1e-300)
    t = draw(400, 1)
    s = t.assign(b=np.random.default_rng(0).permutation(t["b"].to_numpy()))
    with pytest.warns(RuntimeWarning, match="did not converge"):
        full = pmse_ratio(t, s, KINDS, degree=2, stop_ratio=None)
    stopped = pmse_ratio(t, s, KINDS, degree=2, stop_ratio=2.0)
    assert full.ratio > 2
    assert not full.converged and not full.stopped
    assert stopped.stopped and not stopped.converged
    assert "stop_ratio 2" in stopped.reason and "did not converge" not in stopped.reason
    assert stopped.n_iter < full.n_iter
    # stopped at the same optimum to many digits here (the fit had converged in all but name)
    assert stopped.ratio == pytest.approx(full.ratio, rel=1e-6)
    # below the stop ratio nothing changes
    with pytest.warns(RuntimeWarning, match="did not converge"):
        assert pmse_ratio(t, s, KINDS, degree=2, stop_ratio=1e6) == full
    with pytest.raises(ValueError, match="stop_ratio"):
        pmse_ratio(t, s, KINDS, degree=2, stop_ratio=0)


def test_stop_ratio_leaves_a_converging_fit_alone():
    t, s = draw(400, 1), draw(400, 2)
    assert pmse_ratio(t, s, KINDS, stop_ratio=10.0) == pmse_ratio(t, s, KINDS, stop_ratio=None)
    # a large ratio that converges is not stopped either (a shuffled column: ratio > 5)
    shuffled = t.assign(b=np.random.default_rng(0).permutation(t["b"].to_numpy()))
    got = pmse_ratio(t, shuffled, KINDS, stop_ratio=1.0)
    assert got.converged and not got.stopped
    assert got == pmse_ratio(t, shuffled, KINDS, stop_ratio=None)


@needs_shared
def test_a_hessian_with_a_barely_determined_direction_converges_on_one_blas_thread_as_on_two():
    """768 terms on 3,000 + 3,000 rows of adult (the paper's T and published synthpop file, seeded samples): the
    Hessian's smallest eigenvalue is ~1e-12 of its largest, and its preconditioner's first line search failed
    in every round: on one BLAS thread the fit ended unconverged at a ratio of 1.235 (a warning and a reason
    said so), on two it converged at 1.276. With a ridge on the preconditioner after such a round both
    converge, to the same ratio within the fit's tolerance."""
    from threadpoolctl import threadpool_limits

    t = pd.read_csv(PAPER / "adult_trn.csv.gz").sample(3000, random_state=0).reset_index(drop=True)
    s = pd.read_csv(PAPER / "adult_synthpop.csv.gz").sample(3000, random_state=2).reset_index(drop=True)
    kinds = {c: "numeric" if pd.api.types.is_numeric_dtype(t[c]) else "categorical" for c in t.columns}
    fits = {}
    for threads in (1, 2):
        with threadpool_limits(threads), warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # "did not converge" fails the test
            fits[threads] = pmse_ratio(t, s, kinds)
    assert fits[1].n_terms == fits[2].n_terms == 768
    assert fits[1].converged and fits[2].converged and fits[1].reason == fits[2].reason == ""
    # the fit stops at a max |gradient| of 1e-7: about 6 significant digits of the ratio
    assert fits[1].ratio == pytest.approx(fits[2].ratio, rel=2e-6)
