"""The one-run ε bound (Steinke, Nasr & Jagielski 2023) and the audit's `bound: one_run`.

References: DeepMind's jax_privacy 2.0.0 (`jax_privacy/auditing.py`: `_one_run_p_value`, `_epsilon_one_run`,
its brentq at xtol 1e-6), run once on this machine in a separate environment (its digits below); the
paper's appendix algorithm written out literally (binomial terms summed one by one); a mechanism of known
ε (randomised response on each canary's coin)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from holdbench.metrics.audit import membership
from holdbench.metrics.audit.bounds import (
    one_run_canaries_needed,
    one_run_counts,
    one_run_epsilon,
    one_run_largest_provable,
    one_run_p_value,
    one_run_rule,
)

# (canaries m, guesses r, correct v, confidence, delta) -> jax_privacy 2.0.0's _epsilon_one_run(0, m, r, v,
# 1 - confidence, delta) and _one_run_p_value(m, r, v, eps=1, delta), scipy 1.17.1
JAX_PRIVACY = [
    ((200, 40, 40, 0.95, 0.0), 2.5540104950195426, 3.614823598177147e-06),
    ((200, 100, 90, 0.95, 0.0), 1.6308231927421464, 2.7358128007661584e-05),
    ((1000, 300, 250, 0.95, 1e-05), 1.3470037499635397, 0.0004686931404332069),
    ((200, 200, 200, 0.95, 0.0), 4.193629990018742, 6.172136808141348e-28),
    ((500, 60, 45, 0.99, 1e-06), 0.39556377746333266, 0.43533830553717645),
    ((200, 50, 20, 0.95, 0.0), 0.0, 0.9999997901556235),
    ((4000, 4000, 4000, 0.95, 0.0), 7.196486451600398, 0.0),
]


@pytest.mark.parametrize(("args", "eps", "p_at_1"), JAX_PRIVACY)
def test_bound_and_p_value_equal_jax_privacy(args, eps, p_at_1):
    m, r, v, confidence, delta = args
    assert one_run_epsilon(m, r, v, confidence, delta) == pytest.approx(eps, abs=2e-6)  # their xtol 1e-6
    assert one_run_p_value(m, r, v, 1.0, delta) == pytest.approx(p_at_1, rel=1e-9, abs=1e-300)


def literal_p_value(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """Steinke et al.'s appendix algorithm, term by term."""
    q = 1 / (1 + math.exp(-eps))
    pmf = [math.comb(r, k) * q ** k * (1 - q) ** (r - k) for k in range(r + 1)]
    beta = sum(pmf[v:])
    alpha, acc = 0.0, 0.0
    for i in range(1, v + 1):
        acc += pmf[v - i]
        alpha = max(alpha, acc / i)
    return min(1.0, beta + alpha * delta * 2 * m)


@pytest.mark.parametrize(("m", "r", "v", "eps", "delta"), [
    (100, 30, 25, 0.5, 0.0), (100, 30, 25, 0.5, 1e-3), (400, 80, 70, 1.3, 1e-4), (50, 50, 50, 2.0, 1e-5),
    (60, 10, 3, 0.1, 0.01), (300, 120, 119, 3.0, 1e-6)])
def test_p_value_equals_the_papers_algorithm_written_out(m, r, v, eps, delta):
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(literal_p_value(m, r, v, eps, delta), rel=1e-9)


def test_closed_form_equals_the_bisection_and_a_perfect_attack_has_the_closed_form_ceiling():
    for m, r, v in ((200, 40, 40), (300, 150, 120), (1000, 400, 300)):
        closed = one_run_epsilon(m, r, v, 0.95, 0.0)
        bisected = one_run_epsilon(m, r, v, 0.95, 1e-300)  # δ > 0 takes the bisection; its term vanishes
        assert closed == pytest.approx(bisected, abs=1e-9)
    for m in (10, 120, 2000):
        q = 0.05 ** (1 / m)  # P[Binomial(m, q) >= m] = q^m = α
        assert one_run_largest_provable(m, 0.95) == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
        need = one_run_canaries_needed(3.0, 0.95)
        assert one_run_largest_provable(need, 0.95) > 3.0 >= one_run_largest_provable(need - 1, 0.95)
    assert one_run_canaries_needed(10.0, 0.95) == math.floor(math.log(0.05) / math.log(1 / (1 + math.exp(-10)))) + 1


