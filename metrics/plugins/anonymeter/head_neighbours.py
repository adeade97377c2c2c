"""anonymeter's nearest-neighbour search, same results, without sorting every distance; run by the isolated
interpreter of the anonymeter plug-in (imported by worker.py), never imported by holdbench.

anonymeter 1.1's `_nearest_neighbors` (anonymeter/neighbors/mixed_types_kneighbors.py) computes a query's
Gower distance to every candidate record and keeps the first n_neighbors of numba's `argsort` of them, a
full quicksort of |S| values per query: on a 50,000-row S most of linkability's time. `nearest_neighbors`
computes the same distances with anonymeter's own `gower_distance` and takes the first n_neighbors of the
same quicksort (numba/misc/quicksort.py: median-of-three partitions, insertion sort under 15 values, NaN
after numbers), sorting only the ranges that reach those places: the same indices in the same order,
ties included, on average in linear time.
"""

import numpy as np
from numba import njit

import anonymeter.evaluators  # noqa: F401  (first: anonymeter's neighbours module cannot be imported first)
from anonymeter.neighbors.mixed_types_kneighbors import gower_distance

SMALL_QUICKSORT = 15
"""numba's quicksort sorts ranges shorter than this by insertion (numba/misc/quicksort.py SMALL_QUICKSORT)."""


@njit(nogil=True, cache=True)
def _lt(a, b):
    # numba's order of floats in np.argsort (numba/np/arrayobj.py lt_floats): NaN after every number
    return a < b or (np.isnan(b) and not np.isnan(a))


@njit(nogil=True, cache=True)
def _insertion_sort(a, r, low, high):
    # numba's quicksort.insertion_sort of r[low:high + 1] by a[r]
    if high <= low:
        return
    for i in range(low + 1, high + 1):
        k = r[i]
        v = a[k]
        j = i
        while j > low and _lt(v, a[r[j - 1]]):
            r[j] = r[j - 1]
            j -= 1
        r[j] = k


@njit(nogil=True, cache=True)
def _partition(a, r, low, high):
    # numba's quicksort.partition of r[low:high + 1] by a[r] (median-of-three pivot); the pivot's final place
    mid = (low + high) >> 1
    if _lt(a[r[mid]], a[r[low]]):
        r[low], r[mid] = r[mid], r[low]
    if _lt(a[r[high]], a[r[mid]]):
        r[high], r[mid] = r[mid], r[high]
    if _lt(a[r[mid]], a[r[low]]):
        r[low], r[mid] = r[mid], r[low]
    pivot = a[r[mid]]
    r[high], r[mid] = r[mid], r[high]
    i = low
    j = high - 1
    while True:
        while i < high and _lt(a[r[i]], pivot):
            i += 1
        while j >= low and _lt(pivot, a[r[j]]):
            j -= 1
        if i >= j:
            break
        r[i], r[j] = r[j], r[i]
        i += 1
        j -= 1
    r[i], r[high] = r[high], r[i]
    return i


@njit(nogil=True, cache=True)
def head_argsort(a, k):
    """The first k entries of numba's `a.argsort()` (its quicksort), ties and NaN in the same order.

    numba's quicksort partitions a range and then sorts each side on its own: what ends in places 0..k-1
    depends only on the ranges that reach them. The same partitions are made here, in the same order, and
    a range that starts after place k-1 is left unsorted: O(n) on average instead of O(n log n)."""
    r = np.arange(a.size)
    if a.size < 2:
        return r[:k]
    last = k - 1
    stack = np.empty((128, 2), dtype=np.int64)
    stack[0, 0], stack[0, 1] = 0, a.size - 1
    n = 1
    while n > 0:
        n -= 1
        low, high = stack[n, 0], stack[n, 1]
        while high - low >= SMALL_QUICKSORT:
            i = _partition(a, r, low, high)
            if high - i > i - low:  # numba keeps the larger side for later and goes on with the smaller
                if high > i and i + 1 <= last:
                    stack[n, 0], stack[n, 1] = i + 1, high
                    n += 1
                high = i - 1
            else:
                if i > low:
                    stack[n, 0], stack[n, 1] = low, i - 1
                    n += 1
                low = i + 1
                if low > last:
                    break
        if low <= last:
            _insertion_sort(a, r, low, high)
    return r[:k]


@njit(nogil=True, cache=True)
def nearest_neighbors(queries, candidates, cat_cols_index, n_neighbors):
    """anonymeter's `_nearest_neighbors` (mixed_types_kneighbors.py), same arguments and results: its Gower
    distances to every candidate, the n_neighbors nearest from `head_argsort` instead of a full argsort."""
    idx = np.zeros((queries.shape[0], n_neighbors), dtype=np.int64)
    dists = np.zeros((queries.shape[0], n_neighbors), dtype=np.float64)
    for ix in range(queries.shape[0]):
        dist_ix = np.zeros((candidates.shape[0]), dtype=np.float64)
        for iy in range(candidates.shape[0]):
            dist_ix[iy] = gower_distance(r0=queries[ix], r1=candidates[iy], cat_cols_index=cat_cols_index)
        close_match_idx = head_argsort(dist_ix, n_neighbors)
        idx[ix] = close_match_idx
        dists[ix] = dist_ix[close_match_idx]
    return idx, dists
