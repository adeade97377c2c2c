"""A deliberately leaky toy generator: it samples every column independently from its training marginals
(no record survives) but appends verbatim copies of its training records whose category no other record
has (the outliers). The per-target audit flags it (AUC near 1, an ε bound above 1) while the population
membership-inference panel, whose targets are random records, does not (AUC near 0.5)."""

from __future__ import annotations

import math

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
    res, _ = audit_outlier_copier(tmp_path, epsilon=1.0)
    assert res.audit_epsilon_excess == pytest.approx(res.audit_epsilon_lower - 1.0)


def test_outlier_copier_without_epsilon_fails_the_membership_gate(tmp_path):
    """The same copier audited as what it is, a generator without a DP guarantee: `holdbench check`'s
    automatic audit target fails its cell with the attack's counts, while the panel's AUC stays near 0.5."""
    from types import SimpleNamespace

    from holdbench.benchmark.outputs.gates import FAIL, Gates, judge_cell
    from holdbench.metrics.audit import AuditResult
    from holdbench.metrics.registry import scalars, specs_of

    res, panel = audit_outlier_copier(tmp_path, epsilon=None)
    assert res.audit_epsilon_configured is None and math.isnan(res.audit_epsilon_excess)
    cell = SimpleNamespace(cell_id="toy/seed0/leaky", dataset="toy", synthesizer="leaky", seed=0,
                           status={"status": "ok"}, metrics={**scalars(res), "mia_auc_max": panel.mia_auc_max})
    rows = {r["target"]: r for r in judge_cell(cell, Gates(source="<test>", targets=()), specs_of(AuditResult))}
    assert rows["audited_membership"]["verdict"] == FAIL
    assert "member fits" in rows["audited_membership"]["detail"]
    assert panel.mia_auc_max < 0.6


def audit_outlier_copier(tmp_path, epsilon: float | None):
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
                  cell={"dataset": "toy", "seed": 0, "epsilon": epsilon, "delta": 0.0,
                        "fits": [str(f) for f in files], "identity": ident, "failed": ""})
    s = leaky(t, len(t), seed=1)
    data = EvalData(t, h, s, KINDS)
    res = audit.compute(data)
    assert res.audit_auc_max > 0.9
    assert res.audit_epsilon_lower > 1.0
    # 20 member and 20 non-member test fits per target, 3 targets: a perfect attack's bound, in closed form
    lo = (0.05 / n_targets / 2) ** (1 / 20)
    assert res.audit_epsilon_provable == pytest.approx(math.log(lo / (1 - lo)), rel=1e-9)
    assert res.audit_epsilon_lower <= res.audit_epsilon_provable
    assert set(res.audit_targets["rank"]) == {1, 2, 3}
    panel = MembershipInference(n_targets=500, n_bootstrap=0).compute(data)
    assert panel.mia_auc_max < 0.6
    return res, panel


def test_fits_of_another_cell_are_refused(tmp_path):
    rng = np.random.default_rng(1)
    t = population(300, rng, "t")
    rows, _ = select_targets(t, KINDS, 3, 2, seed=0)
    save_fit(tmp_path / "f.npz", np.array([True, False]), np.zeros((2, 3)),
             {"cell": "other/seed0/x", "fit": 0, "targets": [int(r) for r in rows]})
    from holdbench.metrics.audit import read_fits

    with pytest.raises(ValueError, match="holds cell 'other/seed0/x'"):
        read_fits([str(tmp_path / "f.npz")], {"cell": "toy/seed0/x"}, rows)


# ---- a DP generator whose numeric bounds come from T (the preprocessing leak the audit must find) ----

PUBLIC_BOUNDS = {"a": (-25.0, 25.0), "b": (0.0, 15.0)}
LEVELS = list("pqrs")


