"""Legal criteria in Bale & Quick's own form (docs/definitions/bale-quick.md §8): Euclidean distances on standardised data.

Not the Hamming/Gower panel of metrics/panel.py (docs/definitions/paper.md §7), which stays as it is: this family
is labelled "Bale & Quick (Euclidean; S and H sides standardised on S, leave-one-out on T)".

Which scaler each side uses (as Bale & Quick's published code does it):
- S side (S -> T) and holdbench's holdout reference (H -> T): every table standardised with a
  StandardScaler fitted on S. The holdout reference is holdbench's, so it uses the S side's
  space: S and H are then measured with one ruler and compared like for like.
- Leave-one-out reference (T -> other T records, their proxy for a holdout): T standardised
  with a StandardScaler fitted on T, as their code computes it. Its values therefore live in
  T's units, the S side's in S's units; the leave-one-out criteria compare the two as they do.

Representation (choices the definitions leave open, fixed here):
- Numeric columns (kind 'numeric'): coerced to numbers (booleans 0/1; unparseable, missing and
  non-finite values count as missing).
- Categorical columns: integer codes of T's levels, the levels sorted by their text; a value
  T never shows (in H or S) gets its own code after T's levels (those values sorted by text);
  a missing value gets one more code after all of them. Codes are then treated as numbers.
- Missing numeric values: ignored when fitting the scaler, then set to the scaler's mean of the
  column (0 after standardising); for each numeric column with a missing value anywhere in T, H
  or S an extra 0/1 "missing" column is appended, NOT standardised, so a missing-vs-present
  mismatch adds 1 (one standard deviation) to the squared distance and missing equals missing.
- Standardising: mean and SD with ddof 0 (StandardScaler); a constant column keeps scale 1.

Distances: exact, float64. Distinct T rows are searched once (multiplicities counted), distinct
query rows searched once. Candidates come from a brute-force search in the |x|² − 2x·y + |y|² form
(blocks of query rows against every T row by one matrix product, the nearest kept by a numba kernel),
fast but off by up to ~1e-8 near 0 (exact duplicates came out at
distances like 8e-8, which breaks d1/d5 with 0/0 := 1); their distances are recomputed as
sqrt(Σ_c (x_c − y_c)²) and a row is accepted only if no other T row can be nearer than its
k-th exact distance within the search's error bound (else it is searched again, at worst
against every T row exactly). d_1 ≤ … ≤ d_k of each record to its k nearest T records,
duplicates in T counted with multiplicity.
- S side: every S record to T.
- Holdout reference (default): every H record to T.
- Leave-one-out reference: each T record to the other T records: one copy of the record itself
  left out, so an exact duplicate of it in T still counts as a neighbour at distance 0.

IMS = share with d_1 ≤ delta; DCR = percentile (5th, numpy's default linear interpolation) of
d_1; NNDR = same percentile of d_1/d_k with 0/0 := 1. Criteria: IMS_S ≤ IMS_ref,
DCR_S ≥ DCR_ref, NNDR_S ≥ NNDR_ref. The artifact legal_ims_curve gives IMS over a delta grid
for the three sides (their leave-one-out IMS curve).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from holdbench.metrics._discretise import factorize_labels, numeric_values
from holdbench.metrics._kernels import smallest_from_dots
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

LABEL = "Bale & Quick (Euclidean; S and H sides standardised on S, leave-one-out on T)"
_REFS = ("holdout", "loo")
_SCALER = {"holdout": "S", "loo": "T"}
_MARGIN = 2
"""Extra candidates beyond k (k+1 for leave-one-out) fetched from the approximate search."""
_MAX_CANDIDATES = 256
"""Past this many candidates a row's distances are computed against every distinct T row."""
_CHUNK = 8192
"""Query rows per block (bounds the candidate arrays)."""
_DOT_ROWS = 128
"""Query rows per matrix product of the candidate search (128 x |T| products, ~25 MB for 24,000 T rows)."""
_HOLDOUT_ROW_REASON = ("holdout row: S is H, so the holdout reference compares H with itself; "
                       "its pass fields are undefined (the leave-one-out ones are computed)")


