"""Fidelity's two exact counting paths (numpy bincount, numba kernel) agree bit for bit, and
`transform_all` equals each discretiser's own transform on awkward inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics._discretise import Discretiser, transform_all
from holdbench.metrics._kernels import marginal_tvds
from holdbench.metrics.fidelity import _numpy_tvds, select_combinations


@pytest.mark.parametrize("seed", range(12))
def test_numpy_counting_equals_the_numba_kernel_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(1, 8))
    k = int(rng.integers(1, min(p, 4) + 1))
    cards = rng.integers(1, 15, size=p).astype(np.int64)

    def table(n):
        return np.stack([rng.integers(0, c, size=n) for c in cards]).astype(np.uint8)

    train, others = table(int(rng.integers(1, 300))), [table(int(rng.integers(1, 300))) for _ in range(2)]
    combos, _ = select_combinations(p, k, 5 if seed % 2 else None, np.random.default_rng(seed))
    fast, _ = _numpy_tvds(train, others, cards, combos, None, n_jobs=1 + seed % 2)
    ref = marginal_tvds(train, np.ascontiguousarray(np.concatenate(others, axis=1)),
                        np.array([o.shape[1] for o in others]), cards, combos)
    assert np.array_equal(fast, ref)  # bitwise, not approximately


def test_transform_all_equals_each_discretiser():
    t = pd.DataFrame({"a": [0, 1, 1, 2, np.nan, 4, 4, 4], "b": [3.0] * 8, "c": [np.nan] * 8,
                      "d": ["x", "y", None, "x", "z", "x", "y", "1"]})
    kinds = {"a": "numeric", "b": "numeric", "c": "numeric", "d": "categorical"}
    s = pd.DataFrame({"a": [0, 1.5, -1, 9, "abc", None], "b": [3.0, 2, 4, None, 3, 3], "c": [1.0] * 6,
                      "d": ["x", "q", None, 1, "z", "y"]}, dtype=object)
    discs = [Discretiser(t, kinds, c) for c in (100, 10, 5, 2)]
    for d, codes in zip(discs, transform_all(discs, s), strict=True):
        expected = d.transform(s)
        np.testing.assert_array_equal(codes, expected)
        assert codes.dtype == expected.dtype
