"""The audit's ε lower bound (holdbench.metrics.audit.bounds) on mechanisms of known ε: randomised response
on one bit and the Laplace mechanism on a count. The bound approaches ε from below as the trials grow and
exceeds it no more often than its confidence allows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from holdbench.metrics.audit.bounds import best_threshold, bound_at, clopper_pearson, epsilon_lower_bound

CONF = 0.95


def test_clopper_pearson_closed_forms():
    # with no successes the upper limit solves (1 - p)^n = alpha; with all of them the lower solves p^n = alpha
    for n in (1, 7, 50):
        assert clopper_pearson(0, n, 0.025) == (0.0, pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9))
        assert clopper_pearson(n, n, 0.025) == (pytest.approx(0.025 ** (1 / n), rel=1e-9), 1.0)


def test_perfect_separation_bound_is_the_closed_form():
    # n of n members called member, 0 of n non-members: TPR_lo = (a)^(1/n), FPR_hi = 1 - a^(1/n), a = 0.025
    n = 40
    lo = 0.025 ** (1 / n)
    b = epsilon_lower_bound(n, 0, 0, n, CONF)
    assert b.epsilon == pytest.approx(math.log(lo / (1 - lo)), rel=1e-9)
    assert epsilon_lower_bound(n // 2, n // 2, n // 2, n // 2, CONF).epsilon == 0.0


def test_delta_lowers_the_bound():
    assert epsilon_lower_bound(90, 10, 10, 90, CONF, delta=0.05).epsilon < epsilon_lower_bound(90, 10, 10, 90, CONF).epsilon


def _randomised_response(eps: float, n: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """Counts of the test "output is 1" on n members (true bit 1) and n non-members (bit 0) under
    ε-randomised response: the true bit is kept with probability e^ε / (1 + e^ε)."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    tp = int(rng.binomial(n, keep))
    fp = int(rng.binomial(n, 1 - keep))
    return tp, n - tp, fp, n - fp


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_randomised_response_bound_approaches_epsilon_from_below(eps):
    rng = np.random.default_rng(7)
    bounds = [epsilon_lower_bound(*_randomised_response(eps, n, rng), CONF).epsilon for n in (100, 1_000, 100_000)]
    assert bounds[0] < bounds[1] < bounds[2] < eps
    assert bounds[2] > 0.95 * eps  # at 10^5 trials a side the bound is within 5% of the true ε


def test_randomised_response_bound_exceeds_epsilon_no_more_often_than_allowed():
    eps, n, reps = 1.0, 200, 400
    rng = np.random.default_rng(11)
    over = sum(epsilon_lower_bound(*_randomised_response(eps, n, rng), CONF).epsilon > eps for _ in range(reps))
    # the bound holds with probability >= 0.95: at most 5% of the experiments exceed eps (plus 3 binomial SDs)
    assert over / reps <= (1 - CONF) + 3 * math.sqrt(CONF * (1 - CONF) / reps)


def test_a_gaussian_f_dp_reading_would_accuse_randomised_response_where_the_bound_does_not():
    """docs/definitions/attacks.md's reason for keeping the assumption-free bound: randomised response at ε = 1
    read as a Gaussian mechanism (μ = Φ⁻¹(TPR) − Φ⁻¹(FPR), then ε at δ = 1e-5 by Dong, Roth & Su's conversion)
    gives μ ≈ 1.23 and ε ≈ 5.6, far above the true 1; the audit's bound on 10^5 trials a side stays below 1."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    eps, delta = 1.0, 1e-5
    tpr = math.exp(eps) / (1 + math.exp(eps))
    mu = norm.ppf(tpr) - norm.ppf(1 - tpr)

    def delta_of(e: float) -> float:
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)

    gaussian_eps = brentq(lambda e: delta_of(e) - delta, 0, 100)
    assert round(mu, 2) == 1.23 and round(gaussian_eps, 1) == 5.6
    ours = epsilon_lower_bound(*_randomised_response(eps, 100_000, np.random.default_rng(3)), CONF, delta).epsilon
    assert ours < eps < gaussian_eps


def test_laplace_count_threshold_chosen_on_other_trials():
    # count c (non-member) vs c + 1 (member), Laplace noise of scale 1/eps: the best test's likelihood ratio is e^eps
    eps, c = 1.0, 10.0
    rng = np.random.default_rng(3)
    results = []
    for n in (200, 20_000):
        def trials(n=n):
            labels = np.repeat([True, False], n)
            return c + labels + rng.laplace(0, 1 / eps, 2 * n), labels
        s_train, y_train = trials()
        t = best_threshold(s_train, y_train, CONF, 0.0)
        s_test, y_test = trials()
        results.append(bound_at(s_test, y_test, t, CONF, 0.0).epsilon)
    assert 0 < results[0] < results[1] < eps
    assert results[1] > 0.8 * eps


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="count"):
        clopper_pearson(5, 3, 0.05)
    with pytest.raises(ValueError, match="confidence"):
        epsilon_lower_bound(1, 1, 1, 1, confidence=1.0)


def test_threshold_search_agrees_with_the_scalar_bound():
    rng = np.random.default_rng(5)
    labels = rng.random(60) < 0.5
    scores = rng.normal(labels * 1.5, 1.0)
    t = best_threshold(scores, labels, CONF, 0.0)
    best = max(bound_at(scores, labels, c, CONF, 0.0).epsilon for c in np.unique(scores))
    assert bound_at(scores, labels, t, CONF, 0.0).epsilon == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 1.19, 3.0, 10.0])
@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_trials_needed_is_the_closed_form_of_a_perfect_attack(epsilon, confidence):
    """A perfect test on m members and m non-members proves log(a^(1/m) / (1 - a^(1/m))) with a = (1 - c)/2
    (Clopper-Pearson at k = n: a^(1/m)); it exceeds ε from m > log(a) / log(sigmoid(ε)), written here with math."""
    from holdbench.metrics.audit.bounds import largest_provable, trials_needed

    a = (1 - confidence) / 2
    closed = math.floor(math.log(a) / math.log(1 / (1 + math.exp(-epsilon)))) + 1
    m = trials_needed(epsilon, confidence)
    assert m == closed
    assert largest_provable(m, m, confidence) > epsilon >= largest_provable(m - 1, m - 1, confidence)


def test_trials_needed_gives_up_past_its_limit_and_refuses_a_bad_epsilon():
    from holdbench.metrics.audit.bounds import trials_needed

    assert trials_needed(40.0, 0.99, limit=10**9) is None
    for bad in (-1.0, math.inf, math.nan, "1"):
        with pytest.raises(ValueError, match="epsilon must be"):
            trials_needed(bad, 0.95)
