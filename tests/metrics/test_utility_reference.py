"""TSTR and CI overlap (docs/definitions/utility.md §10) against scikit-learn and statsmodels fitted directly here.

TSTR: HistGradientBoostingClassifier with the same options and seed on features encoded by hand
(codes of T's sorted levels; missing and unseen values as NaN), AUC by roc_auc_score.
CI overlap: statsmodels Logit on a design built by hand (most frequent level of T as the
reference, levels with fewer than 20 rows in T pooled into `_other_`) and Karr et al.'s
overlap written out literally.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

from holdbench.metrics.registry import EvalData
from holdbench.metrics.utility import Utility

KINDS = {"x": "numeric", "w": "numeric", "g": "categorical", "y": "categorical"}


def make(n: int, seed: int, slope: float = 1.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    w = rng.exponential(size=n)
    # the most frequent level is "m", not the first in sorted order; "r" is rare (< 20 rows in T)
    g = rng.choice(["a", "m", "r", "z"], size=n, p=[0.3, 0.462, 0.008, 0.23]).astype(object)
    eta = slope * x - 0.4 * w + 0.8 * (g == "a") - 0.5 * (g == "z")
    y = rng.random(n) < 1 / (1 + np.exp(-eta))
    return pd.DataFrame({"x": x, "w": w, "g": g, "y": np.where(y, ">50K", "<=50K")})


def encode(f: pd.DataFrame, levels: list[str]) -> np.ndarray:
    """x, w and g's codes among T's sorted levels (anything else: NaN), written out for the references."""
    codes = f["g"].map({v: float(i) for i, v in enumerate(levels)}).to_numpy(dtype=float, na_value=np.nan)
    return np.column_stack([f["x"], f["w"], codes])


def hgb_auc(train: pd.DataFrame, test: pd.DataFrame, levels: list[str]) -> float:
    model = HistGradientBoostingClassifier(categorical_features=[False, False, True], random_state=3)
    model.fit(encode(train, levels), (train["y"] == ">50K").astype(int))
    return roc_auc_score(test["y"] == ">50K", model.predict_proba(encode(test, levels))[:, 1])


def test_tstr_equals_sklearn_fitted_directly():
    t, h, s = make(800, 1), make(600, 2), make(900, 3, slope=0.8)
    s.loc[:40, "g"] = "unseen"  # not a level of T: treated as missing
    s.loc[41:60, "g"] = None
    h.loc[:10, "g"] = None
    r = Utility(degree=1, ci_overlap=False).compute(EvalData(t, h, s, KINDS, target="y", seed=3))
    levels = sorted(t["g"].unique())
    want_t, want_s = hgb_auc(t, h, levels), hgb_auc(s, h, levels)
    assert r.tstr_auc_train == pytest.approx(want_t, rel=1e-12)
    assert r.tstr_auc_synthetic == pytest.approx(want_s, rel=1e-12)
    assert r.tstr_auc_ratio == pytest.approx(want_s / want_t, rel=1e-12)


def karr(lo_t: float, hi_t: float, lo_s: float, hi_s: float) -> float:
    inter = max(0.0, min(hi_t, hi_s) - max(lo_t, lo_s))
    return 0.5 * (inter / (hi_t - lo_t) + inter / (hi_s - lo_s))


def test_ci_overlap_equals_statsmodels_and_the_karr_formula():
    t, h, s = make(1500, 4), make(300, 5), make(1200, 6, slope=1.0)
    r = Utility(degree=1, tstr=False).compute(EvalData(t, h, s, KINDS, target="y", seed=0))
    assert (t["g"] == "r").sum() < 20 <= (t["g"] == "a").sum()
    mx, sx, mw, sw = t["x"].mean(), t["x"].std(ddof=0), t["w"].mean(), t["w"].std(ddof=0)

    def design(f):
        g = f["g"].where(f["g"].isin(["a", "m", "z"]), "_other_")
        return np.column_stack([np.ones(len(f)), (f["x"] - mx) / sx, (f["w"] - mw) / sw,
                                g == "a", g == "z", g == "_other_"]).astype(float)

    names = ["const", "x", "w", "g=a", "g=z", "g=_other_"]
    ci_t = sm.Logit((t["y"] == ">50K").astype(float), design(t)).fit(disp=0).conf_int(0.05)
    ci_s = sm.Logit((s["y"] == ">50K").astype(float), design(s)).fit(disp=0).conf_int(0.05)
    want = [karr(*a, *b) for a, b in zip(np.asarray(ci_t), np.asarray(ci_s))]
    table = r.ci_overlap_table
    assert list(table["term"]) == names
    np.testing.assert_allclose(table["overlap"], want, rtol=1e-6)
    np.testing.assert_allclose(table[["lower_train", "upper_train"]], ci_t, rtol=1e-6)
    assert r.ci_overlap_mean == pytest.approx(np.mean(want), rel=1e-6)
    assert r.ci_overlap_min == pytest.approx(min(want), rel=1e-6)
    assert r.ci_overlap_worst == names[int(np.argmin(want))]


REG_KINDS = {"x": "numeric", "w": "numeric", "g": "categorical", "y": "numeric"}


def make_numeric(n: int, seed: int, slope: float = 2.0) -> pd.DataFrame:
    """A numeric target with far more than 50 distinct values: the regression form of TSTR."""
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=n), rng.exponential(size=n)
    g = rng.choice(["a", "m", "z"], size=n, p=[0.3, 0.5, 0.2]).astype(object)
    y = slope * x - 0.7 * w + 1.2 * (g == "a") + rng.normal(0, 0.5, n)
    return pd.DataFrame({"x": x, "w": w, "g": g, "y": y})


def hgb_r2(train: pd.DataFrame, test: pd.DataFrame, levels: list[str]) -> float:
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.metrics import r2_score

    train, test = train[train["y"].notna()], test[test["y"].notna()]
    model = HistGradientBoostingRegressor(categorical_features=[False, False, True], random_state=3)
    model.fit(encode(train, levels), train["y"])
    return r2_score(test["y"], model.predict(encode(test, levels)))


def test_tstr_of_a_numeric_target_equals_sklearns_regressor_fitted_directly():
    t, h, s = make_numeric(800, 1), make_numeric(600, 2), make_numeric(900, 3, slope=0.5)
    s.loc[:30, "g"] = "unseen"
    s.loc[31:40, "y"] = np.nan  # left out, and counted
    r = Utility(degree=1, ci_overlap=False).compute(EvalData(t, h, s, REG_KINDS, target="y", seed=3))
    levels = sorted(t["g"].unique())
    want_t, want_s = hgb_r2(t, h, levels), hgb_r2(s, h, levels)
    assert r.tstr_r2_train == pytest.approx(want_t, rel=1e-12)
    assert r.tstr_r2_synthetic == pytest.approx(want_s, rel=1e-12)
    assert r.tstr_r2_ratio == pytest.approx(want_s / want_t, rel=1e-12)
    assert 0.5 < want_t and want_s < want_t  # S with a weaker slope predicts H worse
    assert np.isnan(r.tstr_auc_ratio) and "TSTR: 10 S rows with a missing target left out" in r.utility_reason


def test_tstr_of_a_numeric_target_a_copy_of_t_scores_one_and_a_target_shuffled_s_near_zero():
    t, h = make_numeric(800, 1), make_numeric(600, 2)
    shuffled = t.assign(y=np.random.default_rng(9).permutation(t["y"].to_numpy()))
    copy = Utility(degree=1, ci_overlap=False).compute(EvalData(t, h, t.copy(), REG_KINDS, target="y", seed=3))
    assert copy.tstr_r2_ratio == pytest.approx(1.0, rel=1e-12)
    noise = Utility(degree=1, ci_overlap=False).compute(EvalData(t, h, shuffled, REG_KINDS, target="y", seed=3))
    assert noise.tstr_r2_ratio < 0.05
