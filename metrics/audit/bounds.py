"""Empirical lower bound on ε from a membership test's counts (docs/definitions/attacks.md, audit section).

A mechanism M is (ε, δ)-DP when, for any neighbouring datasets D, D' and any test (a decision "member"
made from M's output), TPR ≤ e^ε · FPR + δ and, the same read on the other side, TNR ≤ e^ε · FNR + δ
(Kairouz et al. 2015; used for auditing by Jagielski, Ullman & Oprea 2020 and Nasr et al. 2021/2023).
So any test with true-positive rate TPR and false-positive rate FPR proves

    ε ≥ max( log((TPR − δ) / FPR),  log((1 − FPR − δ) / (1 − TPR)) ).

Measured rates are estimates: the bound uses the one-sided Clopper–Pearson lower limit of TPR and the
upper limit of FPR (for the second form: the lower limit of TNR = 1 − FPR and the upper limit of
FNR = 1 − TPR), each at level α/2, so the bound holds with probability at least 1 − α (a union bound
over the two proportions). Clopper–Pearson is exact (never below its nominal coverage), which is
what a bound that accuses an implementation needs. A bound below 0 says nothing and is reported as 0.

The one-run form (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023)
pools many canaries: m canaries, each included independently with probability 1/2; an attack guesses
member or non-member for r of them (abstaining on the rest) and is right v times. If M is ε-DP, v is
stochastically dominated by Binomial(r, e^ε / (1 + e^ε)), whatever the dependence between the guesses;
(ε, δ)-DP adds at most 2·m·δ·max_i P[v − i ≤ Binomial < v] / i to the p-value (their Theorem 5.2). The
bound is the largest ε whose p-value stays below 1 − confidence. Its ceiling grows with the number of
guesses, not with the trials per canary: one canary's 20 + 20 trials prove at most about 1.2 (at 0.95 over
five), while 200 pooled guesses, all right, prove 4.19.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson limits of a binomial proportion k/n, each at level `alpha`:
    (lower, upper) with P(p < lower) ≤ alpha and P(p > upper) ≤ alpha."""
    _check_counts(k, n)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    from scipy.stats import beta  # imported on use: the workflow imports this package when it plans jobs

    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def _check_counts(k, n) -> None:
    for name, v in (("count", k), ("trials", n)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")  # noqa: TRY004 (one error type)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= count <= trials and trials >= 1, got count {k}, trials {n}")


@dataclass(frozen=True)
class EpsilonBound:
    """ε lower bound of one test at one threshold, with the counts it comes from."""

    epsilon: float
    """max of the two forms, floored at 0"""
    tp: int
    fn: int
    fp: int
    tn: int
    tpr_low: float
    fpr_high: float
    confidence: float
    delta: float


