"""Sequential measures beside D2.2's (docs/definitions/d22.md §11.1-§11.4), on arrays: no import of
holdbench.metrics.sequential (which imports this module).

Every function takes a data set's events in subject order (`owner`: the subject of each event row,
non-decreasing; `position`: the event's index within its subject's sequence) and returns distances
against T's, so the caller can put S's beside H's.

- `floored_ratio`: S's distance over H's, H's floored at RATIO_FLOOR (§11.4).
- `coherence_parts`: mostlyai-qa's two further coherence parts, distinct categories per sequence and
  sequences per category, as TVDs against T (§11.2).
- `gap_tvds`: the inter-event gap of the time column by position, as TVDs against T (§11.3).
- `out_of_order`: consecutive events whose order values decrease in row order (§11.3).
- `interleaved_keys`: keys whose rows are not contiguous in the file (`order: row`, §11.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from holdbench.metrics._discretise import numeric_values, quantile_edges

#: the H distance a ratio divides by at least: a TVD of 0.01 (one percentage point of probability mass)
RATIO_FLOOR = 0.01
#: mostlyai-qa's bins of an event column for the coherence parts (prepare_data_for_coherence: 30)
CATEGORY_BINS = 30
#: mostlyai-qa's bins of the distinct-categories counts (bin_data(bins=10))
COUNT_BINS = 10
#: mostlyai-qa's top categories per column in sequences per category (n_top_cats = 9), the rest "(other)"
TOP_CATEGORIES = 9
#: gap positions measured one by one; later gaps are pooled into the last
GAP_POSITIONS = 10
#: buckets of the gaps at one position (T's quantiles, as F2's cap)
GAP_BUCKETS = 10


def tvd(a: np.ndarray, b: np.ndarray) -> float:
    """½ Σ |p_a − p_b| of two count vectors of equal length (NaN if either is empty)."""
    na, nb = a.sum(), b.sum()
    if na == 0 or nb == 0:
        return math.nan
    return float(0.5 * np.abs(a / na - b / nb).sum())


def floored_ratio(synthetic: float, holdout: float) -> float:
    """S's distance / max(H's distance, RATIO_FLOOR); NaN when either is undefined."""
    if not (math.isfinite(synthetic) and math.isfinite(holdout)):
        return math.nan
    return synthetic / max(holdout, RATIO_FLOOR)


def ratio_note(distances: dict[str, tuple[float, float]]) -> str:
    """The output's line on the ratios: the rule, and each ratio's two distances, floored ones marked."""
    parts = []
    for name, (s, h) in distances.items():
        if math.isfinite(s) and math.isfinite(h):
            parts.append(f"{name} S {s:.4f} / H {h:.4f}" + (f" (H floored to {RATIO_FLOOR})" if h < RATIO_FLOOR else ""))
    return (f"each sequential ratio is S's distance / max(H's distance, {RATIO_FLOOR}) (an H distance below "
            f"{RATIO_FLOOR} counts as {RATIO_FLOOR}, so a ratio never explodes on a near-zero reference); the "
            "distances: " + "; ".join(parts))


#: mostlyai-qa's rare-category protection: a level held by fewer of T's events is "(other)"
MIN_LEVEL_COUNT = 5


def mostly_edges(values: np.ndarray, n: int) -> np.ndarray:
    """The lower edges of mostlyai-qa's numeric bins (its bin_numeric, on T's non-missing values): T's
    distinct values when at most n, else its greedy search for n+1 distinct quantile-spaced values;
    then every edge but the last floored to the fewest decimals that keep them distinct. A value v
    falls into the last edge <= v (a value below the first into the first bin)."""
    values = np.sort(values[~np.isnan(values)])
    if len(values) == 0:
        return np.zeros(1)
    uniq = np.unique(values)
    if len(uniq) <= n:
        breaks = [*uniq.tolist(), float(uniq[-1]) + 1]
    else:
        breaks = []
        for i in range(n, max(n + 1, min(1000, len(values) + 1))):
            breaks = sorted(set(values[np.linspace(0, len(values) - 1, i).astype(int)].tolist()))
            if len(breaks) >= n + 1:
                break
    for precision in range(20):
        floored = [float(np.true_divide(np.floor(b * 10**precision), 10**precision)) for b in breaks]
        if len(set(floored)) == len(breaks):
            breaks = floored[:-1] + [breaks[-1]]
            break
    return np.asarray(breaks[:-1], dtype=float)


def _bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.searchsorted(edges, np.clip(x, edges[0], None), side="right") - 1


class ColumnBins:
    """One event column cut as mostlyai-qa's coherence does (its bin_data with 30 bins), on T's values:
    a categorical column into T's CATEGORY_BINS most frequent levels held by at least MIN_LEVEL_COUNT
    events, the rest "(other)"; a numeric one on `mostly_edges`; a missing value is a bin of its own."""

    def __init__(self, values: pd.Series, kind: str) -> None:
        self.kind = kind
        if kind == "categorical":
            counts = values.dropna().astype(str).value_counts(sort=True).head(CATEGORY_BINS)
            self.levels = pd.Index(counts.index[counts >= MIN_LEVEL_COUNT])
            self.n = len(self.levels) + 2  # + (other), (n/a)
        else:
            self.edges = mostly_edges(numeric_values(values), CATEGORY_BINS)
            self.n = len(self.edges) + 1  # + (n/a)

    def codes(self, values: pd.Series) -> np.ndarray:
        if self.kind == "categorical":
            text = values.astype(object).where(values.notna())
            idx = self.levels.get_indexer(text.map(str, na_action="ignore"))
            return np.where(text.isna().to_numpy(), self.n - 1, np.where(idx < 0, self.n - 2, idx)).astype(np.int64)
        x = numeric_values(values)
        return np.where(np.isnan(x), self.n - 1, _bin_index(x, self.edges)).astype(np.int64)


def _count_bins(t: np.ndarray, others: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Histograms of per-sequence counts on T's bins (`mostly_edges` with COUNT_BINS, as mostlyai-qa's
    bin_data(bins=10)), others' values clipped into T's range."""
    edges = mostly_edges(t.astype(float), COUNT_BINS)
    return [np.bincount(_bin_index(x.astype(float), edges), minlength=len(edges)) for x in (t, *others)]


