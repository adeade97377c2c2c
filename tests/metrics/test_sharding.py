"""Sharded metric families (issue 15, item 2): the merge of N partials equals compute(), bit for bit.

compute(data) is merge(data, [partial(data, 0, 1)]) by construction; these tests check that the
merge of 2, 3, 7 and more-shards-than-rows partials gives the same result field by field with
`==` (NaN equal to NaN, tables with DataFrame.equals and equal dtypes), and check the partials'
per-row distances against a brute-force Hamming search and their TVDs against pandas counts.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics import evaluate
from holdbench.metrics._discretise import distance_codes
from holdbench.metrics.evaluate import evaluate_shard
from holdbench.metrics.fidelity import Fidelity
from holdbench.metrics.panel import PrivacyPanel
from holdbench.metrics.privacy import DCRShare
from holdbench.metrics.registry import EvalData, MergedFamily, shard_slice

KINDS = {"a": "categorical", "b": "categorical", "x": "numeric", "y": "numeric", "c": "categorical"}
SHARDS = (1, 2, 3, 7, 61)  # 61: more shards than rows of S (55) and H (60)


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame({
        "a": rng.choice(["p", "q", "r"], n), "b": rng.choice(["u", "v"], n),
        "x": rng.integers(0, 6, n).astype(float), "y": np.round(rng.normal(size=n), 1),
        "c": rng.choice(["k", "l", "m", "n"], n),
    })


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(7)
    train, holdout = _table(rng, 80), _table(rng, 60)
    synthetic = pd.concat([train.iloc[:15], _table(rng, 40)], ignore_index=True)  # 15 copies of T rows
    synthetic.loc[3, "y"] = np.nan
    return train, holdout, synthetic


def _data(tables, holdout_row=False, seed=0):
    train, holdout, synthetic = tables
    return EvalData(train, holdout, holdout if holdout_row else synthetic, KINDS, holdout_row=holdout_row, seed=seed)


def _same(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b) and list(a.dtypes) == list(b.dtypes)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


FAMILIES = [
    pytest.param(lambda: Fidelity(), id="fidelity"),
    pytest.param(lambda: Fidelity(max_combinations=4, four_way_combinations=3), id="fidelity-sampled-F4"),
    pytest.param(lambda: DCRShare(), id="privacy"),
    pytest.param(lambda: DCRShare(privacy_sample=23), id="privacy-sampled"),
]


@pytest.mark.parametrize("make", FAMILIES)
@pytest.mark.parametrize("holdout_row", [False, True])
@pytest.mark.parametrize("of", SHARDS)
def test_merge_of_shards_equals_compute(tables, make, holdout_row, of):
    family = make()
    whole = family.compute(_data(tables, holdout_row))
    parts = [family.partial(_data(tables, holdout_row), i, of) for i in range(of)]  # each shard on its own
    merged = family.merge(_data(tables, holdout_row), parts)
    for f in dataclasses.fields(whole):
        if f.name.startswith("seconds_"):
            continue
        a, b = getattr(whole, f.name), getattr(merged, f.name)
        assert _same(a, b), f"{family.name}, {of} shards: {f.name} differs: {a!r} != {b!r}"


def test_privacy_partials_are_brute_force_distances(tables):
    train, holdout, synthetic = tables
    codes = distance_codes([train, holdout, synthetic], KINDS)
    t, h, s = (np.asarray(c, dtype=np.int64) for c in codes)
    d_t = (s[:, :, None] != t[:, None, :]).sum(axis=0).min(axis=1)
    d_h = (s[:, :, None] != h[:, None, :]).sum(axis=0).min(axis=1)
    h_t = (h[:, :, None] != t[:, None, :]).sum(axis=0).min(axis=1)
    parts = [DCRShare().partial(_data(tables), i, 3) for i in range(3)]
    assert [len(p["d_train"]) for p in parts] == [18, 18, 19]  # 55 rows of S in order, sizes differing by one
    np.testing.assert_array_equal(np.concatenate([p["d_train"] for p in parts]), d_t)
    np.testing.assert_array_equal(np.concatenate([p["d_holdout"] for p in parts]), d_h)
    np.testing.assert_array_equal(np.concatenate([p["holdout_to_train"] for p in parts]), h_t)
    assert d_t[[i for i in range(15) if i != 3]].tolist() == [0] * 14  # row 3: y set missing


def test_fidelity_partials_are_pandas_tvds(tables):
    """k = 1 TVDs of the shards, in order, against pandas value_counts on the same bucket codes."""
    from holdbench.metrics._discretise import Discretiser

    train, _, synthetic = tables
    disc = Discretiser(train, KINDS, 100)
    ct, cs = disc.transform(train), disc.transform(synthetic)
    expected = []
    for j in range(ct.shape[0]):
        pt = pd.Series(ct[j]).value_counts(normalize=True)
        ps = pd.Series(cs[j]).value_counts(normalize=True)
        both = pd.concat([pt, ps], axis=1).fillna(0.0)
        expected.append(0.5 * float((both.iloc[:, 0] - both.iloc[:, 1]).abs().sum()))
    parts = [Fidelity().partial(_data(tables), i, 2) for i in range(2)]
    assert [len(p["tvd_synthetic_1"]) for p in parts] == [2, 3]
    assert [len(p["tvd_synthetic_3"]) for p in parts] == [5, 5]  # C(5, 3) = 10 combinations
    got = np.concatenate([p["tvd_synthetic_1"] for p in parts])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_fidelity_shards_agree_across_counting_paths(tables, monkeypatch):
    """Shards counted by the numba kernel merge to the numpy path's unsharded result, bit for bit."""
    from holdbench.metrics import fidelity

    whole = Fidelity().compute(_data(tables))
    monkeypatch.setattr(fidelity, "_NUMPY_MAX_WORK", 0)
    merged = Fidelity().merge(_data(tables), [Fidelity().partial(_data(tables), i, 3) for i in range(3)])
    assert merged.marginals.equals(whole.marginals)
    assert (merged.F1, merged.F2, merged.F3) == (whole.F1, whole.F2, whole.F3)


