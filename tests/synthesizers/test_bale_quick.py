"""Bale & Quick's synthesizer (holdbench.synthesizers.bale_quick): output contract, release rules,
tuning trace, wall-clock cap, determinism, option checks.

Tiny budgets throughout (K in [2, 6], pMSE degree 2, one synthetic set per evaluation) so
every fit takes about a second on the 300-row mixed table of conftest.py.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from holdbench.contracts.schema import Schema
from holdbench.synthesizers._bq_models import Encoded, Step, encode, release
from holdbench.synthesizers.bale_quick import BQMNL, BQCart
from holdbench.synthesizers.base import FitContext

# the search these tests were written for: common random numbers, bayes_opt's own GP, no check sets
# (the robustness options are tested in test_bale_quick_tuning.py)
TINY = {"k_range": (2, 6), "init_points": 2, "n_iter": 1, "optimizer_seeds": 1, "m": 1, "pmse_degree": 2,
        "rescore_top": 2, "rescore_sets": 2, "fresh_seeds": False, "gp_noise": None, "check_sets": 0}


def _cart(**kw) -> BQCart:
    return BQCart(**{**TINY, "leaf_range": (10, 60), **kw})


def _mnl(**kw) -> BQMNL:
    return BQMNL(**{**TINY, "poly_degree": 2, "max_iter": 30, **kw})


@pytest.fixture(scope="module")
def fitted_cart():
    from tests.synthesizers.conftest import SCHEMA, make_table

    train = make_table(300, seed=1)
    synth = _cart(optimizer_seeds=2, n_iter=2)
    synth.fit(train, FitContext(SCHEMA, 0, "mixed"))
    return train, synth


@pytest.mark.parametrize("make", [_cart, _mnl, lambda: _mnl(features="quantile")],
                         ids=["cart", "mnl", "mnl-quantile"])
def test_fit_sample_rows_columns_dtypes(make, train, fit_ctx):
    synth = make()
    synth.fit(train, fit_ctx(seed=3))
    out = synth.sample(450, seed=4)
    assert len(out) == 450
    assert list(out.columns) == list(train.columns)
    assert out.dtypes.to_dict() == train.dtypes.to_dict()
    # every categorical value is one T has (missing included as a level)
    for col in ("color", "city", "grade"):
        assert set(out[col].dropna()) <= set(train[col].dropna())


def test_release_rounds_ints_and_clips_to_t_range():
    """Hand-made model-space rows: 37.6 -> 38, 300 -> T's max 90, -4 -> T's min 18."""
    step = Step("color", False, np.array([0, 1, 1]), np.array(["blue", "red"], dtype=object))
    enc = Encoded(numeric=["age", "score", "flag"], dtypes={"age": "int", "score": "float", "flag": "bool"},
                  mean=np.array([40.0, 0.0, 0.5]), sd=np.array([10.0, 1.0, 0.5]),
                  lo=np.array([18.0, -1.0, 0.0]), hi=np.array([90.0, 1.0, 1.0]),
                  z=np.zeros((3, 3)), steps=[step], names=["age", "score", "color", "flag"])
    x = np.array([[-0.24, 0.25, 0.9, 1.0],    # age 37.6, score 0.25, flag 0.95, red
                  [26.0, 5.0, -3.0, 0.0],     # age 300, score 5, flag -1, blue
                  [-4.4, -7.0, 0.1, 1.0]])    # age -4, score -7, flag 0.55, red
    out = release(enc, x, clip=True)
    assert out["age"].tolist() == [38, 90, 18]
    assert out["age"].dtype == np.int64
    assert out["score"].tolist() == pytest.approx([0.25, 1.0, -1.0])
    assert out["flag"].tolist() == [True, False, True]
    assert out["color"].tolist() == ["red", "blue", "red"]
    assert list(out.columns) == ["age", "score", "color", "flag"]
    unclipped = release(enc, x, clip=False)
    assert unclipped["age"].tolist() == [38, 300, -4]
    assert unclipped["score"].tolist() == pytest.approx([0.25, 5.0, -7.0])


def test_sampled_numbers_inside_t_range(fitted_cart):
    train, synth = fitted_cart
    out = synth.sample(3000, seed=1)
    for col in ("age", "income"):
        assert out[col].min() >= train[col].min() and out[col].max() <= train[col].max()
    # a missing-income indicator was modelled: T has 5% missing incomes, so must S (roughly)
    assert 0.01 < out["income"].isna().mean() < 0.15


def test_same_seed_same_data_and_trace(train, fit_ctx):
    a, b, c = _cart(), _cart(), _cart()
    a.fit(train, fit_ctx(seed=5))
    b.fit(train, fit_ctx(seed=5))
    c.fit(train, fit_ctx(seed=6))
    pd.testing.assert_frame_equal(a.sample(500, 9), b.sample(500, 9))
    timings = [c for c in a.tuning_trace.columns if c.endswith("seconds")]
    assert len(timings) == 7
    pd.testing.assert_frame_equal(a.tuning_trace.drop(columns=timings), b.tuning_trace.drop(columns=timings))
    assert not a.sample(500, 9).equals(a.sample(500, 10))
    assert not a.tuning_trace["objective"].equals(c.tuning_trace["objective"])


def test_trace_rows_columns_and_objective(fitted_cart):
    _, synth = fitted_cart
    trace = synth.tuning_trace
    per_seed = TINY["init_points"] + 2
    assert trace.groupby("optimizer_seed").size().to_dict() == {0: per_seed, 1: per_seed}
    assert trace["iteration"].tolist() == list(range(per_seed)) * 2
    assert (trace["phase"] == "random").sum() == 2 * TINY["init_points"]
    for col in ("K", "b_income_missing", "b_color", "b_city", "b_grade", "mean_pmse_ratio", "objective", "seconds",
                "suggest_seconds"):
        assert col in trace.columns
    assert trace["K"].between(2, 6).all() and trace["b_color"].between(10, 60).all()
    recomputed = -((1.0 - trace["mean_pmse_ratio"]) ** 2)
    np.testing.assert_allclose(trace["objective"], recomputed, rtol=0, atol=1e-15)
    assert synth.artifacts()["tuning_trace"].equals(trace)


def test_best_is_kept_and_not_worse_than_first_start(fitted_cart):
    _, synth = fitted_cart
    trace, info = synth.tuning_trace, synth.info()
    best_so_far_badness = (-trace["objective"]).cummin()
    assert (np.diff(best_so_far_badness) <= 0).all()
    # the kept row: of the best 2 distinct evaluations (re-scored on new sets), the best re-scored
    best_row = trace.loc[trace["rescored_objective"].idxmax()]
    assert trace["chosen"].sum() == 1 and trace["chosen"].idxmax() == best_row.name
    assert info["best_objective"] == best_row["objective"]
    assert best_row["objective"] >= trace["objective"].drop_duplicates().nlargest(2).min()
    assert info["best_params"] == {k: best_row[k] for k in info["best_params"]}
    assert info["n_evaluations"] == len(trace) and not info["hit_time_cap"]


def test_wall_clock_cap_stops_tuning(train, fit_ctx):
    capped = _cart(max_tuning_seconds=0.0, optimizer_seeds=2)
    capped.fit(train, fit_ctx())
    assert len(capped.tuning_trace) == 1 and capped.hit_time_cap and capped.info()["hit_time_cap"]
    assert len(capped.sample(100, 0)) == 100


def test_categorical_follows_its_numeric_predictor(schema):
    """A category fully decided by a number (hi iff x > 0) survives: leaf draws copy the rule."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=600)
    train = pd.DataFrame({"x": x, "side": np.where(x > 0, "hi", "lo")})
    sch = Schema.from_mapping("rule", {"x": {"kind": "numeric"}, "side": {"kind": "categorical"}})
    synth = BQCart(**{**TINY, "leaf_range": (10, 30)})
    synth.fit(sch.coerce(train, "T"), FitContext(sch, 0, "rule"))
    out = synth.sample(2000, 1)
    agree = ((out["x"] > 0) == (out["side"] == "hi")).mean()
    assert agree > 0.95


