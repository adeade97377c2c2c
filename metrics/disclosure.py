"""Attribute disclosure in Bale & Quick's form, calibrated on the holdout (SPEC §8).

For a target record r and a radius delta, r's synthetic neighbours are the S records within
Euclidean delta of r on the continuous quasi-identifiers (standardised with S's mean and SD)
AND equal to r on every categorical quasi-identifier. No neighbour: ratio(r) = 1. Otherwise
ratio(r) = (share of the neighbours carrying r's sensitive value) / prior(r's value).

Choices the SPEC leaves open, fixed here:
- prior(v) = the share of v in S (what an attacker holding only S believes before looking at
  r's quasi-identifiers). A value absent from S has prior 0; its share among the neighbours is
  then 0 too, and the ratio is taken as 1 (the attacker learns nothing about it).
- S's SD is the population SD (ddof 0, as sklearn's StandardScaler); a constant (or all-missing)
  column keeps scale 1. "Within delta" is inclusive: squared distance <= delta².
- Missing values: a missing categorical QI is a value of its own (missing equals missing). A
  missing continuous QI must be missing in the neighbour too (the missingness pattern of the
  continuous QIs is part of the exact-match key) and the distance uses the present coordinates.
  Values compare by their text, so 1 and "1" are equal; the sensitive value works the same way.
- Targets: a seeded sample from T and a seeded sample of the same size from H, n = min(n_targets,
  |T|, |H|) (n_targets=None: n = min(|T|, |H|)), so the maxima over targets are comparable.
- Registry scalars summarise the per-delta curve: the maximum is taken over delta and targets
  (Bale & Quick's statistic, worst radius); means and shares above c are averaged over delta.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.neighbors import KDTree

from metrics._discretise import factorize_labels, numeric_values
from metrics.registry import EvalData, MetricFamily, artifact, metric

_BRUTE_CELLS = 4_000_000
"""Groups with at most this many target x synthetic pairs are counted by a dense distance block."""
_HOLDOUT_ROW_REASON = ("holdout row: S is H, so targets drawn from H find themselves in S; the "
                       "holdout-target values and the T-H excess are undefined (T targets are computed)")
_WHO = {"train": "targets drawn from T", "holdout": "targets drawn from H (reference: S never saw H)"}


def disclosure_ratios(targets: pd.DataFrame, synthetic: pd.DataFrame, sensitive: str,
                      continuous_qis: list[str], categorical_qis: list[str], delta: float,
                      *, prior: pd.Series | None = None) -> np.ndarray:
    """Bale & Quick's disclosure ratio of each target record against S at radius `delta`.

    `prior` maps sensitive values to their prior probability (default: their share in S);
    every sensitive value of the targets must have a positive prior when given.
    Returns a float64 array, one ratio per target row, 1 where a target has no neighbour.
    """
    return _ratios(targets, synthetic, sensitive, list(continuous_qis), list(categorical_qis),
                   [delta], prior)[0]


def _check_delta(deltas: Sequence[float]) -> np.ndarray:
    out = np.asarray(list(deltas), dtype=np.float64)
    if out.ndim != 1 or len(out) == 0 or not np.all(np.isfinite(out)) or np.any(out < 0):
        raise ValueError(f"disclosure: delta must be finite numbers >= 0, got {list(deltas)!r}")
    return out


def _ratios(targets: pd.DataFrame, synthetic: pd.DataFrame, sensitive: str, continuous: list[str],
            categorical: list[str], deltas: Sequence[float], prior: pd.Series | None,
            brute_cells: int = _BRUTE_CELLS) -> np.ndarray:
    """(len(deltas), n_targets) ratios; the work per group is shared by all radii."""
    deltas = _check_delta(deltas)
    for name in [sensitive] + continuous + categorical:
        for label, frame in (("targets", targets), ("synthetic", synthetic)):
            if name not in frame.columns:
                raise ValueError(f"disclosure: column {name!r} is missing from the {label}")
    if sensitive in continuous or sensitive in categorical:
        raise ValueError(f"disclosure: sensitive column {sensitive!r} is also a quasi-identifier")
    n_t, n_s = len(targets), len(synthetic)
    out = np.ones((len(deltas), n_t))
    if n_t == 0 or n_s == 0:
        return out
    both = pd.concat([targets[[sensitive] + categorical + continuous],
                      synthetic[[sensitive] + categorical + continuous]], ignore_index=True)
    values, labels = factorize_labels(both[sensitive])
    values = values + 1  # -1 (missing) -> 0: a value of its own
    labels = np.concatenate([[None], labels])
    prior_of = _prior(values[n_t:], labels, prior, np.unique(values[:n_t]))
    x = np.column_stack([numeric_values(both[c]) for c in continuous]) if continuous else np.zeros((len(both), 0))
    s_x = x[n_t:]
    mean = np.array([np.nanmean(c) if not np.all(np.isnan(c)) else 0.0 for c in s_x.T])
    sd = np.array([np.nanstd(c) if not np.all(np.isnan(c)) else 0.0 for c in s_x.T])
    x = (x - mean) / np.where(sd > 0, sd, 1.0)
    key_cols = [factorize_labels(both[c])[0] for c in categorical] + [np.isnan(c).astype(np.int64) for c in x.T]
    x = np.nan_to_num(x, nan=0.0)
    key = (pd.DataFrame(np.column_stack(key_cols)).groupby(list(range(len(key_cols))), sort=True).ngroup()
           .to_numpy() if key_cols else np.zeros(len(both), dtype=np.int64))
    t_key, s_key = key[:n_t], key[n_t:]
    s_order = np.argsort(s_key, kind="stable")
    s_bounds = np.searchsorted(s_key[s_order], np.arange(key.max() + 2))
    t_order = np.argsort(t_key, kind="stable")
    t_sorted = t_key[t_order]
    cuts = np.flatnonzero(np.diff(t_sorted)) + 1
    n_values = len(labels)
    for rows in np.split(t_order, cuts):
        g = t_key[rows[0]]
        members = s_order[s_bounds[g]:s_bounds[g + 1]]
        if len(members) == 0:
            continue
        q, ref = x[rows], x[n_t + members]
        v_t, v_s = values[rows], values[n_t + members]
        if q.shape[1] == 0:  # categorical QIs only: the whole group is the neighbourhood
            per_value = np.bincount(v_s, minlength=n_values)
            total = np.full((len(deltas), len(rows)), float(len(members)))
            same = np.tile(per_value[v_t].astype(np.float64), (len(deltas), 1))
        elif len(rows) * len(members) <= brute_cells:
            total, same = _count_dense(q, ref, v_t, v_s, n_values, deltas)
        else:
            total, same = _count_tree(q, ref, v_t, v_s, deltas)
        share = np.divide(same, total, out=np.zeros_like(same), where=total > 0)
        p = prior_of[v_t]
        ratio = np.divide(share, p, out=np.ones_like(share), where=p > 0)
        out[:, rows] = np.where(total > 0, ratio, 1.0)
    return out


def _prior(s_values: np.ndarray, labels: np.ndarray, prior: pd.Series | None,
           target_values: np.ndarray) -> np.ndarray:
    """Prior probability per value code."""
    if prior is None:
        return np.bincount(s_values, minlength=len(labels)) / len(s_values)
    given = {(None if pd.isna(k) else str(k)): float(v) for k, v in prior.items()}
    out = np.zeros(len(labels))
    for code, label in enumerate(labels):
        out[code] = given.get(label, 0.0)
    bad = [labels[v] for v in target_values if not out[v] > 0]
    if bad:
        raise ValueError(f"disclosure: prior gives no positive probability for sensitive value(s) {bad}")
    return out


def _count_dense(q: np.ndarray, ref: np.ndarray, v_t: np.ndarray, v_s: np.ndarray, n_values: int,
                 deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n_deltas, n_q) neighbour counts and same-value counts from one dense block."""
    d2 = np.zeros((len(q), len(ref)))
    for c in range(q.shape[1]):
        d2 += (q[:, c][:, None] - ref[:, c][None, :]) ** 2
    onehot = np.zeros((len(ref), n_values))
    onehot[np.arange(len(ref)), v_s] = 1.0
    total, same = np.empty((len(deltas), len(q))), np.empty((len(deltas), len(q)))
    for i, delta in enumerate(deltas):
        within = (d2 <= delta * delta).astype(np.float64)
        per_value = within @ onehot
        total[i] = per_value.sum(axis=1)
        same[i] = per_value[np.arange(len(q)), v_t]
    return total, same


