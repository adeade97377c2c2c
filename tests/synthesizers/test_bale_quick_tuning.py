"""Bale & Quick's tuning (holdbench.synthesizers.bale_quick): tuning sets of |T| rows (c = 1/2), the
objective's pMSE form, re-scoring the best few on new sets, fresh or common seeds, the class
defaults against the YAML, the saga logit's non-deprecated L1 form.

Tiny budgets (K in [2, 6], pMSE degree 2, one set per evaluation) on the 300-row table of
conftest.py: each fit takes about a second.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from holdbench.synthesizers.bale_quick import BQCart

TINY = {"k_range": (2, 6), "init_points": 2, "n_iter": 1, "optimizer_seeds": 1, "m": 1, "pmse_degree": 2,
        "leaf_range": (10, 60), "rescore_top": 2, "rescore_sets": 2, "check_sets": 0, "fresh_seeds": False,
        "gp_noise": None}


def _spy_pmse(monkeypatch) -> list:
    """Record (|T|, |S|, score, S) of every pMSE ratio the tuning computes."""
    from holdbench.metrics import pmse

    seen = []
    real = pmse.pmse_ratio

    def spy(t, s, kinds, **kw):
        score = real(t, s, kinds, **kw)
        seen.append((len(t), len(s), score, s))
        return score

    monkeypatch.setattr(pmse, "pmse_ratio", spy)
    return seen


@pytest.mark.parametrize("tuning_rows", [None, 10_000])
def test_tuning_sets_have_t_rows_never_more(tuning_rows, train, fit_ctx, monkeypatch):
    """Default and any value above |T| (= 300): every set has |T| rows against T, c = 1/2."""
    seen = _spy_pmse(monkeypatch)
    synth = BQCart(**{**TINY, "m": 2, "tuning_rows": tuning_rows, "rescore_top": 1, "rescore_sets": 2})
    synth.fit(train, fit_ctx())
    assert len(seen) == 2 * 3 + 2  # 3 evaluations x 2 sets, then 2 re-scoring sets
    assert all(nt == 300 and ns == 300 and score.c == 0.5 for nt, ns, score, _ in seen)
    assert (synth.tuning_trace["pmse_c"] == 0.5).all()
    info = synth.info()
    assert info["tuning_rows"] == 300 and info["tuning_c"] == 0.5


def test_smaller_tuning_sets_are_a_sample_of_t_of_the_same_size(train, fit_ctx, monkeypatch):
    seen = _spy_pmse(monkeypatch)
    synth = BQCart(**{**TINY, "tuning_rows": 120, "rescore_top": 0})
    synth.fit(train, fit_ctx())
    assert len(seen) == 3 and all(nt == ns == 120 and score.c == 0.5 for nt, ns, score, _ in seen)
    assert synth.info()["tuning_rows"] == 120


@pytest.mark.parametrize("form, attr", [("bale_quick", "ratio_bq"), ("holdbench", "ratio")])
def test_objective_reads_the_chosen_pmse_form(form, attr, train, fit_ctx, monkeypatch):
    """The trace's mean_pmse_ratio (and so the objective) is the chosen form's ratio of the
    scores pmse_ratio returned; both forms are recorded."""
    seen = _spy_pmse(monkeypatch)
    synth = BQCart(**{**TINY, "m": 2, "pmse_form": form, "rescore_top": 0})
    synth.fit(train, fit_ctx())
    trace = synth.tuning_trace
    assert len(seen) == 2 * len(trace)
    for e in range(len(trace)):
        pair = [seen[2 * e][2], seen[2 * e + 1][2]]
        assert trace["mean_pmse_ratio"].iloc[e] == pytest.approx((getattr(pair[0], attr) + getattr(pair[1], attr)) / 2,
                                                                 rel=1e-12)
        assert trace["mean_pmse_ratio_bq"].iloc[e] == pytest.approx((pair[0].ratio_bq + pair[1].ratio_bq) / 2)
        assert trace["mean_pmse_ratio_rank"].iloc[e] == pytest.approx((pair[0].ratio + pair[1].ratio) / 2)
    # the two forms differ here (duplicated polynomial terms of 0/1 columns), so the test can tell them apart
    assert not np.allclose(trace["mean_pmse_ratio_bq"], trace["mean_pmse_ratio_rank"])
    assert synth.info()["pmse_form"] == form


def test_best_few_are_rescored_on_new_sets_and_the_best_rescored_is_kept(train, fit_ctx, monkeypatch):
    seen = _spy_pmse(monkeypatch)
    synth = BQCart(**{**TINY, "m": 2, "init_points": 4, "n_iter": 2, "rescore_top": 3, "rescore_sets": 4})
    synth.fit(train, fit_ctx())
    trace, info = synth.tuning_trace, synth.info()
    n_search = 2 * len(trace)
    search_sets, rescore_sets = seen[:n_search], seen[n_search:]
    assert len(rescore_sets) == 3 * 4
    names = list(info["best_params"])
    # the finalists: the 3 best distinct parameter sets by the search's objective
    distinct = trace.drop_duplicates(subset=names)
    top = distinct.sort_values("objective", ascending=False, kind="stable").index[:3]
    assert sorted(trace.index[trace["rescored_objective"].notna()]) == sorted(top)
    # each finalist's re-scored mean / SD are those of its 4 sets (in order of finalists)
    for f, row in enumerate(top):
        ratios = np.array([sc.ratio_bq for _, _, sc, _ in rescore_sets[4 * f:4 * f + 4]])
        assert trace.at[row, "rescored_mean_pmse_ratio"] == pytest.approx(ratios.mean(), rel=1e-12)
        assert trace.at[row, "rescored_objective"] == pytest.approx(-(1 - ratios.mean()) ** 2, rel=1e-12)
        assert trace.at[row, "rescored_set_ratio_sd"] == pytest.approx(np.std(ratios, ddof=1), rel=1e-12)
    # new sets: no re-scoring set is one of the search's sets of the same parameters
    first = top[0]
    own = [s for k, (_, _, _, s) in enumerate(search_sets) if k // 2 == first]
    for _, _, _, s in rescore_sets[:4]:
        assert not any(s.equals(o) for o in own)
    # the kept parameters: the finalist with the best re-scored objective
    chosen = trace["rescored_objective"].idxmax()
    assert trace["chosen"].sum() == 1 and trace["chosen"].idxmax() == chosen
    assert info["best_params"] == {k: trace.at[chosen, k] for k in names}
    assert info["rescored_mean_pmse_ratio"] == trace.at[chosen, "rescored_mean_pmse_ratio"]
    assert info["objective_ratio_sd"] == pytest.approx(trace.at[chosen, "rescored_set_ratio_sd"] / np.sqrt(2))
    assert info["n_rescored"] == 3


def test_rescoring_off_keeps_the_search_best(train, fit_ctx):
    synth = BQCart(**{**TINY, "init_points": 3, "rescore_top": 0})
    synth.fit(train, fit_ctx())
    trace = synth.tuning_trace
    assert trace["rescored_objective"].isna().all() and trace["chosen"].idxmax() == trace["objective"].idxmax()
    assert np.isnan(synth.info()["objective_ratio_sd"])


def _first_draws(monkeypatch) -> list:
    """The generator state each synthetic set starts from, in call order."""
    from holdbench.synthesizers import bale_quick as bq

    draws = []
    real = bq.generate

    def spy(enc, mixture, models, n, rng, z=None):
        draws.append(rng.bit_generator.state["state"]["state"])
        return real(enc, mixture, models, n, rng, z)

    monkeypatch.setattr(bq, "generate", spy)
    return draws


@pytest.mark.parametrize("fresh", [False, True])
def test_common_or_fresh_seeds_per_evaluation(fresh, train, fit_ctx, monkeypatch):
    """Common random numbers: set i starts from the same generator state at every evaluation;
    fresh seeds: every set of every evaluation from a state of its own."""
    draws = _first_draws(monkeypatch)
    synth = BQCart(**{**TINY, "m": 2, "init_points": 4, "n_iter": 0, "rescore_top": 0, "fresh_seeds": fresh})
    synth.fit(train, fit_ctx())
    n_eval = int((~synth.tuning_trace["cached"]).sum())
    search = draws[:2 * n_eval]
    assert n_eval >= 3
    if fresh:
        assert len(set(search)) == len(search)
    else:
        assert set(search[0::2]) == {search[0]} and set(search[1::2]) == {search[1]} and search[0] != search[1]


def test_fresh_seeds_deterministic(train, fit_ctx):
    a, b = (BQCart(**{**TINY, "fresh_seeds": True, "rescore_top": 2}) for _ in range(2))
    a.fit(train, fit_ctx(seed=5))
    b.fit(train, fit_ctx(seed=5))
    timings = [c for c in a.tuning_trace.columns if c.endswith("seconds")]
    pd.testing.assert_frame_equal(a.tuning_trace.drop(columns=timings), b.tuning_trace.drop(columns=timings))
    pd.testing.assert_frame_equal(a.sample(300, 1), b.sample(300, 1))


def test_time_cap_skips_rescoring(train, fit_ctx):
    capped = BQCart(**{**TINY, "max_tuning_seconds": 0.0})
    capped.fit(train, fit_ctx())
    assert capped.hit_time_cap and capped.info()["n_rescored"] == 0 and capped.tuning_trace["chosen"].iloc[0]


@pytest.mark.parametrize("kw, word", [
    ({"pmse_form": "rank"}, "pmse_form"),
    ({"rescore_top": -1}, "rescore_top"),
    ({"rescore_sets": 1}, "rescore_sets"),
    ({"tuning_rows": 1}, "tuning_rows"),
    ({"check_sets": 1}, "check_sets"),
    ({"gp_noise": "whitenoise"}, "gp_noise"),
])
def test_bad_tuning_options(kw, word):
    with pytest.raises(ValueError, match=word):
        BQCart(**kw)


def test_check_sets_score_the_kept_point_on_sets_no_selection_saw(train, fit_ctx, monkeypatch):
    """After the choice, the kept parameters are scored on check_sets sets of their own seeds:
    info's check_* are those sets' mean, SD and 95% t-interval, and no check set is a search or
    re-scoring set."""
    from scipy import stats

    seen = _spy_pmse(monkeypatch)
    draws = _first_draws(monkeypatch)
    synth = BQCart(**{**TINY, "m": 2, "rescore_top": 2, "rescore_sets": 3, "check_sets": 4})
    synth.fit(train, fit_ctx())
    info = synth.info()
    n_search = 2 * int((~synth.tuning_trace["cached"]).sum())
    assert len(seen) == n_search + 2 * 3 + 4
    ratios = np.array([sc.ratio_bq for _, _, sc, _ in seen[-4:]])
    assert info["check_sets"] == 4
    assert info["check_mean_pmse_ratio"] == pytest.approx(ratios.mean(), rel=1e-12)
    assert info["check_set_ratio_sd"] == pytest.approx(ratios.std(ddof=1), rel=1e-12)
    half = stats.t.ppf(0.975, 3) * ratios.std(ddof=1) / 2
    assert info["check_ci95"] == pytest.approx([ratios.mean() - half, ratios.mean() + half], rel=1e-12)
    assert len(set(draws[-4:])) == 4 and not set(draws[-4:]) & set(draws[:-4])
    # the check sets are drawn from the kept parameters' models
    _, models = synth._build(synth.best_params)
    assert all(a is b for a, b in zip(models, synth._step_models, strict=True))
    off = BQCart(**TINY)
    off.fit(train, fit_ctx())
    assert off.info()["check_sets"] == 0 and off.info()["check_mean_pmse_ratio"] is None


def test_white_noise_surrogate_changes_the_gp_and_only_it(train, fit_ctx, monkeypatch):
    """gp_noise 'white' gives bayes_opt's GP a Matern + WhiteKernel kernel; the default keeps
    bayes_opt's own GP (no WhiteKernel)."""
    from bayes_opt import BayesianOptimization
    from sklearn.gaussian_process.kernels import WhiteKernel

    kernels = []
    real = BayesianOptimization.suggest

    def spy(self, *a, **kw):
        out = real(self, *a, **kw)
        kernels.append(self._gp.kernel_)
        return out

    monkeypatch.setattr(BayesianOptimization, "suggest", spy)
    for noise in (None, "white"):
        kernels.clear()
        BQCart(**{**TINY, "n_iter": 2, "gp_noise": noise}).fit(train, fit_ctx())
        assert len(kernels) == 2
        has_white = ["WhiteKernel" in repr(k) for k in kernels]
        assert all(has_white) if noise == "white" else not any(has_white), (noise, kernels)
    assert WhiteKernel  # the kernel class the option names


