"""Numba kernels: joint-bucket counting and exact nearest-neighbour search.

Why they look the way they do: codes are stored column-major so the inner loop runs over
contiguous references, which LLVM vectorises (32 one-byte codes per AVX2 instruction).
Each pass handles four queries and four columns, so one load of a reference code serves
four queries and a distance is written once per four columns. References are scanned in
tiles that stay in L1/L2; a block of queries stops once its answer cannot improve
(`lower_bound`). All kernels release the GIL: callers parallelise with threads.

numba is imported, and each kernel jitted (or loaded from numba's on-disk cache), on the first
call of a public kernel, not on import: loading numba and its cache costs a process 0.86 s of CPU
on a loaded 2-core machine (scripts/bench/bench_cold_start.py --paths), which a run that imports
this module but never calls a kernel (a fidelity-only evaluation of a small table, the CLI
checking a metrics config) should not pay.
"""

from __future__ import annotations

import threading

import numpy as np

_TILE = 2048
#: int32 bit pattern of float32 +inf
_INF_BITS = np.int32(0x7F800000)
#: functions jitted on first use, with their numba options beyond nogil=True, cache=True; callees
#: before callers, so a caller compiles against the dispatchers of its callees
_JIT = {"_joint_counts": {}, "_marginal_tvds": {}, "_insert_sorted": {}, "_merge_tile": {},
        "_count_mismatches": {"inline": "always"}, "_hamming_smallest": {}, "_gower_smallest": {},
        "_smallest_from_dots": {}}
_LOCK = threading.Lock()
_jitted = False


def _jit() -> dict:
    """This module's globals with every function of _JIT replaced by its numba dispatcher (once)."""
    global _jitted
    if not _jitted:
        with _LOCK:
            if not _jitted:
                from numba import njit

                g = globals()
                for name, options in _JIT.items():
                    g[name] = njit(nogil=True, cache=True, **options)(g[name])
                _jitted = True
    return globals()


def marginal_tvds(train, others, n_others, cards, combos):
    """TVD between T's joint-bucket frequencies and each other table's, per combination.

    train: (p, n_T) codes; others: (p, sum n) codes of the other tables stacked along rows,
    table i owning n_others[i] rows; combos: (m, k) column indices. The product of the
    combination's cardinalities must fit in int32 (it is at most 102**k for k <= 3).
    Returns (m, len(n_others)) TVDs.
    """
    return _jit()["_marginal_tvds"](train, others, n_others, cards, combos)


def hamming_smallest(queries, refs, k, lower_bound, dist_buf):
    """The k smallest Hamming distances (with multiplicity) from each query to refs.

    queries: (p, n_q), refs: (p, n_r) integer codes; dist_buf: (4, _TILE) scratch whose
    dtype can hold p. Queries go in blocks of four and columns in groups of four, so each
    loaded reference code serves four queries and each distance is updated once per four
    columns; a block stops once all its k-th distances are <= lower_bound (pass 0 unless a
    smaller distance is known to be impossible). Returns (n_q, k) int32; entries are p+1
    where refs has fewer than k rows.
    """
    return _jit()["_hamming_smallest"](queries, refs, k, lower_bound, dist_buf)


def gower_smallest(q_num, q_cat, r_num, r_cat, k, count_buf, dist_buf, dist_bits):
    """The k smallest Gower distances x n_columns (with multiplicity) from each query to refs.

    Numeric parts are pre-scaled by T's range (missing = a far sentinel), so a column adds
    min(|a - b|, 1); categorical mismatches are counted in one-byte lanes first (cheap) and
    added once. Float32 in a fixed order, so equal pairs always give bitwise-equal sums.
    Queries go in blocks of four so each loaded reference value serves four of them.
    count_buf: (4, _TILE) integers able to hold the number of categoricals;
    dist_buf: (4, _TILE) float32 and dist_bits: the same memory viewed as int32. The k best
    are kept as int32 bit patterns (non-negative floats sort like their bits), so the tile
    minimum is an integer reduction that vectorises. Returns (n_q, k) int32 bit patterns:
    view them as float32; +inf where refs has fewer than k rows.
    """
    return _jit()["_gower_smallest"](q_num, q_cat, r_num, r_cat, k, count_buf, dist_buf, dist_bits)


