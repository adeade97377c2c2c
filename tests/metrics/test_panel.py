"""Extended privacy panel (docs/definitions/paper.md §7) on hand-sized tables, plus the result's JSON shape."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics import DCRShare, EvaluationResult, Fidelity, evaluate, paper_families
from holdbench.metrics._kernels import gower_smallest, tile_buffer
from holdbench.metrics.panel import nndr

CAT2 = {"u": "categorical", "v": "categorical"}


def frame(rows):
    return pd.DataFrame(rows, columns=["u", "v"])


def test_ims_dcr_percentile_nndr_and_gower_share_by_hand():
    t = frame([("a", "x"), ("b", "y")])
    h = frame([("a", "x"), ("c", "z")])
    s = frame([("a", "x"), ("b", "y"), ("a", "z"), ("d", "w")])
    d = evaluate(t, h, s, CAT2).to_dict()
    # Hamming d_T: S 0, 0, 1, 2; H 0, 2
    assert d["ims_synthetic"] == 0.5 and d["ims_holdout"] == 0.5 and d["bq_ims_pass"] is True
    assert d["dcr_p05_synthetic"] == pytest.approx(0.0)
    assert d["dcr_p05_holdout"] == pytest.approx(0.1)  # linear 5th percentile of [0, 2]
    assert d["bq_dcr_pass"] is False
    # Gower on two categoricals = mismatches / 2. d_H of S: 0, 2, 1, 2 (in mismatches)
    # -> one closer to T, three ties weighted 2/4
    assert d["gower_dcr_share"] == pytest.approx(1 / 4 + 0.5 * 3 / 4)
    assert d["gower_dcr_train_mean"] == pytest.approx(3 / 4 / 2)
    assert d["gower_dcr_holdout_mean"] == pytest.approx(5 / 4 / 2)
    # NNDR d1/d2 to T: S 0/2, 0/2, 1/2, 2/2; H 0/2, 2/2
    assert d["nndr2_p05_synthetic"] == pytest.approx(0.0)
    assert d["nndr2_p05_holdout"] == pytest.approx(0.05)
    # only two references: d_5 does not exist
    assert d["nndr5_p05_synthetic"] is None and d["bq_nndr_pass"] is None


def test_gower_numeric_scaling_cap_and_missing():
    kinds = {"n": "numeric"}
    t = pd.DataFrame({"n": [0.0, 2.0, 10.0]})  # range 10
    h = pd.DataFrame({"n": [5.0]})
    d = evaluate(t, h, pd.DataFrame({"n": [1.5]}), kinds).to_dict()
    assert d["nndr2_p05_synthetic"] == pytest.approx(0.05 / 0.15, rel=1e-6)
    assert d["nndr2_p05_holdout"] == pytest.approx(0.3 / 0.5, rel=1e-6)
    assert d["gower_dcr_train_mean"] == pytest.approx(0.05, rel=1e-6)
    assert d["gower_dcr_holdout_mean"] == pytest.approx(0.35, rel=1e-6)
    far = evaluate(t, h, pd.DataFrame({"n": [25.0]}), kinds).to_dict()
    assert far["gower_dcr_train_mean"] == 1.0 and far["nndr2_p05_synthetic"] == 1.0
    gone = evaluate(t, h, pd.DataFrame({"n": ["n/a"]}), kinds).to_dict()
    assert gone["gower_dcr_train_mean"] == 1.0 and gone["gower_dcr_holdout_mean"] == 1.0


def test_nndr_conventions():
    smallest = np.array([[0, 0], [0, 2], [1, 2], [1, np.inf]], dtype=np.float32)
    out = nndr(smallest, 2)
    assert out[:3].tolist() == [1.0, 0.0, 0.5] and math.isnan(out[3])


def test_gower_kernel_matches_numpy():
    rng = np.random.default_rng(0)
    for n_q, n_r, p_num, p_cat in ((7, 3000, 2, 3), (1, 5, 0, 2), (9, 2100, 3, 0)):
        q_num = rng.random((p_num, n_q)).astype(np.float32) * 1.5
        r_num = rng.random((p_num, n_r)).astype(np.float32)
        q_cat = rng.integers(0, 3, (p_cat, n_q)).astype(np.uint8)
        r_cat = rng.integers(0, 3, (p_cat, n_r)).astype(np.uint8)
        full = (np.minimum(np.abs(q_num.T[:, None, :] - r_num.T[None, :, :]), 1).sum(axis=2)
                + (q_cat.T[:, None, :] != r_cat.T[None, :, :]).sum(axis=2))
        full.sort(axis=1)
        k = min(3, n_r)
        dist = tile_buffer(np.float32)
        got = gower_smallest(q_num, q_cat, r_num, r_cat, k, tile_buffer(np.uint8), dist,
                             dist.view(np.int32)).view(np.float32)
        np.testing.assert_allclose(got, full[:, :k], rtol=1e-5, atol=1e-5)


def test_holdout_row_panel_and_json_shape():
    rng = np.random.default_rng(5)
    t = pd.DataFrame({"a": rng.integers(0, 5, 80), "b": rng.choice(list("xyz"), 80)})
    h = pd.DataFrame({"a": rng.integers(0, 5, 60), "b": rng.choice(list("xyz"), 60)})
    res = evaluate(t, h, None, {"a": "numeric", "b": "categorical"}, holdout_row=True)
    d = res.to_dict()
    assert d["ims_synthetic"] == d["ims_holdout"] and d["bq_ims_pass"] is True
    assert d["nndr5_p05_synthetic"] == d["nndr5_p05_holdout"] and d["bq_nndr_pass"] is True
    json.dumps(d, allow_nan=False)
    assert all(v is None or isinstance(v, (bool, int, float, str)) for v in d.values())
    assert isinstance(res, EvaluationResult) and res.F1 == res.results['fidelity'].F1


def test_families_decide_the_keys():
    t = frame([("a", "x"), ("b", "y")])
    full = evaluate(t, t, t, CAT2).to_dict()
    short = evaluate(t, t, t, CAT2, families=paper_families()).to_dict()
    assert full["families"] == "fidelity,privacy,panel" and short["families"] == "fidelity,privacy"
    assert "ims_synthetic" in full and "ims_synthetic" not in short and "gower_dcr_share" not in short
    required = [
        "F1", "F2", "F3", "F1_holdout", "F2_holdout", "F3_holdout", "F1_ratio", "F2_ratio", "F3_ratio",
        "dcr_share", "dcr_share_ci_low", "dcr_share_ci_high", "dcr_share_pvalue", "dcr_train_mean",
        "dcr_holdout_mean", "n_train", "n_holdout", "n_synthetic", "n_closer_train",
        "n_closer_holdout", "n_ties", "seconds_fidelity", "seconds_privacy", "n_combinations_1",
        "n_combinations_2", "n_combinations_3", "combinations_sampled",
    ]
    assert not [k for k in required if k not in short]
    assert set(short) < set(full) and "seconds_extended" in full


@pytest.mark.parametrize("bad, message", [
    ({"synthetic": frame([("a", "x")]).assign(w=1)}, "unexpected \\['w'\\]"),
    ({"synthetic": frame([("a", "x")])[["u"]]}, "missing \\['v'\\]"),
    ({"holdout": frame([("a", "x")]).rename(columns={"v": "z"})}, "holdout columns differ"),
    ({"kinds": {"u": "categorical"}}, "no kind given for \\['v'\\]"),
    ({"kinds": {**CAT2, "q": "numeric"}}, "not in train \\['q'\\]"),
    ({"kinds": {"u": "categorical", "v": "text"}}, "kinds must be one of"),
    ({"synthetic": frame([])}, "synthetic has no rows"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"seed": -1}, "seed"),
    ({"target": "nope"}, "target column 'nope'"),
])
def test_bad_inputs_raise_value_error_naming_the_problem(bad, message):
    args = {"train": frame([("a", "x"), ("b", "y")]), "holdout": frame([("a", "x")]),
            "synthetic": frame([("a", "x")]), "kinds": CAT2}
    args.update(bad)
    with pytest.raises(ValueError, match=message):
        evaluate(**args)


def test_bad_family_options_raise_value_error_naming_them():
    with pytest.raises(ValueError, match="max_combinations"):
        Fidelity(max_combinations=0)
    with pytest.raises(ValueError, match="privacy_sample"):
        DCRShare(privacy_sample=-3)


def test_holdout_row_rejects_a_different_synthetic_and_tiny_holdout():
    t = frame([("a", "x"), ("b", "y")])
    with pytest.raises(ValueError, match="S = H"):
        evaluate(t, t, frame([("q", "q")]), CAT2, holdout_row=True)
    with pytest.raises(ValueError, match="at least 2 holdout rows"):
        evaluate(t, frame([("a", "x")]), None, CAT2, holdout_row=True)
