"""Legal criteria in Bale & Quick's own form (SPEC §8): Euclidean distances on S-standardised data.

Not the Hamming/Gower panel of metrics/panel.py (SPEC §7), which stays as it is: this family
is labelled "Bale & Quick (Euclidean, standardised on S)".

Representation (choices the SPEC leaves open, fixed here):
- Numeric columns (kind 'numeric'): coerced to numbers (booleans 0/1; unparseable, missing and
  non-finite values count as missing).
- Categorical columns: integer codes of T's levels, the levels sorted by their text; a value
  T never shows (in H or S) gets its own code after T's levels (those values sorted by text);
  a missing value gets one more code after all of them. Codes are then treated as numbers.
- Missing numeric values: ignored when fitting the scaler, then set to S's mean of the column
  (0 after standardising); for each numeric column with a missing value anywhere in T, H or S
  an extra 0/1 "missing" column is appended, NOT standardised, so a missing-vs-present mismatch
  adds 1 (one S standard deviation) to the squared distance and missing equals missing.
- Every (non-indicator) column is standardised with a StandardScaler fitted on S (mean, SD with
  ddof 0; a constant column keeps scale 1).

Distances: exact k-nearest-neighbour search of scikit-learn (brute force, the fastest exact
choice on 15-ish mixed columns), distinct query rows searched once. d_1 ≤ … ≤ d_k of each
record to its k nearest T records, duplicates in T counted with multiplicity.
- S side: every S record to T.
- Holdout reference (default): every H record to T.
- Leave-one-out reference (Bale & Quick's proxy): each T record to the other T records: the k+1
  nearest T records of the row, minus one copy of the row itself (found by row identity, so an
  exact duplicate of the record in T still counts as a neighbour at distance 0).

IMS = share with d_1 ≤ delta; DCR = percentile (5th, linear) of d_1; NNDR = same percentile of
d_1/d_k with 0/0 := 1. Criteria: IMS_S ≤ IMS_ref, DCR_S ≥ DCR_ref, NNDR_S ≥ NNDR_ref.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from metrics._discretise import factorize_labels, numeric_values
from metrics.registry import EvalData, MetricFamily, artifact, metric

LABEL = "Bale & Quick (Euclidean, standardised on S)"
_REFS = ("holdout", "loo")
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
    """Bale & Quick legal criteria; 'holdout' = true H→T reference, 'loo' = leave-one-out inside T."""

    legal_ims_synthetic: float = _ims("S", "S")
    legal_ims_holdout: float = _ims("H ref", "H")
    legal_ims_loo: float = _ims("LOO ref", "T (leave-one-out)")
    legal_dcr_p05_synthetic: float = _dcr("S", "S")
    legal_dcr_p05_holdout: float = _dcr("H ref", "H")
    legal_dcr_p05_loo: float = _dcr("LOO ref", "T (leave-one-out)")
    legal_nndr_p05_synthetic: float = _nndr("S", "S")
    legal_nndr_p05_holdout: float = _nndr("H ref", "H")
    legal_nndr_p05_loo: float = _nndr("LOO ref", "T (leave-one-out)")
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
    legal_criteria: pd.DataFrame | None = artifact(  # noqa: RUF009
        "one row per (criterion, reference): synthetic value, reference value, pass")


def _encode(frames: list[pd.DataFrame], kinds: dict[str, str]) -> list[np.ndarray]:
    """[T, H, S] as float matrices (T's columns, then missing indicators), S-standardised."""
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
    scaler = StandardScaler().fit(mats[-1])  # ignores NaN when fitting
    out = []
    for m, ind in zip(mats, indicators):
        z = scaler.transform(m)
        z[np.isnan(z)] = 0.0  # missing -> S's mean
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


def _to_train(index: NearestNeighbors, queries: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """(n, k) smallest Euclidean distances of each query to T (distinct rows searched once), n distinct."""
    uniq, inverse = _distinct(queries)
    dist = index.kneighbors(uniq, n_neighbors=k, return_distance=True)[0]
    return dist[inverse], len(uniq)


def _leave_one_out(index: NearestNeighbors, train: np.ndarray, k: int) -> np.ndarray:
    """(n_T, k) distances of each T record to its k nearest *other* T records."""
    uniq, inverse = _distinct(train)
    dist, ind = index.kneighbors(uniq, n_neighbors=k + 1, return_distance=True)
    is_copy = inverse[ind] == np.arange(len(uniq))[:, None]
    # drop the first copy of the row itself; if ties pushed every copy out, drop the last
    drop = np.where(is_copy.any(axis=1), np.argmax(is_copy, axis=1), k)
    keep = np.ones_like(is_copy)
    keep[np.arange(len(uniq)), drop] = False
    return dist[keep].reshape(len(uniq), k)[inverse]


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

    def __init__(self, delta: float = 0.001, k: int = 5, percentile: float = 5.0) -> None:
        if not (isinstance(delta, (int, float)) and math.isfinite(delta) and delta >= 0):
            raise ValueError(f"legal: delta must be a finite number >= 0, got {delta!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"legal: k must be an integer >= 1, got {k!r}")
        if not (isinstance(percentile, (int, float)) and 0 <= percentile <= 100):
            raise ValueError(f"legal: percentile must be in [0, 100], got {percentile!r}")
        self.delta, self.k, self.percentile = float(delta), int(k), float(percentile)

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
        t, h, s = _encode([train, holdout, synthetic], kinds)
        with threadpool_limits(limits=max(1, int(data.n_jobs))):
            index = NearestNeighbors(algorithm="brute", n_jobs=int(data.n_jobs)).fit(t)
            s_dist, n_distinct = _to_train(index, s, self.k)
            h_dist = s_dist if data.holdout_row else _to_train(index, h, self.k)[0]
            loo_dist = _leave_one_out(index, t, self.k)
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
             "rule": "synthetic <= reference" if j == 0 else "synthetic >= reference", "pass": passes[r][j]}
            for r in _REFS for j, crit in enumerate(("IMS", "DCR_p05", "NNDR_p05"))])
        return LegalResult(**fields, seconds_legal=time.perf_counter() - start, legal_criteria=table)


def _nan_result(base: dict, reason: str, seconds: float) -> LegalResult:
    nan = {f"legal_{w}_{r}": math.nan for w in ("ims", "dcr_p05", "nndr_p05") for r in ("synthetic",) + _REFS}
    return LegalResult(**base, **nan, **{f"legal_{w}_pass_{r}": None for w in ("ims", "dcr", "nndr") for r in _REFS},
                       **{f"legal_pass_all_{r}": None for r in _REFS}, legal_reason=reason,
                       seconds_legal=seconds)