def smallest_from_dots(dots, q_norms, r_norms, m, out_sq, out_idx):
    """The m smallest |q|² + |r|² − 2 q·r of each row of dots (= queries @ refs.T), ascending, and their refs.

    dots: (n_q, n_r) float64; q_norms (n_q,), r_norms (n_r,): squared norms; out_sq (n_q, m) float64 and
    out_idx (n_q, m) int64 are filled. The values are the matrix-product form of squared Euclidean
    distances (scikit-learn's brute-force form: fast, off by rounding near 0), for a caller that recomputes
    the candidates' distances exactly; negative values (rounding) are kept as they come.
    """
    _jit()["_smallest_from_dots"](dots, q_norms, r_norms, m, out_sq, out_idx)


def _joint_counts(codes, start, stop, combo, cards, size, keys):
    """Counts of the joint buckets of columns `combo` over rows start..stop of codes.

    Keys are built column by column (a vectorisable loop); the histogram is split into
    four interleaved partial counts so repeated keys do not serialise on one memory cell.
    """
    n = stop - start
    key = keys[:n]
    key[:] = 0
    for a in range(combo.shape[0]):
        j = combo[a]
        card = np.int32(cards[j])
        col = codes[j, start:stop]
        for i in range(n):
            key[i] = key[i] * card + np.int32(col[i])
    part = np.zeros((4, size), np.int64)
    n4 = n - n % 4
    for i in range(0, n4, 4):
        part[0, key[i]] += 1
        part[1, key[i + 1]] += 1
        part[2, key[i + 2]] += 1
        part[3, key[i + 3]] += 1
    for i in range(n4, n):
        part[0, key[i]] += 1
    return part[0] + part[1] + part[2] + part[3]


def _marginal_tvds(train, others, n_others, cards, combos):
    """The numba body of marginal_tvds (jitted by _jit)."""
    m = combos.shape[0]
    n_tab = n_others.shape[0]
    n_t = train.shape[1]
    out = np.zeros((m, n_tab))
    longest = n_t
    for b in range(n_tab):
        longest = max(longest, n_others[b])
    keys = np.empty(longest, np.int32)
    for ci in range(m):
        combo = combos[ci]
        size = 1
        for a in range(combo.shape[0]):
            size *= cards[combo[a]]
        counts_t = _joint_counts(train, 0, n_t, combo, cards, size, keys)
        start = 0
        for b in range(n_tab):
            n_o = n_others[b]
            counts_o = _joint_counts(others, start, start + n_o, combo, cards, size, keys)
            start += n_o
            total = 0.0
            for c in range(size):
                total += abs(counts_t[c] / n_t - counts_o[c] / n_o)
            out[ci, b] = 0.5 * total
    return out


def _insert_sorted(best, value):
    """Insert value into the ascending array best, dropping its largest element."""
    k = best.shape[0]
    pos = k - 1
    while pos > 0 and best[pos - 1] > value:
        best[pos] = best[pos - 1]
        pos -= 1
    best[pos] = value


def _merge_tile(best, dist):
    """Fold one tile of distances into the ascending k-best array."""
    k = best.shape[0]
    low = dist[0]
    for i in range(1, dist.shape[0]):
        low = min(low, dist[i])
    if low < best[k - 1]:
        if k == 1:
            best[0] = low
        else:
            for i in range(dist.shape[0]):
                if dist[i] < best[k - 1]:
                    _insert_sorted(best, dist[i])