def _ims(label: str, who: str) -> object:
    return metric(f"B&Q IMS ({label})", "privacy", direction="lower", digits=4,
                  meaning=f"{LABEL}: share of {who} whose nearest T record lies within delta; lower is safer")


def _dcr(label: str, who: str) -> object:
    return metric(f"B&Q DCR p5 ({label})", "privacy", direction="higher", digits=4,
                  meaning=f"{LABEL}: 5th percentile of {who}'s Euclidean distance to the nearest T record; "
                          "higher is safer")


def _nndr(label: str, who: str) -> object:
    return metric(f"B&Q NNDR p5 ({label})", "privacy", direction="higher", digits=4,
                  meaning=f"{LABEL}: 5th percentile of {who}'s d1/d5 to T (0/0 = 1); higher is safer")


def _pass(what: str, ref: str) -> object:
    return metric(f"B&Q {what} pass vs {ref}", "privacy", direction="higher", digits=0,
                  meaning=f"{LABEL}: the {what} criterion against the {ref} reference holds (pass is better)")


@dataclass(frozen=True)
class LegalResult:
    """Bale & Quick legal criteria; 'holdout' = true H→T reference (S-scaled, as the S side),
    'loo' = leave-one-out inside T (T-scaled, as their code)."""

    legal_ims_synthetic: float = _ims("S, S-scaled", "S")
    legal_ims_holdout: float = _ims("H ref, S-scaled", "H")
    legal_ims_loo: float = _ims("LOO ref, T-scaled", "T (leave-one-out, T-standardised)")
    legal_dcr_p05_synthetic: float = _dcr("S, S-scaled", "S")
    legal_dcr_p05_holdout: float = _dcr("H ref, S-scaled", "H")
    legal_dcr_p05_loo: float = _dcr("LOO ref, T-scaled", "T (leave-one-out, T-standardised)")
    legal_nndr_p05_synthetic: float = _nndr("S, S-scaled", "S")
    legal_nndr_p05_holdout: float = _nndr("H ref, S-scaled", "H")
    legal_nndr_p05_loo: float = _nndr("LOO ref, T-scaled", "T (leave-one-out, T-standardised)")
    legal_ims_pass_holdout: bool | None = _pass("IMS", "holdout")
    legal_dcr_pass_holdout: bool | None = _pass("DCR", "holdout")
    legal_nndr_pass_holdout: bool | None = _pass("NNDR", "holdout")
    legal_pass_all_holdout: bool | None = _pass("all three", "holdout")
    legal_ims_pass_loo: bool | None = _pass("IMS", "leave-one-out")
    legal_dcr_pass_loo: bool | None = _pass("DCR", "leave-one-out")
    legal_nndr_pass_loo: bool | None = _pass("NNDR", "leave-one-out")
    legal_pass_all_loo: bool | None = _pass("all three", "leave-one-out")
    legal_delta: float = math.nan
    """The IMS radius (standardised units)."""
    legal_k: int = 5
    """d_k of the NNDR."""
    legal_n_distinct_synthetic: int = 0
    """Distinct rows of S (each searched once)."""
    legal_reason: str | None = None
    """Why some values or pass fields are undefined (None when all are defined)."""
    seconds_legal: float = math.nan
    """Wall time of this family."""
    legal_criteria: pd.DataFrame | None = artifact(
        "one row per (criterion, reference): synthetic value, reference value, pass, and the scaler "
        "each side was standardised with (S, or T for the leave-one-out reference)")
    legal_ims_curve: pd.DataFrame | None = artifact(
        "IMS as a function of delta (option ims_curve_deltas, default 0, 0.01, ..., 1 and delta): "
        "ims_synthetic (S->T, S-scaled), ims_holdout (H->T, S-scaled), ims_loo (T leave-one-out, T-scaled)")