def test_only_categoricals_or_only_numerics(train, fit_ctx):
    cats = Schema.from_mapping("c", {"color": {"kind": "categorical"}, "city": {"kind": "categorical"}})
    nums = Schema.from_mapping("n", {"age": {"kind": "numeric", "dtype": "int"}, "member": {"kind": "numeric", "dtype": "bool"}})
    for sch in (cats, nums):
        synth = _cart()
        synth.fit(train[sch.names], FitContext(sch, 0, sch.name))
        out = synth.sample(200, 0)
        assert len(out) == 200 and out.dtypes.to_dict() == train[sch.names].dtypes.to_dict()


@pytest.mark.parametrize("kw, word", [
    ({"k_range": (50, 10)}, "k_range"),
    ({"leaf_range": (350, 10)}, "leaf_range"),
    ({"leaf_range": (0, 10)}, "leaf_range"),
    ({"k_range": (2.5, 10)}, "k_range"),
    ({"k_step": 0}, "k_step"),
    ({"init_points": 0}, "init_points"),
    ({"m": 0}, "m"),
    ({"max_tuning_seconds": -1}, "max_tuning_seconds"),
    ({"visit_order": ["color", "color"]}, "visit_order"),
    ({"disclosure_bound": 0.5}, "disclosure_bound"),
    ({"point_mass_share": 0}, "point_mass_share"),
    ({"point_mass_share": 1.5}, "point_mass_share"),
    ({"point_mass_share": True}, "point_mass_share"),
    ({"tuning_rows": 1}, "tuning_rows"),
])
def test_bad_options_raise_at_construction(kw, word):
    with pytest.raises(ValueError, match=word):
        BQCart(**kw)


