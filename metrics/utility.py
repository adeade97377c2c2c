"""Utility: pMSE ratio (docs/definitions/bale-quick.md §8), CART pMSE, TSTR and confidence-interval overlap (docs/definitions/utility.md §10).

- **pMSE**: `holdbench.metrics.pmse.pmse_ratio` (polynomial logistic propensity, m = rank of the design,
  null m·c·(1−c)/N), reported with c (`pmse_c`) and, as a separately labelled metric, Bale &
  Quick's form `pmse_ratio_bq` (m = their count of every polynomial column, `pmse_n_terms_bq`);
  optional synthpop-style CART variant with a permutation null (`holdbench.metrics.pmse.pmse_cart`).
- **TSTR**: sklearn's HistGradientBoostingClassifier (native categorical support, seeded, default
  settings) trained on S and, as the reference, on T; both scored on H by ROC AUC. Features are
  every column but the target: categoricals as codes of T's levels (the 254 most frequent when
  there are more; the rest and values T has not got are treated as missing), numerics as floats.
  Target classes are T's distinct target values; rows of S or H whose target is missing or not
  one of T's classes are left out (counted in the reason). Binary target: AUC of the second
  class in sorted order (adult '>50K', bank 'yes', credit-default 1, online-shoppers True).
  Multi-class: macro average of the one-vs-rest AUCs over the classes present in H. When S has
  only one target class its model predicts a constant, whose AUC is 0.5 (stated in the reason).
  AUC ratio = AUC_S / AUC_T (1 = as useful as the real data; higher is better).
  A numeric target with more than `_MAX_CLASSES` distinct values in T is a regression target instead:
  HistGradientBoostingRegressor (same features, seed and defaults) trained on S and on T, both scored on H
  by R² (sklearn's r2_score); rows whose target is missing are left out (counted in the reason). R² ratio =
  R²_S / R²_T, undefined (NaN, with a reason) when T's own R² is not positive.
- **CI overlap** (Karr et al. 2006): the main-effects logistic regression of a binary target
  (positive class as above), unpenalised, fitted with statsmodels on T and on S with one
  design learned on T: numerics standardised with T's mean and SD (missing → T's mean);
  categoricals one-hot against T's levels with the most frequent level of T as the dropped
  reference, levels with fewer than `_MIN_LEVEL` rows in T, values T has not got and missing
  values pooled into one `_other_` level; terms aliased in T's design dropped (pivoted
  Cholesky of the Gram matrix).
  Per coefficient (intercept included), with 95% Wald intervals I_T, I_S:
  overlap = ½(|I_T∩I_S|/|I_T| + |I_T∩I_S|/|I_S|), 0 when disjoint. A coefficient that S cannot
  estimate (its column constant or aliased in S, S with one target class, or an SE that is
  non-finite or above 100, the mark of quasi-separation: an unpenalised estimate running off
  to infinity) scores 0: S lost that information; a coefficient T itself cannot estimate in
  that sense is left out. Both cases are named in the reason. Newton's method (at most 35
  iterations; a fit still moving then is quasi-separated, stated in the reason); on a singular
  Hessian or a separation error, BFGS. Multi-class targets: NaN with a reason.
- **Holdout row** (S = H): pMSE and CI overlap are computed (the H-vs-T reference, pMSE ratio ≈ 1);
  TSTR on S = H would test on its own training rows, so its S-side values are NaN with a reason.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd
from scipy.linalg import lapack
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import r2_score, roc_auc_score
from statsmodels.tools.sm_exceptions import PerfectSeparationError
from threadpoolctl import threadpool_limits

from holdbench.metrics.pmse import pmse_cart, pmse_ratio
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

_Z95 = NormalDist().inv_cdf(0.975)
_MIN_LEVEL = 20
_NEWTON_ITER = 35
_MAX_SE = 100.0
_MAX_CODES = 254
_MAX_CLASSES = 50


@dataclass(frozen=True)
class UtilityResult:
    """pMSE ratio (1 ideal), TSTR AUC ratio (higher better) and CI overlap (1 ideal, higher better)."""

    pmse: float = metric("pMSE", "utility", direction="lower", digits=5,
                         meaning="Propensity MSE mean((p̂-c)²) of a degree-3 polynomial logistic model "
                                 "separating T from S; compare with pmse_expected.")
    pmse_ratio: float = metric("pMSE ratio", "utility", direction="ideal", ideal=1.0, digits=3, headline=True,
                               meaning="pMSE / its expectation m·c(1-c)/N when S and T share a "
                                       "distribution: 1 = indistinguishable, larger = worse (docs/definitions/bale-quick.md §8).")
    pmse_ratio_bq: float = metric("pMSE ratio (Bale & Quick form)", "utility", direction="ideal", ideal=1.0,
                                  digits=3,
                                  meaning="pMSE / (m_all·c(1-c)/N) with m_all Bale & Quick's count of terms: "
                                          "every monomial of the p encoded columns, duplicates of lower "
                                          "terms included (pmse_n_terms_bq); pmse_ratio uses the rank.")
    pmse_cart_ratio: float = metric("pMSE ratio (CART)", "utility", direction="ideal", ideal=1.0, digits=3,
                                    meaning="pMSE of a CART propensity model / its mean over label "
                                            "permutations (synthpop utility.gen); 1 ideal. NaN when off.")
    tstr_auc_synthetic: float = metric("TSTR AUC (train S)", "utility", direction="higher", digits=4,
                                       meaning="ROC AUC on H of a gradient-boosting classifier of the target "
                                               "trained on S.")
    tstr_auc_train: float = metric("TSTR AUC (train T)", "utility", direction="higher", digits=4,
                                   meaning="The same classifier trained on T: the reference.")
    tstr_auc_ratio: float = metric("TSTR AUC ratio", "utility", direction="higher", digits=3, headline=True,
                                   meaning="AUC(train S) / AUC(train T) on H: 1 = as useful as the real "
                                           "data for prediction; higher is better.")
    tstr_r2_synthetic: float = metric("TSTR R² (train S)", "utility", direction="higher", digits=4,
                                      meaning="A numeric target: R² on H of a gradient-boosting regressor of the "
                                              "target trained on S.")
    tstr_r2_train: float = metric("TSTR R² (train T)", "utility", direction="higher", digits=4,
                                  meaning="The same regressor trained on T: the reference.")
    tstr_r2_ratio: float = metric("TSTR R² ratio", "utility", direction="higher", digits=3,
                                  meaning="R²(train S) / R²(train T) on H for a numeric target: 1 = as useful as "
                                          "the real data for prediction; higher is better (NaN when T's R² is "
                                          "not positive).")
    ci_overlap_mean: float = metric("CI overlap (mean)", "utility", direction="higher", digits=3,
                                    meaning="Mean over coefficients of the 95% interval overlap of a "
                                            "main-effects logistic regression of the target fitted on T "
                                            "and on S (Karr et al.); 1 = identical inference.")
    ci_overlap_min: float = metric("CI overlap (min)", "utility", direction="higher", digits=3,
                                   meaning="The smallest per-coefficient interval overlap.")
    pmse_expected: float = math.nan
    """m·c·(1−c)/N, the pMSE expected under 'same distribution'."""
    pmse_degree: int = 0
    """Polynomial degree actually used (lower than asked when the design did not fit max_design_mb)."""
    pmse_n_terms: int = 0
    """m: non-intercept terms of the propensity model (rank of the expanded design)."""
    pmse_c: float = math.nan
    """c = |S|/(|T|+|S|), the synthetic share of the rows the pMSE model saw (½ when S was
    subsampled to |T| rows); the null m·c·(1−c)/N depends on it."""
    pmse_n_terms_bq: int = 0
    """Bale & Quick's count n_poly_terms(p, degree) over the p non-constant encoded columns, the m
    of pmse_ratio_bq (≥ pmse_n_terms: it counts terms that duplicate lower ones)."""
    pmse_reason: str | None = None
    """Why the degree differs from the one asked, or the fit did not converge (None when neither)."""
    pmse_cart: float = math.nan
    """pMSE of the CART propensity model (NaN when cart=False)."""
    pmse_cart_null: float = math.nan
    """Mean pMSE of the CART model over label permutations (NaN when cart=False)."""
    ci_overlap_worst: str | None = None
    """Name of the coefficient with the smallest overlap."""
    ci_n_coefficients: int = 0
    """Coefficients averaged in ci_overlap_mean (intercept included)."""
    utility_reason: str | None = None
    """Why TSTR or CI-overlap values are NaN or how they were handled (None when all is plain)."""
    seconds_utility: float = 0.0
    """Wall time of the utility family."""
    ci_overlap_table: pd.DataFrame | None = artifact(
        "One row per coefficient: term, estimate/lower/upper on T and on S, overlap, note.")


class Utility(MetricFamily):
    """pMSE ratio, optional CART pMSE, TSTR AUC and CI overlap (docs/definitions/bale-quick.md §8, docs/definitions/utility.md §10)."""

    name = "utility"
    result_type = UtilityResult
    definition = "definitions/utility.md#10-utility-beyond-marginals"
    reference = (
        "pMSE equals base R's glm(family = binomial) on the same design to 2e-6 relative at degrees "
        "1-3 (tests/metrics/test_pmse_r_reference.py, which also compares R synthpop's "
        "utility.gen(method = \"logit\") to 1e-5 where synthpop is installed), its null m·c(1-c)/N the "
        "mean pMSE over label permutations within 20% (tests/metrics/test_pmse_null.py), the TSTR "
        "AUCs scikit-learn's HistGradientBoostingClassifier fitted directly to 1e-12 and the CI "
        "overlap statsmodels' Logit with Karr's formula to 1e-6 "
        "(tests/metrics/test_utility_reference.py); scripts/reference/check_pmse_reference.py "
        "compares them on the paper's files."
    )

    def __init__(self, degree: int = 3, pmse_subsample: int | bool | None = None,
                 max_design_mb: float | None = 4096, cart: bool = False, cart_permutations: int = 20,
                 cart_cp: float = 1e-4, tstr: bool = True, ci_overlap: bool = True,
                 pmse_stop_ratio: float | None = 10.0) -> None:
        """degree: polynomial degree of the pMSE model; pmse_subsample: truthy = S reduced to a seeded
        sample of |T| rows first (c = ½ and N = 2|T|, as the holdout row and Bale & Quick's sets; a
        cheaper estimator that changes the value, since the ratio's excess grows with N·c(1−c):
        adult/synthpop 1.2768 -> 1.2338, see scripts/bench/bench_utility.py); max_design_mb: cap on the pMSE design (lower degree beyond it, stated);
        pmse_stop_ratio: a pMSE fit still unconverged after 3 preconditioned rounds with its ratio
        above this is stopped there, stated in pmse_reason (None: fit to convergence or the cap;
        see holdbench.metrics.pmse.pmse_ratio: credit-default/flip50 19.53 in 230 s vs 18.87 in 85 s);
        cart: also the CART pMSE with `cart_permutations` label permutations and complexity `cart_cp`
        (see holdbench.metrics.pmse.pmse_cart); tstr, ci_overlap: on/off."""
        if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
            raise ValueError(f"utility: degree must be an integer >= 1, got {degree!r}")
        if max_design_mb is not None and not (isinstance(max_design_mb, (int, float)) and max_design_mb > 0):
            raise ValueError(f"utility: max_design_mb must be a positive number or None, got {max_design_mb!r}")
        if isinstance(cart_permutations, bool) or not isinstance(cart_permutations, int) or cart_permutations < 1:
            raise ValueError(f"utility: cart_permutations must be an integer >= 1, got {cart_permutations!r}")
        if not (isinstance(cart_cp, (int, float)) and not isinstance(cart_cp, bool) and cart_cp >= 0):
            raise ValueError(f"utility: cart_cp must be a number >= 0, got {cart_cp!r}")
        for key, value in (("cart", cart), ("tstr", tstr), ("ci_overlap", ci_overlap)):
            if not isinstance(value, bool):
                raise ValueError(f"utility: {key} must be true or false, got {value!r}")  # noqa: TRY004
        if pmse_stop_ratio is not None and not (isinstance(pmse_stop_ratio, (int, float))
                                                 and not isinstance(pmse_stop_ratio, bool) and pmse_stop_ratio > 0):
            raise ValueError(f"utility: pmse_stop_ratio must be a positive number or None, got {pmse_stop_ratio!r}")
        if pmse_subsample is not None and not isinstance(pmse_subsample, (bool, int)):
            raise ValueError(f"utility: pmse_subsample must be None, true/false or an integer, got {pmse_subsample!r}")
        self.degree, self.pmse_subsample, self.max_design_mb = degree, pmse_subsample, max_design_mb
        self.pmse_stop_ratio = pmse_stop_ratio
        self.cart_cp = float(cart_cp)
        self.cart, self.cart_permutations, self.tstr, self.ci_overlap = cart, cart_permutations, tstr, ci_overlap

    def compute(self, data: EvalData) -> UtilityResult:
        start = time.perf_counter()
        reasons: list[str] = []
        fields: dict = {}
        score = pmse_ratio(data.train, data.synthetic, data.kinds, degree=self.degree, seed=data.seed,
                           subsample=self.pmse_subsample, max_design_mb=self.max_design_mb,
                           stop_ratio=self.pmse_stop_ratio)
        fields.update(pmse=score.pmse, pmse_ratio=score.ratio, pmse_ratio_bq=score.ratio_bq,
                      pmse_expected=score.expected, pmse_degree=score.degree, pmse_n_terms=score.n_terms,
                      pmse_c=score.c, pmse_n_terms_bq=score.n_terms_bq, pmse_reason=score.reason or None)
        fields.update(pmse_cart_ratio=math.nan)
        if self.cart:
            cart = pmse_cart(data.train, data.synthetic, data.kinds, permutations=self.cart_permutations,
                             seed=data.seed, subsample=self.pmse_subsample, cp=self.cart_cp)
            if cart.reason:
                reasons.append(cart.reason)
            fields.update(pmse_cart_ratio=cart.ratio, pmse_cart=cart.pmse, pmse_cart_null=cart.null_mean)
        fields.update(dict.fromkeys(("tstr_auc_synthetic", "tstr_auc_train", "tstr_auc_ratio", "tstr_r2_synthetic",
                                      "tstr_r2_train", "tstr_r2_ratio", "ci_overlap_mean", "ci_overlap_min"),
                                    math.nan))
        target = data.target
        if target is None:
            reasons.append("no target: TSTR and CI overlap need the dataset's target")
        elif target not in data.train.columns:
            raise ValueError(f"utility: target column {target!r} is not in the data")
        else:
            if self.tstr:
                with threadpool_limits(limits=max(1, int(data.n_jobs)), user_api="openmp"):
                    fields.update(_tstr(data, target, reasons))
            else:
                reasons.append("TSTR switched off (tstr=false)")
            if self.ci_overlap:
                fields.update(_ci_overlap(data, target, reasons))
            else:
                reasons.append("CI overlap switched off (ci_overlap=false)")
        return UtilityResult(**fields, utility_reason="; ".join(reasons) or None,
                             seconds_utility=time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------
# target and features


def _target_codes(train: pd.Series, other: pd.Series, numeric: bool) -> tuple[np.ndarray, np.ndarray, list]:
    """Codes 0..K-1 of T's sorted target classes for T and another table (-1: missing/unknown)."""
    def values(s: pd.Series) -> pd.Series:
        return pd.to_numeric(s, errors="coerce") if numeric else s.astype(str).where(s.notna())

    t, o = values(train), values(other)
    classes = sorted(t.dropna().unique().tolist())
    lookup = {v: i for i, v in enumerate(classes)}
    return _codes(t, lookup), _codes(o, lookup), classes