def dp_histograms(train: pd.DataFrame, n: int, seed: int, epsilon: float, bounds_from_train: bool) -> pd.DataFrame:
    """An epsilon-DP generator in itself: each column an independent histogram (10 equal-width bins for a
    numeric column, the public levels for c) with Laplace noise of scale n_columns / epsilon on every count
    (add/remove one record changes one count of each column by 1), negatives set to 0, then sampled, uniform
    within a bin. With bounds_from_train the bins span T's own min and max, read without budget: not DP."""
    rng = np.random.default_rng(seed)
    scale = train.shape[1] / epsilon
    out = {}
    for col in ("a", "b"):
        lo, hi = (train[col].min(), train[col].max()) if bounds_from_train else PUBLIC_BOUNDS[col]
        edges = np.linspace(lo, hi, 11)
        counts = np.histogram(train[col].clip(lo, hi), edges)[0] + rng.laplace(0, scale, 10)
        p = np.clip(counts, 0, None)
        p = p / p.sum() if p.sum() > 0 else np.full(10, 0.1)
        k = rng.choice(10, n, p=p)
        out[col] = rng.uniform(edges[k], edges[k + 1]).round(1)
    counts = train["c"].value_counts().reindex(LEVELS, fill_value=0).to_numpy() + rng.laplace(0, scale, len(LEVELS))
    p = np.clip(counts, 0, None)
    out["c"] = rng.choice(LEVELS, n, p=p / p.sum() if p.sum() > 0 else None)
    return pd.DataFrame(out)


def normal_population(n: int, rng: np.random.Generator, extremes: bool) -> pd.DataFrame:
    """Three records far out on one side of a numeric column each (high a, low a, high b), so each alone
    sets the bound T's range would leak."""
    df = pd.DataFrame({"a": rng.normal(0, 1, n).round(1), "b": rng.exponential(1, n).round(1),
                       "c": rng.choice(LEVELS, n)})
    if extremes:
        df.loc[0, "a"], df.loc[1, "a"], df.loc[2, "b"] = 22.0, -20.0, 14.0
    return df


def audit_dp_generator(tmp_path, bounds_from_train: bool, epsilon: float = 1.0, n_test: int = 40,
                       bound: str = "per_target"):
    tmp_path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2)
    t, h = normal_population(3000, rng, True), normal_population(3000, rng, False)
    ref_rows, n_targets, n_train = 400, 3, 40
    rows, _ = select_targets(t, KINDS, 5, n_targets, seed=0)
    targets = t.iloc[rows].reset_index(drop=True)
    enc = FeatureEncoder.fit(h, KINDS, bins=10, n_closest=5)
    member = membership(n_train, n_test, n_targets, seed=0, bound=bound)
    ident = {"cell": "toy/seed0/dp", "settings": str(bounds_from_train), "generator": "dp_histograms"}
    files = []
    for j in range(n_train + n_test):
        out = play_fit(h, targets, member[j], ref_rows, [0, 1, j],
                       lambda d, _o, s: dp_histograms(d, ref_rows, s, epsilon, bounds_from_train))
        files.append(tmp_path / f"fit{j}.npz")
        save_fit(files[-1], member[j], enc.features(targets, out), {**ident, "fit": j, "targets": [int(r) for r in rows]})
    audit = Audit({"toy": list(KINDS)}, n_targets=n_targets, k_neighbours=5, reference_rows=ref_rows,
                  n_fits_train=n_train, n_fits_test=n_test, n_estimators=50, bound=bound,
                  cell={"dataset": "toy", "seed": 0, "epsilon": epsilon, "delta": 0.0, "fits": [str(f) for f in files],
                        "identity": ident, "failed": ""})
    s = dp_histograms(t, len(t), 1, epsilon, bounds_from_train)
    data = EvalData(t, h, s, KINDS)
    assert sorted(rows) == [0, 1, 2]  # the targets are the three far-out records
    return audit.compute(data), MembershipInference(n_targets=500, n_bootstrap=0).compute(data)


def test_dp_generator_with_bounds_from_t_is_flagged_above_its_epsilon(tmp_path):
    res, panel = audit_dp_generator(tmp_path, bounds_from_train=True)
    assert res.audit_auc_max > 0.9
    assert res.audit_epsilon_lower > 1.0  # configured epsilon 1: the preprocessing leaks
    assert res.audit_epsilon_excess > 0
    assert panel.mia_auc_max < 0.6  # the population panel sees nothing


def test_the_same_generator_with_public_bounds_stays_at_or_below_its_epsilon(tmp_path):
    res, _ = audit_dp_generator(tmp_path, bounds_from_train=False)
    assert res.audit_epsilon_lower <= 1.0
    assert res.audit_epsilon_excess <= 0