def _count_tree(q: np.ndarray, ref: np.ndarray, v_t: np.ndarray, v_s: np.ndarray,
                deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same counts from KD-tree radius counts (no neighbour lists), one tree per value."""
    total, same = np.empty((len(deltas), len(q))), np.zeros((len(deltas), len(q)))
    tree = KDTree(ref)
    for i, delta in enumerate(deltas):
        total[i] = tree.query_radius(q, r=delta, count_only=True)
    for v in np.unique(v_t):
        mine, theirs = v_t == v, ref[v_s == v]
        if len(theirs) == 0:
            continue
        sub = KDTree(theirs)
        for i, delta in enumerate(deltas):
            same[i, mine] = sub.query_radius(q[mine], r=delta, count_only=True)
    return total, same


@dataclass(frozen=True)
class DisclosureResult:
    """Attribute disclosure ratios (Bale & Quick) for targets from T and, as reference, from H."""

    disclosure_max_train: float = metric(
        "Disclosure max (T targets)", "disclosure", direction="lower", digits=3,
        meaning="Bale & Quick: largest disclosure ratio over targets drawn from T and over the radii; "
                "lower is safer")
    disclosure_max_holdout: float = metric(
        "Disclosure max (H targets)", "disclosure", direction="lower", digits=3,
        meaning="The same for targets drawn from H: what S reveals about unseen people (reference)")
    disclosure_mean_train: float = metric(
        "Disclosure mean (T targets)", "disclosure", direction="lower", digits=3,
        meaning="Mean disclosure ratio over targets drawn from T, averaged over the radii; lower is safer")
    disclosure_mean_holdout: float = metric(
        "Disclosure mean (H targets)", "disclosure", direction="lower", digits=3,
        meaning="The same for targets drawn from H (reference)")
    disclosure_share_above_c_train: float = metric(
        "Disclosure share > c (T targets)", "disclosure", direction="lower", digits=4,
        meaning="Share of targets drawn from T with ratio above c, averaged over the radii; lower is safer")
    disclosure_share_above_c_holdout: float = metric(
        "Disclosure share > c (H targets)", "disclosure", direction="lower", digits=4,
        meaning="The same for targets drawn from H (reference)")
    disclosure_excess_mean: float = metric(
        "Disclosure excess T-H (mean)", "disclosure", direction="ideal", ideal=0.0, digits=4,
        meaning="disclosure_mean_train - disclosure_mean_holdout: leakage of training records beyond "
                "what the population reveals; 0 is ideal, above 0 leaks T")
    disclosure_excess_share: float = metric(
        "Disclosure excess T-H (share > c)", "disclosure", direction="ideal", ideal=0.0, digits=4,
        meaning="disclosure_share_above_c_train - disclosure_share_above_c_holdout; 0 is ideal")
    disclosure_n_targets: int = 0
    """Targets drawn from each of T and H."""
    disclosure_c: float = math.nan
    """The ratio threshold of the 'share above c' fields."""
    disclosure_reason: str | None = None
    """Why some values are undefined (None when all are defined)."""
    seconds_disclosure: float = math.nan
    """Wall time of this family."""
    disclosure_curve: pd.DataFrame | None = artifact(  # noqa: RUF009
        "per radius and target source (train, holdout): max_ratio, mean_ratio, share_above_c, n_targets")


class AttributeDisclosure(MetricFamily):
    """Bale & Quick attribute disclosure with holdout calibration (targets from T vs from H)."""

    name = "disclosure"
    result_type = DisclosureResult

    def __init__(self, n_targets: int | None = 2000, deltas: Sequence[float] | None = None,
                 c: float = 3.0) -> None:
        if n_targets is not None and (isinstance(n_targets, bool) or not isinstance(n_targets, (int, np.integer))
                                      or n_targets < 1):
            raise ValueError(f"disclosure: n_targets must be an integer >= 1 or None, got {n_targets!r}")
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c > 0):
            raise ValueError(f"disclosure: c must be a finite number > 0, got {c!r}")
        self.n_targets = None if n_targets is None else int(n_targets)
        self.deltas = _check_delta(np.linspace(0.001, 0.5, 5) if deltas is None else deltas)
        self.c = float(c)

    def compute(self, data: EvalData) -> DisclosureResult:
        start = time.perf_counter()
        sensitive, qis = data.sensitive, list(data.quasi_identifiers)
        if sensitive is None or not qis:
            what = "no sensitive attribute" if sensitive is None else "no quasi-identifiers"
            return _nan_result(f"disclosure: the dataset names {what}", self.c, start)
        for name in [sensitive] + qis:
            if name not in data.train.columns:
                raise ValueError(f"disclosure: column {name!r} is not in the data")
            if name not in data.kinds:
                raise ValueError(f"disclosure: no kind given for column {name!r}")
        distinct = pd.unique(pd.Series(factorize_labels(data.train[sensitive])[0]))
        if len(distinct) > 2:
            raise ValueError(f"disclosure: sensitive column {sensitive!r} must be binary, "
                             f"T has {len(distinct)} distinct values")
        continuous = [c for c in qis if data.kinds[c] == "numeric"]
        categorical = [c for c in qis if data.kinds[c] != "numeric"]
        n = min(len(data.train), len(data.holdout))
        if self.n_targets is not None:
            n = min(n, self.n_targets)
        if n == 0 or len(data.synthetic) == 0:
            return _nan_result("disclosure: T, H or S is empty", self.c, start)
        sources = {"train": _sample(data.train, n, data.seed, 0)}
        if not data.holdout_row:
            sources["holdout"] = _sample(data.holdout, n, data.seed, 1)
        rows, stats = [], {}
        for who, targets in sources.items():
            r = _ratios(targets, data.synthetic, sensitive, continuous, categorical, self.deltas, None)
            mx, mean, share = r.max(axis=1), r.mean(axis=1), (r > self.c).mean(axis=1)
            stats[who] = (float(mx.max()), float(mean.mean()), float(share.mean()))
            rows += [{"delta": float(d), "targets": who, "max_ratio": float(a), "mean_ratio": float(b),
                      "share_above_c": float(s), "n_targets": n} for d, a, b, s in zip(self.deltas, mx, mean, share)]
        nan3 = (math.nan, math.nan, math.nan)
        t, h = stats["train"], stats.get("holdout", nan3)
        return DisclosureResult(
            disclosure_max_train=t[0], disclosure_max_holdout=h[0],
            disclosure_mean_train=t[1], disclosure_mean_holdout=h[1],
            disclosure_share_above_c_train=t[2], disclosure_share_above_c_holdout=h[2],
            disclosure_excess_mean=t[1] - h[1], disclosure_excess_share=t[2] - h[2],
            disclosure_n_targets=n, disclosure_c=self.c,
            disclosure_reason=_HOLDOUT_ROW_REASON if data.holdout_row else None,
            seconds_disclosure=time.perf_counter() - start, disclosure_curve=pd.DataFrame(rows))


def _sample(frame: pd.DataFrame, n: int, seed: int, stream: int) -> pd.DataFrame:
    """A seeded sample of n rows without replacement, in the frame's order."""
    rng = np.random.default_rng([int(seed), 0x5EC, stream])
    rows = np.sort(rng.choice(len(frame), size=n, replace=False))
    return frame.iloc[rows].reset_index(drop=True)


def _nan_result(reason: str, c: float, start: float) -> DisclosureResult:
    names = ("max_train", "max_holdout", "mean_train", "mean_holdout", "share_above_c_train",
             "share_above_c_holdout", "excess_mean", "excess_share")
    return DisclosureResult(**{f"disclosure_{k}": math.nan for k in names}, disclosure_c=c,
                            disclosure_reason=reason, seconds_disclosure=time.perf_counter() - start)