def _count_mismatches(refs, queries, t0, t1, qa, qb, qc, qd, c0, c1, c2, c3):
    """c0..c3[i] = number of columns where reference t0 + i differs from query qa, qb, qc, qd.

    Columns go in groups of four, so each count is updated once per four columns and each
    loaded reference code serves the four queries.
    """
    width = t1 - t0
    c0[:] = 0
    c1[:] = 0
    c2[:] = 0
    c3[:] = 0
    p = refs.shape[0]
    p4 = p - p % 4
    for j in range(0, p4, 4):
        r0, r1, r2, r3 = refs[j, t0:t1], refs[j + 1, t0:t1], refs[j + 2, t0:t1], refs[j + 3, t0:t1]
        a0, a1, a2, a3 = queries[j, qa], queries[j + 1, qa], queries[j + 2, qa], queries[j + 3, qa]
        b0, b1, b2, b3 = queries[j, qb], queries[j + 1, qb], queries[j + 2, qb], queries[j + 3, qb]
        e0, e1, e2, e3 = queries[j, qc], queries[j + 1, qc], queries[j + 2, qc], queries[j + 3, qc]
        f0, f1, f2, f3 = queries[j, qd], queries[j + 1, qd], queries[j + 2, qd], queries[j + 3, qd]
        for i in range(width):
            x0, x1, x2, x3 = r0[i], r1[i], r2[i], r3[i]
            c0[i] += (x0 != a0) + (x1 != a1) + (x2 != a2) + (x3 != a3)
            c1[i] += (x0 != b0) + (x1 != b1) + (x2 != b2) + (x3 != b3)
            c2[i] += (x0 != e0) + (x1 != e1) + (x2 != e2) + (x3 != e3)
            c3[i] += (x0 != f0) + (x1 != f1) + (x2 != f2) + (x3 != f3)
    for j in range(p4, p):
        va, vb, vc, vd = queries[j, qa], queries[j, qb], queries[j, qc], queries[j, qd]
        col = refs[j, t0:t1]
        for i in range(width):
            x = col[i]
            c0[i] += x != va
            c1[i] += x != vb
            c2[i] += x != vc
            c3[i] += x != vd


def _hamming_smallest(queries, refs, k, lower_bound, dist_buf):
    """The numba body of hamming_smallest (jitted by _jit)."""
    p, n_q = queries.shape
    n_r = refs.shape[1]
    out = np.empty((n_q, k), np.int32)
    best = np.empty((4, k), np.int32)
    for q0 in range(0, n_q, 4):
        qa, qb, qc, qd = q0, min(q0 + 1, n_q - 1), min(q0 + 2, n_q - 1), min(q0 + 3, n_q - 1)
        best[:] = p + 1
        for t0 in range(0, n_r, _TILE):
            t1 = min(t0 + _TILE, n_r)
            width = t1 - t0
            d0, d1 = dist_buf[0, :width], dist_buf[1, :width]
            d2, d3 = dist_buf[2, :width], dist_buf[3, :width]
            _count_mismatches(refs, queries, t0, t1, qa, qb, qc, qd, d0, d1, d2, d3)
            _merge_tile(best[0], d0)
            _merge_tile(best[1], d1)
            _merge_tile(best[2], d2)
            _merge_tile(best[3], d3)
            if max(max(best[0, k - 1], best[1, k - 1]), max(best[2, k - 1], best[3, k - 1])) <= lower_bound:
                break
        for b in range(min(4, n_q - q0)):
            out[q0 + b, :] = best[b]
    return out