def _codes(values: pd.Series, lookup: dict) -> np.ndarray:
    return values.map(lookup).fillna(-1).to_numpy(dtype=np.int64)


def _hgb_features(train: pd.DataFrame, frame: pd.DataFrame, kinds: Mapping[str, str]) -> np.ndarray:
    cols = []
    for col in train.columns:
        if kinds[col] == "categorical":
            counts = train[col].astype(str).where(train[col].notna()).value_counts(sort=True)
            levels = sorted(counts.index[:_MAX_CODES].tolist())
            lookup = {v: float(i) for i, v in enumerate(levels)}
            vals = frame[col].astype(str).where(frame[col].notna())
            cols.append(vals.map(lookup).to_numpy(dtype=float, na_value=np.nan))
        else:
            try:
                cols.append(pd.to_numeric(frame[col], errors="raise").to_numpy(dtype=float, na_value=np.nan))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"utility: numeric column {col!r} has a non-numeric value: {exc}") from None
    return np.column_stack(cols) if cols else np.empty((len(frame), 0))


def _predictors(data: EvalData, target: str) -> tuple[list[str], dict[str, str], np.ndarray]:
    """TSTR's features (every column but the target), their kinds, and which of them are categorical."""
    features = [c for c in data.train.columns if c != target]
    kinds = {c: data.kinds[c] for c in features}
    return features, kinds, np.array([kinds[c] == "categorical" for c in features], dtype=bool)


