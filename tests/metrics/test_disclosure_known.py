"""Attribute disclosure (docs/definitions/bale-quick.md §8), Bale & Quick's form beside holdbench's, on tables whose ratios
are known by construction (worked out in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.disclosure import AttributeDisclosure
from holdbench.metrics.registry import EvalData

KINDS = {"g": "categorical", "x": "numeric", "y": "categorical"}


def run(t, h, s, **options):
    data = EvalData(t, h, s, KINDS, sensitive="y", quasi_identifiers=("g", "x"))
    return AttributeDisclosure(**options).compute(data)


def test_three_of_four_neighbours_prior_half():
    # S: x = -1, -1, 1, 1 (mean 0, SD 1: standardised x = x); cell g = "a" at x = 1 holds 4 S
    # records, 3 of them y = 1. T's share of y = 1 is 1/2 (Bale & Quick's prior); S's share is
    # 6/8 = 3/4 (holdbench's prior).
    s = pd.DataFrame({"g": ["a", "a", "a", "a", "b", "b", "b", "b"],
                      "x": [1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0],
                      "y": ["1", "1", "1", "0", "1", "1", "1", "0"]})
    # T: target 0 sits in the cell (y = 1): 3 of 4 neighbours share its value -> B&Q 0.75 / 0.5 = 1.5,
    # holdbench 0.75 / 0.75 = 1. Target 1: g = "c", no S record -> 1. Targets 2, 3: in the cell,
    # y = 0 -> 0.25 / 0.5 = 0.5 (B&Q), 0.25 / 0.25 = 1 (holdbench).
    t = pd.DataFrame({"g": ["a", "c", "a", "a"], "x": [1.0, 1.0, 1.0, 1.0], "y": ["1", "1", "0", "0"]})
    # H: one record at x = 1.3, g = "a", y = 0: inside the cell only for delta >= 0.3
    h = pd.DataFrame({"g": ["a", "b", "b", "b"], "x": [1.3, 5.0, 5.0, 5.0], "y": ["0", "0", "0", "0"]})
    r = run(t, h, s, n_targets=None)
    bq = r.disclosure_curve_bq
    train = bq[bq["targets"] == "train"]
    assert train["max_ratio"].tolist() == [1.5] * 5
    np.testing.assert_allclose(train["mean_ratio"], [(1.5 + 1 + 0.5 + 0.5) / 4] * 5, rtol=1e-15)
    assert r.disclosure_bq_max_train == 1.5
    # H targets with T's prior: the x = 1.3 record reaches the cell at delta = 0.37525, 0.5 only
    # (|1.3 - 1| = 0.3): ratio 0.25 / 0.5 = 0.5 there, 1 elsewhere (no neighbour) -> max 1
    hold = bq[bq["targets"] == "holdout"]
    np.testing.assert_allclose(hold["mean_ratio"], [1, 1, 1, 0.875, 0.875], rtol=1e-15)
    assert r.disclosure_bq_max_holdout == 1.0
    assert (r.disclosure_bq_n_targets_train, r.disclosure_bq_n_targets_holdout) == (4, 4)
    # holdbench's form (prior = S's share) on the same targets: every ratio 1
    assert r.disclosure_max_train == 1.0
    assert r.disclosure_mean_train == pytest.approx(1.0, abs=1e-15)


def test_bq_form_takes_every_target():
    # 50 T records; only record 37 has synthetic neighbours, all sharing its value: with prior
    # 1/2 its ratio is 2. A sample of 10 targets that misses it reports 1; Bale & Quick's form
    # (every record) must report 2.
    n = 50
    t = pd.DataFrame({"g": [f"u{i}" for i in range(n)], "x": np.zeros(n),
                      "y": ["1" if i % 2 else "0" for i in range(n)]})
    s = pd.DataFrame({"g": ["u37", "u37", "zz", "zz"], "x": [0.0, 0.0, 3.0, -3.0], "y": ["1", "1", "1", "0"]})
    h = t.assign(g="v")
    r = run(t, h, s, n_targets=10)
    assert r.disclosure_n_targets == 10
    assert r.disclosure_bq_max_train == 2.0                  # (2/2) / (25/50)
    assert r.disclosure_bq_max_holdout == 1.0                # no H record has a neighbour
    sampled_has_37 = r.disclosure_max_train > 1.0
    assert r.disclosure_bq_n_targets_train == 50
    if not sampled_has_37:                                   # S's share of "1" is 3/4 -> 1/(3/4)
        assert r.disclosure_max_train == 1.0
    else:
        assert r.disclosure_max_train == pytest.approx(4 / 3, rel=1e-15)


def test_standardised_with_s_mean_and_sd():
    # S x = 10, 30 -> mean 20, SD 10 (ddof 0). Target x = 24 is 0.6 SD from 30 and 1.4 from 10: no
    # neighbour. Target x = 26 (y = 0) is 0.4 SD from 30 (y = 0): inside delta = 0.5 only
    # (linspace(0.001, 0.5, 5)), where its only neighbour shares its value: 1 / prior.
    s = pd.DataFrame({"g": ["a", "a"], "x": [10.0, 30.0], "y": ["1", "0"]})
    t = pd.DataFrame({"g": ["a", "a", "a", "a"], "x": [24.0, 26.0, 0.0, 50.0], "y": ["1", "0", "0", "1"]})
    r = run(t, t, s, n_targets=None)
    bq = r.disclosure_curve_bq
    train = bq[bq["targets"] == "train"]
    # T's share of "0" is 1/2: ratio (1/1) / (1/2) = 2 at delta = 0.5 only
    assert train["max_ratio"].tolist() == [1.0, 1.0, 1.0, 1.0, 2.0]
    # with ddof 1 (SD 14.14) target 26 would be 0.28 SD away: inside delta = 0.37525 too


def test_holdout_row_leaves_bq_holdout_undefined():
    rng = np.random.default_rng(0)
    t = pd.DataFrame({"g": rng.choice(["a", "b"], 40), "x": rng.normal(size=40), "y": rng.choice(["0", "1"], 40)})
    data = EvalData(t, t, t, KINDS, sensitive="y", quasi_identifiers=("g", "x"), holdout_row=True)
    r = AttributeDisclosure().compute(data)
    assert math.isnan(r.disclosure_bq_max_holdout) and not math.isnan(r.disclosure_bq_max_train)
    assert set(r.disclosure_curve_bq["targets"]) == {"train"}
