"""Utility family (docs/definitions/bale-quick.md §8, docs/definitions/utility.md §10): TSTR, CI overlap, CART pMSE, holdout row, no target, seeds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from holdbench.metrics.registry import EvalData, scalars, specs_of
from holdbench.metrics.utility import Utility, UtilityResult, _overlap

KINDS = {"x": "numeric", "z": "numeric", "g": "categorical", "y": "categorical"}


def make(n: int, seed: int, slope: float = 2.0, threshold: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rng.normal(size=n)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    if threshold:
        y = x > 0.3
    else:
        y = rng.random(n) < 1 / (1 + np.exp(-(slope * x + 0.5 * (g == "b"))))
    return pd.DataFrame({"x": x, "z": z, "g": g, "y": np.where(y, "yes", "no")})


def run(t, h, s, *, target="y", holdout_row=False, seed=0, **opts) -> UtilityResult:
    data = EvalData(t, h, s, KINDS, holdout_row=holdout_row, target=target, seed=seed)
    return Utility(**{"degree": 2, **opts}).compute(data)


def test_registry_declares_directions_and_headlines():
    specs = {s.name: s for s in specs_of(UtilityResult)}
    assert specs["pmse_ratio"].direction == "ideal" and specs["pmse_ratio"].ideal == 1.0
    assert specs["pmse_ratio"].headline and specs["tstr_auc_ratio"].headline
    assert specs["tstr_auc_ratio"].direction == "higher" and specs["ci_overlap_mean"].direction == "higher"
    assert {s.group for s in specs.values()} == {"utility"}


def test_tstr_perfect_column_and_shuffled_target():
    t, h = make(600, 1, threshold=True), make(600, 2, threshold=True)
    aucs = []
    for seed in range(6):  # a model of noise is a random function of x: average over shuffles
        s = t.copy()
        s["y"] = np.random.default_rng(seed).permutation(s["y"].to_numpy())
        r = run(t, h, s, ci_overlap=False, degree=1)
        assert r.tstr_auc_train > 0.99
        assert r.tstr_auc_ratio == pytest.approx(r.tstr_auc_synthetic / r.tstr_auc_train, rel=1e-12)
        aucs.append(r.tstr_auc_synthetic)
    assert abs(np.mean(aucs) - 0.5) < 0.05, aucs


def test_tstr_s_with_one_class_predicts_a_constant():
    t, h = make(400, 1), make(400, 2)
    s = t.assign(y="no")
    r = run(t, h, s, ci_overlap=False)
    assert r.tstr_auc_synthetic == 0.5
    assert "constant" in r.utility_reason


def test_tstr_multiclass_is_macro_one_vs_rest():
    rng = np.random.default_rng(0)

    def three(n, seed):
        f = make(n, seed)
        r = np.random.default_rng(seed + 100).normal(size=n)
        return f.assign(y=np.select([f["x"] + r < -0.5, f["x"] + r < 0.5], ["lo", "mid"], "hi"))

    t, h = three(400, 1), three(400, 2)
    r = run(t, h, t.sample(frac=1.0, random_state=int(rng.integers(100))), ci_overlap=False)
    # reference: the same seeded model, sklearn's own macro OvR on T-trained probabilities
    feats = ["x", "z", "g"]

    def enc(f):
        return f[feats].assign(g=f["g"].map({"a": 0, "b": 1, "c": 2}))

    model = HistGradientBoostingClassifier(categorical_features=[False, False, True], random_state=0)
    model.fit(enc(t).to_numpy(float), t["y"].map({"hi": 0, "lo": 1, "mid": 2}))
    proba = model.predict_proba(enc(h).to_numpy(float))
    want = roc_auc_score(h["y"].map({"hi": 0, "lo": 1, "mid": 2}), proba, multi_class="ovr", average="macro")
    assert r.tstr_auc_train == pytest.approx(want, rel=1e-12)
    assert math.isnan(r.ci_overlap_mean)


def test_overlap_of_two_intervals_by_hand():
    # [0, 2] and [1, 4]: intersection 1 -> (1/2 + 1/3) / 2
    assert _overlap(0.0, 2.0, 1.0, 4.0) == pytest.approx(5 / 12, abs=1e-15)
    assert _overlap(0.0, 2.0, 0.0, 2.0) == 1.0
    assert _overlap(0.0, 1.0, 3.0, 4.0) == 0.0  # disjoint
    assert _overlap(0.0, 4.0, 1.0, 2.0) == pytest.approx(0.5 * (1 / 4 + 1), abs=1e-15)  # nested


def test_ci_overlap_identical_tables_is_one():
    t, h = make(600, 1), make(600, 2)
    r = run(t, h, t.copy(), tstr=False)
    assert r.ci_overlap_mean == pytest.approx(1.0, abs=1e-12)
    assert r.ci_overlap_min == pytest.approx(1.0, abs=1e-12)
    # const, x, z, g=b, g=c (reference 'a', the most frequent level)
    assert r.ci_n_coefficients == 5
    assert list(r.ci_overlap_table["term"]) == ["const", "x", "z", "g=b", "g=c"]


def test_ci_overlap_matches_a_hand_computation_with_statsmodels():
    t, h, s = make(500, 1), make(500, 2), make(700, 3, slope=1.0)
    r = run(t, h, s, tstr=False)

    def intervals(f):
        mx, sx = t["x"].mean(), t["x"].std(ddof=0)
        mz, sz = t["z"].mean(), t["z"].std(ddof=0)
        x = np.column_stack([np.ones(len(f)), (f["x"] - mx) / sx, (f["z"] - mz) / sz,
                             f["g"] == "b", f["g"] == "c"]).astype(float)
        return sm.Logit((f["y"] == "yes").astype(float), x).fit(disp=0).conf_int(0.05)

    it, is_ = np.asarray(intervals(t)), np.asarray(intervals(s))
    want = []
    for (a, b), (c, d) in zip(it, is_):
        inter = max(0.0, min(b, d) - max(a, c))
        want.append(0.5 * (inter / (b - a) + inter / (d - c)))
    assert r.ci_overlap_mean == pytest.approx(np.mean(want), rel=1e-6)
    assert r.ci_overlap_min == pytest.approx(min(want), rel=1e-6)


def test_ci_overlap_sign_flip_is_low():
    t, h = make(800, 1, slope=1.5), make(800, 2, slope=1.5)
    s = make(800, 3, slope=-1.5)
    r = run(t, h, s, tstr=False)
    row = r.ci_overlap_table.set_index("term").loc["x"]
    assert row["overlap"] == 0.0
    assert r.ci_overlap_min == 0.0 and r.ci_overlap_worst in ("x", "const", "g=b", "g=c", "z")
    assert r.ci_overlap_table.set_index("term").loc["x", "overlap"] == r.ci_overlap_min


def test_ci_overlap_survives_separation_and_missing_levels():
    t, h = make(500, 1), make(500, 2)
    s = t.copy()
    s.loc[s["g"] == "c", "y"] = "yes"  # perfect separation on g=c in S
    s = s[s["g"] != "b"]  # level b absent from S: its coefficient is not estimable
    r = run(t, h, s, tstr=False)
    table = r.ci_overlap_table.set_index("term")
    assert table.loc["g=b", "overlap"] == 0.0 and "not estimable from S" in table.loc["g=b", "note"]
    assert "g=b" in r.utility_reason
    assert np.isfinite(r.ci_overlap_mean)


def test_holdout_row_computes_pmse_and_ci_not_tstr():
    t, h = make(500, 1), make(500, 2)
    r = run(t, h, h, holdout_row=True)
    assert np.isfinite(r.pmse_ratio) and 0.2 < r.pmse_ratio < 3
    assert np.isfinite(r.ci_overlap_mean)
    assert np.isfinite(r.tstr_auc_train)
    assert math.isnan(r.tstr_auc_synthetic) and math.isnan(r.tstr_auc_ratio)
    assert "in-sample" in r.utility_reason


def test_no_target_gives_nan_and_reason():
    t, h, s = make(300, 1), make(300, 2), make(300, 3)
    r = run(t, h, s, target=None)
    assert np.isfinite(r.pmse_ratio)
    for name in ("tstr_auc_synthetic", "tstr_auc_train", "tstr_auc_ratio", "ci_overlap_mean", "ci_overlap_min"):
        assert math.isnan(getattr(r, name))
    assert "no target" in r.utility_reason
    with pytest.raises(ValueError, match="'income'"):
        run(t, h, s, target="income")


def test_continuous_target_is_a_regression_target():
    t, h, s = make(300, 1), make(300, 2), make(300, 3)
    data = EvalData(t, h, s, KINDS, target="x", seed=0)
    r = Utility(degree=1).compute(data)
    assert math.isnan(r.tstr_auc_ratio) and math.isnan(r.ci_overlap_mean)
    assert np.isfinite(r.tstr_r2_train) and np.isfinite(r.tstr_r2_synthetic)
    assert "binary target" in r.utility_reason and "not a classification target" not in r.utility_reason


def test_a_text_target_of_many_levels_is_not_a_classification_target():
    t, h, s = make(300, 1), make(300, 2), make(300, 3)
    for i, frame in enumerate((t, h, s)):
        frame["code"] = [f"c{(j + i) % 60}" for j in range(len(frame))]
    r = Utility(degree=1).compute(EvalData(t, h, s, {**KINDS, "code": "categorical"}, target="code", seed=0))
    assert math.isnan(r.tstr_auc_ratio) and math.isnan(r.tstr_r2_ratio)
    assert "has 60 distinct values in T, not a classification target (at most 50)" in r.utility_reason


def test_cart_variant_detects_a_shuffled_column():
    t, h = make(600, 1), make(600, 2)
    s = t.copy()
    s["y"] = np.where(s["x"] > 0, "no", "yes")  # reversed relation
    bad = run(t, h, s, cart=True, cart_permutations=5, tstr=False, ci_overlap=False)
    assert bad.pmse_cart_ratio > 2, bad
    assert bad.pmse_cart_null > 0
    off = run(t, h, s, tstr=False, ci_overlap=False)
    assert math.isnan(off.pmse_cart_ratio)


def test_options_are_checked():
    with pytest.raises(ValueError, match="degree"):
        Utility(degree=0)
    with pytest.raises(ValueError, match="max_design_mb"):
        Utility(max_design_mb=-1)
    with pytest.raises(ValueError, match="cart_permutations"):
        Utility(cart_permutations=0)


def test_same_seed_same_bytes():
    t, h, s = make(500, 1), make(500, 2), make(500, 3)
    a = scalars(run(t, h, s, cart=True, cart_permutations=3, seed=7))
    b = scalars(run(t, h, s, cart=True, cart_permutations=3, seed=7))
    a.pop("seconds_utility"), b.pop("seconds_utility")
    assert repr(a) == repr(b)
