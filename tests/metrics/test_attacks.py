"""Membership-inference attack panel (docs/definitions/attacks.md §9): statistics by hand, planted leaks, the null case."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.metrics import roc_curve
from sklearn.neighbors import KernelDensity

from holdbench.metrics._attack_scores import encode, gaussian_kde_log, nearest_distance
from holdbench.metrics.attacks import (
    AttackResult,
    MembershipInference,
    attack_stats,
    auc_interval,
    resampled_aucs,
    split_targets,
    thin_roc,
    tpr_at_fpr,
)
from holdbench.metrics.registry import EvalData, artifact_names, scalars, specs_of

KINDS = {"x": "numeric", "z": "numeric", "k": "numeric", "c": "categorical", "d": "categorical"}


def population(n: int, seed: int) -> pd.DataFrame:
    """A mixed-type population with dependence, a heavy tail and missing values."""
    rng = np.random.default_rng(seed)
    c = rng.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    x = rng.normal(size=n) + (c == "a") * 1.5
    z = np.exp(rng.normal(size=n))
    z[rng.random(n) < 0.05] = np.nan
    k = rng.integers(0, 5, size=n).astype(float)
    d = np.where(rng.random(n) < 0.5 + 0.3 * (x > 0), "yes", "no").astype(object)
    d[rng.random(n) < 0.03] = None
    return pd.DataFrame({"x": x, "z": z, "k": k, "c": c, "d": d})


def run(train, holdout, synthetic, seed=0, **options) -> AttackResult:
    return MembershipInference(**options).compute(EvalData(train, holdout, synthetic, KINDS, seed=seed))


# ---------------------------------------------------------------- statistics by hand

def brute_auc(pos, neg):
    """Share of (member, non-member) pairs ranked right, ties ½."""
    p, q = np.asarray(pos, float)[:, None], np.asarray(neg, float)[None, :]
    return float(np.mean((p > q) + 0.5 * (p == q)))


def brute_tpr_at_fpr(pos, neg, alpha):
    """ROC vertices from every threshold 'score >= t'; the curve read at FPR alpha."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    vertices = {(0.0, 0.0)}
    for t in np.concatenate([pos, neg]):
        vertices.add((float(np.mean(neg >= t)), float(np.mean(pos >= t))))
    at = [tp for fp, tp in vertices if fp == alpha]
    if at:
        return max(at)
    lo_f = max(fp for fp, _ in vertices if fp < alpha)
    hi_f = min(fp for fp, _ in vertices if fp > alpha)
    lo_t = max(tp for fp, tp in vertices if fp == lo_f)
    hi_t = min(tp for fp, tp in vertices if fp == hi_f)
    return lo_t + (alpha - lo_f) * (hi_t - lo_t) / (hi_f - lo_f)


def labelled(pos, neg):
    y = np.r_[np.ones(len(pos), dtype=int), np.zeros(len(neg), dtype=int)]
    return y, np.r_[pos, neg].astype(float)


def test_auc_and_tpr_at_fpr_by_hand():
    pos, neg = [0.9, 0.8, 0.3], [0.85, 0.2, 0.1, 0.05]
    y, s = labelled(pos, neg)
    # member 0.9 beats 4 non-members, 0.8 beats 3, 0.3 beats 3: 10 of 12 pairs
    out = attack_stats("dcr", y, s, 0, np.random.default_rng(0))
    assert out["mia_dcr_auc"] == pytest.approx(10 / 12)
    assert math.isnan(out["mia_dcr_auc_ci_low"]) and math.isnan(out["mia_dcr_auc_ci_high"])
    # 4 non-members: FPR moves in steps of 25%, 1% and 0.1% are below the resolution
    assert math.isnan(out["mia_dcr_tpr_at_fpr_1pct"]) and math.isnan(out["mia_dcr_tpr_at_fpr_01pct"])
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    # vertices (0, 1/3) (1/4, 1/3) (1/4, 2/3) (1/4, 1) ... : flat, then a vertical jump at 1/4
    assert tpr_at_fpr(fpr, tpr, 0.1) == pytest.approx(1 / 3)
    assert tpr_at_fpr(fpr, tpr, 0.25) == pytest.approx(1.0)  # top of the vertical segment
    assert tpr_at_fpr(fpr, tpr, 1.0) == pytest.approx(1.0)


