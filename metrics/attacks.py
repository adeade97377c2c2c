"""Membership-inference attack panel (docs/definitions/attacks.md §9): family `attacks`, result `AttackResult`.

Targets. n = min(n_targets, |T|, ⌊|H|/2⌋) members, a seeded sample of T, and n non-members,
a seeded sample of H; the attacker's reference population R is the rest of H (|R| = |H| − n
≥ n, disjoint from the non-member targets). Fewer than 50 targets per side is an error: H
needs at least 100 rows and T at least 50.

Attacks (higher score = "member"; encodings and models in holdbench.metrics._attack_scores):
- dcr: −(distance from the target to its nearest S record);
- dcr_diff: distance to nearest R record − distance to nearest S record;
- density: log p_S − log p_R at the target (DOMIAS-style Gaussian KDE ratio);
- classifier: S-probability of a boosted-tree classifier trained to tell S from R.
An attack only sees S, R and the target, so with no membership leakage members and
non-members (both random draws of the same population) get exchangeable scores: AUC 0.5.

Statistics per attack:
- ROC AUC (sklearn roc_auc_score; tied scores count ½) and a percentile bootstrap 95% interval
  over the targets (members and non-members resampled separately, so both sizes stay n; the
  attack itself is not refitted, so the interval covers target sampling only);
- TPR at FPR α (1% and 0.1%): the ROC curve through all its vertices (sklearn roc_curve,
  drop_intermediate=False), read at FPR = α — the top of a vertical segment when a vertex lies
  at α, else linearly interpolated between the two vertices around α (the TPR a randomised
  threshold reaches at exactly FPR α). FPR moves in steps of 1/n (`mia_fpr_resolution`):
  when α·n < 1 not one false positive fits under α and the value is NaN (with the default
  n = 2000, FPR 0.1% is 2 false positives: read it as a rough figure).
Seeds: one SeedSequence stream per purpose (targets, fit subsamples, classifier, bootstrap
of each attack), so an attack's numbers do not depend on which other attacks ran.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score, roc_curve

from holdbench.metrics._attack_scores import (
    ATTACKS,
    classifier_scores,
    density_scores,
    encode,
    nearest_distance,
    subsample,
)
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

MIN_TARGETS = 50
_ALPHAS = {"1pct": 0.01, "01pct": 0.001}
_ROC_POINTS = 200
_STREAM_TARGETS, _STREAM_FIT, _STREAM_CLASSIFIER, _STREAM_BOOTSTRAP = 0, 1, 2, 3
_AUC_MEANING = ("ROC AUC of the {a} attack telling members (T) from non-members (H): 0.5 is ideal "
                "(no better than guessing); above = membership leaks. Below 0.5 is not better privacy "
                "either: it is a systematic member/non-member difference in the other direction.")
_LABELS = {"dcr": "DCR", "dcr_diff": "DCR-diff", "density": "density-ratio", "classifier": "classifier"}


def _auc(a: str, part: str = "") -> float:
    if not part:
        return metric(f"MIA {_LABELS[a]} AUC", "attack", direction="ideal", ideal=0.5,
                      meaning=_AUC_MEANING.format(a=_LABELS[a]))
    return metric(f"MIA {_LABELS[a]} AUC {part} 95%", "attack", direction="ideal", ideal=0.5,
                  meaning=f"{part.capitalize()} end of the bootstrap 95% interval of mia_{a}_auc.")


def _tpr(a: str, alpha: float) -> float:
    return metric(f"MIA {_LABELS[a]} TPR@FPR {alpha:.1%}", "attack", direction="ideal", ideal=alpha,
                  meaning=f"Share of members flagged by the {_LABELS[a]} attack when it wrongly flags {alpha:.1%} "
                          f"of non-members: {alpha:g} (= FPR) is ideal, above = some records are exposed.")


@dataclass(frozen=True)
class AttackResult:
    """Membership-inference attacks (docs/definitions/attacks.md §9): AUC 0.5 and TPR = FPR are ideal; NaN on the holdout row."""

    mia_auc_max: float = metric(
        "MIA AUC (max over attacks)", "attack", direction="ideal", ideal=0.5, headline=True,
        meaning="Largest ROC AUC of the membership-inference attacks (the strongest attacker): 0.5 is ideal, "
                "above = records of T can be told from unseen records through S. Ideal 0.5 rather than "
                "'lower': an AUC below 0.5 is no more private, only a difference of the other sign.")
    mia_dcr_auc: float = _auc("dcr")
    mia_dcr_auc_ci_low: float = _auc("dcr", "lower")
    mia_dcr_auc_ci_high: float = _auc("dcr", "upper")
    mia_dcr_tpr_at_fpr_1pct: float = _tpr("dcr", 0.01)
    mia_dcr_tpr_at_fpr_01pct: float = _tpr("dcr", 0.001)
    mia_dcr_diff_auc: float = _auc("dcr_diff")
    mia_dcr_diff_auc_ci_low: float = _auc("dcr_diff", "lower")
    mia_dcr_diff_auc_ci_high: float = _auc("dcr_diff", "upper")
    mia_dcr_diff_tpr_at_fpr_1pct: float = _tpr("dcr_diff", 0.01)
    mia_dcr_diff_tpr_at_fpr_01pct: float = _tpr("dcr_diff", 0.001)
    mia_density_auc: float = _auc("density")
    mia_density_auc_ci_low: float = _auc("density", "lower")
    mia_density_auc_ci_high: float = _auc("density", "upper")
    mia_density_tpr_at_fpr_1pct: float = _tpr("density", 0.01)
    mia_density_tpr_at_fpr_01pct: float = _tpr("density", 0.001)
    mia_classifier_auc: float = _auc("classifier")
    mia_classifier_auc_ci_low: float = _auc("classifier", "lower")
    mia_classifier_auc_ci_high: float = _auc("classifier", "upper")
    mia_classifier_tpr_at_fpr_1pct: float = _tpr("classifier", 0.01)
    mia_classifier_tpr_at_fpr_01pct: float = _tpr("classifier", 0.001)
    mia_best_attack: str | None
    """Name of the attack reaching mia_auc_max (first in panel order on a tie); None if none ran."""
    mia_attacks: str
    """The attacks run, comma-separated; the fields of the others are NaN."""
    mia_n_members: int
    """Member targets (rows of T) = non-member targets (rows of H)."""
    mia_n_reference: int
    """Rows of the attacker's reference population R (H minus the non-member targets)."""
    mia_n_synthetic: int
    """Rows of S the attacks searched (the KDEs and the classifier use mia_n_fit rows of S and of R)."""
    mia_n_fit: int
    """Rows of S and of R (each) the density and classifier attacks are fitted on."""
    mia_fpr_resolution: float
    """Smallest FPR step, 1 / non-member targets; TPR at an FPR below it is NaN."""
    mia_reason: str | None
    """Why the panel is NaN (holdout reference row), else None."""
    seconds_mia: float
    """Wall time of the attack panel."""
    mia_roc: pd.DataFrame | None = artifact(
        "ROC curve of each attack: columns attack, fpr, tpr; at most ~200 vertices per attack "
        "(thinned evenly along fpr + tpr), for an ROC plot.")