def test_saga_l1_is_the_old_penalty_l1_without_a_future_warning():
    """_saga's L1 logit has the coefficients of LogisticRegression(penalty="l1") (the form
    scikit-learn 1.8 deprecates) on a small case, differs from L2, and warns nothing."""
    from sklearn.linear_model import LogisticRegression

    from holdbench.synthesizers._bq_models import _saga

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    y = (x[:, 0] + rng.normal(size=300) > 0).astype(int) + (x[:, 1] > 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("ignore", UserWarning)  # saga's ConvergenceWarning at 20 epochs
        new = _saga(0.1, 3, 20, 1e-4).fit(x, y)
    kw = {"solver": "saga", "C": 0.1, "max_iter": 20, "tol": 1e-4, "random_state": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            old = LogisticRegression(penalty="l1", **kw).fit(x, y)
        except (TypeError, ValueError):  # penalty removed (scikit-learn >= 1.10): nothing to compare
            pytest.skip("LogisticRegression has no penalty argument any more")
        l2 = LogisticRegression(**kw).fit(x, y)
    np.testing.assert_array_equal(new.coef_, old.coef_)
    np.testing.assert_array_equal(new.intercept_, old.intercept_)
    assert (new.coef_ == 0).sum() >= 4 and not np.allclose(new.coef_, l2.coef_)  # sparse: L1, not L2
