"""A deliberately leaky toy generator: it samples every column independently from its training marginals
(no record survives) but appends verbatim copies of its training records whose category no other record
has (the outliers). The per-target audit flags it (AUC near 1, an ε bound above 1) while the population
membership-inference panel, whose targets are random records, does not (AUC near 0.5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.attacks import MembershipInference
from holdbench.metrics.audit import Audit, FeatureEncoder, membership, play_fit, save_fit, select_targets
from holdbench.metrics.registry import EvalData

KINDS = {"a": "numeric", "b": "numeric", "c": "categorical"}


def population(n: int, rng: np.random.Generator, tag: str) -> pd.DataFrame:
    df = pd.DataFrame({"a": rng.normal(0, 1, n).round(1), "b": rng.exponential(1, n).round(1),
                       "c": rng.choice(list("pqrs"), n)})
    far = np.flatnonzero(rng.random(n) < 0.003)  # 0.3% outliers: far out on a, a label of their own
    df.loc[far, "a"] = rng.normal(8, 2, len(far)).round(1)
    df.loc[far, "c"] = [f"{tag}{i}" for i in range(len(far))]
    return df


def leaky(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Every column drawn independently from its training marginal, plus verbatim copies of the training
    records whose label of c no other training record has."""
    rng = np.random.default_rng(seed)
    fresh = pd.DataFrame({c: rng.choice(train[c].to_numpy(), n) for c in train.columns})
    copies = train[train["c"].map(train["c"].value_counts()) == 1]
    return pd.concat([fresh.iloc[:n - len(copies)], copies]).reset_index(drop=True)


def test_outlier_copier_is_flagged_by_the_audit_not_by_the_population_panel(tmp_path):
    rng = np.random.default_rng(0)
    t, h = population(3000, rng, "t"), population(3000, rng, "h")
    ref_rows, n_targets, n_train, n_test = 400, 3, 40, 40
    rows, _ = select_targets(t, KINDS, 5, n_targets, seed=0)
    targets = t.iloc[rows].reset_index(drop=True)
    enc = FeatureEncoder.fit(h, KINDS, bins=10, n_closest=5)
    member = membership(n_train, n_test, n_targets, seed=0)
    ident = {"cell": "toy/seed0/leaky", "settings": "x", "generator": "y"}
    files = []
    for j in range(n_train + n_test):
        out = play_fit(h, targets, member[j], ref_rows, [0, 0, j], lambda d, _o, s: leaky(d, ref_rows, s))
        files.append(tmp_path / f"fit{j}.npz")
        save_fit(files[-1], member[j], enc.features(targets, out), {**ident, "fit": j, "targets": [int(r) for r in rows]})
    audit = Audit({"toy": list(KINDS)}, n_targets=n_targets, k_neighbours=5, reference_rows=ref_rows,
                  n_fits_train=n_train, n_fits_test=n_test, n_estimators=50,
                  cell={"dataset": "toy", "seed": 0, "epsilon": 1.0, "delta": 0.0, "fits": [str(f) for f in files],
                        "identity": ident, "failed": ""})
    s = leaky(t, len(t), seed=1)
    data = EvalData(t, h, s, KINDS)
    res = audit.compute(data)
    assert res.audit_auc_max > 0.9
    assert res.audit_epsilon_lower > 1.0
    assert res.audit_epsilon_excess == pytest.approx(res.audit_epsilon_lower - 1.0)
    assert set(res.audit_targets["rank"]) == {1, 2, 3}
    panel = MembershipInference(n_targets=500, n_bootstrap=0).compute(data)
    assert panel.mia_auc_max < 0.6


def test_fits_of_another_cell_are_refused(tmp_path):
    rng = np.random.default_rng(1)
    t = population(300, rng, "t")
    rows, _ = select_targets(t, KINDS, 3, 2, seed=0)
    save_fit(tmp_path / "f.npz", np.array([True, False]), np.zeros((2, 3)),
             {"cell": "other/seed0/x", "fit": 0, "targets": [int(r) for r in rows]})
    from holdbench.metrics.audit import read_fits

    with pytest.raises(ValueError, match="holds cell 'other/seed0/x'"):
        read_fits([str(tmp_path / "f.npz")], {"cell": "toy/seed0/x"}, rows)