def test_ties_interpolate_like_a_randomised_threshold():
    y, s = labelled([0.5, 0.5], [0.5, 0.1])
    out = attack_stats("density", y, s, 0, np.random.default_rng(0))
    assert out["mia_density_auc"] == pytest.approx(0.75)  # (½ + 1 + ½ + 1) / 4
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    # the tied block is one segment (0,0) -> (1/2, 1): at FPR 1/4 half the members are caught
    assert tpr_at_fpr(fpr, tpr, 0.25) == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(6))
def test_auc_and_tpr_match_brute_force_on_random_tied_scores(seed):
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 12, size=int(rng.integers(3, 40))) + rng.integers(0, 3)
    neg = rng.integers(0, 12, size=int(rng.integers(100, 220)))
    y, s = labelled(pos, neg)
    out = attack_stats("classifier", y, s, 0, rng)
    assert out["mia_classifier_auc"] == pytest.approx(brute_auc(pos, neg), abs=1e-12)
    identity = resampled_aucs(pos.astype(float), neg.astype(float), np.arange(len(pos))[None, :],
                              np.arange(len(neg))[None, :])
    assert identity[0] == pytest.approx(brute_auc(pos, neg), abs=1e-12)
    # bootstrap replicates (repeated rows, ties across replicates) against the brute force on each
    pos_rows, neg_rows = rng.integers(0, len(pos), (5, len(pos))), rng.integers(0, len(neg), (5, len(neg)))
    reps = resampled_aucs(pos.astype(float), neg.astype(float), pos_rows, neg_rows)
    for i in range(5):
        assert reps[i] == brute_auc(pos[pos_rows[i]], neg[neg_rows[i]])
    assert out["mia_classifier_tpr_at_fpr_1pct"] == pytest.approx(brute_tpr_at_fpr(pos, neg, 0.01), abs=1e-12)
    assert math.isnan(out["mia_classifier_tpr_at_fpr_01pct"])  # < 1000 non-members
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    for alpha in (0.0, 0.003, 0.05, 0.2, 0.5, 0.77):
        assert tpr_at_fpr(fpr, tpr, alpha) == pytest.approx(brute_tpr_at_fpr(pos, neg, alpha), abs=1e-12)


def test_bootstrap_interval_width_matches_hanley_mcneil():
    rng = np.random.default_rng(5)
    n = 400
    pos, neg = rng.normal(0.6, 1, n), rng.normal(0, 1, n)
    y, s = labelled(pos, neg)
    auc = brute_auc(pos, neg)
    low, high = auc_interval(y, s, 400, np.random.default_rng(1))
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)  # Hanley & McNeil (1982)
    se = math.sqrt((auc * (1 - auc) + (n - 1) * (q1 - auc ** 2) + (n - 1) * (q2 - auc ** 2)) / (n * n))
    assert low < auc < high
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.2)
    assert auc_interval(y, s, 400, np.random.default_rng(1)) == (low, high)


def test_roc_thinning_keeps_ends_and_at_most_200_points():
    fpr = np.linspace(0, 1, 5001)
    tpr = np.sqrt(fpr)
    keep = thin_roc(fpr, tpr)
    assert len(keep) <= 200 and keep[0] == 0 and keep[-1] == 5000
    assert np.all(np.diff(keep) > 0)
    assert np.array_equal(thin_roc(fpr[:50], tpr[:50]), np.arange(50))


# ---------------------------------------------------------------- encoding and search

def test_encoding_distance_by_hand():
    r = pd.DataFrame({"n": [1.0, 2.0], "c": ["a", "b"]})
    s = pd.DataFrame({"n": [2.0, 3.0], "c": ["a", "a"]})
    q = pd.DataFrame({"n": [2.0, 0.0, np.nan], "c": ["b", "zz", "a"]})
    (_, enc_s, enc_q), is_cat = encode([r, s], [r, s, q], {"n": "numeric", "c": "categorical"}, 50)
    assert list(is_cat) == [False, True]
    # reference values 1, 2, 2, 3: mid-rank CDF u(2) = (1 + 3) / 8, u(0) = 0, u(3) = 7/8, u(1) = 1/8
    assert enc_q.compact[:, 0][:2] == pytest.approx([0.5, 0.0]) and np.isnan(enc_q.compact[2, 0])
    d = nearest_distance(enc_s.dense, enc_q.dense)
    # q0 = (½, b) vs S (½, a): one mismatch; q1 = (0, other) vs (½, a): sqrt(¼ + 1);
    # q2 = (missing -> ½, a) equals S's first row (no indicator: R∪S has no missing n)
    assert d == pytest.approx([1.0, math.sqrt(1.25), 0.0])


