"""Attribute disclosure in Bale & Quick's form, calibrated on the holdout (docs/definitions/bale-quick.md §8).

For a target record r and a radius delta, r's synthetic neighbours are the S records within
Euclidean delta of r on the continuous quasi-identifiers (standardised with S's mean and SD)
AND equal to r on every categorical quasi-identifier. No neighbour: ratio(r) = 1. Otherwise
ratio(r) = (share of the neighbours carrying r's sensitive value) / prior(r's value).

Two forms, reported side by side (the neighbour counts are computed once for both):
- holdbench's form (disclosure_max/mean/share_above_c/excess_*, artifact disclosure_curve):
  prior(v) = the share of v in S (what an attacker holding only S believes before looking at r's
  quasi-identifiers); targets = a seeded sample of n = min(n_targets, |T|, |H|) records of T and
  one of the same size of H (n_targets=None: n = min(|T|, |H|)), so the maxima are comparable.
- Bale & Quick's form (disclosure_bq_max_*, artifact disclosure_curve_bq): prior(v) = the share of
  v in T (the confidential data), every record of T a target; their statistic is the maximum over
  targets at each delta (the curve's max_ratio) and its maximum over delta. The holdout
  calibration of this form takes every record of H as a target, with the same prior (T's share).

Choices the definitions leave open, fixed here:
- A value with prior 0 (absent from S, or from T for Bale & Quick's prior) has share 0 among the
  neighbours too, and its ratio is taken as 1 (the attacker learns nothing about it).
- S's SD is the population SD (ddof 0, as sklearn's StandardScaler); a constant (or all-missing)
  column keeps scale 1. "Within delta" is inclusive: squared distance <= delta², the squared
  distance summed exactly, column by column, in float64.
- Missing values: a missing categorical QI is a value of its own (missing equals missing). A
  missing continuous QI must be missing in the neighbour too (the missingness pattern of the
  continuous QIs is part of the exact-match key) and the distance uses the present coordinates.
  Values compare by their text, so 1 and "1" are equal; the sensitive value works the same way.
- Registry scalars summarise the per-delta curve: the maximum is taken over delta and targets
  (Bale & Quick's statistic, worst radius); means and shares above c are averaged over delta.

Cost: targets are reduced to their distinct (categorical key, continuous QIs) points and S to its
distinct points with per-value counts; each group of equal categorical keys is counted from one
dense block of exact distances, or by KD-tree radius counts when the block would be large.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.neighbors import KDTree

from holdbench.metrics._discretise import factorize_labels, numeric_values
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

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
    """(len(deltas), n_targets) ratios; prior None = S's share of each value."""
    counts = _Counts([targets], synthetic, sensitive, continuous, categorical, deltas, brute_cells)
    return counts.ratios(0, counts.prior(prior))


