"""Fidelity F1-F3: mean TVD of k-way marginals between T and S, and T and H (docs/definitions/paper.md §3).

T's buckets and T's codes do not depend on S, so `FidelityModel` fits them once and can
score many synthetic tables (the reference check scores 16 against one T/H pair).

Two exact ways to count the joint buckets, chosen by the amount of work: numpy's bincount
over one key array per run of combinations that share all but their last column (no
compilation: a small table's evaluation never loads numba, whose start costs more than the
whole count), or the numba kernel `marginal_tvds` above `_NUMPY_MAX_WORK` rows x combinations
(about 3x faster per row once loaded). Both sum |p_T - p_X| over the buckets of a marginal in
the same order (lexicographic in the bucket codes, one addition at a time), so they give the
same TVDs to the last bit.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from holdbench.metrics._discretise import Discretiser, transform_all
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric, shard_slice

#: bucket cap c_k per marginal order k (docs/definitions/paper.md §3.1)
BUCKET_CAPS = {1: 100, 2: 10, 3: 5}
MARGINAL_COLUMNS = ["columns", "k", "tvd_synthetic", "tvd_holdout"]

#: combinations handed to one kernel call; small enough to balance 2-8 workers
_COMBOS_PER_TASK = 64
#: rows x combinations of one `_tvds` call up to which numpy counts, unless numba is loaded
#: already; above, the numba kernel. Measured (scripts/bench/bench_cold_start.py --paths, credit-
#: default): numpy 2.5 ns per row and combination, numba 0.84 ns once loaded, loading numba
#: 0.86 s CPU: numpy is cheaper below ~500M per process; a call is a k and a set of tables
_NUMPY_MAX_WORK = 200_000_000
#: keys per bincount call of the numpy path (8 bytes each): bounds its memory
_NUMPY_BLOCK = 1 << 21
#: T's counts are kept between calls (holdout, then each S) up to this many buckets per k
_KEEP_TRAIN_COUNTS = 1 << 22
#: combinations per order k averaged when `max_combinations` is None: every k-combination up to this many
#: (the paper's exact F_k: any table up to 182 columns for F3, 1414 for F2), else a seeded sample of this many
#: (`combinations_sampled` true, n_combinations_k the sample size), drawn without listing the C(n, k)
#: combinations: a 10,000-column table has 1.7e11 3-way ones, whose list alone exceeds any memory limit
WIDE_SAMPLE = 1_000_000


@dataclass(frozen=True)
class FidelityScores:
    """Per-k mean TVDs plus the combinations they were averaged over."""

    F: dict[int, float]
    F_holdout: dict[int, float]
    n_combinations: dict[int, int]
    combinations_sampled: bool
    marginals: pd.DataFrame

    def ratio(self, k: int) -> float:
        """F_k(T,S) / F_k(T,H); NaN when the holdout reference is 0 or undefined."""
        num, den = self.F[k], self.F_holdout[k]
        if not (math.isfinite(num) and math.isfinite(den)) or den == 0:
            return math.nan
        return num / den


def select_combinations(n_columns: int, k: int, max_combinations: int | None,
                        rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """All k-combinations of column indices, or a seeded sample of max_combinations of them (None:
    WIDE_SAMPLE, so only a table with more than that many k-combinations is sampled).

    Returns (array of shape (m, k) in lexicographic order, whether it was sampled). A sample is drawn as
    ranks (rng.choice without replacement over C(n, k)) turned into combinations arithmetically: its cost
    and memory grow with the sample, not with C(n, k).
    """
    total = math.comb(n_columns, k)
    limit = WIDE_SAMPLE if max_combinations is None else max_combinations
    if total <= limit:
        combos = np.array(list(itertools.combinations(range(n_columns), k)), dtype=np.int64)
        return combos.reshape(total, k), False
    if total >= 1 << 62:
        raise ValueError(f"fidelity: {n_columns} columns have {total:.3g} {k}-way combinations, too many to "
                         "number in 64 bits; drop columns or evaluate a subset of them")
    pick = np.sort(rng.choice(total, size=limit, replace=False))
    return _unrank_combinations(pick, n_columns, k), True


def _unrank_combinations(ranks: np.ndarray, n: int, k: int) -> np.ndarray:
    """(len(ranks), k): the rank-th k-combinations of range(n) in lexicographic order (no enumeration).

    Per slot s (k, k-1, ..., 1), `before[c]` counts the s-combinations of range(n) whose first element is
    below c; within the combinations that start at `start` or later, the first element is the last c with
    before[c] - before[start] <= rank."""
    ranks = np.asarray(ranks, dtype=np.int64)
    out = np.empty((len(ranks), k), dtype=np.int64)
    start = np.zeros(len(ranks), dtype=np.int64)
    rank = ranks.copy()
    for j, slots in enumerate(range(k, 0, -1)):
        block = np.array([math.comb(n - c - 1, slots - 1) for c in range(n)], dtype=np.int64)
        before = np.concatenate([[0], np.cumsum(block)])
        target = rank + before[start]
        c = np.searchsorted(before, target, side="right") - 1
        out[:, j] = c
        rank = target - before[c]
        start = c + 1
    return out


def _unrank_combination(rank: int, n: int, k: int) -> list[int]:
    """The rank-th k-combination of range(n) in lexicographic order (no full enumeration)."""
    return _unrank_combinations(np.array([rank]), n, k)[0].tolist()


def chosen_combinations(n_columns: int, max_combinations: int | None,
                        extra_orders: Mapping[int, tuple[int, int]] | None, seed: int) -> tuple[dict[int, np.ndarray], bool]:
    """({k: the combinations F_k averages over, before any sharding}, whether F1-F3 are sampled): k = 1..3
    (each all of them, or a sample per `max_combinations`) and every extra order k of {k: (cap, n sampled)},
    drawn in order of k from one generator seeded `seed`."""
    limits = {k: max_combinations for k in BUCKET_CAPS}
    limits.update({k: n for k, (_, n) in (extra_orders or {}).items()})
    rng = np.random.default_rng(seed)
    out, sampled_any = {}, False
    for k, limit in limits.items():
        out[k], sampled = select_combinations(n_columns, k, limit, rng)
        sampled_any |= sampled and k in BUCKET_CAPS
    return out, sampled_any


def _numba_loaded() -> bool:
    """Whether this process has already loaded the numba kernels (then they are the cheaper way)."""
    kernels = sys.modules.get("holdbench.metrics._kernels")
    return kernels is not None and bool(kernels._jitted)


def _prefix_runs(combos: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of consecutive combinations sharing all but their last column."""
    if len(combos) == 0:
        return []
    if combos.shape[1] == 1:
        return [(0, len(combos))]
    head = combos[:, :-1]
    cut = np.flatnonzero((head[1:] != head[:-1]).any(axis=1)) + 1
    return list(pairwise([0, *cut.tolist(), len(combos)]))