@pytest.mark.parametrize("of", [1, 4])
def test_evaluate_with_merged_families_is_byte_identical(tables, of):
    """evaluate() with MergedFamily (as the cell's evaluate job runs it) writes the same JSON, the
    panel reusing the merged distances included."""
    train, holdout, synthetic = tables
    families = [Fidelity(), DCRShare(), PrivacyPanel()]
    plain = evaluate(train, holdout, synthetic, KINDS, families=families).to_dict()
    shards = [evaluate_shard(train, holdout, synthetic, KINDS, families=families, shard=i, of=of) for i in range(of)]
    assert set(shards[0]) == {"fidelity", "privacy"}  # the panel is not shardable
    merged_families = [MergedFamily(f, [s[f.name] for s in shards]) if f.shardable else f for f in families]
    merged = evaluate(train, holdout, synthetic, KINDS, families=merged_families).to_dict()

    def stable(d):
        return json.dumps({k: v for k, v in d.items() if not k.startswith("seconds_")}, sort_keys=True)
    assert stable(merged) == stable(plain)


def test_shard_slices_cover_rows_in_order():
    for n, of in itertools.product((0, 1, 5, 17), (1, 2, 3, 7, 40)):
        rows = [i for s in range(of) for i in range(n)[shard_slice(n, s, of)]]
        assert rows == list(range(n))
        sizes = [len(range(n)[shard_slice(n, s, of)]) for s in range(of)]
        assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize(("shard", "of", "match"), [
    (0, 0, "shard count must be a positive integer"), (0, -2, "shard count must be a positive integer"),
    (0, 2.5, "shard count must be an integer"), (2, 2, r"shard must be in \[0, 1\]"), (-1, 3, "shard must be"),
])
def test_bad_shards_are_refused(tables, shard, of, match):
    train, holdout, synthetic = tables
    with pytest.raises(ValueError, match=match):
        evaluate_shard(train, holdout, synthetic, KINDS, families=[Fidelity()], shard=shard, of=of)


def test_unshardable_family_refuses_partial(tables):
    with pytest.raises(NotImplementedError, match="panel"):
        PrivacyPanel().partial(_data(tables), 0, 2)
    with pytest.raises(ValueError, match="not shardable"):
        MergedFamily(PrivacyPanel(), [{}])