def randomised_response(m: int, eps: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """m canaries in by fair coins; the mechanism reports each coin, flipped with probability 1/(1+e^ε):
    ε-DP with respect to each canary. Scores: the report."""
    coins = rng.random(m) < 0.5
    keep = rng.random(m) < 1 / (1 + math.exp(-eps))
    return np.where(keep, coins, ~coins).astype(float), coins


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_randomised_response_bound_approaches_epsilon_from_below(eps):
    rng = np.random.default_rng(7)
    bounds = []
    for m in (100, 1_000, 10_000, 100_000):
        report, coins = randomised_response(m, eps, rng)
        g, v = one_run_counts(report, coins, (1.0, 0.0))  # guess every canary: its report
        bounds.append(one_run_epsilon(m, g, v, 0.95))
    assert all(b <= eps for b in bounds)
    assert bounds[-1] > bounds[0] and bounds[-1] > 0.95 * eps


def test_randomised_response_bound_exceeds_epsilon_no_more_often_than_allowed():
    rng = np.random.default_rng(11)
    eps, runs = 1.0, 400
    over = 0
    for _ in range(runs):
        report, coins = randomised_response(300, eps, rng)
        g, v = one_run_counts(report, coins, (1.0, 0.0))
        over += one_run_epsilon(300, g, v, 0.95) > eps
    assert over / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_the_rule_search_is_the_best_pair_of_cuts_by_brute_force():
    rng = np.random.default_rng(3)
    labels = rng.random(60) < 0.5
    scores = np.round(np.where(labels, rng.normal(1.0, 1, 60), rng.normal(-1.0, 1, 60)), 1)  # ties included
    high, low = one_run_rule(scores, labels, 0.95)
    got = one_run_epsilon(60, *one_run_counts(scores, labels, (high, low)), 0.95)
    cuts = np.r_[-np.inf, np.unique(scores), np.inf]
    best = max(one_run_epsilon(60, *one_run_counts(scores, labels, (h, lo)), 0.95)
               for h in cuts for lo in cuts if lo < h)
    assert got == pytest.approx(best, abs=1e-12) and got > 0.5
    assert one_run_rule(np.zeros(10), np.arange(10) < 5, 0.95) == (math.inf, -math.inf)  # nothing to guess on


def test_one_run_membership_keeps_the_training_fits_and_flips_a_fair_coin_per_test_canary():
    per_target = membership(40, 400, 5, seed=3)
    one_run = membership(40, 400, 5, seed=3, bound="one_run")
    assert (one_run[:40] == per_target[:40]).all()
    assert (per_target[40:].sum(axis=0) == 200).all()  # balanced
    counts = one_run[40:].sum(axis=0)
    assert len(set(counts.tolist())) > 1 and (np.abs(counts - 200) < 4 * 10).all()  # Binomial(400, 1/2): sd 10
    assert (membership(40, 400, 5, seed=3, bound="one_run") == one_run).all()
    with pytest.raises(ValueError, match="`bound` must be one of per_target, one_run"):
        membership(40, 40, 5, seed=3, bound="pooled")


def test_a_dp_generators_bounds_leak_above_what_the_per_target_bound_can_prove_is_flagged_by_one_run(tmp_path):
    """The histogram generator of test_audit_leak at ε 3 with its numeric bounds read from T: beyond the
    per-target bound's reach on 80 test fits (its ceiling is below 3), within the one-run bound's."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_audit_leak import audit_dp_generator

    leaky, _ = audit_dp_generator(tmp_path / "leaky", bounds_from_train=True, epsilon=3.0, n_test=80,
                                  bound="one_run")
    assert leaky.audit_bound == "one_run"
    assert leaky.audit_epsilon_provable == pytest.approx(one_run_largest_provable(240, 0.95), rel=1e-12)
    assert leaky.audit_epsilon_lower > 3.0 and leaky.audit_epsilon_excess > 0
    assert "guesses right on 240 canaries" in leaky.audit_evidence
    per_target, _ = audit_dp_generator(tmp_path / "per_target", bounds_from_train=True, epsilon=3.0, n_test=80)
    assert per_target.audit_epsilon_provable < 3.0  # this bound could not have shown it
    public, _ = audit_dp_generator(tmp_path / "public", bounds_from_train=False, epsilon=3.0, n_test=80,
                                   bound="one_run")
    assert public.audit_epsilon_lower <= 3.0


def test_the_definitions_ceilings_are_the_bound():
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "definitions" / "attacks.md").read_text().split())
    c200, c800 = one_run_largest_provable(200, 0.95), one_run_largest_provable(800, 0.95)
    assert f"{c200:.2f} at 0.95 on 200 canaries" in text and f"{c800:.2f} on 800" in text


def test_many_distinct_scores_are_searched_over_a_bounded_set_of_cuts():
    from holdbench.metrics.audit.bounds import MAX_RULE_CUTS

    rng = np.random.default_rng(5)
    labels = rng.random(20_000) < 0.5
    scores = np.where(labels, rng.normal(0.5, 1, labels.size), rng.normal(-0.5, 1, labels.size))
    high, low = one_run_rule(scores, labels, 0.95)
    assert high in scores and low in scores and low < high  # cuts are scores of the input
    g, v = one_run_counts(scores, labels, (high, low))
    assert v / g > 0.6 and one_run_epsilon(labels.size, g, v, 0.95) > 0.5
    assert MAX_RULE_CUTS >= 40 * 20  # audit_one_run's out-of-fold scores are searched exhaustively


def test_the_evidence_says_when_the_rule_makes_no_guess_and_names_no_target_without_a_right_guess():
    from holdbench.metrics.audit.game import one_run_evidence

    common = {"n_canaries": 800, "n_targets": 20, "n_fits_test": 40, "confidence": 0.95, "delta": 1e-9}
    none = one_run_evidence(0, 0, (math.inf, -math.inf), worst=6, **common)
    assert "no guess on 800 canaries" in none and "inf" not in none and "target" not in none.split(";")[-1]
    high_only = one_run_evidence(3, 4, (0.9, -math.inf), worst=2, **common)
    assert "member at probability >= 0.9" in high_only and "non-member" not in high_only
    assert high_only.endswith("most right guesses: target 3")
    both = one_run_evidence(6, 16, (0.839, 0.2), worst=15, **common)
    assert "6 of 16 guesses right on 800 canaries (20 targets x 40 test fits" in both
    assert "member at probability >= 0.839 and non-member at <= 0.2" in both
    wrong = one_run_evidence(0, 5, (0.99, -math.inf), worst=0, **common)
    assert "0 of 5 guesses right" in wrong and "most right guesses" not in wrong
