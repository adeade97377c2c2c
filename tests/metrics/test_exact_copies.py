"""The exact-copy share of S and H and S's excess over H (holdbench.metrics.privacy.exact_copies): equality
worked out by hand, the interval against the published values of Newcombe (1998)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics import DCRShare
from holdbench.metrics.registry import EvalData

KINDS = {"x": "numeric", "c": "categorical"}


def test_equality_is_by_value_with_missing_as_a_value_and_labels_case_sensitive():
    t = pd.DataFrame({"x": [1.0, 2.5, np.nan, 7.0], "c": ["a", "b", "a", "A"]})
    h = pd.DataFrame({"x": [1.0, 2.5000001, np.nan, 9.0], "c": ["a", "b", "b", "A"]})
    # S row by row: 1 == 1.0 (int against float) and "a": a copy; nan and "a": a copy (missing equals missing);
    # 7 and "a": T has 7 with "A" only; 2.5 and "b": a copy; 2.5000001: not equal to 2.5; 1 and "A": no
    s = pd.DataFrame({"x": [1, np.nan, 7, 2.5, 2.5000001, 1], "c": ["a", "a", "a", "b", "b", "A"]})
    r = DCRShare().compute(EvalData(t, h, s, KINDS))
    assert r.n_exact_copies == 3
    assert r.exact_copy_share == 3 / 6
    assert r.exact_copy_share_holdout == 1 / 4  # only (1.0, "a"): 2.5000001 differs, (nan, "b") and (9, "A") are not in T
    assert r.exact_copy_excess == pytest.approx(3 / 6 - 1 / 4, abs=1e-15)


@pytest.mark.parametrize(("s_copies", "n_s", "h_copies", "n_h", "low", "high"), [
    # Newcombe, Statistics in Medicine 17 (1998) 873-890, Table II, method 10 (hybrid score), to its 4 digits
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (0, 10, 0, 20, -0.1611, 0.2775),
])
def test_interval_is_newcombes_hybrid_score(s_copies, n_s, h_copies, n_h, low, high):
    # T's records are 0..999 (x), S and H copy the first `copies` of them and hold fresh values otherwise
    t = pd.DataFrame({"x": np.arange(1000.0), "c": "a"})

    def table(copies: int, n: int, fresh: float) -> pd.DataFrame:
        return pd.DataFrame({"x": np.r_[np.arange(copies, dtype=float), fresh + np.arange(n - copies)], "c": "a"})

    r = DCRShare().compute(EvalData(t, table(h_copies, n_h, 5000.0), table(s_copies, n_s, 9000.0), KINDS))
    assert (r.n_exact_copies, r.exact_copy_share_holdout) == (s_copies, h_copies / n_h)
    assert (round(r.exact_copy_excess_ci_low, 4), round(r.exact_copy_excess_ci_high, 4)) == (low, high)


def test_the_holdout_row_has_no_excess():
    rng = np.random.default_rng(0)
    t = pd.DataFrame({"x": rng.integers(0, 30, 300).astype(float), "c": rng.choice(list("pq"), 300)})
    h = pd.DataFrame({"x": rng.integers(0, 30, 300).astype(float), "c": rng.choice(list("pq"), 300)})
    r = DCRShare().compute(EvalData(t, h, h, KINDS, holdout_row=True))
    assert r.exact_copy_share == r.exact_copy_share_holdout > 0 and r.exact_copy_excess == 0