def test_bad_mnl_options():
    with pytest.raises(ValueError, match="c_range"):
        BQMNL(c_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="c_range"):
        BQMNL(c_range=(3.0, 0.1))
    with pytest.raises(ValueError, match="c_grid"):
        BQMNL(c_grid=1)
    with pytest.raises(ValueError, match="features must be one of .*standardised.*quantile.*'ranks'"):
        BQMNL(features="ranks")
    from holdbench.synthesizers._bq_models import MNLPath

    with pytest.raises(ValueError, match="features must be one of"):  # before any fit
        MNLPath(np.zeros((4, 1)), np.array([0, 1, 0, 1]), np.array([1.0]), 0, degree=2, max_iter=5, tol=1e-4,
                feature_map="ranks")


@pytest.mark.parametrize("order, word", [
    (["color", "city", "grade", "shape"], "shape"),
    (["color", "city"], "grade"),
    (["color", "city", "grade", "age"], "age"),
])
def test_bad_visit_order_names_the_column_at_fit(order, word, train, fit_ctx):
    with pytest.raises(ValueError, match=f"visit_order.*{word}"):
        _cart(visit_order=order).fit(train, fit_ctx())


def test_visit_order_is_used(train, fit_ctx):
    a, b = _cart(), _cart(visit_order=["grade", "city", "color"])
    a.fit(train, fit_ctx())
    b.fit(train, fit_ctx())
    assert "b_grade" in a.tuning_trace and "b_grade" in b.tuning_trace
    assert not a.sample(300, 0).equals(b.sample(300, 0))


@pytest.mark.slow
def test_configs_and_smoke_preset_run_in_seconds():
    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from tests.synthesizers.conftest import SCHEMA, make_table

    train = make_table(2000, seed=3)
    for name in ("bq_cart", "bq_mnl"):
        synthesizer_config(name)  # the full config's keys are constructor arguments
        synth = build_synthesizer(synthesizer_config(name, preset="smoke"))
        start = time.process_time()  # CPU seconds: the test machine may be shared
        synth.fit(train, FitContext(SCHEMA, 0, "mixed"))
        out = synth.sample(2000, 1)
        assert time.process_time() - start < 20
        assert out.dtypes.to_dict() == train.dtypes.to_dict() and len(out) == 2000