class _Run:
    """One run of combinations (prefix columns P, last columns L): where each combination's
    buckets sit in the run's count vector, and in which order they are summed.

    Bucket (prefix key q, last value c) of last column l sits at (offset_l - base + c) * |P| + q,
    offset_l being l's first code in the all-column numbering; the TVD reads it back in
    lexicographic order (q major, c minor), the order `marginal_tvds` sums in.
    """

    def __init__(self, combos: np.ndarray, cards: np.ndarray, offsets: np.ndarray):
        self.prefix = combos[0, :-1]
        self.last = combos[:, -1]
        self.width = int(np.prod(cards[self.prefix]))
        self.base = int(offsets[self.last[0]])
        self.length = (int(offsets[self.last[-1]] + cards[self.last[-1]]) - self.base) * self.width
        lo, hi = int(self.last[0]), int(self.last[-1]) + 1
        self.rows = slice(lo, hi) if hi - lo == len(self.last) else self.last
        sizes = cards[self.last] * self.width
        s = np.arange(int(sizes.max()))
        card = cards[self.last][:, None]
        pos = (offsets[self.last][:, None] - self.base + s % card) * self.width + s // card
        self.order = np.where(s < sizes[:, None], pos, self.length)  # past the end: a zero count

    def counts(self, shifted: np.ndarray, codes: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """Counts of every bucket of the run over one table (shifted: codes + column offsets)."""
        n = codes.shape[1]
        key = np.zeros(n, np.int64)
        for j in self.prefix:
            key *= int(cards[j])
            key += codes[j]
        key -= self.base * self.width
        out = np.zeros(self.length + 1, np.int64)
        step = max(1, _NUMPY_BLOCK // len(self.last))
        for a in range(0, n, step):
            keys = np.multiply(shifted[self.rows, a:a + step], self.width, dtype=np.int64)
            keys += key[None, a:a + step]
            out[:self.length] += np.bincount(keys.ravel(), minlength=self.length)
        return out

    def tvds(self, train_counts: np.ndarray, n_train: int, counts: np.ndarray, n: int) -> np.ndarray:
        """0.5 * sum of |p_T - p_X| per combination, added bucket by bucket in lexicographic order."""
        diff = np.abs(train_counts[self.order] / n_train - counts[self.order] / n)
        return 0.5 * np.cumsum(diff, axis=1)[:, -1]


def _numpy_tvds(train: np.ndarray, tables: list[np.ndarray], cards: np.ndarray, combos: np.ndarray,
                train_counts: list[np.ndarray] | None, n_jobs: int = 1) -> tuple[np.ndarray, list[np.ndarray]]:
    """(n_combinations, len(tables)) TVDs by bincount, and T's counts per run (pass them back in
    as train_counts to skip recounting T). Same values as marginal_tvds, bit for bit. Runs go to
    n_jobs threads (numpy's bincount and arithmetic release the GIL)."""
    offsets = np.concatenate(([0], np.cumsum(cards)[:-1]))
    runs = [(a, b, _Run(combos[a:b], cards, offsets)) for a, b in _prefix_runs(combos)]
    shift = offsets[:, None].astype(np.int64)
    train_shifted = train + shift if train_counts is None else None
    shifted = [codes + shift for codes in tables]

    def one(i: int) -> tuple[np.ndarray, list[np.ndarray]]:
        run = runs[i][2]
        counts_t = run.counts(train_shifted, train, cards) if train_counts is None else train_counts[i]
        return counts_t, [run.tvds(counts_t, train.shape[1], run.counts(sh, codes, cards), codes.shape[1])
                          for sh, codes in zip(shifted, tables, strict=True)]

    workers = n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    if workers > 1 and len(runs) > 1:
        with ThreadPoolExecutor(min(workers, len(runs))) as pool:
            parts = list(pool.map(one, range(len(runs))))
    else:
        parts = [one(i) for i in range(len(runs))]
    out = np.empty((len(combos), len(tables)))
    for (a, b, _), (_, tvds) in zip(runs, parts, strict=True):
        out[a:b] = np.stack(tvds, axis=1)
    return out, [counts_t for counts_t, _ in parts]


class FidelityModel:
    """T's buckets for every k and F_k(T,H), ready to score synthetic tables."""

    def __init__(self, train: pd.DataFrame, holdout: pd.DataFrame, kinds: Mapping[str, str], *,
                 max_combinations: int | None = None, n_jobs: int = 1, seed: int = 0,
                 extra_orders: Mapping[int, tuple[int, int]] | None = None, shard: tuple[int, int] = (0, 1)):
        """extra_orders: {k: (bucket cap, combinations sampled)} for k > 3 (ANITA D2.2's n-way accuracy).
        shard: (i, n) keeps part i of n of every k's combinations (chosen first, then cut in order)."""
        self.columns = list(train.columns)
        self.caps = {**BUCKET_CAPS, **{k: cap for k, (cap, _) in (extra_orders or {}).items()}}
        self.n_jobs = n_jobs
        self.n_train, self.n_holdout = len(train), len(holdout)
        self.discretisers: dict[int, Discretiser] = {}
        self.train_codes: dict[int, np.ndarray] = {}
        self.holdout_codes: dict[int, np.ndarray] = {}
        self._train_counts: dict[int, list[np.ndarray]] = {}
        chosen, self.sampled = chosen_combinations(len(self.columns), max_combinations, extra_orders, seed)
        self.combos: dict[int, np.ndarray] = {k: c[shard_slice(len(c), *shard)] for k, c in chosen.items()}
        for k, cap in self.caps.items():
            self.discretisers[k] = Discretiser(train, kinds, cap)
        self.train_codes = self._codes(train)
        self.holdout_codes = self._codes(holdout)
        self._holdout_tvds = {k: self._tvds(k, [self.holdout_codes[k]])[:, 0] for k in self.caps}

    def _codes(self, df: pd.DataFrame) -> dict[int, np.ndarray]:
        """df's codes under T's buckets, for every k."""
        return dict(zip(self.caps, transform_all([self.discretisers[k] for k in self.caps], df), strict=True))

    def _tvds(self, k: int, tables: list[np.ndarray]) -> np.ndarray:
        """(n_combinations, len(tables)) TVDs of T against each coded table."""
        combos = self.combos[k]
        if len(combos) == 0:
            return np.empty((0, len(tables)))
        cards = self.discretisers[k].cardinalities
        train = self.train_codes[k]
        rows = train.shape[1] + sum(t.shape[1] for t in tables)
        if rows * len(combos) <= _NUMPY_MAX_WORK and not _numba_loaded():
            out, counts = _numpy_tvds(train, tables, cards, combos, self._train_counts.get(k), self.n_jobs)
            if sum(len(c) for c in counts) <= _KEEP_TRAIN_COUNTS:
                self._train_counts[k] = counts
            return out
        from holdbench.metrics._kernels import marginal_tvds

        others = np.ascontiguousarray(np.concatenate(tables, axis=1))
        sizes = np.array([t.shape[1] for t in tables], dtype=np.int64)
        chunks = [combos[i:i + _COMBOS_PER_TASK] for i in range(0, len(combos), _COMBOS_PER_TASK)]
        if self.n_jobs == 1 or len(chunks) == 1:
            parts = [marginal_tvds(train, others, sizes, cards, c) for c in chunks]
        else:
            from joblib import Parallel, delayed

            parts = Parallel(n_jobs=self.n_jobs, backend="threading")(
                delayed(marginal_tvds)(train, others, sizes, cards, c) for c in chunks
            )
        return np.concatenate(parts, axis=0)

    def tvds(self, synthetic: pd.DataFrame | None) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{k: (TVD of S, TVD of H) per combination}; None means S is H (the holdout reference row)."""
        codes = None if synthetic is None else self._codes(synthetic)
        out = {}
        for k in self.caps:
            tvd_h = self._holdout_tvds[k]
            out[k] = (tvd_h if codes is None else self._tvds(k, [codes[k]])[:, 0], tvd_h)
        return out

    def score(self, synthetic: pd.DataFrame | None) -> FidelityScores:
        """Score S against T (None means S is H: the holdout reference row)."""
        return scores(self.columns, self.combos, self.tvds(synthetic), self.sampled)


def scores(columns: Sequence, combos: Mapping[int, np.ndarray],
           tvds: Mapping[int, tuple[np.ndarray, np.ndarray]], sampled: bool) -> FidelityScores:
    """F_k and F_k of H (means over the combinations) and the marginals table, from per-combination TVDs."""
    F, F_h, n_comb, rows = {}, {}, {}, []
    for k, (tvd_s, tvd_h) in tvds.items():
        F[k] = float(np.mean(tvd_s)) if len(tvd_s) else math.nan
        F_h[k] = float(np.mean(tvd_h)) if len(tvd_h) else math.nan
        n_comb[k] = len(tvd_s)
        names = [" | ".join(str(columns[j]) for j in c) for c in combos[k]]
        rows.append(pd.DataFrame({"columns": names, "k": k, "tvd_synthetic": tvd_s, "tvd_holdout": tvd_h}))
    marginals = pd.concat(rows, ignore_index=True)[MARGINAL_COLUMNS]
    return FidelityScores(F, F_h, n_comb, sampled, marginals)


@dataclass(frozen=True)
class FidelityResult:
    """Mean TVD of k-way marginals (docs/definitions/paper.md §3). For F*: lower is better; for ratios 1 is ideal."""

    F1: float = metric("F1 (1-way TVD)", "fidelity", direction="lower", digits=4,
                       meaning="Mean TVD of univariate marginals T vs S (c = 100 buckets); 0 = identical.")
    F2: float = metric("F2 (2-way TVD)", "fidelity", direction="lower", digits=4,
                       meaning="Mean TVD of bivariate marginals T vs S (c = 10 buckets).")
    F3: float = metric("F3 (3-way TVD)", "fidelity", direction="lower", digits=4,
                       meaning="Mean TVD of trivariate marginals T vs S (c = 5 buckets).")
    F1_ratio: float = metric("F1 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
                             meaning="F1 / F1 of H: 1 = as faithful as fresh real data, above = less, "
                                     "below = closer to T than fresh data (overfitting).")
    F2_ratio: float = metric("F2 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
                             meaning="F2 / F2 of H (same reading as the F1 ratio).")
    F3_ratio: float = metric("F3 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
                             meaning="F3 / F3 of H (same reading); the paper's headline fidelity number.")
    F4: float = metric("F4 (4-way TVD, sampled)", "fidelity", direction="lower", digits=4,
                       meaning="Mean TVD of a seeded sample of 4-way marginals (ANITA D2.2's n-way accuracy); "
                               "computed only when the option four_way_combinations is set.")
    F4_ratio: float = metric("F4 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3,
                             meaning="F4 / F4 of H on the same sampled combinations (same reading as F3 ratio).")
    F1_holdout: float = 0.0
    """F1 of H against T: the sampling-noise floor a perfect synthesizer would reach."""
    F2_holdout: float = 0.0
    """F2 of H against T."""
    F3_holdout: float = 0.0
    """F3 of H against T."""
    n_combinations_1: int = 0
    """Number of 1-way marginals averaged."""
    n_combinations_2: int = 0
    """Number of 2-way marginals averaged."""
    n_combinations_3: int = 0
    """Number of 3-way marginals averaged."""
    F4_holdout: float = math.nan
    """F4 of H against T (NaN unless four_way_combinations)."""
    n_combinations_4: int = 0
    """Number of sampled 4-way marginals (0 unless four_way_combinations)."""
    combinations_sampled: bool = False
    """True when max_combinations made some F_k a seeded sample instead of all combinations."""
    seconds_fidelity: float = 0.0
    """Wall time of the fidelity part."""
    marginals: pd.DataFrame | None = artifact(
        "One row per marginal: columns ('a | b'), k, tvd_synthetic, tvd_holdout.")


class Fidelity(MetricFamily):
    """F1-F3 and their ratios to the holdout (docs/definitions/paper.md §3), exactly as the paper's code."""

    name = "fidelity"
    result_type = FidelityResult
    definition = "definitions/paper.md#3-fidelity-f1-f2-f3"
    reference = (
        "F1-F3 and their ratios equal Platzer & Reutterer's published adult numbers "
        "(paper_adult_expected.csv, all 17 rows) to 1e-9 relative: tests/metrics/test_reference.py, "
        "and scripts/reference/check_paper_reference.py for every number of every row."
    )

    def __init__(self, max_combinations: int | None = None, four_way_combinations: int | None = None,
                 four_way_buckets: int = 3):
        """max_combinations: cap on k-way marginals per k <= 3 (a seeded sample); None = all, as the paper.
        four_way_combinations: also F4 over this many seeded 4-way combinations, each column cut into
        at most four_way_buckets buckets (ANITA D2.2: random subsets of combinations for n >= 4)."""
        for key, v in (("max_combinations", max_combinations), ("four_way_combinations", four_way_combinations)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise ValueError(f"fidelity: {key} must be None or a positive integer, got {v!r}")
        if not isinstance(four_way_buckets, int) or not 2 <= four_way_buckets <= 10:
            raise ValueError(f"fidelity: four_way_buckets must be an integer in [2, 10], got {four_way_buckets!r}")
        self.max_combinations = max_combinations
        self.four_way = None if four_way_combinations is None else (four_way_buckets, four_way_combinations)

    shardable = True

    def partial(self, data: EvalData, shard: int, of: int) -> dict[str, np.ndarray]:
        """The TVDs of S and of H of part `shard` of `of` of every k's combinations (in order)."""
        four = self._four(data)
        model = FidelityModel(data.train, data.holdout, data.kinds, max_combinations=self.max_combinations,
                              n_jobs=data.n_jobs, seed=data.seed, extra_orders={4: self.four_way} if four else None,
                              shard=(shard, of))
        out = {"sampled": np.array(model.sampled)}
        for k, (tvd_s, tvd_h) in model.tvds(None if data.holdout_row else data.synthetic).items():
            out |= {f"combos_{k}": model.combos[k], f"tvd_synthetic_{k}": tvd_s, f"tvd_holdout_{k}": tvd_h}
        return out

    def merge(self, data: EvalData, partials: Sequence[Mapping[str, np.ndarray]]) -> FidelityResult:
        """F1-F3 (F4) of the partial results of shards 0..n-1, in order; a ValueError saying what is wrong
        when together they do not hold exactly the combinations this table's F_k average over, once each
        and in order (a duplicated, missing or reordered part, or one of another table or seed)."""
        start = time.perf_counter()
        combos, tvds, sampled = self._merged(data, partials)
        s = scores(list(data.train.columns), combos, tvds, sampled)
        four, nan = self._four(data), math.nan
        return FidelityResult(
            F1=s.F[1], F2=s.F[2], F3=s.F[3], F1_ratio=s.ratio(1), F2_ratio=s.ratio(2), F3_ratio=s.ratio(3),
            F1_holdout=s.F_holdout[1], F2_holdout=s.F_holdout[2], F3_holdout=s.F_holdout[3],
            n_combinations_1=s.n_combinations[1], n_combinations_2=s.n_combinations[2],
            n_combinations_3=s.n_combinations[3], combinations_sampled=s.combinations_sampled,
            F4=s.F.get(4, nan), F4_ratio=s.ratio(4) if four else nan, F4_holdout=s.F_holdout.get(4, nan),
            n_combinations_4=s.n_combinations.get(4, 0),
            seconds_fidelity=time.perf_counter() - start, marginals=s.marginals,
        )

    def _merged(self, data: EvalData, partials: Sequence[Mapping[str, np.ndarray]]) -> tuple[dict, dict, bool]:
        """The parts' combinations and TVDs concatenated per k, checked against what the table's F_k take."""
        four = self._four(data)
        want, sampled = chosen_combinations(data.train.shape[1], self.max_combinations,
                                            {4: self.four_way} if four else None, data.seed)
        if not partials:
            raise ValueError("fidelity: merge got no partial results")
        keys = {"sampled"} | {f"{part}_{k}" for k in want for part in ("combos", "tvd_synthetic", "tvd_holdout")}
        for i, p in enumerate(partials):
            missing = sorted(keys - set(p))
            if missing:
                raise ValueError(f"fidelity: partial result {i} of {len(partials)} lacks {', '.join(missing)}")
            for k in want:
                n = len(p[f"combos_{k}"])
                if len(p[f"tvd_synthetic_{k}"]) != n or len(p[f"tvd_holdout_{k}"]) != n:
                    raise ValueError(f"fidelity: partial result {i} of {len(partials)} holds {n} {k}-way "
                                     "combinations but another number of TVDs")
        combos = {k: np.concatenate([np.asarray(p[f"combos_{k}"], dtype=np.int64).reshape(-1, k) for p in partials])
                  for k in want}
        for k, expected in want.items():
            got = combos[k]
            if got.shape == expected.shape and np.array_equal(got, expected):
                continue
            repeated = len(got) - len(np.unique(got, axis=0)) if len(got) else 0
            raise ValueError(
                f"fidelity: the {len(partials)} partial results hold {len(got)} {k}-way combinations"
                + (f" ({repeated} of them more than once)" if repeated else "")
                + f", not the {len(expected)} this table's F{k} averages over in order: a part is duplicated, "
                "missing, out of order or from another table or seed")
        tvds = {k: tuple(np.concatenate([p[f"{part}_{k}"] for p in partials])
                         for part in ("tvd_synthetic", "tvd_holdout")) for k in want}
        return combos, tvds, sampled

    def compute(self, data: EvalData) -> FidelityResult:
        start = time.perf_counter()
        result = self.merge(data, [self.partial(data, 0, 1)])
        return dataclasses.replace(result, seconds_fidelity=time.perf_counter() - start)

    def _four(self, data: EvalData) -> bool:
        return data.train.shape[1] >= 4 and self.four_way is not None
