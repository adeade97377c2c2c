"""The per-record and per-pair functions the file report added to holdbench.metrics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from holdbench.metrics.association import association_matrix, cramers_v
from holdbench.metrics.privacy import distance_data, record_exposure


def test_cramers_v_by_hand():
    a = np.array([0, 0, 1, 1] * 25)
    assert cramers_v(a, a, 2, 2) == 1.0
    assert cramers_v(a, np.array([0, 1, 0, 1] * 25), 2, 2) == 0.0
    assert math.isnan(cramers_v(a, np.zeros(100, int), 2, 1))
    # 2x2 table [[30, 10], [10, 50]]: V = |ad - bc| / sqrt(row and column totals) = 1400 / sqrt(40*60*40*60)
    x = np.repeat([0, 0, 1, 1], [30, 10, 10, 50])
    y = np.repeat([0, 1, 0, 1], [30, 10, 10, 50])
    assert abs(cramers_v(x, y, 2, 2) - 1400 / 2400) < 1e-12
    m = association_matrix(np.vstack([x, y, a]), np.array([2, 2, 2]))
    assert m.shape == (3, 3) and np.allclose(m, m.T) and np.allclose(np.diag(m), 1)


def test_record_exposure_ranks_the_copied_rare_record_first():
    t = pd.DataFrame({"a": ["x", "x", "y", "rare"], "b": ["1", "1", "2", "9"]})
    h = pd.DataFrame({"a": ["x", "y", "y", "x"], "b": ["1", "2", "2", "2"]})
    s = pd.DataFrame({"a": ["x", "rare", "rare", "y"], "b": ["1", "9", "9", "1"]})
    table = record_exposure(distance_data(t, h, s, {"a": "categorical", "b": "categorical"}))
    top = table.iloc[0]
    assert top["row"] == 3 and top["n_copies"] == 2 and top["d_synthetic"] == 0 and top["d_holdout"] == 2
    # H's distances to S: x1 -> 0, y2 -> 1, y2 -> 1, x2 -> 1: a record at 0 sits at percentile (0 + 1/2) / 4
    assert top["percentile"] == 0.125
    assert sorted(table["row"]) == [0, 1, 2, 3]
    row2 = table[table["row"] == 2].iloc[0]  # y2: nearest S is y1 (1 column), as 3 of H's 4 records: ties halved
    assert row2["d_synthetic"] == 1 and row2["percentile"] == (1 + 1.5) / 4