def tpr_at_fpr(fpr: np.ndarray, tpr: np.ndarray, alpha: float) -> float:
    """TPR of the ROC curve (vertices sorted by fpr, as roc_curve gives them) at FPR alpha."""
    i = int(np.searchsorted(fpr, alpha, side="right")) - 1
    if i < 0:
        return math.nan
    if fpr[i] == alpha or i == len(fpr) - 1:
        return float(tpr[i])
    return float(tpr[i] + (alpha - fpr[i]) * (tpr[i + 1] - tpr[i]) / (fpr[i + 1] - fpr[i]))


def auc_interval(y: np.ndarray, score: np.ndarray, n_bootstrap: int, rng: np.random.Generator,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the ROC AUC, members and non-members resampled separately.

    Each replicate's AUC is the Mann-Whitney statistic (ties count ½), the same number
    roc_auc_score gives, computed for many replicates at once by `resampled_aucs`.
    """
    if n_bootstrap == 0:
        return math.nan, math.nan
    pos, neg = score[y == 1], score[y == 0]
    n1, n0 = len(pos), len(neg)
    aucs = np.empty(n_bootstrap)
    batch = max(1, 2_000_000 // (n1 + n0))
    for a in range(0, n_bootstrap, batch):
        b = min(a + batch, n_bootstrap)
        aucs[a:b] = resampled_aucs(pos, neg, rng.integers(0, n1, (b - a, n1)), rng.integers(0, n0, (b - a, n0)))
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(aucs, [tail, 100 - tail])
    return float(low), float(high)


def resampled_aucs(pos: np.ndarray, neg: np.ndarray, pos_rows: np.ndarray, neg_rows: np.ndarray) -> np.ndarray:
    """AUC of each replicate (row) taking members pos[pos_rows[i]] and non-members neg[neg_rows[i]].

    Counting instead of ranking: with the K distinct scores in order, a replicate's non-member
    counts per score give, for each score, the non-members below it plus ½ those equal to it;
    the AUC is the sum of that credit over the replicate's members / (n1·n0). Every term is a
    multiple of ½ far below 2^53, so the sum is exact: the same float as the average-rank
    Mann-Whitney formula, without sorting each replicate.
    """
    levels, inverse = np.unique(np.concatenate([pos, neg]), return_inverse=True)
    inverse = inverse.reshape(-1)
    k, n1 = len(levels), len(pos)
    reps = len(pos_rows)
    codes = inverse[n1:][neg_rows] + k * np.arange(reps)[:, None]
    counts = np.bincount(codes.ravel(), minlength=reps * k).reshape(reps, k).astype(np.float64)
    credit = np.cumsum(counts, axis=1)
    credit -= 0.5 * counts
    u = np.take_along_axis(credit, inverse[:n1][pos_rows], axis=1).sum(axis=1)
    return u / (pos_rows.shape[1] * neg_rows.shape[1])


def thin_roc(fpr: np.ndarray, tpr: np.ndarray, max_points: int = _ROC_POINTS) -> np.ndarray:
    """Indices of at most max_points vertices, evenly spaced along fpr + tpr, ends included."""
    if len(fpr) <= max_points:
        return np.arange(len(fpr))
    arc = fpr + tpr
    grid = np.linspace(0.0, arc[-1], max_points - 2)
    idx = np.searchsorted(arc, grid, side="left").clip(0, len(arc) - 1)
    return np.union1d(idx, [0, len(arc) - 1])


def split_targets(n_train: int, n_holdout: int, n_targets: int, seed: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(member rows of T, non-member rows of H, reference rows of H), each sorted; see the module doc."""
    n = min(n_targets, n_train, n_holdout // 2)
    if n < MIN_TARGETS:
        raise ValueError(
            f"MembershipInference: T has {n_train} rows and H {n_holdout}; the attack panel needs at least "
            f"{MIN_TARGETS} member targets from T and as many non-member targets from H, which may take at "
            f"most half of H (the rest is the attacker's reference R): T >= {MIN_TARGETS} and "
            f"H >= {2 * MIN_TARGETS} rows")
    rng = np.random.default_rng(np.random.SeedSequence([seed, _STREAM_TARGETS]))
    members = np.sort(rng.choice(n_train, size=n, replace=False))
    nonmembers = np.sort(rng.choice(n_holdout, size=n, replace=False))
    reference = np.setdiff1d(np.arange(n_holdout), nonmembers)
    return members, nonmembers, reference


class MembershipInference(MetricFamily):
    """Membership-inference attacks on S with H as the non-member population (docs/definitions/attacks.md §9)."""

    name = "attacks"
    result_type = AttackResult
    definition = "definitions/attacks.md#9-membership-inference-holdbenchs-attack-panel"
    reference = (
        "Distances, AUCs and TPR at FPR 1% equal a brute-force re-implementation (numpy pairwise "
        "distances, scikit-learn's roc_auc_score) to 1e-12, S = T is found (DCR AUC > 0.99) and an "
        "independent S scores every attack within 2.5 bootstrap SE of 0.5: "
        "tests/metrics/test_attacks_reference.py."
    )

    def __init__(self, n_targets: int = 2000, n_bootstrap: int = 200,
                 attacks: Sequence[str] = ATTACKS, fit_max_rows: int = 20000, density_dims: int = 20,
                 density_bandwidth: float | str = "scott", max_levels: int = 50):
        """n_targets: members (= non-members) at most; n_bootstrap: resamples for the AUC interval
        (0 = none); attacks: any of dcr, dcr_diff, density, classifier; fit_max_rows: rows of S
        and of R each (seeded subsample) the density and classifier attacks fit on; density_dims:
        PCA components of the KDE space; density_bandwidth: "scott" or a positive number (in
        whitened units); max_levels: one-hot levels kept per categorical column (rest = other)."""
        attacks = [attacks] if isinstance(attacks, str) else [str(a) for a in attacks]
        unknown = sorted(set(attacks) - set(ATTACKS))
        if unknown or not attacks or len(set(attacks)) != len(attacks):
            raise ValueError(f"MembershipInference: attacks must be distinct names among {list(ATTACKS)}, "
                             f"got {attacks}")
        for opt, value, low in (("n_targets", n_targets, MIN_TARGETS), ("n_bootstrap", n_bootstrap, 0),
                                ("fit_max_rows", fit_max_rows, 10), ("density_dims", density_dims, 1),
                                ("max_levels", max_levels, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"MembershipInference: {opt} must be an integer >= {low}, got {value!r}")
        if max_levels > 250:
            raise ValueError(f"MembershipInference: max_levels must be <= 250 (the classifier's category "
                             f"limit), got {max_levels}")
        if density_bandwidth != "scott" and not (isinstance(density_bandwidth, (int, float))
                                                 and not isinstance(density_bandwidth, bool)
                                                 and math.isfinite(density_bandwidth) and density_bandwidth > 0):
            raise ValueError(f"MembershipInference: density_bandwidth must be 'scott' or a positive number, "
                             f"got {density_bandwidth!r}")
        self.n_targets, self.n_bootstrap = int(n_targets), int(n_bootstrap)
        self.attacks = tuple(a for a in ATTACKS if a in attacks)
        self.fit_max_rows, self.density_dims, self.max_levels = int(fit_max_rows), int(density_dims), int(max_levels)
        self.density_bandwidth = density_bandwidth

    def compute(self, data: EvalData) -> AttackResult:
        start = time.perf_counter()
        if data.holdout_row:
            return _empty(self.attacks, "undefined for the holdout reference row: S is H, so the non-member "
                                        "targets are records of S (docs/definitions/attacks.md §9)", time.perf_counter() - start)
        train = data.train
        _check_columns(train, data.holdout, data.synthetic, data.kinds)
        holdout, synthetic = data.holdout[list(train.columns)], data.synthetic[list(train.columns)]
        if data.seed < 0:
            raise ValueError(f"MembershipInference: seed must be >= 0, got {data.seed}")
        if len(synthetic) == 0:
            raise ValueError("MembershipInference: the synthetic data S has no rows")
        if min(len(train), len(holdout) // 2) < MIN_TARGETS:
            return _empty(self.attacks, f"too few records for the attack panel: T has {len(train)} rows and H "
                                        f"{len(holdout)}; it needs T >= {MIN_TARGETS} and H >= {2 * MIN_TARGETS} "
                                        "(half of H are non-member targets, the rest the attacker's reference)",
                          time.perf_counter() - start)
        members, nonmembers, reference = split_targets(len(train), len(holdout), self.n_targets, data.seed)
        n = len(members)
        r_frame = holdout.iloc[reference].reset_index(drop=True)
        targets = pd.concat([train.iloc[members], holdout.iloc[nonmembers]], ignore_index=True)
        y = np.concatenate([np.ones(n, dtype=np.int8), np.zeros(n, dtype=np.int8)])
        (enc_r, enc_s, enc_t), is_cat = encode([r_frame, synthetic], [r_frame, synthetic, targets],
                                               data.kinds, self.max_levels)
        m = min(len(synthetic), len(r_frame), self.fit_max_rows)
        fit_rng = np.random.default_rng(np.random.SeedSequence([data.seed, _STREAM_FIT]))
        s_fit, r_fit = subsample(len(synthetic), m, fit_rng), subsample(len(r_frame), m, fit_rng)
        scores: dict[str, np.ndarray] = {}
        d_s = None
        if {"dcr", "dcr_diff"} & set(self.attacks):
            d_s = nearest_distance(enc_s.dense, enc_t.dense, data.n_jobs)
        if "dcr" in self.attacks:
            scores["dcr"] = -d_s
        if "dcr_diff" in self.attacks:
            scores["dcr_diff"] = nearest_distance(enc_r.dense, enc_t.dense, data.n_jobs) - d_s
        if "density" in self.attacks:
            scores["density"] = density_scores(enc_s.dense[s_fit], enc_r.dense[r_fit], enc_t.dense,
                                               self.density_dims, self.density_bandwidth)
        if "classifier" in self.attacks:
            clf_seed = int(np.random.SeedSequence([data.seed, _STREAM_CLASSIFIER]).generate_state(1)[0] >> 1)
            scores["classifier"] = classifier_scores(enc_s.compact[s_fit], enc_r.compact[r_fit], enc_t.compact,
                                                     is_cat, clf_seed)
        values, rocs = {}, []
        for a, score in scores.items():
            rng = np.random.default_rng(np.random.SeedSequence([data.seed, _STREAM_BOOTSTRAP, ATTACKS.index(a)]))
            values.update(attack_stats(a, y, score, self.n_bootstrap, rng))
            fpr, tpr, _ = roc_curve(y, score, drop_intermediate=False)
            keep = thin_roc(fpr, tpr)
            rocs.append(pd.DataFrame({"attack": a, "fpr": fpr[keep], "tpr": tpr[keep]}))
        return _result(self.attacks, values, best_of=scores, mia_n_members=n, mia_n_reference=len(reference),
                       mia_n_synthetic=len(synthetic), mia_n_fit=m, mia_fpr_resolution=1.0 / n, mia_reason=None,
                       seconds_mia=time.perf_counter() - start, mia_roc=pd.concat(rocs, ignore_index=True))


def attack_stats(a: str, y: np.ndarray, score: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> dict:
    """The registry fields of attack `a` from labels y (1 = member) and scores (higher = member)."""
    auc = float(roc_auc_score(y, score))
    low, high = auc_interval(y, score, n_bootstrap, rng)
    fpr, tpr, _ = roc_curve(y, score, drop_intermediate=False)
    n_neg = int(np.sum(y == 0))
    out = {f"mia_{a}_auc": auc, f"mia_{a}_auc_ci_low": low, f"mia_{a}_auc_ci_high": high}
    for suffix, alpha in _ALPHAS.items():
        out[f"mia_{a}_tpr_at_fpr_{suffix}"] = tpr_at_fpr(fpr, tpr, alpha) if alpha * n_neg >= 1 else math.nan
    return out


def _result(attacks: tuple[str, ...], values: dict, best_of: dict, **plain) -> AttackResult:
    fields = {}
    for a in ATTACKS:
        for part in ("auc", "auc_ci_low", "auc_ci_high", "tpr_at_fpr_1pct", "tpr_at_fpr_01pct"):
            fields[f"mia_{a}_{part}"] = values.get(f"mia_{a}_{part}", math.nan)
    aucs = [(fields[f"mia_{a}_auc"], a) for a in ATTACKS if a in best_of]
    best = max(aucs, key=lambda t: t[0], default=(math.nan, None))
    return AttackResult(mia_auc_max=best[0], mia_best_attack=best[1], mia_attacks=",".join(attacks),
                        **fields, **plain)


def _empty(attacks: tuple[str, ...], reason: str, seconds: float) -> AttackResult:
    return _result(attacks, {}, {}, mia_n_members=0, mia_n_reference=0, mia_n_synthetic=0, mia_n_fit=0,
                   mia_fpr_resolution=math.nan, mia_reason=reason, seconds_mia=seconds, mia_roc=None)


def _check_columns(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, kinds) -> None:
    for name, frame in (("H", holdout), ("S", synthetic)):
        missing = [c for c in train.columns if c not in frame.columns]
        if missing:
            raise ValueError(f"MembershipInference: {name} lacks the column(s) {missing} of T")
    for col in train.columns:
        if col not in kinds or kinds[col] not in ("numeric", "categorical"):
            raise ValueError(f"MembershipInference: column {col!r} needs kind 'numeric' or 'categorical', "
                             f"got {kinds.get(col)!r}")
