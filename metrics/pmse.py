"""pMSE and pMSE ratio (docs/definitions/bale-quick.md §8, Bale & Quick 2024), and synthpop's CART variant.

Logistic version, exactly docs/definitions/bale-quick.md §8:

1. Stack T and S (label 1 for S); c = |S|/N, N = |T| + |S|.
2. Every column as one number (`encode_numeric`):
   - categorical: integer code of T's levels (T's distinct values, compared as strings, in
     sorted order, codes 0..L-1); a missing value gets code L; every value of S that T does
     not have gets a code of its own, L+1, L+2, ... in sorted order of those values.
   - numeric (bool counts as 0/1): the value as float; a missing value is imputed with T's
     median (0 when T has none) **and**, only for a column that has a missing value in T or
     S, a 0/1 missing-indicator column `<col>__missing` is added as one more input column
     (so a difference in missingness is visible to the model).
3. Standardise the columns on the stacked data; columns constant on T∪S carry nothing and
   are dropped.
4. All monomials up to `degree` (sklearn `PolynomialFeatures(include_bias=False)`), standardised
   again; columns constant after expansion (e.g. z² of a symmetric 0/1 column) are dropped.
5. Terms that are exact linear combinations of other terms (a column with k distinct values
   has only k-1 independent powers; functionally dependent columns such as adult's education
   and education-num) are not separate parameters. The kept set is chosen by a pivoted
   Cholesky factorisation of the terms' correlation matrix (a term is dropped when less than
   1e-9 of its variance is left unexplained by the terms kept before it); **m is the number
   of kept terms, i.e. the rank of the design**, which is how synthpop's `utility.gen`
   counts it (the non-aliased coefficients of the glm, minus the intercept).
   Bale & Quick's code counts every column of the expansion instead, n_poly_terms(p, degree) for
   the p encoded input columns not constant on T ∪ S (missing indicators included), terms
   that duplicate lower ones (x² of a 0/1 column) included: `ratio_bq` uses that count
   (`n_terms_bq`), the "Bale & Quick form"; `ratio` (the rank) is holdbench's own.
6. Unpenalised logistic regression (with intercept) fitted in-sample, p̂ its fitted
   probabilities, pMSE = mean((p̂ − c)²), expected = m·c·(1−c)/N, ratio = pMSE/expected.
   (Bale & Quick's code writes 2·m·(1−c)²·c/N, the same number only at c = ½; for two samples
   of one distribution the expectation is m·c·(1−c)/N at every c, docs/definitions/bale-quick.md §8.)

Numerics: the model is fitted in the whitened coordinates of the kept terms (coefficients
beta = B·gamma with B the inverse Cholesky factor of the terms' correlation matrix: an
invertible reparametrisation, so the fitted p̂ of the unpenalised model are exactly the same),
which makes the problem well conditioned; scipy's L-BFGS-B then converges in tens of
iterations, each costing two matrix-vector products with the design (the whitened matrix is
never formed). When S is far from T, the Hessian at the optimum is far from the starting one:
after 30 iterations the exact Hessian is computed and L-BFGS goes on preconditioned by it,
refreshed every 60 iterations (see `fit_propensity`). Convergence: max |gradient| of the
mean log-loss ≤ 1e-7 in the whitened coordinates (pMSE to ~5 significant digits); a fit that
did not converge is stated in `reason` and `converged=False`, with a RuntimeWarning. A fit that
after the plain iterations and 3 preconditioned rounds is still short of its tolerance while its
pMSE ratio already exceeds `stop_ratio` (default 10: S is plainly told apart from T) is stopped
there and says so in `reason` (`stopped=True`): almost separable data otherwise runs the whole
iteration cap for a few percent of a ratio that carries no decision (credit-default/flip50:
230 s for 19.53 at the cap, 85 s for 18.87 stopped, one core). Cost on
one core, adult (N = 74,421, 815 terms): ~3 s for the design and its Gram product plus 3-7 s
of fitting when S is near T (more when p̂ approaches 0/1); peak memory about 1.7 times the
N × M float64 design (adult: ~0.9 GB RSS). credit-default at degree 3 (N = 65,000, 2,924
terms, 1.5 GB design): 53-55 s against synthpop's file, 2.2 GB RSS (scripts/bench/bench_panel.py).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.linalg import cholesky, lapack, solve_triangular
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.preprocessing import PolynomialFeatures
from sklearn.tree import DecisionTreeClassifier

_RANK_TOL = 1e-9
_GRAD_TOL = 1e-7
_PLAIN_ITER = 30
_ROUNDS = 10
_ROUND_ITER = 60
#: preconditioned rounds after which a fit still short of its tolerance is stopped when its pMSE
#: ratio already exceeds `stop_ratio` (see pmse_ratio)
_STOP_AFTER_ROUNDS = 3
#: ridges (times the Hessian's largest diagonal entry) added to the preconditioner's Hessian after a
#: preconditioned round whose line search failed at once (see fit_propensity), one more per such round
_RIDGES = (1e-6, 1e-4, 1e-2)
#: row blocks of the design in the loss/gradient pass: about 2 MB, so a block read for eta is still
#: in cache for its gradient product (bank-marketing, 72,606 x 1,139: 86 -> 67 ms a call, one core)
_BLOCK_BYTES = 2**21


@dataclass(frozen=True)
class PMSEScore:
    """One pMSE computation; `ratio` is the number to read (1 ideal, larger = easier to tell S from T)."""

    pmse: float
    """mean((p̂ − c)²), the propensity mean squared error (0 best, c(1−c) worst)."""
    expected: float
    """m·c·(1−c)/N, the pMSE expected when S and T come from the same distribution."""
    ratio: float
    """pmse / expected: 1 is ideal, larger is worse (below 1 is noise)."""
    degree: int
    """Polynomial degree actually used."""
    n_terms: int
    """m: non-intercept terms of the model (rank of the expanded design)."""
    c: float
    """|S|/N, the synthetic share of the stacked rows."""
    n: int
    """N = |T| + |S|, rows used (after any subsampling of S)."""
    reason: str
    """"" or why the degree differs from the one asked / the fit did not converge."""
    n_columns: int = 0
    """Expanded, non-constant terms before the rank reduction (m ≤ n_columns)."""
    converged: bool = True
    """Whether the logistic fit reached its tolerance."""
    n_iter: int = 0
    """L-BFGS iterations of the logistic fit."""
    stopped: bool = False
    """True when the fit was stopped early because its ratio already exceeded stop_ratio."""
    n_terms_bq: int = 0
    """Bale & Quick's count of terms: every monomial of degree 1..degree in the p encoded input
    columns that are not constant on T ∪ S, n_poly_terms(p, degree), duplicates of lower terms
    (x² of a 0/1 column, x³ of a 3-valued one) included; their code's `k - 1`."""
    ratio_bq: float = math.nan
    """pmse / (n_terms_bq·c·(1−c)/N): the ratio with Bale & Quick's count of terms (their form);
    equals ratio · n_terms / n_terms_bq."""