def _disclosing_table(n: int = 400) -> tuple[pd.DataFrame, Schema]:
    """s = 'yes' exactly when x > 1.2 (prior ~12%): S copying that rule discloses s."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    raw = pd.DataFrame({"x": x, "age": rng.integers(20, 60, n), "g": rng.choice(["a", "b"], n),
                        "s": np.where(x > 1.2, "yes", "no")})
    sch = Schema.from_mapping("d", {"x": {"kind": "numeric"}, "age": {"kind": "numeric", "dtype": "int"},
                                    "g": {"kind": "categorical"}, "s": {"kind": "categorical"}},
                              sensitive="s", quasi_identifiers=["x", "age", "g"])
    return sch.coerce(raw, "T"), sch


def test_disclosure_reduction_brings_every_ratio_under_the_bound():
    from holdbench.metrics.disclosure import disclosure_ratios

    train, sch = _disclosing_table()
    deltas = np.linspace(0.001, 0.5, 5)
    worst = {}
    for on in (False, True):
        synth = BQCart(**{**TINY, "n_iter": 0, "leaf_range": (10, 30), "disclosure_reduction": on})
        synth.fit(train, FitContext(sch, 0, "d"))
        out = synth.sample(400, 1)
        assert len(out) == 400 and out.dtypes.to_dict() == train.dtypes.to_dict()
        worst[on] = max(disclosure_ratios(train, out, "s", ["x", "age"], ["g"], d).max() for d in deltas)
        assert synth.info()["n_decoys_added"] == synth.n_decoys_added
    assert worst[False] > 3.0  # the rule is disclosed without the post-processor
    assert worst[True] <= 3.0
    assert 0 < synth.n_decoys_added < 400 and synth.disclosure_converged


def test_disclosure_reduction_needs_a_binary_sensitive_attribute(train, fit_ctx):
    with pytest.raises(ValueError, match="sensitive"):
        _cart(disclosure_reduction=True).fit(train, fit_ctx())
    table, _ = _disclosing_table()
    sch = Schema.from_mapping("d", {"x": {"kind": "numeric"}, "age": {"kind": "numeric", "dtype": "int"},
                                    "g": {"kind": "categorical"}, "s": {"kind": "categorical"}},
                              sensitive="age", quasi_identifiers=["x", "g"])
    with pytest.raises(ValueError, match="binary"):
        _cart(disclosure_reduction=True).fit(table, FitContext(sch, 0, "d"))


def test_release_sets_missing_where_the_indicator_says():
    ind = Step("n", True, np.array([0, 1]), np.array([False, True], dtype=object))
    enc = Encoded(numeric=["n", "flag"], dtypes={"n": "int", "flag": "bool"}, mean=np.array([40.0, 0.5]),
                  sd=np.array([10.0, 0.5]), lo=np.array([0.0, 0.0]), hi=np.array([99.0, 1.0]),
                  z=np.zeros((2, 2)), steps=[ind], names=["n", "flag"])
    out = release(enc, np.array([[0.04, 1.0, 1.0], [0.06, -1.0, 0.0]]), clip=True)
    assert out["n"].isna().tolist() == [True, False] and out["n"].iloc[1] == 41
    assert out["flag"].tolist() == [True, False]


# ---- memo of mixtures / column models, T's samples in tuning ------------------------------

def test_each_mixture_and_column_model_fitted_once_across_optimiser_seeds(train, fit_ctx, monkeypatch):
    """K in {2, 3} and b in {10, 11} over 2 x 6 evaluations: at most 2 mixture fits, and one
    tree per (column, b) pair that the trace shows, however often the optimiser repeats it."""
    from holdbench.synthesizers import bale_quick as bq

    calls = {"mixture": [], "cart": []}

    class CountingMixture(bq.Mixture):
        def __init__(self, z, k, seed):
            calls["mixture"].append(k)
            super().__init__(z, k, seed)

    class CountingCart(bq.CartStep):
        def __init__(self, x, y, b, seed):
            calls["cart"].append((x.shape[1], b))
            super().__init__(x, y, b, seed)

    monkeypatch.setattr(bq, "Mixture", CountingMixture)
    monkeypatch.setattr(bq, "CartStep", CountingCart)
    synth = _cart(k_range=(2, 3), leaf_range=(10, 11), init_points=3, n_iter=3, optimizer_seeds=2)
    synth.fit(train, fit_ctx())
    trace = synth.tuning_trace
    assert len(trace) == 12
    assert sorted(calls["mixture"]) == sorted(trace["K"].unique())  # each K once, 2 fits at most
    b_cols = [c for c in trace.columns if c.startswith("b_")]
    assert len(calls["cart"]) == len(set(calls["cart"])) == sum(trace[c].nunique() for c in b_cols)
    assert len(calls["cart"]) <= 2 * len(b_cols) < 12 * len(b_cols)
    # the CPU split: a repeated K costs no mixture fit
    first_k = trace.groupby("K").head(1).index
    assert (trace.loc[~trace.index.isin(first_k), "gmm_cpu_seconds"] < 0.01).all()


def test_k_is_tuned_on_its_grid(train, fit_ctx, monkeypatch):
    """k_step: every K evaluated is low + i * k_step (or high); one mixture per grid point."""
    from holdbench.synthesizers import bale_quick as bq

    fitted = []

    class CountingMixture(bq.Mixture):
        def __init__(self, z, k, seed):
            fitted.append(k)
            super().__init__(z, k, seed)

    monkeypatch.setattr(bq, "Mixture", CountingMixture)
    synth = _cart(k_range=(2, 13), k_step=5, leaf_range=(10, 11), init_points=4, n_iter=4)
    synth.fit(train, fit_ctx())
    ks = set(synth.tuning_trace["K"])
    assert ks <= {2, 7, 12, 13}, ks
    assert sorted(fitted) == sorted(ks)


def test_mnl_c_is_tuned_on_its_log_grid(train, fit_ctx):
    """c_grid: every C evaluated is one of c_grid points evenly spaced in log C (written out)."""
    synth = _mnl(k_range=(3, 3), c_range=(0.01, 1.0), c_grid=3, init_points=3, n_iter=2)
    synth.fit(train, fit_ctx())
    c_cols = [c for c in synth.tuning_trace.columns if c.startswith("C_")]
    assert c_cols
    values = set(synth.tuning_trace[c_cols].to_numpy().ravel().round(12))
    assert values <= {0.01, 0.1, 1.0}, values


def test_mnl_optimiser_searches_log_c(train, fit_ctx):
    """C's search space is log10 C over c_range (uniform random starts in C would almost never
    try C < 0.1 of [0.001, 3]); the trace reports C itself, inside c_range."""
    synth = _mnl(k_range=(3, 3), c_range=(0.001, 1.0), init_points=4, n_iter=1)
    synth.fit(train, fit_ctx())
    c_keys = [k for k in synth._bounds if k.startswith("C_")]
    assert c_keys and all(synth._bounds[k] == (-3.0, 0.0) for k in c_keys)
    values = synth.tuning_trace[c_keys].to_numpy().ravel()
    assert (values >= 0.001).all() and (values <= 1.0).all()
    assert (values < 0.03).any()  # a log-uniform draw is below 0.03 with probability 0.49, a uniform one 0.03


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 5 epochs: by design
def test_mnl_path_is_sklearn_warm_started_path_in_any_request_order():
    """MNLPath's point i is sklearn's saga warm-started along the grid from the null model
    (zero coefficients, the marginal's intercepts), whether the points are asked for in order
    or the last one first."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from holdbench.synthesizers._bq_models import MNLPath

    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 3))
    y = (x[:, 0] + rng.normal(size=400) > 0).astype(int) + (x[:, 1] > 0.5)
    cs = np.array([0.01, 0.1, 1.0])
    features = make_pipeline(StandardScaler(), PolynomialFeatures(2, include_bias=False), StandardScaler())
    xt = features.fit_transform(x)
    ref = LogisticRegression(l1_ratio=1.0, solver="saga", max_iter=5, tol=1e-4, random_state=7, warm_start=True)
    share = np.array([np.mean(y == k) for k in range(3)])  # three classes: softmax intercepts
    ref.coef_, ref.intercept_ = np.zeros((3, xt.shape[1])), np.log(share) - np.log(share).mean()
    expected = []
    for c in cs:
        ref.set_params(C=c)
        expected.append(ref.fit(xt, y).coef_.copy())
    cold = LogisticRegression(l1_ratio=1.0, solver="saga", C=1.0, max_iter=5, tol=1e-4, random_state=7).fit(xt, y)
    assert not np.allclose(cold.coef_, expected[2])  # the warm start matters at 5 epochs

    in_order, last_first = (MNLPath(x, y, cs, 7, degree=2, max_iter=5, tol=1e-4) for _ in range(2))
    for i in range(3):
        np.testing.assert_array_equal(in_order.at(i).logit.coef_, expected[i])
    np.testing.assert_array_equal(last_first.at(2).logit.coef_, expected[2])
    np.testing.assert_array_equal(last_first.at(0).logit.coef_, expected[0])
    assert len(last_first.steps) == 3
    with pytest.raises(IndexError):
        last_first.at(3)
    with pytest.raises(ValueError, match="ascending"):
        MNLPath(x, y, cs[::-1], 7, degree=2, max_iter=5, tol=1e-4)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 10 epochs: by design
