"""The per-target shadow-model membership game and the `audit` metric family (docs/definitions/attacks.md,
"Audit: worst-case membership and an empirical ε").

The workflow (holdbench.benchmark.workflow.audit) plays the game: for fit j it draws a reference set of
`reference_rows − n_targets` records from H (disjoint from T), adds the targets `membership` puts in
fit j (each target in half of the training fits and half of the test fits, seeded), fits the cell's generator on it, samples
`reference_rows` records and stores each target's features of that sample (holdbench.metrics.audit.
features). This family reads those stored fits: per target, a random forest (scikit-learn, seeded) is
trained on the first `n_fits_train` fits and scored on the `n_fits_test` fresh ones; the threshold of
the test "member" is chosen on the training fits' out-of-fold scores (5-fold), never on the test fits,
so the test fits' counts give an honest ε bound (holdbench.metrics.audit.bounds, Clopper–Pearson).
Each target is tested at confidence 1 − (1 − confidence)/n_targets (Bonferroni), so the cell's bound,
the largest over its targets, holds with probability ≥ `confidence`.

With `bound: one_run` every target of every test fit is a canary included by an independent fair coin
(the training fits stay balanced), and the cell's bound is Steinke, Nasr & Jagielski's one-run bound on
the guesses of one rule pooled over all targets and test fits: the rule (guess member above a probability,
or non-member below one, abstain elsewhere) is chosen on the training fits' out-of-fold probabilities.
Its ceiling grows with targets × test fits instead of test fits per target.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from holdbench.metrics.audit.bounds import (
    best_threshold,
    bound_at,
    largest_provable,
    one_run_counts,
    one_run_epsilon,
    one_run_largest_provable,
    one_run_rule,
    per_target_confidence,
)
from holdbench.metrics.audit.targets import SCORE, masked, select_targets
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

#: the settings a shadow fit depends on (its stored identity); the others only change the analysis
FIT_SETTINGS = ("columns", "n_targets", "k_neighbours", "reference_rows", "bins", "n_closest", "seed",
                "n_fits_train", "n_fits_test", "target_score", "bound")

#: how a cell's ε bound is computed; each fixes how the test fits' memberships are drawn (`membership`)
BOUNDS = ("per_target", "one_run")


def check_bound(bound: str) -> None:
    """Refuse a `bound` setting the audit does not know, naming the ones it does."""
    if bound not in BOUNDS:
        raise ValueError(f"audit: `bound` must be one of {', '.join(BOUNDS)}, got {bound!r}")


def settings_digest(settings: Mapping) -> str:
    """The digest of the settings a shadow fit depends on."""
    return hashlib.sha256(json.dumps({k: settings.get(k) for k in FIT_SETTINGS}, sort_keys=True,
                                     default=str).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AuditResult:
    audit_auc_max: float = metric(
        "audit AUC (most vulnerable target)", "attack", direction="ideal", ideal=0.5, headline=True,
        meaning="The largest per-target ROC AUC of the shadow-model membership attack on the cell's vulnerable "
                "records (fresh shadow fits): 0.5 is ideal, 1 means the generator's output tells whether that "
                "record was in its training data.")
    audit_auc_mean: float = metric(
        "audit AUC (mean over targets)", "attack", direction="ideal", ideal=0.5,
        meaning="The per-target AUCs of the shadow-model attack, averaged over the vulnerable targets.")
    audit_tpr_low_fpr_max: float = metric(
        "audit TPR at low FPR (max)", "attack", direction="lower",
        meaning="The largest per-target true-positive rate at the false-positive rate `low_fpr` (ROC read at "
                "that FPR on the fresh shadow fits): what an attacker confident in few accusations gets.")
    audit_epsilon_lower: float = metric(
        "audited ε (lower bound)", "privacy", direction="lower", digits=2, headline=True,
        meaning="Empirical lower bound on the generator's ε from the attack's counts (per target: "
                "Clopper-Pearson at the threshold, the largest over targets; one run: Steinke et al.'s bound on the "
                "guesses pooled over targets and test fits), holding with probability ≥ the stated confidence: "
                "any (ε, δ)-DP implementation has ε at least this; 0 proves nothing.")
    audit_epsilon_excess: float = metric(
        "audited ε minus configured ε", "privacy", direction="lower", digits=2,
        meaning="audit_epsilon_lower minus the ε the cell's generator was configured with (DP generators only); "
                "above 0 the implementation or its preprocessing leaks more than its ε allows.")
    audit_epsilon_configured: float | None = None
    audit_epsilon_provable: float = math.nan
    """the largest ε bound a perfect attack could show on the cell's test fits (per target: bounds.largest_provable,
    the largest over its targets at their Bonferroni confidence; one run: bounds.one_run_largest_provable on
    targets × test fits canaries): a configured ε at or above it is untested"""
    audit_bound: str = "per_target"
    """how audit_epsilon_lower was computed: per_target (Clopper-Pearson, Bonferroni over targets) or one_run
    (Steinke et al., pooled guesses)"""
    audit_delta: float = 0.0
    audit_confidence: float = 0.95
    audit_n_targets: int = 0
    audit_n_fits_train: int = 0
    audit_n_fits_test: int = 0
    audit_worst_target: int = 0
    """rank (1 = most vulnerable) of the target with the largest ε bound (one run: with the most right guesses)"""
    audit_evidence: str = ""
    """the counts the cell's bound comes from, in words"""
    seconds_audit: float = 0.0
    audit_targets: pd.DataFrame | None = artifact(
        "one row per target: its rank, row of T, vulnerability score, masked values, AUC, TPR at low FPR, "
        "ε bound and the counts at the threshold")