def expected_pmse(m: int, c: float, n: int) -> float:
    """pMSE expected under 'same distribution' for a logistic model with m non-intercept terms."""
    if n <= 0:
        raise ValueError(f"expected_pmse: n must be positive, got {n}")
    if not 0.0 < c < 1.0:
        raise ValueError(f"expected_pmse: c must be in (0, 1), got {c}")
    return m * c * (1.0 - c) / n


def n_poly_terms(p: int, degree: int) -> int:
    """Number of monomials of degree 1..`degree` in p variables (no intercept)."""
    return math.comb(p + degree, degree) - 1


def encode_numeric(train: pd.DataFrame, other: pd.DataFrame,
                   kinds: Mapping[str, str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """T and S as float matrices, one column per input (see the module doc for the coding)."""
    cols = list(train.columns)
    for col in cols:
        if col not in kinds:
            raise ValueError(f"column {col!r} has no kind in `kinds`")
        if kinds[col] not in ("categorical", "numeric"):
            raise ValueError(f"column {col!r}: kind must be 'categorical' or 'numeric', got {kinds[col]!r}")
        if col not in other.columns:
            raise ValueError(f"column {col!r} of T is missing from the synthetic table")
    t_parts, s_parts, names = [], [], []
    for col in cols:
        if kinds[col] == "categorical":
            t, s = _categorical_codes(train[col], other[col])
            t_parts.append(t), s_parts.append(s), names.append(col)
            continue
        t, s = _as_float(train[col], col), _as_float(other[col], col)
        t_na, s_na = np.isnan(t), np.isnan(s)
        if t_na.any() or s_na.any():
            fill = float(np.median(t[~t_na])) if (~t_na).any() else 0.0
            t, s = np.where(t_na, fill, t), np.where(s_na, fill, s)
            t_parts += [t, t_na.astype(float)]
            s_parts += [s, s_na.astype(float)]
            names += [col, f"{col}__missing"]
        else:
            t_parts.append(t), s_parts.append(s), names.append(col)
    t_mat = np.column_stack(t_parts) if t_parts else np.empty((len(train), 0))
    s_mat = np.column_stack(s_parts) if s_parts else np.empty((len(other), 0))
    return t_mat, s_mat, names


def _as_float(values: pd.Series, col: str) -> np.ndarray:
    try:
        return pd.to_numeric(values, errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"numeric column {col!r} has a non-numeric value: {exc}") from None


def _categorical_codes(t: pd.Series, s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of T's sorted levels (0..L-1), L for missing, L+1.. for S's values T has not got."""
    t_na, s_na = t.isna().to_numpy(), s.isna().to_numpy()
    t_str, s_str = t.astype(str).to_numpy(), s.astype(str).to_numpy()
    levels = np.unique(t_str[~t_na])
    unseen = np.setdiff1d(np.unique(s_str[~s_na]), levels)
    categories = np.concatenate([levels, unseen])

    def code(values: np.ndarray, na: np.ndarray) -> np.ndarray:
        out = pd.Categorical(values, categories=categories).codes.astype(float)
        out[out >= len(levels)] += 1  # leave code L to missing values
        out[na] = len(levels)
        return out

    return code(t_str, t_na), code(s_str, s_na)


def stacked_inputs(train: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *,
                   seed: int = 0, subsample: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The stacked, encoded inputs X (N × p, not yet standardised) and labels y (1 = synthetic)."""
    if len(train) == 0 or len(synthetic) == 0:
        raise ValueError(f"pMSE needs rows in both tables (T has {len(train)}, S has {len(synthetic)})")
    if subsample is not None:
        synthetic = subsample_synthetic(synthetic, len(train), seed)
    t_mat, s_mat, _ = encode_numeric(train, synthetic, kinds)
    x = np.vstack([t_mat, s_mat])
    y = np.concatenate([np.zeros(len(t_mat)), np.ones(len(s_mat))])
    return x, y


def subsample_synthetic(synthetic: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    """A seeded sample of `size` rows of S without replacement (S as is when it is not larger)."""
    if len(synthetic) <= size:
        return synthetic
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(synthetic), size=size, replace=False))
    return synthetic.iloc[idx]


def _standardise(x: np.ndarray, drop: bool) -> tuple[np.ndarray, int]:
    """Columns centred and scaled to unit SD in place; constant columns dropped (`drop`) or left
    as zeros. Returns the array and its number of non-constant columns."""
    mean = x.mean(axis=0)
    x -= mean
    sd = np.sqrt(np.einsum("ij,ij->j", x, x) / len(x))
    live = sd > 1e-10 * np.maximum(1.0, np.abs(mean))
    if drop:
        if not live.all():
            x, sd = x[:, live], sd[live]
        x /= sd
    else:
        x /= np.where(live, sd, 1.0)
    return x, int(live.sum())


def _pick_degree(n: int, p: int, degree: int, max_design_mb: float | None) -> tuple[int, str]:
    if degree < 1:
        raise ValueError(f"pMSE degree must be >= 1, got {degree}")
    if max_design_mb is None:
        return degree, ""
    if max_design_mb <= 0:
        raise ValueError(f"max_design_mb must be positive, got {max_design_mb}")
    for d in range(degree, 0, -1):
        mb = n * n_poly_terms(p, d) * 8 / 2**20
        if mb <= max_design_mb:
            if d == degree:
                return d, ""
            big = n * n_poly_terms(p, degree) * 8 / 2**20
            return d, (f"degree {degree} needs a {n} x {n_poly_terms(p, degree)} float64 design "
                       f"({big:.0f} MB > max_design_mb={max_design_mb:g}); used degree {d} "
                       f"({n_poly_terms(p, d)} terms, {mb:.0f} MB)")
    raise ValueError(f"max_design_mb={max_design_mb:g} is too small even for degree 1 "
                     f"({n} x {p} float64 = {n * p * 8 / 2**20:.1f} MB)")


def _whitening_basis(x: np.ndarray) -> np.ndarray:
    """B (M × m) such that the columns of x @ B are uncorrelated with unit variance and span the
    columns of x; m = numerical rank. Zero rows for the terms left out (aliased or constant)."""
    gram = x.T @ x / len(x)
    factor, piv, rank, info = lapack.dpstrf(gram, lower=1, tol=_RANK_TOL)
    if info < 0:
        raise RuntimeError(f"pivoted Cholesky failed (info={info})")
    keep = piv[:rank] - 1  # LAPACK is 1-based
    inv = solve_triangular(np.tril(factor[:rank, :rank]), np.eye(rank), lower=True)
    basis = np.zeros((x.shape[1], rank))
    basis[keep] = inv.T
    return basis


def propensity_design(x: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Standardise, expand to `degree`, standardise again; the whitening basis of the terms.

    Returns (design N × M standardised terms, basis M × m, number of non-constant terms).
    """
    z, _ = _standardise(x.astype(float, copy=True), drop=True)
    if z.shape[1] == 0:
        return z, np.zeros((0, 0)), 0
    poly = PolynomialFeatures(degree=degree, include_bias=False).fit_transform(z) if degree > 1 else z
    del z
    poly, n_live = _standardise(poly, drop=False)
    return poly, _whitening_basis(poly), n_live


def fit_propensity(design: np.ndarray, basis: np.ndarray, y: np.ndarray,
                   stop_pmse: float | None = None) -> tuple[np.ndarray, bool, int, bool]:
    """Fitted p̂ of the unpenalised logistic regression of y on the columns of design @ basis
    (with intercept); also whether it converged, the L-BFGS iterations used, and whether it was
    stopped early: after `_STOP_AFTER_ROUNDS` preconditioned rounds without convergence, a fit
    whose mean((p̂ − c)²) exceeds `stop_pmse` (None: never) ends there.

    The coefficients live in the whitened coordinates (beta = basis @ gamma), and the N × m
    whitened matrix is never formed: each L-BFGS step costs two matrix-vector products with
    the design. Whitening makes the Hessian c(1−c)·I at the start, which suffices when S is
    close to T; when S is far from T (p̂ far from c) the Hessian drifts and plain L-BFGS slows
    down (adult flip90: 317 iterations). So after `_PLAIN_ITER` plain iterations the exact
    Hessian at the current point is computed (one weighted Gram product, chunked) and L-BFGS
    continues in coordinates where that Hessian is the identity (a preconditioner only: the
    optimum is unchanged), with a fresh Hessian every `_ROUND_ITER` iterations, at most
    `_ROUNDS` times. A Hessian with a direction the data barely determine (smallest eigenvalue
    ~1e-12 of the largest: 768 terms on 6,000 rows of adult, a fitted p̂ near 0/1) makes a
    preconditioner whose first line search fails, and the same Hessian fails every later round
    alike (the fit ended unconverged, its pMSE ratio 1.235 where the converged one is 1.276, and
    whether it happened depended on the BLAS thread count); after such a round the next Hessians
    get a ridge of `_RIDGES` times their largest diagonal entry, one step larger per failed round. One core, whole pMSE: adult flip90 317 plain iterations (26 s) -> 61 (10 s);
    credit-default synthpop 263 s -> 80-120 s; adult gaussian_copula (p̂ near 0/1, pMSE 0.20 of
    at most 0.22) still needs ~390 iterations, ~46 s.
    """
    n = len(y)
    c = float(y.mean())
    step = max(64, _BLOCK_BYTES // (8 * max(design.shape[1], 1)))

    def loss_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        # one pass over the design per call: each row block's eta and its share of the gradient are
        # computed while the block is in cache (the design is read from memory once, not twice)
        direction = basis @ theta[1:]
        loss, resid_sum, grad = 0.0, 0.0, np.zeros(design.shape[1])
        for a in range(0, n, step):
            block, yb = design[a:a + step], y[a:a + step]
            eta = block @ direction + theta[0]
            loss += float(np.sum(np.logaddexp(0.0, eta) - yb * eta))
            resid = (expit(eta) - yb) / n
            resid_sum += float(resid.sum())
            grad += block.T @ resid
        return loss / n, np.concatenate([[resid_sum], basis.T @ grad])

    def descend(theta0: np.ndarray, precond: np.ndarray | None, maxiter: int) -> tuple[np.ndarray, int]:
        def fg(delta: np.ndarray) -> tuple[float, np.ndarray]:
            if precond is None:
                return loss_grad(theta0 + delta)
            loss, grad = loss_grad(theta0 + precond @ delta)
            return loss, precond.T @ grad

        res = minimize(fg, np.zeros_like(theta0), jac=True, method="L-BFGS-B",
                       options={"maxiter": maxiter, "gtol": _GRAD_TOL, "ftol": 0.0, "maxcor": 20})
        return theta0 + (res.x if precond is None else precond @ res.x), int(res.nit)

    theta = np.zeros(basis.shape[1] + 1)
    theta[0] = math.log(c / (1 - c))
    theta, n_iter = descend(theta, None, _PLAIN_ITER)
    stopped, ridge, failed = False, 0.0, 0
    for r in range(_ROUNDS):
        if float(np.max(np.abs(loss_grad(theta)[1]))) <= _GRAD_TOL:
            break
        if r >= _STOP_AFTER_ROUNDS and stop_pmse is not None:
            p_now = expit(design @ (basis @ theta[1:]) + theta[0])
            if float(np.mean((p_now - c) ** 2)) > stop_pmse:
                stopped = True
                break
        theta, k = descend(theta, _newton_preconditioner(design, basis, theta, ridge), _ROUND_ITER)
        n_iter += k
        if k == 0 and failed < len(_RIDGES):  # the line search failed at its first step: see the docstring
            ridge = _RIDGES[failed]
            failed += 1
    converged = float(np.max(np.abs(loss_grad(theta)[1]))) <= 10 * _GRAD_TOL
    p_hat = expit(design @ (basis @ theta[1:]) + theta[0])
    return p_hat, converged, n_iter, stopped and not converged


def _newton_preconditioner(design: np.ndarray, basis: np.ndarray, theta: np.ndarray,
                           ridge: float = 0.0) -> np.ndarray:
    """L^{-T} with L L' (nearly) the Hessian of the mean log-loss at theta in (intercept, gamma), plus
    `ridge` times its largest diagonal entry on the diagonal.

    Only a preconditioner (the optimum does not depend on it), so it is computed over the rows
    whose weight p(1−p) is at least 1e-6 of the largest: rows the model already separates add
    next to nothing. (float32 was tried and makes a poor preconditioner on heavy-tailed data.)
    """
    n, width = design.shape
    p = expit(design @ (basis @ theta[1:]) + theta[0])
    w = p * (1 - p) / n
    rows = np.flatnonzero(w >= 1e-6 * w.max())
    gram = np.zeros((width, width))
    step = max(256, 2**23 // max(width, 1))  # ~64 MB row chunks
    for a in range(0, len(rows), step):
        idx = rows[a:a + step]
        block = design[idx] * np.sqrt(w[idx])[:, None]
        gram += block.T @ block
    k = basis.shape[1] + 1
    hess = np.empty((k, k))
    hess[0, 0] = w.sum()
    hess[0, 1:] = hess[1:, 0] = basis.T @ (design.T @ w)
    hess[1:, 1:] = basis.T @ gram @ basis
    if ridge:
        hess[np.diag_indices(k)] += ridge * float(np.max(np.diag(hess)))
    jitter = 0.0
    for _ in range(20):  # only a preconditioner: a tiny ridge when the Hessian is near-singular
        try:
            lower = cholesky(hess + jitter * np.eye(k), lower=True)
            break
        except np.linalg.LinAlgError:
            jitter = max(jitter * 10, 1e-12 * float(np.max(np.diag(hess))))
    else:
        return np.eye(k)
    return solve_triangular(lower, np.eye(k), lower=True).T


def pmse_ratio(train: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *,
               degree: int = 3, seed: int = 0, subsample: int | None = None,
               max_design_mb: float | None = None, stop_ratio: float | None = 10.0) -> PMSEScore:
    """pMSE ratio of S against T with a degree-`degree` polynomial logistic model (docs/definitions/bale-quick.md §8).

    `stop_ratio`: a fit not converged after its plain iterations and 3 preconditioned rounds
    whose ratio is already above this is stopped there (`stopped`, and `reason` says so); None
    fits every S to convergence or the iteration cap (module docstring: cost).
    `subsample`: when not None, S is first reduced to a seeded sample of |T| rows (the value
    itself is only a switch; a truthy int or True both mean "|S| = |T|"). `max_design_mb`:
    cap on the N × m float64 design; when the asked degree does not fit, the largest degree
    that does is used and `reason` says so.
    """
    if subsample is not None and not subsample:
        subsample = None
    x, y = stacked_inputs(train, synthetic, kinds, seed=seed, subsample=subsample)
    n = len(y)
    c = float(y.mean())
    p_live = int(np.sum(np.ptp(x, axis=0) > 0)) if x.shape[1] else 0
    used, reason = _pick_degree(n, max(p_live, 1), degree, max_design_mb)
    design, basis, n_cols = propensity_design(x, used)
    m = basis.shape[1]
    expected = expected_pmse(m, c, n)
    m_bq = n_poly_terms(p_live, used) if p_live else 0
    if m == 0:
        return PMSEScore(pmse=0.0, expected=expected, ratio=math.nan, degree=used, n_terms=0, c=c, n=n,
                         reason=_join(reason, "every column is constant on T and S: no model to fit"),
                         n_columns=0, n_terms_bq=m_bq)
    if stop_ratio is not None and not stop_ratio > 0:
        raise ValueError(f"pMSE stop_ratio must be a positive number or None, got {stop_ratio!r}")
    p_hat, converged, n_iter, stopped = fit_propensity(
        design, basis, y, stop_pmse=None if stop_ratio is None else stop_ratio * expected)
    del design
    pmse = float(np.mean((p_hat - c) ** 2))
    if stopped:
        reason = _join(reason, f"logistic fit stopped after {n_iter} L-BFGS iterations at pMSE ratio "
                               f"{pmse / expected:.4g} > stop_ratio {stop_ratio:g} (S plainly told apart from T; "
                               "the converged ratio is a little higher; pmse_stop_ratio: null fits on)")
    elif not converged:
        msg = f"logistic fit did not converge in {n_iter} L-BFGS iterations (separable data?)"
        warnings.warn(f"pMSE: {msg}", RuntimeWarning, stacklevel=2)
        reason = _join(reason, msg)
    return PMSEScore(pmse=pmse, expected=expected, ratio=pmse / expected, degree=used, n_terms=m, c=c,
                     n=n, reason=reason, n_columns=n_cols, converged=converged, n_iter=n_iter, stopped=stopped,
                     n_terms_bq=m_bq, ratio_bq=pmse / expected_pmse(m_bq, c, n))


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


@dataclass(frozen=True)
class CartPMSE:
    """synthpop-style pMSE with a CART propensity model and a permutation null."""

    pmse: float
    """mean((p̂ − c)²) with p̂ the in-sample leaf shares of S."""
    null_mean: float
    """Mean pMSE of the same tree refitted on label permutations (the null expectation)."""
    ratio: float
    """pmse / null_mean: 1 ideal, larger = S easier to tell from T (NaN when null_mean is 0)."""
    n_permutations: int
    c: float
    n: int
    reason: str = ""
    """"" or why the ratio is NaN."""


def pmse_cart(train: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str], *,
              permutations: int = 20, seed: int = 0, subsample: int | None = None,
              cp: float = 1e-4, min_samples_leaf: int = 5, min_samples_split: int = 20) -> CartPMSE:
    """pMSE ratio with a CART propensity model and a permutation null (synthpop `utility.gen`).

    synthpop fits `rpart(cp = 1e-3, minbucket = 5)` (rpart's minsplit 20) and divides the pMSE by
    its mean over label permutations. Here: sklearn's DecisionTreeClassifier (Gini) on the same
    one-number-per-column inputs as the logistic version (categoricals as codes, so a split on a
    categorical is an ordered split of its codes, not rpart's level subsets), min_samples_leaf 5,
    min_samples_split 20, and rpart's complexity parameter as cost-complexity pruning:
    ccp_alpha = cp × the root's Gini impurity 2c(1−c) (rpart measures cp against the root's
    risk). sklearn's pruning is on Gini impurity rather than rpart's misclassification risk,
    and at cp = 1e-3 it cuts adult's trees (T vs H, T vs synthpop, and every permutation) back
    to the root, so pMSE = null = 0; hence the default cp = 1e-4 (adult: a few dozen to a few
    hundred leaves). A null mean of 0 gives a NaN ratio with a reason. Seeded: the trees'
    random_state and the permutations both derive from `seed`.
    """
    if permutations < 1:
        raise ValueError(f"pmse_cart: permutations must be >= 1, got {permutations}")
    if not cp >= 0:
        raise ValueError(f"pmse_cart: cp must be >= 0, got {cp}")
    if subsample is not None and not subsample:
        subsample = None
    x, y = stacked_inputs(train, synthetic, kinds, seed=seed, subsample=subsample)
    c, n = float(y.mean()), len(y)

    def pmse_of(labels: np.ndarray) -> float:
        tree = DecisionTreeClassifier(min_samples_leaf=min_samples_leaf, min_samples_split=min_samples_split,
                                      ccp_alpha=cp * 2 * c * (1 - c), random_state=seed)
        tree.fit(x, labels)
        return float(np.mean((tree.predict_proba(x)[:, 1] - c) ** 2))

    observed = pmse_of(y)
    rng = np.random.default_rng([int(seed), 0xCA27])
    null = float(np.mean([pmse_of(rng.permutation(y)) for _ in range(permutations)]))
    if null > 0:
        ratio, reason = observed / null, ""
    else:
        ratio, reason = math.nan, f"CART pMSE: every permuted tree was pruned to its root at cp={cp:g} (null 0)"
    return CartPMSE(pmse=observed, null_mean=null, ratio=ratio, n_permutations=permutations, c=c, n=n,
                    reason=reason)
