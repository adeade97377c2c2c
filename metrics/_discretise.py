"""Turning mixed-type columns into small integer codes (docs/definitions/paper.md §3.1 and §4.1).

Every metric works on codes: fidelity on T-fitted buckets (one discretiser per k),
privacy on buckets of the concatenation T∪H∪S. Coercion is forgiving on purpose:
synthetic files hold garbage (strings in numeric columns), which must become the
"missing / non-numeric" bucket rather than an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd


def numeric_values(s: pd.Series) -> np.ndarray:
    """Column as float64; missing, non-numeric and non-finite values become NaN.

    Booleans (real ones, or Python bools inside an object column) count as 0/1.
    """
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
        out = s.to_numpy(dtype=float, na_value=np.nan)
    else:
        obj = s.astype(object)
        is_bool = obj.map(lambda v: isinstance(v, (bool, np.bool_)))
        if is_bool.any():
            obj = obj.where(~is_bool, obj[is_bool].astype(float))
        out = pd.to_numeric(obj, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    out = np.array(out, dtype=np.float64, copy=True)
    out[~np.isfinite(out)] = np.nan
    return out


def factorize_labels(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes (int64, -1 = missing) and the str label of each code, in order of first appearance.

    Only the distinct values go through Python; values with the same str (1 and "1") merge.
    """
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    labels = np.array([u if isinstance(u, str) else str(u) for u in np.asarray(uniques, dtype=object)],
                      dtype=object)
    codes = np.asarray(codes, dtype=np.int64)
    merged, distinct = pd.factorize(labels)
    if len(distinct) < len(labels):
        codes = np.where(codes >= 0, merged[np.maximum(codes, 0)], -1)
        labels = np.asarray(distinct, dtype=object)
    return codes, labels


def quantile_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Distinct quantile edges at linspace(0, 1, n_bins+1), computed as pandas does.

    pandas' Series.quantile calls np.percentile(q * 100); the float path matters
    because an edge that lands exactly on a data value decides that value's bucket.
    """
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return np.empty(0, dtype=np.float64)
    q = np.linspace(0.0, 1.0, n_bins + 1) * 100.0
    edges = np.percentile(values, q, method="linear")
    return np.unique(edges)


def bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bucket of each in-range value: intervals (e[i-1], e[i]], the first also closed on the left.

    Returns -1 for missing or out-of-range values.
    """
    out = np.full(len(values), -1, dtype=np.int64)
    if len(edges) == 0:
        return out
    ok = ~np.isnan(values) & (values >= edges[0]) & (values <= edges[-1])
    idx = np.searchsorted(edges, values[ok], side="left")
    out[ok] = np.maximum(idx, 1) - 1
    return out


def top_labels(codes: np.ndarray, labels: np.ndarray, c: int) -> list[str]:
    """The c most frequent labels; ties keep the order of first appearance."""
    counts = np.bincount(codes[codes >= 0], minlength=len(labels))
    order = np.argsort(-counts, kind="stable")
    return [labels[i] for i in order[:c]]


def _smallest_uint(max_value: int) -> type:
    for dt in (np.uint8, np.uint16, np.uint32):
        if max_value <= np.iinfo(dt).max:
            return dt
    return np.int64


@dataclass(frozen=True)
class ColumnBuckets:
    """T-fitted buckets of one column: edges (numeric) or kept labels (categorical)."""

    name: str
    kind: str
    edges: np.ndarray | None = None
    labels: tuple[str, ...] = ()

    @property
    def n_real(self) -> int:
        """Number of buckets T's values can fall into."""
        if self.kind == "numeric":
            return max(len(self.edges) - 1, 1)
        return len(self.labels)

    @property
    def cardinality(self) -> int:
        """Real buckets plus `_other_` and the missing bucket."""
        return self.n_real + 2

    def encode(self, s: pd.Series) -> np.ndarray:
        """Codes 0..n_real-1 for real buckets, n_real for `_other_`, n_real+1 for missing."""
        other, missing = self.n_real, self.n_real + 1
        if self.kind == "numeric":
            x = numeric_values(s)
            idx = bin_index(x, self.edges)
            return np.where(np.isnan(x), missing, np.where(idx < 0, other, idx))
        codes, labels = factorize_labels(s)
        lut = pd.Index(list(self.labels), dtype=object).get_indexer(labels)
        lut = np.where(lut < 0, other, lut)
        return np.where(codes < 0, missing, lut[np.maximum(codes, 0)] if len(lut) else other)