@pytest.mark.parametrize("levels", [2, 3])
def test_mnl_steps_start_from_the_marginal_not_from_uniform(levels):
    """On a heavy-tailed numeric cubed (saga's step size shrinks with the largest squared row
    norm) and a skewed column, 10 saga epochs from zero intercepts end worse than the column's
    marginal; MNLStep and MNLPath start from the null model (the marginal's intercepts) and end
    no worse than it. The marginal's log-loss is computed here from the counts."""
    from sklearn.metrics import log_loss

    from holdbench.synthesizers._bq_models import MNLPath, MNLStep, _saga

    rng = np.random.default_rng(11)
    x = np.column_stack([rng.lognormal(0.0, 2.0, 4000), rng.normal(size=4000)])
    y = (rng.random(4000) < 0.08).astype(int)
    if levels == 3:
        y[rng.random(4000) < 0.04] = 2
    share = np.bincount(y) / len(y)
    marginal = float(-(share * np.log(share)).sum())
    kw = {"degree": 3, "max_iter": 10, "tol": 1e-4}

    step = MNLStep(x, y, 0.01, 0, **kw)
    feats = step.features.transform(x)
    zero = _saga(0.01, 0, 10, 1e-4).fit(feats, y)
    assert log_loss(y, zero.predict_proba(feats)) > marginal + 0.01  # the failure this start avoids
    assert log_loss(y, step.logit.predict_proba(feats)) <= marginal + 1e-3
    path = MNLPath(x, y, np.array([0.001, 0.01, 0.1]), 0, **kw)
    for i in range(3):
        assert log_loss(y, path.at(i).logit.predict_proba(feats)) <= marginal + 1e-3