def epsilon_lower_bound(tp: int, fn: int, fp: int, tn: int, confidence: float = 0.95,
                        delta: float = 0.0) -> EpsilonBound:
    """The ε lower bound (module doc) from a test's counts on members (tp + fn) and non-members (fp + tn),
    holding with probability ≥ `confidence`."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    a = (1 - confidence) / 2
    tpr_lo, _ = clopper_pearson(tp, tp + fn, a)
    _, fpr_hi = clopper_pearson(fp, fp + tn, a)
    forms = [_log_ratio(tpr_lo - delta, fpr_hi), _log_ratio((1 - fpr_hi) - delta, 1 - tpr_lo)]
    return EpsilonBound(max(0.0, *forms), tp, fn, fp, tn, tpr_lo, fpr_hi, confidence, delta)


def per_target_confidence(confidence: float, n_targets: int) -> float:
    """The level each of `n_targets` bounds is computed at so that all of them hold together with
    probability ≥ `confidence` (Bonferroni)."""
    return 1 - (1 - confidence) / n_targets


def largest_provable(members: int, nonmembers: int, confidence: float, delta: float = 0.0) -> float:
    """The largest ε bound any test can show on this many member and non-member trials: that of a perfect
    test (every member called member, no non-member), at `confidence`. A mechanism whose ε is above it
    cannot be shown to exceed its ε with these trials, whatever it leaks."""
    return epsilon_lower_bound(members, 0, 0, nonmembers, confidence, delta).epsilon


def trials_needed(epsilon: float, confidence: float, delta: float = 0.0, limit: int = 10**12) -> int | None:
    """The fewest member trials m (with as many non-member trials) on which a perfect test's bound exceeds
    `epsilon` (largest_provable(m, m, ...) > epsilon): below that no attack, however good, can show that a
    mechanism configured at `epsilon` leaks more. None when even `limit` trials are not enough."""
    return _fewest(epsilon, lambda m: largest_provable(m, m, confidence, delta), limit)


def _fewest(epsilon: float, ceiling, limit: int) -> int | None:
    """The fewest m >= 1 with ceiling(m) > epsilon (ceiling grows with m): doubling, then bisection; None when
    even `limit` is not enough."""
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    hi = 1
    while not ceiling(hi) > epsilon:
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = hi // 2  # not enough (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ceiling(mid) > epsilon else (mid, hi)
    return hi


def one_run_p_value(m: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """The p-value of "M is (epsilon, delta)-DP" when `correct` of `guesses` guesses on `m` canaries (each in
    independently with probability 1/2) are right (module doc, the one-run form)."""
    from scipy.special import expit
    from scipy.stats import binom

    _check_counts(correct, max(guesses, 1))
    if not 0 <= guesses <= m or isinstance(m, bool):
        raise ValueError(f"need 0 <= guesses <= canaries, got {guesses} guesses of {m} canaries")
    if guesses == 0 or correct == 0:
        return 1.0
    q = float(expit(epsilon))
    beta = float(binom.sf(correct - 1, guesses, q))  # P[Binomial(guesses, q) >= correct]
    if delta == 0:
        return beta
    i = np.arange(1, correct + 1)
    alpha = float(np.max((binom.sf(correct - i - 1, guesses, q) - beta) / i))
    return min(1.0, beta + alpha * delta * 2 * m)


def one_run_epsilon(m: int, guesses: int, correct: int, confidence: float = 0.95, delta: float = 0.0) -> float:
    """The one-run ε lower bound: the largest ε whose p-value (one_run_p_value) is below 1 − confidence,
    0 when not even ε = 0 is rejected. Holds with probability ≥ confidence. With δ = 0 in closed form:
    P[Binomial(r, q) >= v] = α at q = the α-quantile of Beta(v, r − v + 1), ε = log(q / (1 − q))."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    alpha = 1 - confidence
    if one_run_p_value(m, guesses, correct, 0.0, delta) >= alpha:
        return 0.0
    if delta == 0:
        return float(_one_run_closed(np.array([guesses]), np.array([correct]), alpha)[0])

    def rejected(eps: float) -> bool:
        return one_run_p_value(m, guesses, correct, eps, delta) < alpha

    lo, hi = 0.0, 1.0
    while rejected(hi):
        lo, hi = hi, 2 * hi
        if hi > 1e3:
            return math.inf
    for _ in range(60):  # bisection to float precision: the p-value falls monotonically as ε shrinks
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
    return lo


def _one_run_closed(guesses: np.ndarray, correct: np.ndarray, alpha: float) -> np.ndarray:
    """one_run_epsilon at δ = 0 for arrays of counts (0 where v = 0 or nothing is rejected)."""
    from scipy.special import logit
    from scipy.stats import beta

    g, v = np.asarray(guesses, float), np.asarray(correct, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(v > 0, beta.ppf(alpha, np.maximum(v, 1), g - v + 1), 0.0)
        return np.maximum(0.0, np.nan_to_num(logit(q), nan=0.0, posinf=np.inf, neginf=0.0))


def one_run_largest_provable(m: int, confidence: float, delta: float = 0.0) -> float:
    """The largest one-run bound on `m` canaries: every canary guessed, every guess right."""
    return one_run_epsilon(m, m, m, confidence, delta)


def one_run_canaries_needed(epsilon: float, confidence: float, delta: float = 0.0,
                            limit: int = 10**9) -> int | None:
    """The fewest canaries m on which a perfect attack's one-run bound exceeds `epsilon`; None past `limit`."""
    return _fewest(epsilon, lambda m: one_run_largest_provable(m, confidence, delta), limit)


#: the most cuts one_run_rule searches pairs of (a million pairs); the audit's shipped configs stay below it
#: (n_fits_train x n_targets out-of-fold scores: 800 with audit_one_run's)
MAX_RULE_CUTS = 1000


def one_run_rule(scores: np.ndarray, labels: np.ndarray, confidence: float) -> tuple[float, float]:
    """The guessing rule (high, low) whose one-run bound (δ = 0) on (scores, labels) is largest: guess member
    for score >= high, non-member for score <= low (low < high; ±inf: no guess on that side), abstain in
    between (Steinke et al.'s k+ largest and k− smallest scores, searched over every pair of cuts between
    distinct scores; past MAX_RULE_CUTS distinct scores, over that many of them at evenly spaced quantiles).
    Meant for scores the bound is NOT then computed on (as best_threshold)."""
    scores, labels = np.asarray(scores, float).ravel(), np.asarray(labels, bool).ravel()
    if labels.all() or not labels.any():
        raise ValueError("choosing a rule needs members and non-members among the scores")
    cuts = np.unique(scores)
    if len(cuts) > MAX_RULE_CUTS:  # the pairs grow as the square of the cuts
        cuts = np.unique(np.quantile(scores, np.linspace(0, 1, MAX_RULE_CUTS), method="inverted_cdf"))
    # members / non-members among the scores >= each cut, and among those <= each cut
    mem_ge = int(labels.sum()) - np.searchsorted(np.sort(scores[labels]), cuts, side="left")
    all_ge = len(scores) - np.searchsorted(np.sort(scores), cuts, side="left")
    non_le = np.searchsorted(np.sort(scores[~labels]), cuts, side="right")
    all_le = np.searchsorted(np.sort(scores), cuts, side="right")
    # high at cuts[i] (or none: i = len), low at cuts[j] (or none: j = -1), j < i
    hi_g, hi_v = np.r_[all_ge, 0], np.r_[mem_ge, 0]
    lo_g, lo_v = np.r_[0, all_le], np.r_[0, non_le]
    n = len(cuts)
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1) - 1, indexing="ij")
    ok = j < i
    g, v = hi_g[i][ok] + lo_g[j + 1][ok], hi_v[i][ok] + lo_v[j + 1][ok]
    eps = _one_run_closed(g, v, 1 - confidence)
    best = int(np.argmax(eps))  # ties: the first, i.e. the lowest high cut, then the lowest low cut
    bi, bj = i[ok][best], j[ok][best]
    if eps[best] <= 0:
        return math.inf, -math.inf
    return (float(cuts[bi]) if bi < n else math.inf), (float(cuts[bj]) if bj >= 0 else -math.inf)


