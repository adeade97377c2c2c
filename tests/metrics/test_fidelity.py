"""Fidelity F1-F3 on tables small enough to compute by hand (docs/definitions/paper.md §3)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics import Fidelity, evaluate, kinds_from_dtypes, paper_families
from holdbench.metrics._discretise import Discretiser
from holdbench.metrics._kernels import marginal_tvds
from holdbench.metrics.fidelity import FidelityModel, _unrank_combination, select_combinations


def f1_only(train, holdout, synthetic, kinds):
    return FidelityModel(train, holdout, kinds).score(synthetic)


def test_unseen_category_goes_to_other():
    # T: a .5, b .25, c .25; S: a .25, b .5, d (unseen) .25 -> _other_
    t = pd.DataFrame({"x": ["a", "a", "b", "c"]})
    s = pd.DataFrame({"x": ["a", "b", "b", "d"]})
    res = f1_only(t, t, s, {"x": "categorical"})
    assert res.F[1] == pytest.approx(0.5 * (0.25 + 0.25 + 0.25 + 0.25))
    assert res.F_holdout[1] == 0.0


def test_numeric_out_of_range_missing_and_garbage_buckets():
    # T's 5 distinct values each sit alone in a bucket (100 quantile edges between them).
    # S: 1 and 5 match T's buckets; 2.5 lands in a bucket T never uses; 0 is below T's min
    # (_other_); "abc" and NaN are the missing bucket.
    t = pd.DataFrame({"v": [1, 2, 3, 4, 5]})
    s = pd.DataFrame({"v": [1, 2.5, 0, "abc", 5, np.nan]}, dtype=object)
    res = f1_only(t, t, s, {"v": "numeric"})
    p_t, p_s = 1 / 5, 1 / 6
    by_hand = 0.5 * (
        2 * abs(p_t - p_s)  # values 1 and 5
        + 3 * p_t  # 2, 3, 4 absent from S
        + p_s  # 2.5
        + p_s  # _other_ (0)
        + 2 * p_s  # nan bucket ("abc", NaN)
    )
    assert res.F[1] == pytest.approx(by_hand, abs=1e-15)


def test_intervals_are_right_closed_and_first_closed_left():
    # c = 2 on T = 1..4: edges = quantiles at 0, .5, 1 = [1, 2.5, 4] -> [1, 2.5], (2.5, 4]
    disc = Discretiser(pd.DataFrame({"v": [1, 2, 3, 4]}), {"v": "numeric"}, 2)
    codes = disc.transform(pd.DataFrame({"v": [1, 2.5, 2.6, 4, 4.1, 0.9, None]}))[0]
    other, missing = 2, 3
    assert codes.tolist() == [0, 0, 1, 1, other, other, missing]
    np.testing.assert_array_equal(disc.columns[0].edges, [1, 2.5, 4])


def test_categorical_keeps_c_most_frequent_plus_other():
    # counts b 2, a 2, c 1: c = 2 keeps b and a (ties by first appearance), c is _other_
    t = pd.DataFrame({"x": ["b", "a", "a", "b", "c"]})
    disc = Discretiser(t, {"x": "categorical"}, 2)
    assert disc.columns[0].labels == ("b", "a")
    codes = disc.transform(pd.DataFrame({"x": ["a", "b", "c", "zzz", None]}))[0]
    assert codes.tolist() == [1, 0, 2, 2, 3]


def test_missing_categorical_is_its_own_bucket_and_not_counted_in_c():
    t = pd.DataFrame({"x": [None, None, None, "a", "b"]})
    disc = Discretiser(t, {"x": "categorical"}, 1)
    assert disc.columns[0].labels == ("a",)
    s = pd.DataFrame({"x": [None, "a"]})
    res = f1_only(t, t, s, {"x": "categorical"})
    # T: nan .6, a .2, other(b) .2; S: nan .5, a .5
    assert res.F[1] == pytest.approx(0.5 * (0.1 + 0.3 + 0.2))


def test_constant_column():
    t = pd.DataFrame({"c": [7, 7, 7]})
    s = pd.DataFrame({"c": [7, 8, np.nan]})
    res = f1_only(t, t, s, {"c": "numeric"})
    # T all in [7]; S: 7 (1/3), 8 -> _other_ (1/3), NaN -> nan (1/3)
    assert res.F[1] == pytest.approx(0.5 * (2 / 3 + 1 / 3 + 1 / 3))


def test_two_way_marginal_by_hand():
    t = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    s = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "u", "v", "v"]})
    res = f1_only(t, t, s, {"a": "categorical", "b": "categorical"})
    # univariate marginals identical; joint: T uniform over 4 cells, S on (x,u), (y,v) only
    assert res.F[1] == 0.0
    assert res.F[2] == pytest.approx(0.5 * (4 * 0.25))
    assert math.isnan(res.F[3]) and res.n_combinations[3] == 0


def test_booleans_are_numeric_zero_one():
    t = pd.DataFrame({"w": [True, False, False, True]})
    assert kinds_from_dtypes(t) == {"w": "numeric"}
    s = pd.DataFrame({"w": [1.0, 0.0, 0.0, 1.0]})
    assert f1_only(t, t, s, kinds_from_dtypes(t)).F[1] == 0.0
    s_obj = pd.DataFrame({"w": [True, False, np.nan, True]}, dtype=object)
    # T: 0 in the first bucket, 1 in the last (.5 each); S: 1 .5, 0 .25, NaN -> nan .25
    assert f1_only(t, t, s_obj, kinds_from_dtypes(t)).F[1] == pytest.approx(0.5 * (0.25 + 0.25))


def test_kinds_from_dtypes():
    df = pd.DataFrame({"i": [1], "f": [1.5], "b": [True], "o": ["x"],
                       "s": pd.Series(["y"], dtype="string")})
    assert kinds_from_dtypes(df) == {"i": "numeric", "f": "numeric", "b": "numeric",
                                     "o": "categorical", "s": "categorical"}


def test_holdout_row_ratio_is_exactly_one_and_marginals_table():
    rng = np.random.default_rng(1)
    t = pd.DataFrame({"a": rng.integers(0, 5, 50), "b": rng.choice(list("pqr"), 50), "c": rng.random(50)})
    h = pd.DataFrame({"a": rng.integers(0, 6, 40), "b": rng.choice(list("pqs"), 40), "c": rng.random(40)})
    res = evaluate(t, h, None, kinds_from_dtypes(t), holdout_row=True, families=paper_families())
    assert (res.F1_ratio, res.F2_ratio, res.F3_ratio) == (1.0, 1.0, 1.0)
    m = res.marginals
    assert list(m.columns) == ["columns", "k", "tvd_synthetic", "tvd_holdout"]
    assert m["k"].tolist() == [1, 1, 1, 2, 2, 2, 3]
    assert m["columns"].iloc[3] == "a | b"
    assert res.F2 == pytest.approx(m.loc[m.k == 2, "tvd_synthetic"].mean())


def test_column_order_of_synthetic_does_not_matter():
    rng = np.random.default_rng(2)
    t = pd.DataFrame({"a": rng.integers(0, 9, 60), "b": rng.choice(list("pqr"), 60)})
    s = pd.DataFrame({"a": rng.integers(0, 9, 70), "b": rng.choice(list("pqr"), 70)})
    kinds = kinds_from_dtypes(t)
    one = evaluate(t, t, s, kinds, families=paper_families()).to_dict()
    two = evaluate(t, t, s[["b", "a"]], kinds, families=paper_families()).to_dict()
    for key in ("F1", "F2", "dcr_share"):
        assert one[key] == two[key]


def brute_tvds(train_codes, other_codes, combos):
    """pandas value_counts over joined code tuples: the definition, slowly."""
    out = []
    for combo in combos:
        a = pd.Series(list(zip(*(train_codes[j] for j in combo)))).value_counts(normalize=True)
        b = pd.Series(list(zip(*(other_codes[j] for j in combo)))).value_counts(normalize=True)
        both = pd.concat([a, b], axis=1).fillna(0.0)
        out.append(0.5 * (both.iloc[:, 0] - both.iloc[:, 1]).abs().sum())
    return np.array(out)


@pytest.mark.parametrize("seed", range(5))
def test_kernel_matches_value_counts(seed):
    rng = np.random.default_rng(seed)
    p, cards = 5, rng.integers(1, 9, 5)
    train = np.stack([rng.integers(0, c, 200) for c in cards]).astype(np.uint8)
    other = np.stack([rng.integers(0, c, 150) for c in cards]).astype(np.uint8)
    for k in (1, 2, 3):
        combos = np.array(list(itertools.combinations(range(p), k)), dtype=np.int64)
        fast = marginal_tvds(train, other, np.array([150]), cards.astype(np.int64), combos)[:, 0]
        np.testing.assert_allclose(fast, brute_tvds(train, other, combos), rtol=0, atol=1e-12)


def test_unrank_enumerates_combinations_in_order():
    for n, k in ((7, 3), (5, 1), (6, 2), (4, 4)):
        want = list(itertools.combinations(range(n), k))
        assert [tuple(_unrank_combination(r, n, k)) for r in range(len(want))] == want


def test_max_combinations_samples_deterministically():
    rng = np.random.default_rng(3)
    t = pd.DataFrame({f"c{i}": rng.integers(0, 4, 40) for i in range(8)})
    kinds = kinds_from_dtypes(t)
    a = evaluate(t, t, t, kinds, families=[Fidelity(max_combinations=10)], seed=5)
    b = evaluate(t, t, t, kinds, families=[Fidelity(max_combinations=10)], seed=5)
    c = evaluate(t, t, t, kinds, families=[Fidelity(max_combinations=10)], seed=6)
    assert a.combinations_sampled and a.to_dict()["combinations_sampled"] is True
    assert (a.n_combinations_1, a.n_combinations_2, a.n_combinations_3) == (8, 10, 10)
    assert a.marginals["columns"].tolist() == b.marginals["columns"].tolist()
    assert a.marginals["columns"].tolist() != c.marginals["columns"].tolist()
    combos, sampled = select_combinations(8, 3, 10, np.random.default_rng(0))
    assert sampled and len({tuple(x) for x in combos}) == 10
    assert all(list(x) == sorted(x) for x in combos)
    full = evaluate(t, t, t, kinds, families=paper_families())
    assert not full.combinations_sampled and full.n_combinations_3 == 56


def test_one_row_inputs():
    t = pd.DataFrame({"a": [1.0], "b": ["x"]})
    s = pd.DataFrame({"a": [2.0], "b": ["x"]})
    res = evaluate(t, t, s, kinds_from_dtypes(t))
    d = res.to_dict()
    assert d["F1"] == pytest.approx(0.5)  # a: T [1] vs S _other_ -> TVD 1; b: 0
    assert d["F1_ratio"] is None  # F1(T, H) = 0: ratio undefined
    assert d["n_synthetic"] == 1 and d["dcr_share"] == pytest.approx(0.5)


def _tvd_groupby(a: pd.DataFrame, b: pd.DataFrame, cols: list[str]) -> float:
    pa = a.groupby(cols).size() / len(a)
    pb = b.groupby(cols).size() / len(b)
    return 0.5 * float(pa.sub(pb, fill_value=0).abs().sum())


def test_four_way_fidelity_equals_a_groupby_reference():
    rng = np.random.default_rng(11)
    cols = list("abcdef")
    t = pd.DataFrame({c: rng.choice(["x", "y", "z"], 300) for c in cols})
    h = pd.DataFrame({c: rng.choice(["x", "y", "z"], 250) for c in cols})
    s = pd.DataFrame({c: rng.choice(["x", "y", "z"], 200, p=[0.6, 0.3, 0.1]) for c in cols})
    kinds = {c: "categorical" for c in cols}
    d = evaluate(t, h, s, kinds, families=[Fidelity(four_way_combinations=100)]).to_dict()
    combos = [list(c) for c in itertools.combinations(cols, 4)]
    f4_s = np.mean([_tvd_groupby(t, s, c) for c in combos])
    f4_h = np.mean([_tvd_groupby(t, h, c) for c in combos])
    assert d["n_combinations_4"] == 15
    assert d["F4"] == pytest.approx(f4_s, abs=1e-12) and d["F4_holdout"] == pytest.approx(f4_h, abs=1e-12)
    assert d["F4_ratio"] == pytest.approx(f4_s / f4_h)
    sampled = evaluate(t, h, s, kinds, families=[Fidelity(four_way_combinations=5)], seed=3).to_dict()
    assert sampled["n_combinations_4"] == 5 and sampled["F3"] == d["F3"]
    off = evaluate(t, h, s, kinds, families=[Fidelity()]).to_dict()
    assert off["F4"] is None and off["n_combinations_4"] == 0
