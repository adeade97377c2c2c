"""The pMSE null (docs/definitions/bale-quick.md §8) at c = ½, ⅔ and 0.8, checked by label permutation, not by the formula.

S and T are drawn from ONE distribution (numeric and categorical columns, seeded). The expectation
that `pmse_ratio` reports is compared with the mean pMSE of the same model refitted on label
permutations, fitted here independently (statsmodels Logit, unpenalised, on a design built in the
test); and the ratio, averaged over independent draws, must be within noise of 1 at every c.
Bale & Quick's 2·m·(1−c)²·c/N is 2(1−c) times the correct m·c(1−c)/N: 0.67× at c = ⅔ and 0.4× at
c = 0.8, which the tolerances below reject (checked by restoring it). The CART variant's
permutation null is checked the same way.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from holdbench.metrics.pmse import pmse_cart, pmse_ratio

KINDS = {"a": "numeric", "b": "numeric", "g": "categorical", "d": "numeric"}
N = 900
SHARES = [(450, 450), (300, 600), (180, 720)]  # (|T|, |S|): c = 1/2, 2/3, 0.8


def draw(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """One distribution: b depends on a, g (4 levels) on a, d (0/1, P(1) != 1/2) on g."""
    a = rng.normal(size=n)
    b = 0.8 * a + rng.normal(scale=0.6, size=n)
    g = np.array(["p", "q", "r", "s"])[np.clip((a + 2).astype(int), 0, 3)]
    d = (rng.random(n) < np.where(g == "p", 0.7, 0.3)).astype(int)
    return pd.DataFrame({"a": a, "b": b, "g": g, "d": d})


def hand_design(x: pd.DataFrame) -> np.ndarray:
    """Degree-2 terms of (a, b, g as codes of its sorted levels, d), written out here: all 14
    monomials but d², which is an affine function of the 0/1 d (not a separate parameter)."""
    cols = np.column_stack([x["a"], x["b"], x["g"].map({"p": 0, "q": 1, "r": 2, "s": 3}), x["d"]]).astype(float)
    cols = (cols - cols.mean(0)) / cols.std(0)
    terms = [cols[:, i] for i in range(4)]
    terms += [cols[:, i] * cols[:, j] for i, j in itertools.combinations_with_replacement(range(4), 2)
              if (i, j) != (3, 3)]
    z = np.column_stack(terms)
    return (z - z.mean(0)) / z.std(0)


def logit_pmse(z: np.ndarray, y: np.ndarray) -> float:
    fit = sm.Logit(y, sm.add_constant(z)).fit(disp=0, method="newton", maxiter=100, tol=1e-10)
    return float(np.mean((fit.predict() - y.mean()) ** 2))


@pytest.mark.parametrize(("n_t", "n_s"), SHARES)
def test_expected_equals_the_label_permutation_mean(n_t, n_s):
    rng = np.random.default_rng(1000 + n_s)
    t, s = draw(n_t, rng), draw(n_s, rng)
    got = pmse_ratio(t, s, KINDS, degree=2)
    z = hand_design(pd.concat([t, s], ignore_index=True))
    assert np.linalg.matrix_rank(z) == z.shape[1] == 13
    assert got.n_terms == 13 and got.n == N and got.c == pytest.approx(n_s / N, abs=1e-15)
    y = np.r_[np.zeros(n_t), np.ones(n_s)]
    perm = np.random.default_rng(7)
    null = np.array([logit_pmse(z, perm.permutation(y)) for _ in range(60)])
    # N·pMSE/(c(1-c)) is about chi2 with 13 d.f. under permutation: the mean of 60 has a relative
    # SD of sqrt(2/13/60) = 0.05; 0.2 is 4 SD, while the old form is off by 0.33 at c = 2/3, 0.6 at 0.8
    assert got.expected == pytest.approx(null.mean(), rel=0.2), (got.expected, null.mean())


@pytest.mark.parametrize(("n_t", "n_s"), SHARES)
def test_ratio_is_one_on_average_when_s_and_t_share_a_distribution(n_t, n_s):
    rng = np.random.default_rng(2000 + n_s)
    ratios = np.array([pmse_ratio(draw(n_t, rng), draw(n_s, rng), KINDS, degree=2).ratio for _ in range(40)])
    # ratio ~ chi2_13/13: SD 0.39, the mean of 40 has SD 0.06; old form: 1.5 at c = 2/3, 2.5 at 0.8
    assert abs(ratios.mean() - 1.0) < 0.2, ratios.mean()


@pytest.mark.parametrize(("n_t", "n_s"), SHARES)
def test_cart_permutation_null_gives_one_on_average(n_t, n_s):
    rng = np.random.default_rng(3000 + n_s)
    ratios = np.array([pmse_cart(draw(n_t, rng), draw(n_s, rng), KINDS, permutations=10, seed=k).ratio
                       for k in range(15)])
    assert np.isfinite(ratios).all()
    assert abs(ratios.mean() - 1.0) < 0.15, ratios