def one_run_counts(scores: np.ndarray, labels: np.ndarray, rule: tuple[float, float]) -> tuple[int, int]:
    """(guesses, correct) of a one_run_rule (high, low) on (scores, labels)."""
    scores, labels = np.asarray(scores, float).ravel(), np.asarray(labels, bool).ravel()
    high, low = rule
    member, nonmember = scores >= high, scores <= low
    return int(member.sum() + nonmember.sum()), int((member & labels).sum() + (nonmember & ~labels).sum())


def _log_ratio(num: float, den: float) -> float:
    if num <= 0:
        return 0.0
    if den <= 0:
        return math.inf
    return math.log(num / den)


def _epsilons(tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray, confidence: float,
              delta: float) -> np.ndarray:
    """epsilon_lower_bound(...).epsilon for arrays of counts (the same formulas, vectorised)."""
    from scipy.stats import beta

    a = (1 - confidence) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr_lo = np.where(tp == 0, 0.0, beta.ppf(a, tp, fn + 1))
        fpr_hi = np.where(fp == fp + tn, 1.0, beta.ppf(1 - a, fp + 1, tn))
        one = np.log(np.where(tpr_lo - delta > 0, (tpr_lo - delta) / fpr_hi, 1.0))
        two = np.log(np.where(1 - fpr_hi - delta > 0, (1 - fpr_hi - delta) / (1 - tpr_lo), 1.0))
    return np.maximum(0.0, np.maximum(one, two))


def best_threshold(scores: np.ndarray, labels: np.ndarray, confidence: float, delta: float) -> float:
    """The threshold t (decide "member" when score ≥ t) whose counts on (scores, labels) give the largest ε
    bound; meant for scores the bound is NOT then computed on (choosing on the counts one reports would
    make the bound optimistic). Ties go to the highest threshold."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    if labels.all() or not labels.any():
        raise ValueError("choosing a threshold needs members and non-members among the scores")
    cuts = np.unique(scores)[::-1]  # descending: "score >= cut"
    order = np.sort(scores[labels])
    tp = len(order) - np.searchsorted(order, cuts, side="left")
    neg = np.sort(scores[~labels])
    fp = len(neg) - np.searchsorted(neg, cuts, side="left")
    eps = _epsilons(tp, labels.sum() - tp, fp, (~labels).sum() - fp, confidence, delta)
    return float(cuts[int(np.argmax(eps))])


def bound_at(scores: np.ndarray, labels: np.ndarray, threshold: float, confidence: float,
             delta: float) -> EpsilonBound:
    """The ε lower bound of the test "score ≥ threshold" on (scores, labels)."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    pred = scores >= threshold
    return epsilon_lower_bound(int((pred & labels).sum()), int((~pred & labels).sum()),
                               int((pred & ~labels).sum()), int((~pred & ~labels).sum()), confidence, delta)