def test_quantile_features_are_t_ranks_in_minus_one_one_then_polynomial_terms():
    """features=quantile: on T without ties (fewer than 1,000 rows) a predictor's i-th smallest value
    maps to 2 i / (n - 1) - 1 (its rank, by scipy), then the degree-2 terms [a, b, a^2, ab, b^2]
    written out here; a value beyond T's range maps to the nearest end, so every term stays in [-1, 1]."""
    from scipy.stats import rankdata

    from holdbench.synthesizers._bq_models import _features

    rng = np.random.default_rng(2)
    x = np.column_stack([rng.lognormal(0.0, 2.0, 500), rng.normal(size=500)])
    u = 2.0 * (rankdata(x, axis=0) - 1.0) / (len(x) - 1.0) - 1.0
    a, b = u[:, 0], u[:, 1]
    fitted = _features(2, "quantile", len(x)).fit(x)
    np.testing.assert_allclose(fitted.transform(x), np.column_stack([a, b, a * a, a * b, b * b]), atol=1e-9)
    outside = fitted.transform(np.array([[x[:, 0].max() * 10, x[:, 1].min() - 5]]))
    np.testing.assert_allclose(outside, [[1.0, -1.0, 1.0, -1.0, 1.0]], atol=1e-6)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 10 epochs a point: by design