def _sequence_codes(owner: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The distinct (sequence, code) pairs, as sequence * n_codes + code."""
    return np.unique(owner.astype(np.int64) * n_codes + codes)


def coherence_parts(train: tuple[np.ndarray, pd.DataFrame], others: Sequence[tuple[np.ndarray, pd.DataFrame]],
                    kinds: dict[str, str]) -> pd.DataFrame:
    """Per event column, mostlyai-qa's two further coherence parts against T, for each of `others`:
    `distinct_<i>`: TVD of the distribution over sequences of the number of distinct bins a sequence's
    events take (binned as COUNT_BINS); `category_<i>`: TVD of the number of sequences holding each of T's
    TOP_CATEGORIES bins (by that number) and "(other)" (the sequences holding any other bin, each once),
    each count over their sum. (owner, events) pairs;
    only sequences with events count."""
    rows = []
    for col, kind in kinds.items():
        bins = ColumnBins(train[1][col], kind)
        pairs = [_sequence_codes(o, bins.codes(ev[col]), bins.n) for o, ev in (train, *others)]
        distinct = [np.unique(p // bins.n, return_counts=True)[1] for p in pairs]
        hist = _count_bins(distinct[0], distinct[1:])
        per_code = np.bincount(pairs[0] % bins.n, minlength=bins.n)
        top = np.argsort(-per_code, kind="stable")[:TOP_CATEGORIES]
        to_pooled = np.full(bins.n, len(top), dtype=np.int64)  # every other bin is "(other)"
        to_pooled[top] = np.arange(len(top))
        # a sequence holding several "(other)" bins counts once there, as in mostlyai-qa
        pooled = [np.bincount(np.unique((p // bins.n) * (len(top) + 1) + to_pooled[p % bins.n]) % (len(top) + 1),
                              minlength=len(top) + 1) for p in pairs]
        row = {"column": col}
        for i in range(len(others)):
            row[f"distinct_{i}"] = tvd(hist[0], hist[i + 1])
            row[f"category_{i}"] = tvd(pooled[0], pooled[i + 1])
        rows.append(row)
    return pd.DataFrame(rows)


def positions(lengths: np.ndarray) -> np.ndarray:
    """Each event's index within its sequence (events in subject order)."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return np.arange(int(lengths.sum())) - np.repeat(starts, lengths)


def _gaps(lengths: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gap, position) of every subsequent pair: time(t+1) - time(t), position t+1 capped at GAP_POSITIONS."""
    pos = positions(lengths)
    nxt = np.flatnonzero(pos[1:] > 0) + 1 if len(pos) > 1 else np.empty(0, dtype=np.int64)
    return times[nxt] - times[nxt - 1], np.minimum(pos[nxt], GAP_POSITIONS)


def gap_tvds(train: tuple[np.ndarray, np.ndarray], others: Sequence[tuple[np.ndarray, np.ndarray]]
             ) -> tuple[list[float], pd.DataFrame]:
    """TVDs of the inter-event gap distribution per position against T's ((lengths, times) pairs, times
    as numbers: days for a datetime). Position p is the gap between events p and p+1 (1-based), p >=
    GAP_POSITIONS pooled; each position cut into T's GAP_BUCKETS quantile buckets (others clipped into
    T's range; a missing gap a bucket of its own). The overall TVD is the mean over positions weighted
    by T's number of gaps there. Returns the overall TVD of each of `others` and the per-position table."""
    t_gap, t_pos = _gaps(*train)
    gaps = [_gaps(*o) for o in others]
    rows, overall = [], [0.0] * len(others)
    weight = 0
    for p in range(1, GAP_POSITIONS + 1):
        tg = t_gap[t_pos == p]
        if len(tg) == 0:
            continue
        edges = quantile_edges(tg, GAP_BUCKETS)
        if len(edges) == 0:
            edges = np.zeros(1)

        def hist(g: np.ndarray, edges=edges) -> np.ndarray:
            idx = np.searchsorted(edges[:-1], np.clip(g, edges[0], None), side="right") if len(edges) > 1 else \
                np.zeros(len(g), dtype=np.int64)
            idx = np.where(np.isnan(g), len(edges), idx)
            return np.bincount(idx.astype(np.int64), minlength=len(edges) + 1)

        row = {"position": p if p < GAP_POSITIONS else f"{GAP_POSITIONS}+", "n_train": len(tg),
               "median_train": float(np.nanmedian(tg)) if np.isfinite(tg).any() else math.nan}
        for i, (g, gp) in enumerate(gaps):
            og = g[gp == p]
            d = tvd(hist(tg), hist(og))
            row.update({f"n_{i}": len(og), f"tvd_{i}": d,
                        f"median_{i}": float(np.nanmedian(og)) if np.isfinite(og).any() else math.nan})
            overall[i] += len(tg) * (d if math.isfinite(d) else 1.0)
        weight += len(tg)
        rows.append(row)
    return ([x / weight if weight else math.nan for x in overall], pd.DataFrame(rows))