class _Counts:
    """Neighbour counts of every row of some target tables against S, for all radii at once.

    The work is done once per distinct (categorical key, standardised continuous QIs) point of
    the targets: per_value[i, point, v] = S neighbours of the point within deltas[i] carrying
    value v; a target's counts are its point's (total, and those with its own value)."""

    def __init__(self, target_frames: list[pd.DataFrame], synthetic: pd.DataFrame, sensitive: str,
                 continuous: list[str], categorical: list[str], deltas: Sequence[float],
                 brute_cells: int = _BRUTE_CELLS) -> None:
        self.deltas = _check_delta(deltas)
        frames = list(target_frames) + [synthetic]
        for name in [sensitive] + continuous + categorical:
            for j, frame in enumerate(frames):
                if name not in frame.columns:
                    label = "synthetic" if j == len(target_frames) else "targets"
                    raise ValueError(f"disclosure: column {name!r} is missing from the {label}")
        if sensitive in continuous or sensitive in categorical:
            raise ValueError(f"disclosure: sensitive column {sensitive!r} is also a quasi-identifier")
        cols = [sensitive] + categorical + continuous
        both = pd.concat([f[cols] for f in frames], ignore_index=True)
        bounds = np.cumsum([0] + [len(f) for f in frames])
        self.bounds = bounds
        values, labels = factorize_labels(both[sensitive])
        self.values = values + 1  # -1 (missing) -> 0: a value of its own
        self.labels = np.concatenate([[None], labels])
        n_values, n_t = len(self.labels), bounds[-2]
        self.s_values = self.values[n_t:]
        x = (np.column_stack([numeric_values(both[c]) for c in continuous]) if continuous
             else np.zeros((len(both), 0)))
        s_x = x[n_t:]
        mean = np.array([np.nanmean(c) if not np.all(np.isnan(c)) else 0.0 for c in s_x.T])
        sd = np.array([np.nanstd(c) if not np.all(np.isnan(c)) else 0.0 for c in s_x.T])
        x = (x - mean) / np.where(sd > 0, sd, 1.0)
        key_cols = ([factorize_labels(both[c])[0] for c in categorical]
                    + [np.isnan(c).astype(np.int64) for c in x.T])
        x = np.nan_to_num(x, nan=0.0)
        key = (pd.DataFrame(np.column_stack(key_cols)).groupby(list(range(len(key_cols))), sort=True).ngroup()
               .to_numpy() if key_cols else np.zeros(len(both), dtype=np.int64))
        # distinct target points: (key, x) rows; point_of[i] = the point of target row i
        t_frame = pd.DataFrame(np.column_stack([key[:n_t], x[:n_t]]))
        point_of = t_frame.groupby(list(t_frame.columns), sort=True).ngroup().to_numpy()
        n_points = int(point_of.max()) + 1 if n_t else 0
        first = np.zeros(n_points, dtype=np.int64)
        first[point_of[::-1]] = np.arange(n_t)[::-1]
        p_key, p_x = key[first], x[first]
        self.point_of = point_of
        self.per_value = np.zeros((len(self.deltas), n_points, n_values))
        if n_points == 0 or len(synthetic) == 0:
            return
        s_key, s_x = key[n_t:], x[n_t:]
        s_order = np.argsort(s_key, kind="stable")
        s_bounds = np.searchsorted(s_key[s_order], np.arange(key.max() + 2))
        p_order = np.argsort(p_key, kind="stable")
        cuts = np.flatnonzero(np.diff(p_key[p_order])) + 1
        for rows in np.split(p_order, cuts):
            g = p_key[rows[0]]
            members = s_order[s_bounds[g]:s_bounds[g + 1]]
            if len(members) == 0:
                continue
            v_s = self.s_values[members]
            if x.shape[1] == 0:  # categorical QIs only: the whole group is the neighbourhood
                self.per_value[:, rows] = np.bincount(v_s, minlength=n_values)
                continue
            ref, weight = _weighted_points(s_x[members], v_s, n_values)
            if len(rows) * len(ref) <= brute_cells:
                self.per_value[:, rows] = _count_dense(p_x[rows], ref, weight, self.deltas)
            else:
                self.per_value[:, rows] = _count_tree(p_x[rows], s_x[members], v_s, n_values, self.deltas)

    def prior(self, prior: pd.Series | None = None, source: int | None = None) -> np.ndarray:
        """Prior per value code: given, or the share of each value in S (source None) or in
        target table `source`."""
        if prior is None:
            vals = self.s_values if source is None else self.values[self.bounds[source]:self.bounds[source + 1]]
            return np.bincount(vals, minlength=len(self.labels)) / max(len(vals), 1)
        given = {(None if pd.isna(k) else str(k)): float(v) for k, v in prior.items()}
        out = np.array([given.get(label, 0.0) for label in self.labels])
        bad = [self.labels[v] for v in np.unique(self.values[:self.bounds[-2]]) if not out[v] > 0]
        if bad:
            raise ValueError(f"disclosure: prior gives no positive probability for sensitive value(s) {bad}")
        return out

    def ratios(self, source: int, prior_of: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """(n_deltas, n) ratios of target table `source` (its rows `rows`, default all)."""
        lo, hi = self.bounds[source], self.bounds[source + 1]
        idx = np.arange(lo, hi) if rows is None else lo + np.asarray(rows, dtype=np.int64)
        v_t, pts = self.values[idx], self.point_of[idx]
        per = self.per_value[:, pts]
        total = per.sum(axis=2)
        same = np.take_along_axis(per, np.broadcast_to(v_t[None, :, None], per.shape[:2] + (1,)), axis=2)[..., 0]
        share = np.divide(same, total, out=np.zeros_like(same), where=total > 0)
        p = prior_of[v_t]
        ratio = np.divide(share, p, out=np.ones_like(share), where=p > 0)
        return np.where(total > 0, ratio, 1.0)


def _weighted_points(x: np.ndarray, v: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of x and, per row, how many of its copies carry each value (n, n_values)."""
    uniq, inverse = np.unique(x, axis=0, return_inverse=True)
    weight = np.zeros((len(uniq), n_values))
    np.add.at(weight, (inverse.reshape(-1), v), 1.0)
    return uniq, weight


def _count_dense(q: np.ndarray, ref: np.ndarray, weight: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """(n_deltas, n_q, n_values) neighbour counts per value from one dense block of exact
    squared distances (within: d² <= delta², inclusive)."""
    d2 = np.zeros((len(q), len(ref)))
    for c in range(q.shape[1]):
        d2 += (q[:, c][:, None] - ref[:, c][None, :]) ** 2
    return np.stack([(d2 <= delta * delta).astype(np.float64) @ weight for delta in deltas])


def _count_tree(q: np.ndarray, ref: np.ndarray, v_s: np.ndarray, n_values: int,
                deltas: np.ndarray) -> np.ndarray:
    """The same counts from KD-tree radius counts (no neighbour lists), one tree per value."""
    out = np.zeros((len(deltas), len(q), n_values))
    for v in np.unique(v_s):
        tree = KDTree(ref[v_s == v])
        for i, delta in enumerate(deltas):
            out[i, :, v] = tree.query_radius(q, r=delta, count_only=True)
    return out


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
    disclosure_bq_max_train: float = metric(
        "Disclosure max, B&Q form (all T targets, prior = T share)", "disclosure", direction="lower", digits=3,
        meaning="Bale & Quick's own form: every T record a target, prior = the value's share in T (the "
                "confidential data); largest ratio over targets and radii; lower is safer")
    disclosure_bq_max_holdout: float = metric(
        "Disclosure max, B&Q form (all H targets, prior = T share)", "disclosure", direction="lower", digits=3,
        meaning="The same with every H record a target (same prior): what S reveals about unseen people "
                "(reference; the maximum grows with the number of targets, so compare with |H| beside |T|)")
    disclosure_n_targets: int = 0
    """Targets drawn from each of T and H (holdbench's form)."""
    disclosure_bq_n_targets_train: int = 0
    """Targets of Bale & Quick's form from T (every record)."""
    disclosure_bq_n_targets_holdout: int = 0
    """Targets of Bale & Quick's form from H (every record; 0 on the holdout row)."""
    disclosure_c: float = math.nan
    """The ratio threshold of the 'share above c' fields."""
    disclosure_reason: str | None = None
    """Why some values are undefined (None when all are defined)."""
    seconds_disclosure: float = math.nan
    """Wall time of this family."""
    disclosure_curve: pd.DataFrame | None = artifact(
        "per radius and target source (train, holdout): max_ratio, mean_ratio, share_above_c, n_targets")
    disclosure_curve_bq: pd.DataFrame | None = artifact(
        "Bale & Quick's form (all targets, prior = T's share) per radius and target source: max_ratio "
        "(their statistic: max over r at each delta), mean_ratio, share_above_c, n_targets")


class AttributeDisclosure(MetricFamily):
    """Bale & Quick attribute disclosure with holdout calibration (targets from T vs from H)."""

    name = "disclosure"
    result_type = DisclosureResult
    definition = "definitions/bale-quick.md#8-bale-quick-2024-utility-legal-criteria-and-attribute-disclosure"
    reference = (
        "Both forms (holdbench's and Bale & Quick's) equal a literal loop-based re-implementation of "
        "the definition on a few hundred rows of adult to 1e-13 relative "
        "(tests/metrics/test_bq_forms_adult.py) and hand-built quasi-identifier cells with known "
        "ratios (3 of 4 neighbours, prior 1/2: 1.5) to 1e-15 "
        "(tests/metrics/test_disclosure_known.py)."
    )

    def __init__(self, n_targets: int | None = 2000, deltas: Sequence[float] | None = None,
                 c: float = 3.0) -> None:
        """n_targets: holdbench's form samples min(n_targets, |T|, |H|) targets from T and as many from H
        (seeded); None = min(|T|, |H|). Bale & Quick's form takes every record as a target.
        deltas: the radii on the standardised continuous quasi-identifiers; None = 5 from 0.001 to 0.5.
        c: the ratio above which a target counts as disclosed (the share_above_c metrics)."""
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
        frames = [data.train] if data.holdout_row else [data.train, data.holdout]
        counts = _Counts(frames, data.synthetic, sensitive, continuous, categorical, self.deltas)
        s_prior, t_prior = counts.prior(), counts.prior(source=0)
        rows, bq_rows, stats, bq = [], [], {}, {}
        for j, who in enumerate(("train", "holdout")[:len(frames)]):
            # holdbench's form: n seeded targets, prior = S's share
            r = counts.ratios(j, s_prior, _sample_rows(len(frames[j]), n, data.seed, j))
            stats[who], curve = self._summarise(r)
            rows += [dict(delta=float(d), targets=who, **c, n_targets=n) for d, c in zip(self.deltas, curve)]
            # Bale & Quick's form: every record of the table a target, prior = T's share
            r = counts.ratios(j, t_prior)
            bq[who], curve = self._summarise(r)
            bq_rows += [dict(delta=float(d), targets=who, **c, n_targets=len(frames[j])) for d, c in zip(self.deltas, curve)]
        nan3 = (math.nan, math.nan, math.nan)
        t, h = stats["train"], stats.get("holdout", nan3)
        return DisclosureResult(
            disclosure_max_train=t[0], disclosure_max_holdout=h[0],
            disclosure_mean_train=t[1], disclosure_mean_holdout=h[1],
            disclosure_share_above_c_train=t[2], disclosure_share_above_c_holdout=h[2],
            disclosure_excess_mean=t[1] - h[1], disclosure_excess_share=t[2] - h[2],
            disclosure_bq_max_train=bq["train"][0], disclosure_bq_max_holdout=bq.get("holdout", nan3)[0],
            disclosure_n_targets=n, disclosure_bq_n_targets_train=len(data.train),
            disclosure_bq_n_targets_holdout=0 if data.holdout_row else len(data.holdout), disclosure_c=self.c,
            disclosure_reason=_HOLDOUT_ROW_REASON if data.holdout_row else None,
            seconds_disclosure=time.perf_counter() - start, disclosure_curve=pd.DataFrame(rows),
            disclosure_curve_bq=pd.DataFrame(bq_rows))

    def _summarise(self, r: np.ndarray) -> tuple[tuple[float, float, float], list[dict]]:
        """(max over radii and targets, mean, share above c averaged over radii) and the per-radius rows."""
        mx, mean, share = r.max(axis=1), r.mean(axis=1), (r > self.c).mean(axis=1)
        per = [{"max_ratio": float(a), "mean_ratio": float(b), "share_above_c": float(c)}
               for a, b, c in zip(mx, mean, share)]
        return (float(mx.max()), float(mean.mean()), float(share.mean())), per


def _sample_rows(n_rows: int, n: int, seed: int, stream: int) -> np.ndarray:
    """A seeded sample of n row positions without replacement, in the frame's order."""
    rng = np.random.default_rng([int(seed), 0x5EC, stream])
    return np.sort(rng.choice(n_rows, size=n, replace=False))


def _nan_result(reason: str, c: float, start: float) -> DisclosureResult:
    names = ("max_train", "max_holdout", "mean_train", "mean_holdout", "share_above_c_train",
             "share_above_c_holdout", "excess_mean", "excess_share", "bq_max_train", "bq_max_holdout")
    return DisclosureResult(**{f"disclosure_{k}": math.nan for k in names}, disclosure_c=c,
                            disclosure_reason=reason, seconds_disclosure=time.perf_counter() - start)