def test_gaussian_kde_matches_sklearn():
    rng = np.random.default_rng(0)
    pts, q = rng.normal(size=(300, 4)), rng.normal(size=(50, 4)) * 2
    got = gaussian_kde_log(pts, q, 0.4)
    exact = [logsumexp(multivariate_normal(mean=x, cov=0.16 * np.eye(4)).logpdf(pts)) - math.log(300) for x in q]
    assert got == pytest.approx(exact, rel=1e-10)
    # sklearn's tree search at zero tolerance agrees to its own accumulation error
    assert got == pytest.approx(KernelDensity(bandwidth=0.4).fit(pts).score_samples(q), rel=1e-6)


# ---------------------------------------------------------------- targets

def test_targets_are_disjoint_and_sized_by_the_rule():
    members, nonmembers, reference = split_targets(1000, 700, 2000, seed=3)
    assert len(members) == len(nonmembers) == 350 and len(reference) == 350  # half of H at most
    assert len(np.unique(members)) == 350 and members.max() < 1000
    assert not set(nonmembers) & set(reference)
    assert set(nonmembers) | set(reference) == set(range(700))
    m2, n2, r2 = split_targets(1000, 5000, 300, seed=3)
    assert len(m2) == len(n2) == 300 and len(r2) == 4700
    assert len(split_targets(60, 5000, 2000, seed=0)[0]) == 60


def test_result_counts_and_too_small_inputs():
    t, h = population(400, 1), population(300, 2)
    res = run(t, h, population(500, 3), n_targets=1000, n_bootstrap=0, attacks=["dcr"])
    assert (res.mia_n_members, res.mia_n_reference, res.mia_n_synthetic) == (150, 150, 500)
    assert res.mia_fpr_resolution == pytest.approx(1 / 150)
    # too few records is no error of the cell: the panel says why it has no numbers
    small_h = run(t, population(99, 2), population(500, 3))
    assert math.isnan(small_h.mia_auc_max) and "H >= 100" in small_h.mia_reason
    small_t = run(population(49, 1), h, population(500, 3))
    assert math.isnan(small_t.mia_dcr_auc) and "T has 49 rows" in small_t.mia_reason
    with pytest.raises(ValueError, match="H >= 100"):
        split_targets(400, 99, 2000, seed=0)
    with pytest.raises(ValueError, match="no rows"):
        run(t, h, population(500, 3).iloc[:0])
    with pytest.raises(ValueError, match="'zz'"):
        MembershipInference().compute(EvalData(t.assign(zz=1), h.assign(zz=1), population(50, 3).assign(zz=1),
                                               KINDS))
    with pytest.raises(ValueError, match="attacks"):
        MembershipInference(attacks=["dcr", "shadow"])
    with pytest.raises(ValueError, match="n_targets"):
        MembershipInference(n_targets=10)
    with pytest.raises(ValueError, match="density_bandwidth"):
        MembershipInference(density_bandwidth=-1.0)


# ---------------------------------------------------------------- planted leak and the null

def test_copied_members_are_found():
    t, h = population(600, 11), population(600, 12)
    members, _, _ = split_targets(600, 600, 250, seed=4)
    s = pd.concat([t.iloc[members], population(500, 13)], ignore_index=True)
    res = run(t, h, s, seed=4, n_targets=250, n_bootstrap=100)
    assert res.mia_dcr_auc == 1.0 and res.mia_dcr_tpr_at_fpr_1pct == 1.0
    assert res.mia_dcr_auc_ci_low == pytest.approx(1.0)
    assert res.mia_dcr_diff_auc > 0.7  # members: d_R - 0; non-members: d_R - (d_S > 0)
    # S's density has a bump at every member: the density and classifier attacks see it too
    assert res.mia_density_auc_ci_low > 0.5 and res.mia_classifier_auc_ci_low > 0.5
    assert res.mia_auc_max == 1.0 and res.mia_best_attack == "dcr"
    assert math.isnan(res.mia_dcr_tpr_at_fpr_01pct)  # 250 non-members: 0.1% is below resolution