def _encode(frames: list[pd.DataFrame], kinds: dict[str, str], fit_on: int = -1) -> list[np.ndarray]:
    """Frames as float matrices (T's columns, then missing indicators), standardised with a scaler
    fitted on frames[fit_on] (default the last one, S)."""
    mats, indicators = _numeric_matrices(frames, kinds)
    return _standardise(mats, indicators, fit_on)


def _numeric_matrices(frames: list[pd.DataFrame], kinds: dict[str, str]) -> tuple[list[np.ndarray], list[list]]:
    """Unstandardised matrices of the frames (NaN where missing) and their missing-indicator columns."""
    train = frames[0]
    cols: list[list[np.ndarray]] = [[] for _ in frames]
    indicators: list[list[np.ndarray]] = [[] for _ in frames]
    for name in train.columns:
        if kinds[name] == "numeric":
            values = [numeric_values(f[name]) for f in frames]
            if any(np.isnan(v).any() for v in values):
                for ind, v in zip(indicators, values):
                    ind.append(np.isnan(v).astype(np.float64))
        else:
            values = _category_codes([f[name] for f in frames])
        for out, v in zip(cols, values):
            out.append(v)
    mats = [np.column_stack(c) if c else np.zeros((len(f), 0)) for c, f in zip(cols, frames)]
    return mats, indicators


def _standardise(mats: list[np.ndarray], indicators: list[list], fit_on: int) -> list[np.ndarray]:
    """Each matrix z-scored with a StandardScaler fitted on mats[fit_on]; missing -> 0 (that frame's
    mean); the indicator columns appended unscaled."""
    scaler = StandardScaler().fit(mats[fit_on])  # ignores NaN when fitting
    out = []
    for m, ind in zip(mats, indicators):
        z = scaler.transform(m)
        z[np.isnan(z)] = 0.0
        out.append(np.ascontiguousarray(np.column_stack([z] + ind) if ind else z))
    return out


def _category_codes(cols: list[pd.Series]) -> list[np.ndarray]:
    """Codes of T's (cols[0]) sorted levels; levels T lacks after them (sorted); missing last."""
    codes, labels = factorize_labels(pd.concat(cols, ignore_index=True))
    t_codes = codes[:len(cols[0])]
    in_train = np.zeros(len(labels), dtype=bool)
    in_train[t_codes[t_codes >= 0]] = True
    order = sorted(range(len(labels)), key=lambda i: (not in_train[i], labels[i]))
    rank = np.empty(len(labels) + 1, dtype=np.float64)
    rank[np.array(order, dtype=np.int64)] = np.arange(len(labels), dtype=np.float64)
    rank[-1] = len(labels)  # code -1 (missing) -> one past every level
    mapped = rank[codes]
    bounds = np.cumsum([0] + [len(c) for c in cols])
    return [mapped[a:b] for a, b in pairwise(bounds)]


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows and, per original row, the index of its distinct row."""
    if len(x) == 0:
        return x, np.zeros(0, dtype=np.int64)
    uniq, inverse = np.unique(x, axis=0, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _sq_dist(q: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Exact squared Euclidean distances, summed column by column in float64: q (n, d) against
    ref (n, m, d) -> (n, m), or against ref (m, d) -> (n, m)."""
    out = np.zeros(ref.shape[:-1] if ref.ndim == 3 else (len(q), len(ref)))
    for c in range(q.shape[1]):
        diff = q[:, c, None] - (ref[:, :, c] if ref.ndim == 3 else ref[None, :, c])
        out += diff * diff
    return out


