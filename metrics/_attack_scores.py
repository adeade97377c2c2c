"""Encoding and per-target scores of the membership-inference attacks (docs/definitions/attacks.md §9).

Everything the attacker fits uses only what an attacker holds: the synthetic data S and the
reference population R. The targets are encoded with R∪S's statistics and never inform them.

Encoding (one row per record, Euclidean distance):
- numeric column: its empirical CDF under R∪S with mid-ranks, u(x) = (#{v < x} + ½#{v = x}) / n,
  so every numeric column lies in [0, 1] whatever its scale or tails (adult's capital-gain
  would dominate a standardised encoding) and a numeric difference weighs at most one
  categorical mismatch. A missing value sits at 0.5 and, when R∪S has missing values in the
  column, a 0/1 missing indicator is added.
- categorical column: one-hot over the `max_levels` most frequent labels of R∪S (missing is
  a label), plus one "other" level for every rarer or unseen label; the one-hot entries are
  1/√2, so a mismatch adds exactly 1 to the squared distance.
So squared distance = Σ numeric (Δu)² + number of categorical mismatches.

Nearest neighbours are exact (sklearn NearestNeighbors, brute force) over the distinct rows
of the references, queried once per distinct target row; the distance to the neighbour found
is then recomputed by direct subtraction, so an exact copy is at distance 0.0.

Density (DOMIAS-style, van Breugel et al. 2023): log p_S(x) − log p_R(x) with Gaussian kernel
density estimates. KDE is DOMIAS's own non-neural choice, needs no iterative fit and no seed
beyond the subsample, and with a small bandwidth it sees the local excess of density an
overfitted generator leaves around its training records (a mixture with few components
smooths that away). A KDE on the ~100-column one-hot encoding is degenerate (one-hot blocks
are collinear), so both densities live in one shared space: PCA of the encoded rows fitted on
the two fit samples, the first `dims` components with non-zero variance, each scaled to unit
variance. Both KDEs are fitted on the same number m = min(|S|, |R|, fit_max_rows) of rows
(seeded subsamples), with the same isotropic bandwidth (Scott's rule m^(−1/(d+4)) in the
whitened space unless a number is given): the two densities share one kernel, so their ratio
reflects where the records lie, not how the estimators differ. The KDE sums are exact.

Classifier: a gradient-boosted tree classifier (sklearn HistGradientBoostingClassifier,
100 rounds, no early stopping, categorical columns native) trained to tell S (label 1) from
R (label 0), m rows of each; the score is its S-probability at the target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.neighbors import NearestNeighbors

from holdbench.metrics._discretise import factorize_labels, numeric_values

ATTACKS = ("dcr", "dcr_diff", "density", "classifier")
_ONE_HOT = 1.0 / np.sqrt(2.0)


@dataclass(frozen=True)
class Encoded:
    """Attack features of one table."""

    dense: np.ndarray
    """(n, p) float64: numeric CDF values, missing indicators, one-hot / √2 (the distance space)."""
    compact: np.ndarray
    """(n, q) float64, one column per input column: CDF value (NaN if missing) or level code."""


def encode(reference: Sequence[pd.DataFrame], frames: Sequence[pd.DataFrame], kinds: Mapping[str, str],
           max_levels: int) -> tuple[list[Encoded], np.ndarray]:
    """Encode `frames` with the statistics of the concatenated `reference` frames (R and S).

    Returns one Encoded per frame and the boolean mask of categorical columns of `compact`.
    """
    n_ref = sum(len(f) for f in reference)
    sizes = [len(f) for f in frames]
    bounds = np.cumsum([0] + sizes)
    columns = list(frames[0].columns)
    dense_parts: list[np.ndarray] = []
    compact = np.empty((bounds[-1], len(columns)), dtype=np.float64)
    is_cat = np.zeros(len(columns), dtype=bool)
    for j, col in enumerate(columns):
        if kinds[col] == "numeric":
            ref = numeric_values(pd.concat([f[col] for f in reference], ignore_index=True))
            x = np.concatenate([numeric_values(f[col]) for f in frames])
            u = _ecdf(np.sort(ref[~np.isnan(ref)]), x)
            compact[:, j] = u
            missing = np.isnan(x)
            dense_parts.append(np.where(missing, 0.5, u)[:, None])
            if np.isnan(ref).any():
                dense_parts.append(missing.astype(np.float64)[:, None])
        else:
            is_cat[j] = True
            ref_series = pd.concat([f[col] for f in reference], ignore_index=True)
            all_series = pd.concat([f[col] for f in frames], ignore_index=True)
            codes, labels = factorize_labels(pd.concat([ref_series, all_series], ignore_index=True))
            codes = codes + 1  # 0 = missing, a label of its own
            counts = np.bincount(codes[:n_ref], minlength=len(labels) + 1)
            order = np.argsort(-counts, kind="stable")
            kept = order[:max_levels][counts[order[:max_levels]] > 0]
            lut = np.full(len(labels) + 1, len(kept), dtype=np.int64)  # default: "other"
            lut[kept] = np.arange(len(kept))
            level = lut[codes[n_ref:]]
            compact[:, j] = level
            one_hot = np.zeros((len(level), len(kept) + 1), dtype=np.float64)
            one_hot[np.arange(len(level)), level] = _ONE_HOT
            dense_parts.append(one_hot)
    dense = np.hstack(dense_parts) if dense_parts else np.zeros((bounds[-1], 0))
    out = [Encoded(np.ascontiguousarray(dense[a:b]), np.ascontiguousarray(compact[a:b]))
           for a, b in pairwise(bounds)]
    return out, is_cat


def _ecdf(ref_sorted: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Mid-rank empirical CDF of x under ref_sorted; NaN stays NaN; 0.5 if ref is empty."""
    if len(ref_sorted) == 0:
        return np.where(np.isnan(x), np.nan, 0.5)
    left = np.searchsorted(ref_sorted, x, side="left")
    right = np.searchsorted(ref_sorted, x, side="right")
    return np.where(np.isnan(x), np.nan, (left + right) / (2.0 * len(ref_sorted)))


