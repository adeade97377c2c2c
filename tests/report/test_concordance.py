"""holdbench's marginal TVDs against SDMetrics where the definitions meet (the quick check of
scripts/reference/peers_concordance.py, which runs the full comparison on the paper's files).

On categorical columns holdbench's 1-way TVD (F1's marginal) is SDMetrics' TVComplement as 1 - TVD, and
on two categorical columns with at most 10 categories each its 2-way TVD (F2's marginal, 10 buckets) is
SDMetrics' ContingencySimilarity as 1 - TVD: the same frequencies, the same half L1 distance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from holdbench.metrics.evaluate import kinds_from_dtypes
from holdbench.metrics.fidelity import FidelityModel

sdmetrics = pytest.importorskip("sdmetrics")


def _tables(n: int = 500, seed: int = 3):
    rng = np.random.default_rng(seed)

    def draw(m, p_colour):
        colour = rng.choice(["red", "green", "blue", "grey"], m, p=p_colour)
        return pd.DataFrame({
            "colour": colour,
            "size": np.where((colour == "red") & (rng.random(m) < 0.6), "L", rng.choice(["S", "M", "L"], m)),
            "shape": rng.choice([f"s{i}" for i in range(7)], m),
            "weight": rng.normal(70, 10, m).round(1),
        })
    t, h = draw(n, [0.4, 0.3, 0.2, 0.1]), draw(n, [0.4, 0.3, 0.2, 0.1])
    s = draw(n + 137, [0.25, 0.25, 0.25, 0.25])  # another size and another colour mix: TVDs well above 0
    return t, h, s


def test_categorical_tvds_equal_sdmetrics_tv_and_contingency_complements():
    from sdmetrics.column_pairs import ContingencySimilarity
    from sdmetrics.single_column import TVComplement

    t, h, s = _tables()
    kinds = kinds_from_dtypes(t)
    model = FidelityModel(t, h, kinds)
    tvds = model.tvds(s)
    cat = [c for c in t.columns if kinds[c] == "categorical"]
    one = dict(zip((model.columns[c[0]] for c in model.combos[1]), tvds[1][0], strict=True))
    for col in cat:
        assert one[col] > 0.01  # a test that can fail: S differs from T
        assert 1.0 - one[col] == pytest.approx(TVComplement.compute(t[col], s[col]), abs=1e-12), col
    two = {tuple(model.columns[j] for j in c): v for c, v in zip(model.combos[2], tvds[2][0], strict=True)}
    pairs = [(a, b) for (a, b) in two if a in cat and b in cat]
    assert len(pairs) == 3
    for a, b in pairs:
        peer = ContingencySimilarity.compute(t[[a, b]], s[[a, b]])
        assert 1.0 - two[(a, b)] == pytest.approx(peer, abs=1e-12), (a, b)