class _Reference:
    """The distinct rows of T (with multiplicities), searched for exact k-nearest distances.

    Candidates come from a brute-force search in the |x|²−2x·y+|y|² form (`_candidates`: fast, but
    off by up to ~1e-8 near distance 0); their distances are then recomputed exactly (column by
    column, float64), and a row is accepted only when no point outside its candidates can be
    nearer than its k-th exact distance given the search's error bound; otherwise it is searched
    again with more candidates and, past _MAX_CANDIDATES, against every row of T exactly."""

    def __init__(self, x: np.ndarray, n_jobs: int = 1) -> None:
        rows, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
        self.rows, self.inverse, self.counts = rows, inverse.reshape(-1), counts
        self.rows_t = np.ascontiguousarray(rows.T)
        self.norms = np.einsum("ij,ij->i", rows, rows)
        self.n_jobs = max(1, int(n_jobs))
        self.max_sq = float(self.norms.max()) if len(rows) else 0.0

    def _candidates(self, q: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """(n, m) approximate squared distances |q|² − 2q·r + |r|² to the m nearest distinct T rows,
        ascending, and those rows' indices: one matrix product per _DOT_ROWS query rows, with several
        jobs blocks in parallel threads (one BLAS thread each)."""
        sq, idx = np.empty((len(q), m)), np.empty((len(q), m), dtype=np.int64)
        q_norms = np.einsum("ij,ij->i", q, q)

        def block(a: int) -> None:
            b = min(a + _DOT_ROWS, len(q))
            smallest_from_dots(q[a:b] @ self.rows_t, q_norms[a:b], self.norms, m, sq[a:b], idx[a:b])

        starts = range(0, len(q), _DOT_ROWS)
        if self.n_jobs == 1 or len(starts) == 1:
            for a in starts:
                block(a)
        else:
            with threadpool_limits(limits=1):
                Parallel(n_jobs=self.n_jobs, backend="threading")(delayed(block)(a) for a in starts)
        return sq, idx

    def kdist(self, queries: np.ndarray, k: int, own: np.ndarray | None = None) -> np.ndarray:
        """(n, k) exact smallest distances of each query row to T's records (multiplicities
        counted); own[i] = the distinct T row that IS query i (one copy of it left out), or None."""
        out = np.empty((len(queries), k))
        for lo in range(0, len(queries), _CHUNK):
            sl = slice(lo, lo + _CHUNK)
            out[sl] = self._kdist(queries[sl], k, None if own is None else own[sl])
        return out

    def _kdist(self, q: np.ndarray, k: int, own: np.ndarray | None) -> np.ndarray:
        n_ref, need = len(self.rows), k + (own is not None)
        out = np.empty((len(q), k))
        todo = np.arange(len(q))
        m = min(n_ref, need + _MARGIN)
        while len(todo):
            qq = q[todo]
            if m >= min(n_ref, _MAX_CANDIDATES + 1):  # exact against every distinct row of T
                d2 = _sq_dist(qq, self.rows)
                ind = np.argpartition(d2, need - 1, axis=1)[:, :need] if need < n_ref else \
                    np.broadcast_to(np.arange(n_ref), d2.shape)
                out[todo] = self._expand(np.take_along_axis(d2, ind, axis=1), ind, k, own, todo)
                break
            approx_sq, ind = self._candidates(qq, m)
            dk = self._expand(_sq_dist(qq, self.rows[ind]), ind, k, own, todo)
            bound = approx_sq[:, -1] - 1e-10 * ((qq * qq).sum(axis=1) + self.max_sq + 1.0)
            ok = dk[:, -1] ** 2 <= bound
            out[todo[ok]] = dk[ok]
            todo = todo[~ok]
            m = min(n_ref, 4 * m)
        return out

    def _expand(self, d2: np.ndarray, ind: np.ndarray, k: int, own: np.ndarray | None,
                todo: np.ndarray) -> np.ndarray:
        """The k smallest distances with multiplicities from candidate rows (d2 exact squared)."""
        counts = self.counts[ind].copy()
        if own is not None:
            counts -= ind == own[todo][:, None]
        order = np.argsort(d2, axis=1, kind="stable")
        dist = np.sqrt(np.take_along_axis(d2, order, axis=1))
        cum = np.cumsum(np.take_along_axis(counts, order, axis=1), axis=1)
        pos = (cum[:, :, None] <= np.arange(k)[None, None, :]).sum(axis=1)
        return np.take_along_axis(dist, pos, axis=1)


def _to_train(ref: _Reference, queries: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """(n, k) exact smallest distances of each query to T (distinct query rows searched once), n distinct."""
    uniq, inverse = _distinct(queries)
    return ref.kdist(uniq, k)[inverse], len(uniq)


def _ims_curve(deltas: np.ndarray, dists: dict[str, np.ndarray]) -> pd.DataFrame:
    """IMS (share with d_1 <= delta) per delta for each side."""
    out = {"delta": deltas}
    for who, d in dists.items():
        d1 = np.sort(d[:, 0])
        out[f"ims_{who}"] = np.searchsorted(d1, deltas, side="right") / len(d1) if len(d1) else np.nan
    return pd.DataFrame(out)


def _summary(dist: np.ndarray, delta: float, percentile: float) -> tuple[float, float, float]:
    """(IMS, DCR percentile, NNDR percentile) of an (n, k) distance table."""
    if len(dist) == 0:
        return math.nan, math.nan, math.nan
    d1, dk = dist[:, 0], dist[:, -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(dk == 0, 1.0, d1 / dk)
    return (float(np.mean(d1 <= delta)), float(np.percentile(d1, percentile)),
            float(np.percentile(ratio, percentile)))


def _criteria(s: tuple[float, float, float], ref: tuple[float, float, float]) -> list[bool | None]:
    out = []
    for j, (a, b) in enumerate(zip(s, ref)):
        if math.isnan(a) or math.isnan(b):
            out.append(None)
        else:
            out.append(bool(a <= b) if j == 0 else bool(a >= b))
    out.append(None if None in out else all(out))
    return out


class LegalCriteria(MetricFamily):
    """Bale & Quick legal criteria (IMS, DCR, NNDR) against the holdout and the leave-one-out reference."""

    name = "legal"
    result_type = LegalResult
    definition = "definitions/bale-quick.md#8-bale-quick-2024-utility-legal-criteria-and-attribute-disclosure"
    reference = (
        "Both forms (holdout and leave-one-out references) equal a literal loop-based "
        "re-implementation of the definition on a few hundred rows of adult to 1e-12 relative "
        "(tests/metrics/test_bq_forms_adult.py) and answers worked out by hand (exact duplicates, "
        "points on a grid) to 1e-15 (tests/metrics/test_legal_known.py)."
    )

    def __init__(self, delta: float = 0.001, k: int = 5, percentile: float = 5.0,
                 ims_curve_deltas: Sequence[float] | None = None) -> None:
        """delta: a synthetic record within this Euclidean distance of a T record is an identical match (IMS).
        k: the NNDR's denominator is the distance to the k-th nearest T record (d1/dk; Bale & Quick: 5).
        percentile: the percentile of the DCR and NNDR distributions that the criteria compare.
        ims_curve_deltas: the radii of the leave-one-out IMS curve (`legal_ims_curve`); None = 0, 0.01, ..., 1."""
        if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta >= 0):
            raise ValueError(f"legal: delta must be a finite number >= 0, got {delta!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"legal: k must be an integer >= 1, got {k!r}")
        if not (isinstance(percentile, (int, float)) and 0 <= percentile <= 100):
            raise ValueError(f"legal: percentile must be in [0, 100], got {percentile!r}")
        self.delta, self.k, self.percentile = float(delta), int(k), float(percentile)
        grid = np.linspace(0.0, 1.0, 101) if ims_curve_deltas is None else ims_curve_deltas
        try:
            grid = np.asarray(list(grid), dtype=np.float64)
        except (TypeError, ValueError):
            grid = np.array([np.nan])
        if grid.ndim != 1 or len(grid) == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise ValueError(f"legal: ims_curve_deltas must be finite numbers >= 0, got {ims_curve_deltas!r}")
        self.ims_curve_deltas = np.unique(np.append(grid, self.delta))

    def compute(self, data: EvalData) -> LegalResult:
        start = time.perf_counter()
        train, holdout, synthetic = data.train, data.holdout, data.synthetic
        kinds = dict(data.kinds)
        missing = [c for c in train.columns if c not in kinds]
        if missing:
            raise ValueError(f"legal: no kind given for column(s) {missing}")
        for label, frame in (("holdout", holdout), ("synthetic", synthetic)):
            absent = [c for c in train.columns if c not in frame.columns]
            if absent:
                raise ValueError(f"legal: {label} lacks column(s) {absent}")
        base = {"legal_delta": self.delta, "legal_k": self.k}
        if len(train) <= self.k or len(synthetic) == 0 or len(holdout) == 0:
            reason = (f"legal: needs more than k={self.k} T records and non-empty H and S "
                      f"(got |T|={len(train)}, |H|={len(holdout)}, |S|={len(synthetic)})")
            return _nan_result(base, reason, time.perf_counter() - start)
        mats, indicators = _numeric_matrices([train, holdout, synthetic], kinds)
        t, h, s = _standardise(mats, indicators, fit_on=2)       # S and H side: scaler fitted on S
        t_own = _standardise(mats[:1], indicators[:1], fit_on=0)[0]  # leave-one-out side: on T
        n_jobs = max(1, int(data.n_jobs))
        with threadpool_limits(limits=n_jobs):
            ref = _Reference(t, n_jobs)
            s_dist, n_distinct = _to_train(ref, s, self.k)
            h_dist = s_dist if data.holdout_row else _to_train(ref, h, self.k)[0]
            loo = _Reference(t_own, n_jobs)
            loo_dist = loo.kdist(loo.rows, self.k, own=np.arange(len(loo.rows)))[loo.inverse]
        s_val = _summary(s_dist, self.delta, self.percentile)
        refs = {"holdout": _summary(h_dist, self.delta, self.percentile),
                "loo": _summary(loo_dist, self.delta, self.percentile)}
        passes = {r: _criteria(s_val, v) for r, v in refs.items()}
        reason = None
        if data.holdout_row:
            passes["holdout"] = [None] * 4
            reason = _HOLDOUT_ROW_REASON
        fields = dict(base, legal_n_distinct_synthetic=n_distinct, legal_reason=reason)
        for j, what in enumerate(("ims", "dcr_p05", "nndr_p05")):
            fields[f"legal_{what}_synthetic"] = s_val[j]
            for r in _REFS:
                fields[f"legal_{what}_{r}"] = refs[r][j]
        for r in _REFS:
            for j, what in enumerate(("ims", "dcr", "nndr")):
                fields[f"legal_{what}_pass_{r}"] = passes[r][j]
            fields[f"legal_pass_all_{r}"] = passes[r][3]
        table = pd.DataFrame([
            {"criterion": crit, "reference": r, "synthetic": s_val[j], "reference_value": refs[r][j],
             "rule": "synthetic <= reference" if j == 0 else "synthetic >= reference", "pass": passes[r][j],
             "synthetic_scaler": "S", "reference_scaler": _SCALER[r]}
            for r in _REFS for j, crit in enumerate(("IMS", "DCR_p05", "NNDR_p05"))])
        curve = _ims_curve(self.ims_curve_deltas, {"synthetic": s_dist, "holdout": h_dist, "loo": loo_dist})
        return LegalResult(**fields, seconds_legal=time.perf_counter() - start, legal_criteria=table,
                           legal_ims_curve=curve)


def _nan_result(base: dict, reason: str, seconds: float) -> LegalResult:
    nan = {f"legal_{w}_{r}": math.nan for w in ("ims", "dcr_p05", "nndr_p05") for r in ("synthetic",) + _REFS}
    return LegalResult(**base, **nan, **{f"legal_{w}_pass_{r}": None for w in ("ims", "dcr", "nndr") for r in _REFS},
                       **{f"legal_pass_all_{r}": None for r in _REFS}, legal_reason=reason,
                       seconds_legal=seconds)