def nearest_distance(refs: np.ndarray, queries: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """Exact Euclidean distance from each query row to its nearest ref row."""
    refs_u = np.unique(refs, axis=0)
    q_u, inverse = np.unique(queries, axis=0, return_inverse=True)
    nn = NearestNeighbors(n_neighbors=1, algorithm="brute", n_jobs=n_jobs).fit(refs_u)
    idx = nn.kneighbors(q_u, return_distance=False)[:, 0]
    d = np.sqrt(np.sum((q_u - refs_u[idx]) ** 2, axis=1))
    return d[inverse.reshape(-1)]


def subsample(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """m sorted row indices of range(n) without replacement (all rows if m >= n)."""
    if m >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=m, replace=False))


def density_scores(s: np.ndarray, r: np.ndarray, targets: np.ndarray, dims: int,
                   bandwidth: float | str) -> np.ndarray:
    """log p_S − log p_R at each target: shared whitened PCA space, same m and kernel for both.

    `s` and `r` are the (already equal-sized) fit samples of the dense encoding.
    """
    both = np.vstack([s, r])
    k = min(dims, both.shape[1], both.shape[0])
    if k == 0:
        return np.zeros(len(targets))
    pca = PCA(n_components=k, svd_solver="full").fit(both)
    var = pca.explained_variance_
    keep = var > 1e-10 * max(float(var.max(initial=0.0)), 1e-300)
    if not keep.any():
        return np.zeros(len(targets))
    scale = np.sqrt(var[keep])

    def project(x: np.ndarray) -> np.ndarray:
        return pca.transform(x)[:, keep] / scale

    d = int(keep.sum())
    h = len(s) ** (-1.0 / (d + 4)) if bandwidth == "scott" else float(bandwidth)
    q_u, inverse = np.unique(targets, axis=0, return_inverse=True)
    q = project(q_u)
    log_ratio = gaussian_kde_log(project(s), q, h) - gaussian_kde_log(project(r), q, h)
    return log_ratio[inverse.reshape(-1)]


def gaussian_kde_log(points: np.ndarray, queries: np.ndarray, h: float) -> np.ndarray:
    """Exact log density at each query of the isotropic Gaussian KDE with bandwidth h on points.

    What sklearn KernelDensity computes with zero tolerance, done as chunked dense products:
    its tree search at zero tolerance is ~10x slower in 20 dimensions. The exponent
    −|q − p|²/(2h²) = (q·p − |p|²/2)/h² − |q|²/(2h²) is formed in place in one (chunk, m)
    buffer and the log-sum-exp is taken by hand (row maximum, exp in place, sum): the same
    sums as scipy's logsumexp on euclidean_distances, to rounding, at a quarter of the cost.
    """
    m, d = points.shape
    const = -np.log(m) - 0.5 * d * np.log(2.0 * np.pi * h * h)
    inv = 1.0 / (h * h)
    half_pp = 0.5 * np.einsum("ij,ij->i", points, points)
    out = np.empty(len(queries))
    step = max(1, 4_000_000 // max(m, 1))
    for a in range(0, len(queries), step):
        q = queries[a:a + step]
        e = q @ points.T
        e -= half_pp
        e *= inv
        top = e.max(axis=1)
        e -= top[:, None]
        np.exp(e, out=e)
        out[a:a + step] = np.log(e.sum(axis=1)) + top - 0.5 * inv * np.einsum("ij,ij->i", q, q)
    return out + const


def classifier_scores(s: np.ndarray, r: np.ndarray, targets: np.ndarray, is_cat: np.ndarray,
                      seed: int) -> np.ndarray:
    """S-probability of a boosted-tree classifier trained on S (1) against R (0)."""
    x = np.vstack([s, r])
    y = np.concatenate([np.ones(len(s), dtype=np.int8), np.zeros(len(r), dtype=np.int8)])
    clf = HistGradientBoostingClassifier(max_iter=100, early_stopping=False,
                                         categorical_features=is_cat if is_cat.any() else None,
                                         random_state=seed)
    clf.fit(x, y)
    return clf.predict_proba(targets)[:, 1]