def test_independent_synthetic_data_gives_chance_auc():
    covered, total = 0, 0
    for seed in range(3):
        t, h, s = population(700, 100 + seed), population(700, 200 + seed), population(1000, 300 + seed)
        res = run(t, h, s, seed=seed, n_targets=300)
        for a in ("dcr", "dcr_diff", "density", "classifier"):
            auc = getattr(res, f"mia_{a}_auc")
            assert abs(auc - 0.5) < 0.09, (seed, a, auc)  # ~4 standard errors at n = 300 per side
            low, high = getattr(res, f"mia_{a}_auc_ci_low"), getattr(res, f"mia_{a}_auc_ci_high")
            assert 0.03 < high - low < 0.15
            covered += low <= 0.5 <= high
            total += 1
    assert covered >= total - 2, f"bootstrap intervals covered 0.5 in {covered} of {total}"


# ---------------------------------------------------------------- determinism, holdout row, registry

def test_same_inputs_same_numbers_and_another_seed_differs():
    t, h, s = population(500, 21), population(500, 22), population(800, 23)
    a, b = run(t, h, s, seed=7, n_targets=200), run(t, h, s, seed=7, n_targets=200)
    sa, sb = scalars(a), scalars(b)
    sa.pop("seconds_mia"), sb.pop("seconds_mia")
    assert sa == sb
    pd.testing.assert_frame_equal(a.mia_roc, b.mia_roc)
    sc = scalars(run(t, h, s, seed=8, n_targets=200))
    assert sc["mia_dcr_auc"] != sa["mia_dcr_auc"]


def test_an_attack_does_not_depend_on_the_others():
    t, h, s = population(500, 31), population(500, 32), population(800, 33)
    alone = run(t, h, s, seed=2, n_targets=200, attacks=["classifier"])
    full = run(t, h, s, seed=2, n_targets=200)
    assert alone.mia_classifier_auc == full.mia_classifier_auc
    assert alone.mia_classifier_auc_ci_low == full.mia_classifier_auc_ci_low
    assert math.isnan(alone.mia_dcr_auc) and alone.mia_attacks == "classifier"
    assert set(alone.mia_roc["attack"]) == {"classifier"}
    assert set(full.mia_roc["attack"]) == {"dcr", "dcr_diff", "density", "classifier"}
    assert (full.mia_roc.groupby("attack").size() <= 200).all()


def test_holdout_row_is_nan_with_a_reason():
    t, h = population(300, 41), population(300, 42)
    res = MembershipInference().compute(EvalData(t, h, h, KINDS, holdout_row=True))
    for spec in specs_of(AttackResult):
        assert math.isnan(getattr(res, spec.name)), spec.name
    assert "holdout" in res.mia_reason and res.mia_best_attack is None and res.mia_roc is None


def test_registry_declarations():
    specs = {s.name: s for s in specs_of(AttackResult)}
    assert MembershipInference.name == "attacks" and MembershipInference.result_type is AttackResult
    assert [n for n, s in specs.items() if s.headline] == ["mia_auc_max"]
    assert all(n.startswith("mia_") and s.group == "attack" for n, s in specs.items())
    names = [f"mia_{a}_{p}" for a, p in itertools.product(
        ("dcr", "dcr_diff", "density", "classifier"),
        ("auc", "auc_ci_low", "auc_ci_high", "tpr_at_fpr_1pct", "tpr_at_fpr_01pct"))]
    assert set(names) <= set(specs)
    assert specs["mia_auc_max"].ideal == 0.5 and specs["mia_dcr_tpr_at_fpr_01pct"].ideal == 0.001
    assert artifact_names(AttackResult) == ["mia_roc"]
    assert dataclasses.is_dataclass(AttackResult) and AttackResult.__dataclass_params__.frozen