def _tstr(data: EvalData, target: str, reasons: list[str]) -> dict:
    numeric = data.kinds[target] == "numeric"
    y_t, y_h, classes = _target_codes(data.train[target], data.holdout[target], numeric)
    nan = dict.fromkeys(("tstr_auc_synthetic", "tstr_auc_train", "tstr_auc_ratio"), math.nan)
    if len(classes) > _MAX_CLASSES:
        if numeric:
            return _tstr_regression(data, target, reasons)
        reasons.append(f"TSTR: target {target!r} has {len(classes)} distinct values in T, "
                       f"not a classification target (at most {_MAX_CLASSES})")
        return nan
    features, kinds, mask = _predictors(data, target)
    x_t = _hgb_features(data.train[features], data.train[features], kinds)
    x_h = _hgb_features(data.train[features], data.holdout[features], kinds)
    keep_h = y_h >= 0
    if (~keep_h).any():
        reasons.append(f"TSTR: {int((~keep_h).sum())} H rows with a missing or unknown target left out")
    x_h, y_h = x_h[keep_h], y_h[keep_h]
    if len(np.unique(y_h)) < 2:
        reasons.append("TSTR: H has fewer than two target classes, AUC undefined")
        return nan
    keep_t = y_t >= 0
    auc_t = _auc(_fit_predict(x_t[keep_t], y_t[keep_t], x_h, mask, len(classes), data.seed), y_h, len(classes))
    out = {**nan, "tstr_auc_train": auc_t}
    if data.holdout_row:
        reasons.append("TSTR: the holdout row would train on H and test on H (in-sample), not computed")
        return out
    _, y_s, _ = _target_codes(data.train[target], data.synthetic[target], numeric)
    x_s = _hgb_features(data.train[features], data.synthetic[features], kinds)
    keep_s = y_s >= 0
    if (~keep_s).any():
        reasons.append(f"TSTR: {int((~keep_s).sum())} S rows with a missing or unknown target left out")
    x_s, y_s = x_s[keep_s], y_s[keep_s]
    if len(np.unique(y_s)) < 2:
        reasons.append("TSTR: S has fewer than two target classes, its model predicts a constant (AUC 0.5)")
        proba = np.zeros((len(y_h), len(classes)))
        if len(y_s):
            proba[:, y_s[0]] = 1.0
    else:
        proba = _fit_predict(x_s, y_s, x_h, mask, len(classes), data.seed)
    auc_s = _auc(proba, y_h, len(classes))
    return {**out, "tstr_auc_synthetic": auc_s, "tstr_auc_ratio": auc_s / auc_t if auc_t > 0 else math.nan}