class Audit(MetricFamily):
    """Per-target shadow-model membership audit with an empirical ε lower bound."""

    name = "audit"
    result_type = AuditResult
    definition = "definitions/attacks.md#audit-worst-case-membership-and-an-empirical-epsilon"
    reference = ("The ε bound equals its closed form on a mechanism of known ε (randomised response on one bit, "
                 "Laplace on a count), approaching ε from below as the trials grow and above it no more often "
                 "than the confidence allows: tests/metrics/test_audit_bounds.py; a generator copying outliers "
                 "is flagged while the population attack is not: tests/metrics/test_audit_leak.py. The one-run "
                 "bound equals jax_privacy 2.0.0's (auditing._epsilon_one_run) to its 1e-6 tolerance and Steinke et "
                 "al.'s algorithm written out to 1e-9; on randomised response over 100 to 100,000 canaries it "
                 "approaches ε from below: tests/metrics/test_audit_one_run.py.")

    def __init__(self, columns: Mapping[str, list[str]], n_targets: int = 5, k_neighbours: int = 5,
                 reference_rows: int = 1000, n_fits_train: int = 40, n_fits_test: int = 40, fits_per_job: int = 20,
                 bins: int = 10, n_closest: int = 5, confidence: float = 0.95, low_fpr: float = 0.1,
                 n_estimators: int = 100, seed: int = 0, bound: str = "per_target", cell: Mapping | None = None):
        if not isinstance(columns, Mapping) or not columns:
            raise ValueError("audit: `columns` must map each dataset to the list of columns the audit keeps")
        for key, v in (("n_targets", n_targets), ("k_neighbours", k_neighbours), ("reference_rows", reference_rows),
                       ("n_fits_train", n_fits_train), ("n_fits_test", n_fits_test), ("fits_per_job", fits_per_job),
                       ("n_estimators", n_estimators)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"audit: `{key}` must be a positive integer, got {v!r}")
        if reference_rows <= n_targets:
            raise ValueError(f"audit: reference_rows ({reference_rows}) must exceed n_targets ({n_targets})")
        if n_fits_train < 10:
            raise ValueError(f"audit: n_fits_train must be at least 10 (5-fold threshold choice), got {n_fits_train}")
        check_bound(bound)
        if not 0 < confidence < 1 or not 0 < low_fpr < 1:
            raise ValueError(f"audit: confidence and low_fpr must be in (0, 1), got {confidence!r}, {low_fpr!r}")
        self.settings = {"columns": {str(d): list(c) for d, c in columns.items()}, "n_targets": n_targets,
                         "k_neighbours": k_neighbours, "reference_rows": reference_rows, "bins": bins,
                         "n_closest": n_closest, "seed": seed, "n_fits_train": n_fits_train,
                         "n_fits_test": n_fits_test, "target_score": SCORE, "bound": bound}
        self.n_fits_train, self.n_fits_test, self.fits_per_job = n_fits_train, n_fits_test, fits_per_job
        self.confidence, self.low_fpr, self.n_estimators, self.seed = confidence, low_fpr, n_estimators, seed
        self.cell = dict(cell) if cell else None

    def compute(self, data: EvalData) -> AuditResult:
        t0 = time.perf_counter()
        if not self.cell or not self.cell.get("fits"):
            raise ValueError("the audit reads the shadow fits the workflow runs for the cell (holdbench run of a "
                             "study whose metrics include `audit`); none were given")
        if self.cell.get("failed"):
            raise ValueError(f"shadow fits failed: {self.cell['failed']}")
        dataset = self.cell["dataset"]
        cols = self.settings["columns"].get(dataset)
        if cols is None:
            raise ValueError(f"audit: `columns` names no columns for dataset {dataset!r}")
        given = self.cell.get("targets")
        if given:  # the workflow's selection on this T with these settings (stored beside the split)
            rows, scores = np.asarray(given["rows"], dtype=np.int64), np.asarray(given["scores"], dtype=np.float64)
            if len(rows) != self.settings["n_targets"] or len(scores) != len(rows):
                raise ValueError(f"audit: the cell's stored targets hold {len(rows)} rows, n_targets is "
                                 f"{self.settings['n_targets']}")
        else:
            rows, scores = select_targets(data.train[cols], data.kinds, self.settings["k_neighbours"],
                                          self.settings["n_targets"], self.settings["seed"] + int(self.cell["seed"]))
        labels, feats = read_fits(self.cell["fits"], self.cell["identity"], rows)
        n_train = self.n_fits_train
        if len(labels) != n_train + self.n_fits_test:
            raise ValueError(f"audit: {len(labels)} shadow fits stored, n_fits_train + n_fits_test = "
                             f"{n_train + self.n_fits_test}")
        eps_conf = self.cell.get("epsilon")
        delta = float(self.cell.get("delta") or 0.0)
        per_conf = per_target_confidence(self.confidence, len(rows))
        table, oof, test = [], [], []
        for i in range(len(rows)):
            row, o, t = self._target(feats[:, i], labels[:, i], n_train, per_conf, delta, i)
            table.append(row)
            oof.append(o)
            test.append(t)
        tab = pd.DataFrame(table)
        shown = masked(data.train[cols].iloc[rows].reset_index(drop=True), data.train[cols], data.kinds)
        tab = pd.concat([pd.DataFrame({"rank": np.arange(1, len(rows) + 1), "row_of_T": rows,
                                       "vulnerability": scores}), shown.add_prefix("value:"), tab], axis=1)
        if self.settings["bound"] == "one_run":
            eps_lb, provable, worst, evidence = self._one_run(tab, np.stack(oof, axis=1), test, labels, delta)
        else:
            eps_lb, provable, worst, evidence = self._per_target(tab, per_conf, delta)
        return AuditResult(
            audit_auc_max=float(tab["auc"].max()), audit_auc_mean=float(tab["auc"].mean()),
            audit_tpr_low_fpr_max=float(tab["tpr_at_low_fpr"].max()), audit_epsilon_lower=eps_lb,
            audit_epsilon_excess=eps_lb - float(eps_conf) if eps_conf is not None else math.nan,
            audit_epsilon_configured=None if eps_conf is None else float(eps_conf),
            audit_epsilon_provable=provable, audit_bound=self.settings["bound"], audit_delta=delta,
            audit_confidence=self.confidence, audit_n_targets=len(rows), audit_n_fits_train=n_train,
            audit_n_fits_test=self.n_fits_test, audit_worst_target=worst + 1, audit_evidence=evidence,
            seconds_audit=round(time.perf_counter() - t0, 3), audit_targets=tab)

    def _per_target(self, tab: pd.DataFrame, per_conf: float, delta: float) -> tuple[float, float, int, str]:
        """(bound, largest provable, worst target's index, evidence): the largest per-target bound."""
        provable = max(largest_provable(int(r.tp + r.fn), int(r.fp + r.tn), per_conf, delta) for r in tab.itertuples())
        worst = int(tab["epsilon_lower"].to_numpy().argmax())
        w = tab.iloc[worst]
        evidence = (f"target {worst + 1}: {int(w['tp'])} of {int(w['tp'] + w['fn'])} member fits and "
                    f"{int(w['fp'])} of {int(w['fp'] + w['tn'])} non-member fits called member at the threshold "
                    f"chosen on the training fits; Clopper-Pearson at {per_conf:.4f} per target "
                    f"({self.confidence:g} over {len(tab)} targets), delta {delta:g}")
        return float(w["epsilon_lower"]), provable, worst, evidence

    def _one_run(self, tab: pd.DataFrame, oof: np.ndarray, test: list[np.ndarray], labels: np.ndarray,
                 delta: float) -> tuple[float, float, int, str]:
        """(bound, largest provable, worst target's index, evidence): one rule, chosen on the training fits'
        out-of-fold probabilities (oof: fits x targets), its guesses on the test fits pooled over targets;
        adds each target's guesses and right guesses to `tab`."""
        n_train = self.n_fits_train
        rule = one_run_rule(oof, labels[:n_train], self.confidence)
        counts = [one_run_counts(test[i], labels[n_train:, i], rule) for i in range(len(tab))]
        tab["guesses"], tab["correct"] = [g for g, _ in counts], [c for _, c in counts]
        n_canaries = labels[n_train:].size
        guesses, correct = int(tab["guesses"].sum()), int(tab["correct"].sum())
        worst = int(np.lexsort((-tab["auc"].to_numpy(), -tab["correct"].to_numpy()))[0])
        evidence = one_run_evidence(correct, guesses, rule, worst, n_canaries=n_canaries, n_targets=len(tab),
                                    n_fits_test=self.n_fits_test, confidence=self.confidence, delta=delta)
        return (one_run_epsilon(n_canaries, guesses, correct, self.confidence, delta),
                one_run_largest_provable(n_canaries, self.confidence, delta), worst, evidence)

    def _target(self, x: np.ndarray, y: np.ndarray, n_train: int, conf: float, delta: float,
                i: int) -> tuple[dict, np.ndarray, np.ndarray]:
        """Target i's row of the table, its training fits' out-of-fold probabilities and its test fits'."""
        from holdbench.metrics.attacks import tpr_at_fpr
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.metrics import roc_auc_score, roc_curve
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        xtr, ytr, xte, yte = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
        for part, lab in (("training", ytr), ("test", yte)):
            if lab.sum() < 5 or (~lab).sum() < 5:
                raise ValueError(f"audit: target {i + 1} has {int(lab.sum())} member and {int((~lab).sum())} "
                                 f"non-member {part} fits; at least 5 of each are needed (raise n_fits_{part[:5]})")
        seed = int(np.random.SeedSequence([self.seed, 0xA0D, i]).generate_state(1)[0])
        clf = RandomForestClassifier(n_estimators=self.n_estimators, min_samples_leaf=2, random_state=seed, n_jobs=1)
        oof = cross_val_predict(clf, xtr, ytr, cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                                method="predict_proba")[:, 1]
        threshold = best_threshold(oof, ytr, conf, delta)
        score = clf.fit(xtr, ytr).predict_proba(xte)[:, 1]
        fpr, tpr, _ = roc_curve(yte, score, drop_intermediate=False)
        b = bound_at(score, yte, threshold, conf, delta)
        return ({"auc": float(roc_auc_score(yte, score)), "tpr_at_low_fpr": tpr_at_fpr(fpr, tpr, self.low_fpr),
                 "epsilon_lower": b.epsilon, "threshold": threshold, "tp": b.tp, "fn": b.fn, "fp": b.fp, "tn": b.tn},
                oof, score)


