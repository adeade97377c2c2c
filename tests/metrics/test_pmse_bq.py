"""Bale & Quick's form of the pMSE ratio (their count of terms) beside holdbench's (the rank), and c.

Hand count for 5 input columns at degree 3: C(5 + 3, 3) − 1 = 55 monomials (Bale & Quick count
them all). Of these, 7 are exact linear combinations of others and do not add a parameter:
with sex 0/1, sex² is affine in sex, so sex², sex³ and sex²·x for the 4 other columns x (5
terms with sex², plus sex³ = 6); with st taking 3 values, st³ is a combination of 1, st, st².
The rank (holdbench's m) is 55 − 7 = 48.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.pmse import pmse_ratio
from holdbench.metrics.registry import EvalData, scalars, specs_of
from holdbench.metrics.utility import Utility, UtilityResult

KINDS = {"a": "numeric", "b": "numeric", "d": "numeric", "sex": "categorical", "st": "categorical"}


def table(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n) + shift
    return pd.DataFrame({"a": a, "b": 0.5 * a + rng.normal(size=n), "d": rng.exponential(size=n),
                         "sex": rng.choice(["F", "M"], size=n, p=[0.7, 0.3]),
                         "st": rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])})


def test_bale_quick_count_includes_duplicate_terms_holdbench_uses_the_rank():
    t, s = table(400, 1), table(600, 2, shift=0.3)
    got = pmse_ratio(t, s, KINDS, degree=3)
    assert got.n_columns == 55 and got.n_terms_bq == 55
    assert got.n_terms == 48
    c, n = 600 / 1000, 1000
    assert got.ratio == pytest.approx(got.pmse / (48 * c * (1 - c) / n), rel=1e-12)
    assert got.ratio_bq == pytest.approx(got.pmse / (55 * c * (1 - c) / n), rel=1e-12)
    assert got.ratio_bq == pytest.approx(got.ratio * 48 / 55, rel=1e-12)


def test_bale_quick_count_at_degree_two_and_with_a_missing_indicator():
    t, s = table(300, 3), table(300, 4)
    # degree 2: C(7, 2) - 1 = 20 monomials; sex^2 aliased -> rank 19
    got = pmse_ratio(t, s, KINDS, degree=2)
    assert (got.n_terms_bq, got.n_terms) == (20, 19)
    # sex exactly half "M" on T and S: its standardised square is the constant 1, which holdbench
    # drops before the rank (19 live columns) but Bale & Quick count (20)
    half = {"sex": np.tile(["F", "M"], 150)}
    got = pmse_ratio(t.assign(**half), s.assign(**half), KINDS, degree=2)
    assert (got.n_columns, got.n_terms_bq, got.n_terms) == (19, 20, 19)
    # a missing value in b adds the input column b__missing: 6 inputs, C(9, 3) - 1 = 83 at degree 3
    s.loc[5, "b"] = np.nan
    assert pmse_ratio(t, s, KINDS, degree=3).n_terms_bq == 83
    # a column constant on T and S enters no design and is not counted: C(7, 2) - 1 = 20 again
    got = pmse_ratio(t.assign(k=1.0), s.assign(k=1.0).dropna(), {**KINDS, "k": "numeric"}, degree=2)
    assert got.n_terms_bq == 20


def test_utility_result_carries_c_and_the_bale_quick_form():
    t, h, s = table(400, 1), table(400, 5), table(600, 2, shift=0.3)
    r = Utility(degree=3, tstr=False, ci_overlap=False).compute(EvalData(t, h, s, KINDS, seed=0))
    out = scalars(r)
    assert out["pmse_c"] == pytest.approx(0.6, abs=1e-15)
    assert out["pmse_n_terms"] == 48 and out["pmse_n_terms_bq"] == 55
    assert out["pmse_ratio_bq"] == pytest.approx(out["pmse"] / (55 * 0.6 * 0.4 / 1000), rel=1e-12)
    assert out["pmse_ratio"] == pytest.approx(out["pmse"] / (48 * 0.6 * 0.4 / 1000), rel=1e-12)
    spec = {x.name: x for x in specs_of(UtilityResult)}["pmse_ratio_bq"]
    assert spec.label == "pMSE ratio (Bale & Quick form)" and spec.direction == "ideal" and spec.ideal == 1.0
    sub = Utility(degree=2, pmse_subsample=True, tstr=False, ci_overlap=False).compute(EvalData(t, h, s, KINDS))
    assert sub.pmse_c == 0.5