def _tstr_regression(data: EvalData, target: str, reasons: list[str]) -> dict:
    """TSTR of a numeric target: R² on H of a seeded HGB regressor trained on T and on S, and their ratio."""
    features, kinds, mask = _predictors(data, target)

    def xy(frame: pd.DataFrame, who: str) -> tuple[np.ndarray, np.ndarray]:
        y = pd.to_numeric(frame[target], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        keep = np.isfinite(y)
        if (~keep).any():
            reasons.append(f"TSTR: {int((~keep).sum())} {who} rows with a missing target left out")
        return _hgb_features(data.train[features], frame[features], kinds)[keep], y[keep]

    def r2(x: np.ndarray, y: np.ndarray) -> float:
        model = HistGradientBoostingRegressor(categorical_features=mask if mask.any() else None,
                                              random_state=data.seed)
        return float(r2_score(y_h, model.fit(x, y).predict(x_h)))

    nan = dict.fromkeys(("tstr_r2_synthetic", "tstr_r2_train", "tstr_r2_ratio"), math.nan)
    x_h, y_h = xy(data.holdout, "H")
    if len(y_h) < 2 or np.ptp(y_h) == 0:
        reasons.append("TSTR: H has fewer than two distinct target values, R² undefined")
        return nan
    r2_t = r2(*xy(data.train, "T"))
    out = {**nan, "tstr_r2_train": r2_t}
    if data.holdout_row:
        reasons.append("TSTR: the holdout row would train on H and test on H (in-sample), not computed")
        return out
    x_s, y_s = xy(data.synthetic, "S")
    if len(y_s) == 0:
        reasons.append("TSTR: S has no row with a target value")
        return out
    r2_s = r2(x_s, y_s)
    if r2_t <= 0:
        reasons.append(f"TSTR: T's own R² on H is {r2_t:.4g}, not positive: the R² ratio is undefined")
    return {**out, "tstr_r2_synthetic": r2_s, "tstr_r2_ratio": r2_s / r2_t if r2_t > 0 else math.nan}


def _fit_predict(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, mask: np.ndarray, k: int,
                 seed: int) -> np.ndarray:
    """Class probabilities (n_test × k, zeros for classes absent from y) of a seeded HGB model."""
    model = HistGradientBoostingClassifier(categorical_features=mask if mask.any() else None,
                                           random_state=seed)
    model.fit(x, y)
    out = np.zeros((len(x_test), k))
    out[:, model.classes_] = model.predict_proba(x_test)
    return out


def _auc(proba: np.ndarray, y: np.ndarray, k: int) -> float:
    """Binary: AUC of class 1; more classes: macro mean of one-vs-rest AUCs over classes in y."""
    if k == 2:
        return float(roc_auc_score(y == 1, proba[:, 1]))
    present = np.unique(y)
    return float(np.mean([roc_auc_score(y == c, proba[:, c]) for c in present]))


# ---------------------------------------------------------------------------------------------
# confidence-interval overlap


def _ci_design(train: pd.DataFrame, kinds: Mapping[str, str]):
    """A function frame -> (design with intercept, term names), learned on T's feature columns."""
    parts = []
    for col in train.columns:
        if kinds[col] == "categorical":
            vals = train[col].astype(str).where(train[col].notna(), "_nan_")
            counts = vals.value_counts()
            kept = sorted(counts.index[counts >= _MIN_LEVEL].tolist())
            ref = counts.index[0] if counts.iloc[0] >= _MIN_LEVEL else "_other_"
            n_other = int(counts[counts < _MIN_LEVEL].sum())
            dummies = [v for v in kept if v != ref] + (["_other_"] if ref != "_other_" and n_other else [])
            parts.append((col, "categorical", (set(kept), dummies)))
        else:
            v = pd.to_numeric(train[col], errors="coerce")
            mean, sd = float(v.mean()), float(v.std(ddof=0))
            if not (math.isfinite(mean) and math.isfinite(sd) and sd > 0):
                continue
            parts.append((col, "numeric", (mean, sd)))

    def build(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
        cols, names = [np.ones(len(frame))], ["const"]
        for col, kind, spec in parts:
            if kind == "categorical":
                kept, dummies = spec
                vals = frame[col].astype(str).where(frame[col].notna(), "_nan_")
                vals = vals.where(vals.isin(kept), "_other_").to_numpy()
                for level in dummies:
                    cols.append((vals == level).astype(float))
                    names.append(f"{col}={level}")
            else:
                mean, sd = spec
                v = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                cols.append((np.where(np.isnan(v), mean, v) - mean) / sd)
                names.append(col)
        return np.column_stack(cols), names

    return build


def _independent_columns(x: np.ndarray) -> np.ndarray:
    """Indices (in original order) of a maximal linearly independent set of x's columns: pivoted
    Cholesky of the scaled Gram matrix, a column dropped when less than 1e-9 of its (uncentred)
    sum of squares is left unexplained by the columns kept before it."""
    gram = x.T @ x
    norms = np.sqrt(np.diag(gram))
    live = norms > 0
    scale = np.where(live, norms, 1.0)
    _, piv, rank, info = lapack.dpstrf(gram / np.outer(scale, scale), lower=1, tol=1e-9)
    if info < 0:
        raise RuntimeError(f"pivoted Cholesky failed (info={info})")
    keep = piv[:rank] - 1
    return np.sort(keep[live[keep]])


def _logit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """Unpenalised logistic fit: estimates, standard errors, and a note on the method when not Newton."""
    from statsmodels.discrete.discrete_model import Logit  # on use: importing statsmodels takes ~1.5 CPU s

    errors = []
    for method, kw in (("newton", {"maxiter": _NEWTON_ITER}), ("bfgs", {"maxiter": 2000})):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = Logit(y, x).fit(method=method, disp=0, **kw)
            params, bse = np.asarray(fit.params, float), np.asarray(fit.bse, float)
            if np.all(np.isfinite(params)):
                note = "" if method == "newton" else f"BFGS after Newton failed ({errors[0]})"
                if not fit.mle_retvals.get("converged", True):
                    note = _join(note, f"{method} did not converge in {kw['maxiter']} iterations "
                                       "(quasi-separation or near-aliasing: coefficients with "
                                       f"SE > {_MAX_SE:g} treated as not estimable)")
                return params, bse, note
            errors.append("non-finite estimates")
        except (np.linalg.LinAlgError, ValueError, PerfectSeparationError) as exc:
            errors.append(type(exc).__name__)
    nan = np.full(x.shape[1], np.nan)
    return nan, nan, f"logistic fit failed ({', '.join(errors)})"


def _overlap(lo_t: float, hi_t: float, lo_s: float, hi_s: float) -> float:
    inter = max(0.0, min(hi_t, hi_s) - max(lo_t, lo_s))
    return 0.5 * (inter / (hi_t - lo_t) + inter / (hi_s - lo_s))


def _ci_overlap(data: EvalData, target: str, reasons: list[str]) -> dict:
    nan = dict.fromkeys(("ci_overlap_mean", "ci_overlap_min"), math.nan)
    numeric = data.kinds[target] == "numeric"
    y_t, y_s, classes = _target_codes(data.train[target], data.synthetic[target], numeric)
    if len(classes) != 2:
        reasons.append(f"CI overlap: needs a binary target, T has {len(classes)} classes")
        return nan
    features = [c for c in data.train.columns if c != target]
    build = _ci_design(data.train[features], data.kinds)
    x_t, names = build(data.train[features])
    x_s, _ = build(data.synthetic[features])
    keep_t, keep_s = y_t >= 0, y_s >= 0
    x_t, y_t, x_s, y_s = x_t[keep_t], y_t[keep_t], x_s[keep_s], y_s[keep_s]
    cols = _independent_columns(x_t)
    if len(cols) < x_t.shape[1]:
        reasons.append(f"CI overlap: {x_t.shape[1] - len(cols)} terms aliased in T's design dropped")
    x_t, x_s, names = x_t[:, cols], x_s[:, cols], [names[i] for i in cols]
    est_t, se_t, note_t = _logit(x_t, y_t.astype(float))
    if note_t:
        reasons.append(f"CI overlap (T): {note_t}")
    est_s, se_s = np.full(len(names), np.nan), np.full(len(names), np.nan)
    if len(np.unique(y_s)) == 2:
        sub = _independent_columns(x_s)
        e, s, note_s = _logit(x_s[:, sub], y_s.astype(float))
        est_s[sub], se_s[sub] = e, s
        if note_s:
            reasons.append(f"CI overlap (S): {note_s}")
    else:
        reasons.append("CI overlap: S has fewer than two target classes, no coefficient estimable (overlap 0)")
    rows = []
    for j, name in enumerate(names):
        lo_t, hi_t = est_t[j] - _Z95 * se_t[j], est_t[j] + _Z95 * se_t[j]
        lo_s, hi_s = est_s[j] - _Z95 * se_s[j], est_s[j] + _Z95 * se_s[j]
        if not (np.isfinite(se_t[j]) and 0 < se_t[j] <= _MAX_SE):
            value, note = math.nan, "not estimable from T: left out"
        elif not (np.isfinite(se_s[j]) and 0 < se_s[j] <= _MAX_SE and np.isfinite(est_s[j])):
            value, note = 0.0, "not estimable from S: overlap 0"
        else:
            value, note = _overlap(lo_t, hi_t, lo_s, hi_s), ""
        rows.append({"term": name, "estimate_train": est_t[j], "lower_train": lo_t, "upper_train": hi_t,
                     "estimate_synthetic": est_s[j], "lower_synthetic": lo_s, "upper_synthetic": hi_s,
                     "overlap": value, "note": note})
    table = pd.DataFrame(rows)
    for label, part in (("T", "not estimable from T"), ("S", "not estimable from S")):
        bad = table.loc[table["note"].str.startswith(part), "term"].tolist()
        if bad:
            reasons.append(f"CI overlap: not estimable from {label}: {', '.join(bad[:5])}"
                           + (f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""))
    valid = table.dropna(subset=["overlap"])
    if valid.empty:
        return {**nan, "ci_overlap_table": table}
    worst = valid.loc[valid["overlap"].idxmin()]
    return {"ci_overlap_mean": float(valid["overlap"].mean()), "ci_overlap_min": float(worst["overlap"]),
            "ci_overlap_worst": str(worst["term"]), "ci_n_coefficients": len(valid), "ci_overlap_table": table}


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b