def out_of_order(lengths: np.ndarray, keys: pd.DataFrame) -> tuple[float, float]:
    """(share of sequences with at least one event whose order values are below the previous event's,
    share of subsequent pairs so) in row order; `keys` holds the order columns (compared in turn)."""
    pos = positions(lengths)
    nxt = np.flatnonzero(pos[1:] > 0) + 1 if len(pos) > 1 else np.empty(0, dtype=np.int64)
    if len(nxt) == 0:
        return math.nan, math.nan
    decided = np.zeros(len(nxt), dtype=bool)
    below = np.zeros(len(nxt), dtype=bool)
    for c in keys.columns:
        v = keys[c].to_numpy()
        a, b = v[nxt - 1], v[nxt]
        lt, gt = b < a, b > a
        below |= ~decided & lt
        decided |= lt | gt
    owner = np.repeat(np.arange(len(lengths)), lengths)[nxt]
    has_pairs = int((lengths > 1).sum())
    return float(len(np.unique(owner[below])) / has_pairs), float(below.mean())


def interleaved_keys(owner_in_row_order: np.ndarray) -> float:
    """Share of keys whose rows are not one contiguous block of the file (their events interleaved with
    other keys' rows)."""
    if len(owner_in_row_order) == 0:
        return math.nan
    rows = np.arange(len(owner_in_row_order))
    frame = pd.DataFrame({"o": owner_in_row_order, "r": rows})
    g = frame.groupby("o")["r"].agg(["min", "max", "size"])
    return float(((g["max"] - g["min"] + 1) != g["size"]).mean())
