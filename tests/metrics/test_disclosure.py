"""Attribute disclosure (docs/definitions/bale-quick.md §8): a hand example, an O(n·m) brute-force reference, conventions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.disclosure import AttributeDisclosure, DisclosureResult, _ratios, disclosure_ratios
from holdbench.metrics.registry import EvalData, artifacts, scalars, specs_of

# S's x has mean 0 and SD 1 (ddof 0), so standardised x = x. Prior: P(y=1) = 3/4, P(y=0) = 1/4.
S_HAND = pd.DataFrame({"x": [-1.0, -1.0, 1.0, 1.0], "g": ["a", "a", "a", "b"], "y": [1, 0, 1, 1]})
TARGETS = pd.DataFrame({"x": [-1.0, -1.0, 1.0, 0.0, 1.0, 1.0],
                        "g": ["a", "a", "b", "a", "c", "b"],
                        "y": [1, 0, 0, 1, 1, 1]})
# neighbours at delta 0.5: {s1, s2}, {s1, s2}, {s4}, none, no group, {s4}
HAND_05 = [0.5 / 0.75, 0.5 / 0.25, 0.0, 1.0, 1.0, 1.0 / 0.75]
# at delta 1 (inclusive) target 4 reaches s1, s2, s3 (distance exactly 1): share of y=1 is 2/3
HAND_1 = HAND_05[:3] + [(2 / 3) / 0.75] + HAND_05[4:]


def test_hand_example():
    got = disclosure_ratios(TARGETS, S_HAND, "y", ["x"], ["g"], 0.5)
    np.testing.assert_allclose(got, HAND_05)
    np.testing.assert_allclose(disclosure_ratios(TARGETS, S_HAND, "y", ["x"], ["g"], 1.0), HAND_1)
    # the KD-tree path (no dense blocks) counts the same
    both = _ratios(TARGETS, S_HAND, "y", ["x"], ["g"], [0.5, 1.0], None, brute_cells=0)
    np.testing.assert_allclose(both, [HAND_05, HAND_1])


def test_given_prior_and_no_neighbours():
    prior = pd.Series({0: 0.5, 1: 0.5})
    got = disclosure_ratios(TARGETS, S_HAND, "y", ["x"], ["g"], 0.5, prior=prior)
    np.testing.assert_allclose(got, [1.0, 1.0, 0.0, 1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="sensitive value"):
        disclosure_ratios(TARGETS, S_HAND, "y", ["x"], ["g"], 0.5, prior=pd.Series({1: 1.0}))
    far = TARGETS.assign(x=50.0)
    np.testing.assert_array_equal(disclosure_ratios(far, S_HAND, "y", ["x"], ["g"], 0.5), np.ones(6))
    np.testing.assert_array_equal(disclosure_ratios(TARGETS.iloc[:0], S_HAND, "y", ["x"], ["g"], 0.5), [])


def brute_ratios(targets, synthetic, sensitive, cont, cat, delta):
    """One target at a time, every S record checked: the definition read literally."""
    xs = synthetic[cont].to_numpy(float)
    mu, sd = xs.mean(axis=0), xs.std(axis=0)
    zs, zt = (xs - mu) / sd, (targets[cont].to_numpy(float) - mu) / sd
    cs, ct = synthetic[cat].fillna("<NA>").to_numpy(), targets[cat].fillna("<NA>").to_numpy()
    ys, yt = synthetic[sensitive].to_numpy(), targets[sensitive].to_numpy()
    out = []
    for i in range(len(targets)):
        near = [j for j in range(len(synthetic))
                if np.sum((zs[j] - zt[i]) ** 2) <= delta ** 2 and all(cs[j] == ct[i])]
        if not near:
            out.append(1.0)
            continue
        share = np.mean(ys[near] == yt[i])
        out.append(share / np.mean(ys == yt[i]))
    return np.array(out)


def random_table(rng, n):
    g = rng.choice(["u", "v", "w"], n)
    h = rng.choice(["p", "q"], n).astype(object)
    h[rng.random(n) < 0.05] = None
    x1 = np.round(rng.normal(40, 10, n))
    x2 = rng.normal(0, 1, n) + (g == "u")
    y = np.where(rng.random(n) < 0.2 + 0.4 * (g == "u") + 0.01 * (x1 - 40), "yes", "no")
    return pd.DataFrame({"g": g, "h": h, "x1": x1, "x2": x2, "y": y})


@pytest.mark.parametrize("delta", [0.001, 0.2, 0.6])
def test_matches_brute_force(delta):
    rng = np.random.default_rng(7)
    s, t = random_table(rng, 400), random_table(rng, 120)
    expected = brute_ratios(t, s, "y", ["x1", "x2"], ["g", "h"], delta)
    fast = disclosure_ratios(t, s, "y", ["x1", "x2"], ["g", "h"], delta)
    np.testing.assert_allclose(fast, expected, rtol=1e-12)
    tree = _ratios(t, s, "y", ["x1", "x2"], ["g", "h"], [delta], None, brute_cells=0)[0]
    np.testing.assert_allclose(tree, expected, rtol=1e-12)
    if delta > 0.1:  # not a trivial all-ones case
        assert np.mean(expected != 1.0) > 0.2


def test_missing_continuous_matches_only_missing():
    s = pd.DataFrame({"x": [0.0, 2.0, np.nan, np.nan], "y": [1, 1, 0, 1]})   # mean 1, SD 1 on observed
    t = pd.DataFrame({"x": [np.nan, 1.0], "y": [0, 1]})
    # target 1: neighbours = the two missing rows -> share 1/2, prior(0) = 1/4 -> 2
    # target 2 (z=0): within 1 of z=-1 and z=1 -> both y=1, prior(1) = 3/4 -> 4/3
    np.testing.assert_allclose(disclosure_ratios(t, s, "y", ["x"], [], 1.0), [2.0, 4 / 3])


def data(t, h, s, **kw):
    kinds = {"g": "categorical", "h": "categorical", "x1": "numeric", "x2": "numeric", "y": "categorical"}
    return EvalData(t, h, s, kinds, sensitive="y", quasi_identifiers=("g", "h", "x1", "x2"), **kw)


def test_non_binary_sensitive_and_bad_columns():
    rng = np.random.default_rng(1)
    t = random_table(rng, 50)
    t.loc[0, "y"] = "maybe"
    with pytest.raises(ValueError, match="'y'"):
        AttributeDisclosure().compute(data(t, t, t))
    with pytest.raises(ValueError, match="'zz'"):
        AttributeDisclosure().compute(EvalData(t, t, t, {}, sensitive="zz", quasi_identifiers=("g",)))
    for bad in ({"n_targets": 0}, {"c": -1.0}, {"deltas": [-0.1]}):
        with pytest.raises(ValueError, match=next(iter(bad)).rstrip("s")):
            AttributeDisclosure(**bad)


def test_no_sensitive_gives_nan_and_reason():
    rng = np.random.default_rng(2)
    t = random_table(rng, 50)
    r = AttributeDisclosure().compute(EvalData(t, t, t, {c: "numeric" for c in t.columns}))
    assert math.isnan(r.disclosure_max_train) and "sensitive" in r.disclosure_reason


def test_seeded_targets_reproducible_and_holdout_row():
    rng = np.random.default_rng(3)
    t, h, s = random_table(rng, 600), random_table(rng, 500), random_table(rng, 800)
    fam = AttributeDisclosure(n_targets=100)
    a, b = fam.compute(data(t, h, s, seed=5)), fam.compute(data(t, h, s, seed=5))
    assert a.disclosure_n_targets == 100
    pd.testing.assert_frame_equal(a.disclosure_curve, b.disclosure_curve)
    other = fam.compute(data(t, h, s, seed=6))
    assert not a.disclosure_curve.equals(other.disclosure_curve)
    assert list(a.disclosure_curve.columns) == ["delta", "targets", "max_ratio", "mean_ratio",
                                                "share_above_c", "n_targets"]
    assert len(a.disclosure_curve) == 10
    ref = fam.compute(data(t, h, h, seed=5, holdout_row=True))
    assert math.isnan(ref.disclosure_mean_holdout) and math.isnan(ref.disclosure_excess_mean)
    assert not math.isnan(ref.disclosure_mean_train) and "holdout row" in ref.disclosure_reason
    assert set(ref.disclosure_curve["targets"]) == {"train"}
    names = [m.name for m in specs_of(DisclosureResult)]
    assert set(scalars(a)) >= set(names) and "disclosure_curve" in artifacts(a)
    assert AttributeDisclosure(n_targets=None).compute(data(t, h, s)).disclosure_n_targets == 500


def test_copying_train_leaks_independent_does_not():
    rng = np.random.default_rng(11)
    t, h, s = random_table(rng, 1500), random_table(rng, 1500), random_table(rng, 1500)
    fam = AttributeDisclosure(n_targets=None)
    copy = fam.compute(data(t, h, t.copy()))
    fresh = fam.compute(data(t, h, s))
    assert copy.disclosure_excess_mean > 0.3
    assert abs(fresh.disclosure_excess_mean) < 0.05
    assert copy.disclosure_excess_mean > 10 * abs(fresh.disclosure_excess_mean)