def test_quantile_features_let_saga_converge_further_than_standardised():
    """On heavy-tailed numerics cubed the standardised terms have rows of squared norm in the
    thousands (saga's step size is inversely proportional to the largest), the quantile terms at
    most the number of terms; the same path (5 points of 10 epochs) ends at a clearly lower
    training log-loss on the quantile terms."""
    from sklearn.metrics import log_loss

    from holdbench.synthesizers._bq_models import MNLPath

    rng = np.random.default_rng(5)
    x = np.column_stack([rng.lognormal(0.0, 2.0, 3000), rng.lognormal(0.0, 1.5, 3000), rng.integers(0, 5, 3000)])
    rank = np.argsort(np.argsort(x[:, 0])) / len(x)
    y = ((rank + 0.3 * rng.normal(size=len(x))) > 0.5).astype(int) + (x[:, 2] >= 3)
    loss, norm = {}, {}
    for kind in ("standardised", "quantile"):
        path = MNLPath(x, y, np.geomspace(0.01, 3.0, 5), 0, degree=3, max_iter=10, tol=1e-4, feature_map=kind)
        step = path.at(4)
        feats = step.features.transform(x)
        loss[kind], norm[kind] = log_loss(y, step.logit.predict_proba(feats)), float((feats ** 2).sum(axis=1).max())
    assert norm["standardised"] > 1000 and norm["quantile"] <= feats.shape[1]
    assert loss["quantile"] < loss["standardised"] - 0.1, loss


def test_mnl_grid_fits_each_path_point_once(train, fit_ctx, monkeypatch):
    """With c_grid, every saga fit of a fit() is one (column, grid point), fitted once: at most
    c_grid fits per column over 2 x 5 evaluations; the same seed gives the same data."""
    from holdbench.synthesizers import _bq_models

    fits = []
    real = _bq_models._fit_logit

    def counting(logit, features, y):
        fits.append((features.shape[1], len(np.unique(y)), logit.C))
        return real(logit, features, y)

    monkeypatch.setattr(_bq_models, "_fit_logit", counting)
    make = lambda: _mnl(k_range=(3, 3), c_range=(0.01, 1.0), c_grid=3, max_iter=5, init_points=3, n_iter=2,
                        optimizer_seeds=2)
    a = make()
    a.fit(train, fit_ctx(seed=4))
    c_cols = [c for c in a.tuning_trace.columns if c.startswith("C_")]
    assert len(fits) == len(set(fits)) <= 3 * len(c_cols)
    b = make()
    b.fit(train, fit_ctx(seed=4))
    pd.testing.assert_frame_equal(a.sample(300, 1), b.sample(300, 1))


def test_tuning_scores_each_set_against_the_same_sample_of_t(train, fit_ctx, monkeypatch):
    from holdbench.metrics import pmse

    seen = []
    real = pmse.pmse_ratio

    def spy(t, s, kinds, **kw):
        seen.append((tuple(t["income"].fillna(-1.0).round(2)), len(s)))
        return real(t, s, kinds, **kw)

    monkeypatch.setattr(pmse, "pmse_ratio", spy)
    synth = _cart(m=2, tuning_rows=120, init_points=2, n_iter=0, rescore_top=0)
    synth.fit(train, fit_ctx())
    assert len(seen) == 4 and all(n == 120 for _, n in seen)
    assert all(len(t) == 120 for t, _ in seen)
    assert seen[0][0] == seen[2][0] and seen[1][0] == seen[3][0]  # set i: the same T rows each time
    assert seen[0][0] != seen[1][0]
    t_incomes = train["income"].fillna(-1.0).round(2).tolist()
    assert all(v in t_incomes for v in seen[0][0])
    seen.clear()
    _cart(m=1, tuning_rows=None, init_points=1, n_iter=0, rescore_top=0).fit(train, fit_ctx())
    assert seen[0][1] == len(train) and len(seen[0][0]) == len(train)


# ---- point masses --------------------------------------------------------------------------