def _gower_smallest(q_num, q_cat, r_num, r_cat, k, count_buf, dist_buf, dist_bits):
    """The numba body of gower_smallest (jitted by _jit)."""
    p_num = q_num.shape[0]
    n_q = q_num.shape[1] if p_num > 0 else q_cat.shape[1]
    n_r = r_num.shape[1] if p_num > 0 else r_cat.shape[1]
    one = np.float32(1.0)
    out = np.empty((n_q, k), np.int32)
    best = np.empty((4, k), np.int32)
    for q0 in range(0, n_q, 4):
        qa, qb, qc, qd = q0, min(q0 + 1, n_q - 1), min(q0 + 2, n_q - 1), min(q0 + 3, n_q - 1)
        best[:] = _INF_BITS
        for t0 in range(0, n_r, _TILE):
            t1 = min(t0 + _TILE, n_r)
            width = t1 - t0
            c0, c1 = count_buf[0, :width], count_buf[1, :width]
            c2, c3 = count_buf[2, :width], count_buf[3, :width]
            _count_mismatches(r_cat, q_cat, t0, t1, qa, qb, qc, qd, c0, c1, c2, c3)
            d0, d1 = dist_buf[0, :width], dist_buf[1, :width]
            d2, d3 = dist_buf[2, :width], dist_buf[3, :width]
            for i in range(width):
                d0[i] = np.float32(c0[i])
                d1[i] = np.float32(c1[i])
                d2[i] = np.float32(c2[i])
                d3[i] = np.float32(c3[i])
            p_num2 = p_num - p_num % 2
            for j in range(0, p_num2, 2):
                r0, r1 = r_num[j, t0:t1], r_num[j + 1, t0:t1]
                a0, a1, b0, b1 = q_num[j, qa], q_num[j + 1, qa], q_num[j, qb], q_num[j + 1, qb]
                e0, e1, f0, f1 = q_num[j, qc], q_num[j + 1, qc], q_num[j, qd], q_num[j + 1, qd]
                for i in range(width):
                    x0, x1 = r0[i], r1[i]
                    d0[i] += min(abs(x0 - a0), one) + min(abs(x1 - a1), one)
                    d1[i] += min(abs(x0 - b0), one) + min(abs(x1 - b1), one)
                    d2[i] += min(abs(x0 - e0), one) + min(abs(x1 - e1), one)
                    d3[i] += min(abs(x0 - f0), one) + min(abs(x1 - f1), one)
            for j in range(p_num2, p_num):
                va, vb, vc, vd = q_num[j, qa], q_num[j, qb], q_num[j, qc], q_num[j, qd]
                col = r_num[j, t0:t1]
                for i in range(width):
                    x = col[i]
                    d0[i] += min(abs(x - va), one)
                    d1[i] += min(abs(x - vb), one)
                    d2[i] += min(abs(x - vc), one)
                    d3[i] += min(abs(x - vd), one)
            _merge_tile(best[0], dist_bits[0, :width])
            _merge_tile(best[1], dist_bits[1, :width])
            _merge_tile(best[2], dist_bits[2, :width])
            _merge_tile(best[3], dist_bits[3, :width])
            if max(max(best[0, k - 1], best[1, k - 1]), max(best[2, k - 1], best[3, k - 1])) <= 0:
                break
        for b in range(min(4, n_q - q0)):
            out[q0 + b, :] = best[b]
    return out


def _smallest_from_dots(dots, q_norms, r_norms, m, out_sq, out_idx):
    """The numba body of smallest_from_dots (jitted by _jit)."""
    n_r = dots.shape[1]
    for a in range(dots.shape[0]):
        best = out_sq[a]
        idx = out_idx[a]
        best[:] = np.inf
        idx[:] = -1
        q = q_norms[a]
        row = dots[a]
        worst = np.inf
        for j in range(n_r):
            d = (q + r_norms[j]) - 2.0 * row[j]
            if d < worst:
                pos = m - 1
                while pos > 0 and best[pos - 1] > d:
                    best[pos] = best[pos - 1]
                    idx[pos] = idx[pos - 1]
                    pos -= 1
                best[pos] = d
                idx[pos] = j
                worst = best[m - 1]


def tile_buffer(dtype) -> np.ndarray:
    """Scratch buffer of one thread: distances of a block of four queries to one tile."""
    return np.empty((4, _TILE), dtype=dtype)