def membership(n_fits_train: int, n_fits_test: int, n_targets: int, seed: int,
               bound: str = "per_target") -> np.ndarray:
    """(n_fits, n_targets) bool: which targets fit j's training set includes. The training fits are balanced:
    each target in half of them (the larger half out for an odd count), at positions drawn by a seeded
    permutation per target. The test fits likewise for the per-target bound; for the one-run bound, whose
    theorem needs it, each (test fit, target) is in by an independent fair coin."""
    check_bound(bound)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0x1B5]))
    blocks = [np.stack([rng.permutation(n_fits_train) < n_fits_train // 2 for _ in range(n_targets)], axis=1)]
    if bound == "one_run":
        blocks.append(rng.random((n_fits_test, n_targets)) < 0.5)
    else:
        blocks.append(np.stack([rng.permutation(n_fits_test) < n_fits_test // 2 for _ in range(n_targets)], axis=1))
    return np.concatenate(blocks)


def play_fit(pool: pd.DataFrame, targets: pd.DataFrame, labels: np.ndarray, reference_rows: int,
             seeds: list[int], fit_sample: Callable[[pd.DataFrame, pd.DataFrame, int], pd.DataFrame]) -> pd.DataFrame:
    """One shadow fit: a reference set of reference_rows − len(targets) rows of `pool` plus the targets
    `labels` marks, shuffled, given to fit_sample(training set, a disjoint pool sample of reference_rows
    rows (what the holdout baseline returns), generator seed), which returns the synthetic sample. Every
    draw comes from SeedSequence(seeds)."""
    n_t = len(targets)
    if 2 * reference_rows > len(pool):
        raise ValueError(f"audit: reference_rows {reference_rows} needs a pool (H) of at least {2 * reference_rows} "
                         f"rows (a reference set and a disjoint one for the holdout baseline); it has {len(pool)}")
    rng = np.random.default_rng(np.random.SeedSequence(seeds))
    order = rng.permutation(len(pool))
    background = pool.iloc[order[:reference_rows - n_t]]
    other = pool.iloc[order[reference_rows:2 * reference_rows]].reset_index(drop=True)
    data = pd.concat([background, targets[np.asarray(labels, bool)]])
    data = data.iloc[rng.permutation(len(data))].reset_index(drop=True)
    return fit_sample(data, other, int(rng.integers(2**31 - 1)))


def save_fit(path, labels: np.ndarray, features: np.ndarray, meta: Mapping) -> None:
    """Write one shadow fit's labels, features and identity (read back by read_fits), atomically."""
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, labels=np.asarray(labels, bool), features=np.asarray(features, float),
                 meta=np.array(json.dumps(dict(meta), sort_keys=True)))
    tmp.replace(path)


def read_fits(files: list[str], identity: Mapping, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels (n_fits, n_targets) bool, features (n_fits, n_targets, n_features)) of the stored shadow fits,
    in fit order; a file of another cell, fit, target selection or settings is an error naming it."""
    labels, feats = [], []
    for j, path in enumerate(files):
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            want = {**identity, "fit": j, "targets": [int(r) for r in rows]}
            for key, value in want.items():
                if meta.get(key) != value:
                    raise ValueError(f"shadow fit {path}: holds {key} {meta.get(key)!r}, this cell's fit {j} needs "
                                     f"{value!r}")
            labels.append(npz["labels"].astype(bool))
            feats.append(npz["features"])
    return np.stack(labels), np.stack(feats)


def one_run_evidence(correct: int, guesses: int, rule: tuple[float, float], worst: int, *, n_canaries: int,
                     n_targets: int, n_fits_test: int, confidence: float, delta: float) -> str:
    """The one-run bound's evidence in words: the guesses and right guesses on the canaries, the rule's cuts
    (a side without a cut makes no guess), the target with the most right guesses (named only if there is one)."""
    high, low = rule
    sides = ([f"member at probability >= {high:.3g}"] if math.isfinite(high) else []) + \
            ([f"non-member at <= {low:.3g}"] if math.isfinite(low) else [])
    design = f"{n_canaries} canaries ({n_targets} targets x {n_fits_test} test fits, each in by a fair coin)"
    if not sides:
        head = (f"one run: no guess on {design}: no cut on the training fits' probabilities proves anything, so the "
                f"rule chosen there abstains")
    else:
        head = (f"one run: {correct} of {guesses} guesses right on {design}, guessing {' and '.join(sides)} "
                f"(chosen on the training fits)")
    tail = f"; most right guesses: target {worst + 1}" if correct > 0 else ""
    return f"{head}; Steinke et al. at {confidence:g}, delta {delta:g}{tail}"