def test_encode_point_mass_by_hand():
    """gain = [0, 0, 0, 5, 7]: 60 % zeros >= 0.5 -> a mass step at 0; the mixture sees 5 and 7
    (mean 6, SD 1: z = -1, +1), and a random one of them at each zero; T's range is [5, 7]."""
    t = pd.DataFrame({"gain": [0, 0, 0, 5, 7], "c": ["a", "b", "a", "b", "a"]})
    enc = encode(t, {"gain": "numeric", "c": "categorical"}, {"gain": "int", "c": "str"}, ["c"], 0.5)
    mass, cat = enc.steps
    assert mass.label == "gain_mass" and mass.mass == 0.0 and mass.codes.tolist() == [1, 1, 1, 0, 0]
    assert cat.label == "c"
    assert enc.z[3:, 0].tolist() == [-1.0, 1.0] and set(enc.z[:3, 0]) <= {-1.0, 1.0}
    many = pd.DataFrame({"gain": [0] * 900 + [5, 7] * 50, "c": ["a"] * 1000})
    zs = encode(many, {"gain": "numeric", "c": "categorical"}, {"gain": "int", "c": "str"}, ["c"], 0.5, seed=3).z
    assert set(zs[:900, 0]) == {-1.0, 1.0} and abs(zs[:900, 0].mean()) < 0.15  # fair draws: SD 1/30
    assert (enc.mean[0], enc.sd[0], enc.lo[0], enc.hi[0]) == (6.0, 1.0, 5.0, 7.0)
    assert len(encode(t, {"gain": "numeric", "c": "categorical"}, {"gain": "int", "c": "str"}, ["c"], 0.7).steps) == 1
    assert len(encode(t, {"gain": "numeric", "c": "categorical"}, {"gain": "int", "c": "str"}, ["c"], None).steps) == 1
    # release: the mass where the indicator says 1, else the continuous part clipped to [5, 7]
    x = np.array([[0.3, 1.0, 0.0], [-4.0, 0.0, 1.0], [0.4, 0.0, 0.0]])
    assert release(enc, x, clip=True)["gain"].tolist() == [0, 5, 6]


def _zero_inflated(n: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    """gain: exactly 0 in 90 % of rows (hand-set), else an integer in [100, 5000]."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    gain = np.round(np.exp(rng.uniform(np.log(100), np.log(5000), n)))
    gain[rng.permutation(n)[:int(0.9 * n)]] = 0
    sch = Schema.from_mapping("zi", {"x": {"kind": "numeric"}, "gain": {"kind": "numeric", "dtype": "int"},
                                     "g": {"kind": "categorical"}})
    return sch.coerce(pd.DataFrame({"x": x, "gain": gain, "g": rng.choice(["a", "b"], n)}), "T"), sch


def test_zero_inflated_column_gets_exact_zeros_at_t_share():
    train, sch = _zero_inflated(600, 0)
    assert (train["gain"] == 0).mean() == 0.9
    share = {}
    for pm in (0.5, None):
        synth = _cart(point_mass_share=pm, k_range=(3, 3), leaf_range=(20, 20))
        synth.fit(train, FitContext(sch, 0, "zi"))
        out = synth.sample(5000, 1)
        share[pm] = (out["gain"] == 0).mean()
        if pm is not None:
            assert "b_gain_mass" in synth.tuning_trace
            assert out.loc[out["gain"] != 0, "gain"].between(100, 5000).all()
    # with the mass step: 0.9 up to sampling noise (binomial SD at n = 5000: 0.004) and the
    # tree's leaf shares; without it the mixture smears the spike
    assert abs(share[0.5] - 0.9) < 0.03
    assert abs(share[None] - 0.9) > 0.1


def test_tuning_logs_each_evaluation_re_scoring_and_check(train, fit_ctx, caplog):
    """A fit that tunes for an hour says where it is: one line per evaluation (its number of the total,
    its phase, its mean ratio and the best objective so far), per re-scored finalist and for the check."""
    synth = _cart(init_points=2, n_iter=1, rescore_top=2, rescore_sets=2, check_sets=2)
    with caplog.at_level("INFO", logger="holdbench.synth"):
        synth.fit(train, fit_ctx())
    lines = [r.getMessage() for r in caplog.records if r.name == "holdbench.synth"]
    trace = synth.tuning_trace
    evals = [m for m in lines if ": evaluation " in m and " of 3 " in m]
    assert len(evals) == len(trace) == 3, lines
    for msg, (_, row) in zip(evals, trace.iterrows()):
        assert f"({row['phase']}" in msg and f"mean pMSE ratio {row['mean_pmse_ratio']:.3f}" in msg, msg
    assert f"(best so far {trace['objective'].max():.4g})" in evals[-1]
    rescored = [m for m in lines if "re-scored on 2 new sets" in m]
    assert len(rescored) == trace["rescored_objective"].notna().sum() == 2, lines
    kept = int(trace["chosen"].idxmax()) + 1
    assert [m for m in lines if f"kept parameters (evaluation {kept}) on 2 sets" in m], lines