class Discretiser:
    """Buckets of every column learned on T with cap c (docs/definitions/paper.md §3.1)."""

    def __init__(self, train: pd.DataFrame, kinds: Mapping[str, str], c: int):
        self.c = c
        self.columns: list[ColumnBuckets] = []
        for col in train.columns:
            if kinds[col] == "numeric":
                edges = quantile_edges(numeric_values(train[col]), c)
                self.columns.append(ColumnBuckets(col, "numeric", edges=edges))
            else:
                labels = tuple(top_labels(*factorize_labels(train[col]), c))
                self.columns.append(ColumnBuckets(col, "categorical", labels=labels))

    @property
    def cardinalities(self) -> np.ndarray:
        return np.array([b.cardinality for b in self.columns], dtype=np.int64)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Column-major codes, shape (n_columns, n_rows), smallest unsigned dtype."""
        dt = _smallest_uint(int(self.cardinalities.max(initial=1)))
        out = np.empty((len(self.columns), len(df)), dtype=dt)
        for j, b in enumerate(self.columns):
            out[j] = b.encode(df[b.name])
        return out


def transform_all(discretisers: Sequence[Discretiser], df: pd.DataFrame) -> list[np.ndarray]:
    """`[d.transform(df) for d in discretisers]`, equal to it value for value, reading each column once.

    The discretisers must be fitted on the same T (one per bucket cap, as fidelity's). A numeric
    value is located once among the union of all their edges: every edge of one discretiser is
    in the union and all share T's min and max, so each interval between consecutive union
    edges lies inside exactly one bucket of each discretiser, read off a small table.
    """
    first = discretisers[0].columns
    if any([b.name for b in d.columns] != [b.name for b in first] for d in discretisers):
        raise ValueError("transform_all: the discretisers were not fitted on the same columns")
    outs = [np.empty((len(first), len(df)), dtype=_smallest_uint(int(d.cardinalities.max(initial=1))))
            for d in discretisers]
    for j, col in enumerate(first):
        buckets = [d.columns[j] for d in discretisers]
        if col.kind == "numeric":
            x = numeric_values(df[col.name])
            edges = np.unique(np.concatenate([b.edges for b in buckets]))
            nan = np.isnan(x)
            if len(edges):
                pos = np.searchsorted(edges, x, side="left")  # NaN sorts last: len(edges)
                below = x < edges[0]
            for b, out in zip(buckets, outs, strict=True):
                other, missing = b.n_real, b.n_real + 1
                if len(edges) == 0:
                    out[j] = np.where(nan, missing, other)
                    continue
                lut = np.empty(len(edges) + 1, dtype=out.dtype)
                lut[0], lut[-1] = 0, other
                lut[1:-1] = np.searchsorted(b.edges, edges[1:], side="left") - 1
                code = lut[pos]
                code[below] = other
                code[nan] = missing
                out[j] = code
        else:
            codes, labels = factorize_labels(df[col.name])
            known = codes >= 0
            for b, out in zip(buckets, outs, strict=True):
                other, missing = b.n_real, b.n_real + 1
                lut = pd.Index(list(b.labels), dtype=object).get_indexer(labels)
                lut = np.where(lut < 0, other, lut)
                out[j] = np.where(known, lut[np.maximum(codes, 0)], missing) if len(lut) else \
                    np.where(known, other, missing)
    return outs


def distance_codes(frames: Sequence[pd.DataFrame], kinds: Mapping[str, str],
                   n_bins: int | None = 100) -> list[np.ndarray]:
    """Codes for the Hamming distance (docs/definitions/paper.md §4.1), one (n_columns, n_rows) array per frame.

    Numeric columns: n_bins quantile bins of the concatenation of all frames (n_bins None: every
    distinct value, for exact equality); categorical columns: every distinct label. Missing is a
    value of its own in both.
    """
    sizes = [len(f) for f in frames]
    columns = list(frames[0].columns)
    per_col = []
    for col in columns:
        if kinds[col] == "numeric":
            x = np.concatenate([numeric_values(f[col]) for f in frames])
            if n_bins is None:
                idx = pd.factorize(x)[0] + 1  # factorize's -1 (missing) becomes 0
            else:
                idx = bin_index(x, quantile_edges(x, n_bins))
                idx = np.where(np.isnan(x), idx.max(initial=-1) + 1, idx)
            per_col.append(idx)
        else:
            parts = [factorize_labels(f[col]) for f in frames]
            shared, distinct = pd.factorize(np.concatenate([labels for _, labels in parts]))
            out, start = [], 0
            for codes, labels in parts:
                lut = np.append(shared[start:start + len(labels)], len(distinct))
                out.append(lut[codes])  # code -1 (missing) picks the last entry: its own value
                start += len(labels)
            per_col.append(np.concatenate(out))
    dt = _smallest_uint(max((int(c.max(initial=0)) for c in per_col), default=0))
    full = np.empty((len(columns), sum(sizes)), dtype=dt)
    for j, c in enumerate(per_col):
        full[j] = c
    bounds = np.cumsum([0] + sizes)
    return [np.ascontiguousarray(full[:, a:b]) for a, b in pairwise(bounds)]
